/* cpu_features.c — what this CPU can execute and its cache sizes, detected once (cpu_features.h).
 * Layer: core. The processor's own probes (CPUID on x86) are core/arch/cpu_features_<arch>.c,
 * which the build picks; elsewhere no feature is reported, so only the generic target is
 * selected. Cache sizes come from Linux's sysfs first, then from the processor's probe. */
#include "core/cpu_features.h"

#include "core/arch/cpu_features_arch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Computed once by pthread_once, then read-only (see the header). */
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static uint64_t detected_features;
static size_t detected_l1, detected_l2, detected_l3;

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
    detected_features = kiln_cpu_arch_features();
    detect_caches_sysfs();
    if (!detected_l1) kiln_cpu_arch_caches(&detected_l1, &detected_l2, &detected_l3);
}

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
