/* peak-avx2.c — the AVX2 + FMA loops behind bench_peak.h, compiled with -mavx2 -mfma.
 *
 * Layer: bench. Called only after bench_isa_available(BENCH_ISA_AVX2). 12 independent chains
 * cover 4-5 cycles of FMA latency on two ports and, with the two constants, fit the 16 ymm
 * registers without spilling.
 */
#include <immintrin.h>

#include "bench_peak.h"

static float sum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

float bench_fma_loop_avx2(uint64_t iterations)
{
    const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(0.1f), a2 = _mm256_set1_ps(0.2f), a3 = _mm256_set1_ps(0.3f);
    __m256 a4 = _mm256_set1_ps(0.4f), a5 = _mm256_set1_ps(0.5f), a6 = _mm256_set1_ps(0.6f), a7 = _mm256_set1_ps(0.7f);
    __m256 a8 = _mm256_set1_ps(0.8f), a9 = _mm256_set1_ps(0.9f), a10 = _mm256_set1_ps(1.0f), a11 = _mm256_set1_ps(1.1f);
    for (uint64_t i = 0; i < iterations; i++) {
        a0 = _mm256_fmadd_ps(a0, m, c);
        a1 = _mm256_fmadd_ps(a1, m, c);
        a2 = _mm256_fmadd_ps(a2, m, c);
        a3 = _mm256_fmadd_ps(a3, m, c);
        a4 = _mm256_fmadd_ps(a4, m, c);
        a5 = _mm256_fmadd_ps(a5, m, c);
        a6 = _mm256_fmadd_ps(a6, m, c);
        a7 = _mm256_fmadd_ps(a7, m, c);
        a8 = _mm256_fmadd_ps(a8, m, c);
        a9 = _mm256_fmadd_ps(a9, m, c);
        a10 = _mm256_fmadd_ps(a10, m, c);
        a11 = _mm256_fmadd_ps(a11, m, c);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    return sum8(s);
}

float bench_read_avx2(const float *x, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 64) {
        /* Four cache lines per round, two loads each. */
        s0 = _mm256_add_ps(s0, _mm256_load_ps(x + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(x + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(x + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(x + i + 24));
        s0 = _mm256_add_ps(s0, _mm256_load_ps(x + i + 32));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(x + i + 40));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(x + i + 48));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(x + i + 56));
    }
    return sum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}
