/* cpu_features.h — what this CPU can execute, detected once per process.
 *
 * Layer: core. The feature word is computed on first use (pthread_once) and never changes:
 * STYLE.md allows exactly this kind of global (a table computed once). A feature counts only
 * when both the CPU and the OS (XSAVE state enabled in XCR0) support it.
 */
#ifndef KILN_CORE_CPU_FEATURES_H
#define KILN_CORE_CPU_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#define KILN_CPU_FEATURE_MAP(X)         \
    X(SSE2, 0, "sse2")                  \
    X(SSE41, 1, "sse4.1")               \
    X(AVX, 2, "avx")                    \
    X(AVX2, 3, "avx2")                  \
    X(FMA, 4, "fma")                    \
    X(F16C, 5, "f16c")                  \
    X(BMI2, 6, "bmi2")                  \
    X(AVX512F, 7, "avx512f")            \
    X(AVX512BW, 8, "avx512bw")          \
    X(AVX512DQ, 9, "avx512dq")          \
    X(AVX512VL, 10, "avx512vl")         \
    X(AVX512CD, 11, "avx512cd")         \
    X(AVX512VNNI, 12, "avx512vnni")     \
    X(AVX512BF16, 13, "avx512bf16")     \
    X(AMXTILE, 14, "amx-tile")          \
    X(AMXBF16, 15, "amx-bf16")          \
    X(AMXINT8, 16, "amx-int8")

typedef enum kiln_cpu_feature {
#define KILN_CPU_FEATURE_ENUM_(name, bit, str) KILN_CPU_##name = bit,
    KILN_CPU_FEATURE_MAP(KILN_CPU_FEATURE_ENUM_)
#undef KILN_CPU_FEATURE_ENUM_
#define KILN_CPU_FEATURE_ONE_(name, bit, str) +1
    KILN_CPU_FEATURE_COUNT = 0 KILN_CPU_FEATURE_MAP(KILN_CPU_FEATURE_ONE_)
#undef KILN_CPU_FEATURE_ONE_
} kiln_cpu_feature;
/* The bits are in records' feature words (docs/format.md), so they are explicit; dense from 0,
   so that KILN_CPU_FEATURE_COUNT bounds them and no two features share one. */
#define KILN_CPU_FEATURE_MASK_(name, bit, str) | ((uint64_t)1 << (bit))
_Static_assert((0 KILN_CPU_FEATURE_MAP(KILN_CPU_FEATURE_MASK_)) == (((uint64_t)1 << KILN_CPU_FEATURE_COUNT) - 1),
               "CPU feature bits are 0 .. KILN_CPU_FEATURE_COUNT - 1, each once");
#undef KILN_CPU_FEATURE_MASK_

#define KILN_CPU_BIT(f) ((uint64_t)1 << KILN_CPU_##f)

/* Bit set of kiln_cpu_feature this machine supports. */
uint64_t kiln_cpu_features(void);
/* "avx512f" ... or "?" */
const char *kiln_cpu_feature_name(int bit);
/* Write the names of the set bits of `features`, space separated, into buf. */
void kiln_cpu_features_format(uint64_t features, char *buf, size_t size);
/* Data cache sizes in bytes (0 when unknown), detected once. */
void kiln_cpu_cache_sizes(size_t *l1d, size_t *l2, size_t *l3);

#endif
