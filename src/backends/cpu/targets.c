/* targets.c — the const table of `cpu` targets (see targets.h, docs/targets.md).
 * Layer: backends/cpu. Cache sizes are the ones lowering tiles for; they describe a typical
 * CPU of each level, not this machine, so a binary compiled anywhere is the same bytes. */
#include "backends/cpu/targets.h"

#include <string.h>

#include "core/cpu_features.h"

#define V3_FEATURES (KILN_CPU_BIT(AVX) | KILN_CPU_BIT(AVX2) | KILN_CPU_BIT(FMA) | KILN_CPU_BIT(F16C) | KILN_CPU_BIT(BMI2))
#define V4_FEATURES                                                                                \
    (V3_FEATURES | KILN_CPU_BIT(AVX512F) | KILN_CPU_BIT(AVX512BW) | KILN_CPU_BIT(AVX512DQ) |        \
     KILN_CPU_BIT(AVX512VL) | KILN_CPU_BIT(AVX512CD))

#ifdef KILN_CPU_TEST_TARGETS
extern const kiln_cpu_kernels kiln_cpu_kernels_test_min;
#endif

static const kiln_cpu_target targets[] = {
    {"generic", "portable C, any CPU", 0, 0, 32 << 10, 256 << 10, 4 << 20, &kiln_cpu_kernels_generic},
#ifdef KILN_X86 /* the avx2/avx512 tables are built for x86 only (CMakeLists.txt) */
    {"x86-64-v3", "AVX2 + FMA (Haswell and later, Zen)", V3_FEATURES, 1, 32 << 10, 256 << 10, 8 << 20,
     &kiln_cpu_kernels_avx2},
    {"x86-64-v4", "AVX-512 F/BW/DQ/VL/CD (Skylake-SP and later, Zen 4)", V4_FEATURES, 2, 32 << 10, 1 << 20, 16 << 20,
     &kiln_cpu_kernels_avx512},
    /* x86-64-v4's kernels and tile plus a bf16 GEMM: the target for precision bf16. Ranked with
       x86-64-v4, not above it, so f32 compiles keep choosing x86-64-v4 by default. */
    {"x86-64-v4-bf16", "x86-64-v4 + AVX512-BF16 (Cooper Lake, Sapphire Rapids, Zen 4)",
     V4_FEATURES | KILN_CPU_BIT(AVX512BF16), 2, 32 << 10, 1 << 20, 16 << 20, &kiln_cpu_kernels_avx512bf16},
#endif
#ifdef KILN_CPU_TEST_TARGETS
    /* Test binaries only (tests/conformance/kernels-min.c): a table of just a vector layer and a
       GEMM microkernel, the rest generic. Rank -1: only ever used when forced. */
    {"test-min", "test only: vector layer + GEMM microkernel, generic fallback", 0, -1, 32 << 10, 256 << 10,
     4 << 20, &kiln_cpu_kernels_test_min},
#endif
};

size_t kiln_cpu_target_count(void) { return sizeof targets / sizeof targets[0]; }

const kiln_cpu_target *kiln_cpu_target_at(size_t i) { return i < kiln_cpu_target_count() ? &targets[i] : NULL; }

const kiln_cpu_target *kiln_cpu_target_find(const char *name)
{
    for (size_t i = 0; name && i < kiln_cpu_target_count(); i++)
        if (strcmp(targets[i].name, name) == 0) return &targets[i];
    return NULL;
}

int kiln_cpu_target_runnable(const kiln_cpu_target *t)
{
    return (kiln_cpu_features() & t->features) == t->features;
}

const kiln_cpu_target *kiln_cpu_target_best(void)
{
    const kiln_cpu_target *best = &targets[0];
    for (size_t i = 1; i < kiln_cpu_target_count(); i++)
        if (kiln_cpu_target_runnable(&targets[i]) && targets[i].rank > best->rank) best = &targets[i];
    return best;
}
