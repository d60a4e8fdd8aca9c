/* cpu_features_x86.c — CPUID/XGETBV feature detection and cache sizes on x86 (cpu_features_arch.h).
 *
 * Layer: core, compiled only into an x86 build (CMakeLists.txt picks it by
 * CMAKE_SYSTEM_PROCESSOR; other processors get cpu_features_none.c), so no other file of the
 * runtime needs an x86 #if. A feature counts only when both the CPU and the OS (XSAVE state
 * enabled in XCR0) support it.
 */
#include <cpuid.h>
#include <stdbool.h>

#include "core/arch/cpu_features_arch.h"

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

void kiln_cpu_arch_caches(size_t *l1, size_t *l2, size_t *l3)
{
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 4) return;
    for (unsigned i = 0; i < 16; i++) {
        __cpuid_count(4, i, a, b, c, d);
        unsigned type = a & 31;
        if (type == 0) break;
        if (type == 2) continue; /* instruction cache */
        unsigned level = (a >> 5) & 7;
        size_t size = (size_t)(((b >> 22) & 0x3FF) + 1) * (((b >> 12) & 0x3FF) + 1) * ((b & 0xFFF) + 1) * (c + 1);
        if (level == 1) *l1 = size;
        else if (level == 2) *l2 = size;
        else if (level == 3) *l3 = size;
    }
}

uint64_t kiln_cpu_arch_features(void)
{
    unsigned a, b, c, d, max;
    uint64_t f = 0;
    max = __get_cpuid_max(0, NULL);
    if (max < 1) return 0;
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
    return f;
}
