/* cpu_features.c — CPUID/XGETBV feature detection and cache sizes (x86-64; elsewhere nothing
 * is reported, so only the generic target is selected). Layer: core. */
#include "core/cpu_features.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Computed once by pthread_once, then read-only (see the header). */
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static uint64_t detected_features;
static size_t detected_l1, detected_l2, detected_l3;

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void detect_caches(void)
{
    unsigned a, b, c, d;
    for (unsigned i = 0; i < 16; i++) {
        __cpuid_count(4, i, a, b, c, d);
        unsigned type = a & 31;
        if (type == 0) break;
        if (type == 2) continue; /* instruction cache */
        unsigned level = (a >> 5) & 7;
        size_t size = (size_t)(((b >> 22) & 0x3FF) + 1) * (((b >> 12) & 0x3FF) + 1) * ((b & 0xFFF) + 1) * (c + 1);
        if (level == 1) detected_l1 = size;
        else if (level == 2) detected_l2 = size;
        else if (level == 3) detected_l3 = size;
    }
}

/* Linux describes the caches in sysfs even where a hypervisor hides CPUID leaf 4. */
static void detect_caches_sysfs(void)
{
    for (int i = 0; i < 8; i++) {
        char path[128], type[32] = "";
        int level = 0;
        size_t kib = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fscanf(f, "%31s", type) != 1) type[0] = '\0';
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%d", &level) != 1) level = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%zuK", &kib) != 1) kib = 0;
            fclose(f);
        }
        if (strcmp(type, "Instruction") == 0) continue;
        if (level == 1) detected_l1 = kib * 1024;
        else if (level == 2) detected_l2 = kib * 1024;
        else if (level == 3) detected_l3 = kib * 1024;
    }
}

static void detect(void)
{
    unsigned a, b, c, d, max;
    uint64_t f = 0;
    max = __get_cpuid_max(0, NULL);
    if (max < 1) return;
    __cpuid(1, a, b, c, d);
    if (d & (1u << 26)) f |= KILN_CPU_BIT(SSE2);
    if (c & (1u << 19)) f |= KILN_CPU_BIT(SSE41);
    bool osxsave = (c >> 27) & 1;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xE6) == 0xE6, tiles = (xcr0 & 0x60000) == 0x60000;
    if (ymm && (c & (1u << 28))) f |= KILN_CPU_BIT(AVX);
    if (ymm && (c & (1u << 12))) f |= KILN_CPU_BIT(FMA);
    if (ymm && (c & (1u << 29))) f |= KILN_CPU_BIT(F16C);
    if (max >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if (ymm && (b & (1u << 5))) f |= KILN_CPU_BIT(AVX2);
        if (b & (1u << 8)) f |= KILN_CPU_BIT(BMI2);
        if (zmm) {
            if (b & (1u << 16)) f |= KILN_CPU_BIT(AVX512F);
            if (b & (1u << 17)) f |= KILN_CPU_BIT(AVX512DQ);
            if (b & (1u << 28)) f |= KILN_CPU_BIT(AVX512CD);
            if (b & (1u << 30)) f |= KILN_CPU_BIT(AVX512BW);
            if (b & (1u << 31)) f |= KILN_CPU_BIT(AVX512VL);
            if (c & (1u << 11)) f |= KILN_CPU_BIT(AVX512VNNI);
        }
        if (tiles) {
            if (d & (1u << 24)) f |= KILN_CPU_BIT(AMXTILE);
            if (d & (1u << 22)) f |= KILN_CPU_BIT(AMXBF16);
            if (d & (1u << 25)) f |= KILN_CPU_BIT(AMXINT8);
        }
        unsigned sub = a;
        if (sub >= 1 && zmm) {
            __cpuid_count(7, 1, a, b, c, d);
            if (a & (1u << 5)) f |= KILN_CPU_BIT(AVX512BF16);
        }
    }
    detected_features = f;
    detect_caches_sysfs();
    if (!detected_l1 && max >= 4) detect_caches();
}
#else
static void detect(void) {}
#endif

uint64_t kiln_cpu_features(void)
{
    pthread_once(&detect_once, detect);
    return detected_features;
}

void kiln_cpu_cache_sizes(size_t *l1d, size_t *l2, size_t *l3)
{
    pthread_once(&detect_once, detect);
    if (l1d) *l1d = detected_l1;
    if (l2) *l2 = detected_l2;
    if (l3) *l3 = detected_l3;
}

const char *kiln_cpu_feature_name(int bit)
{
    switch (bit) {
#define KILN_CPU_FEATURE_NAME_(name, b, str) case b: return str;
        KILN_CPU_FEATURE_MAP(KILN_CPU_FEATURE_NAME_)
#undef KILN_CPU_FEATURE_NAME_
    }
    return "?";
}

void kiln_cpu_features_format(uint64_t features, char *buf, size_t size)
{
    size_t n = 0;
    if (size) buf[0] = '\0';
    for (int bit = 0; bit < KILN_CPU_FEATURE_COUNT; bit++) {
        if (!(features & ((uint64_t)1 << bit)) || n >= size) continue;
        n += (size_t)snprintf(buf + n, size - n, n ? " %s" : "%s", kiln_cpu_feature_name(bit));
    }
}
