/* peak-avx512.c — the AVX-512 loops behind bench_peak.h, compiled with -mavx512f.
 *
 * Layer: bench. Called only after bench_isa_available(BENCH_ISA_AVX512). 16 independent
 * accumulator chains cover FMA latency x throughput on every AVX-512 core we know (Sapphire
 * Rapids: 4 cycles x 2 ports = 8; Zen 4: 4 x 1 double-pumped = 4) while using half the 32
 * vector registers, so nothing spills and the loop touches no memory.
 */
#include <immintrin.h>

#include "bench_peak.h"

float bench_fma_loop_avx512(uint64_t iterations)
{
    /* acc = acc * m + c converges to c / (1 - m): values stay normal, never overflow. */
    const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0.0f), a1 = _mm512_set1_ps(0.1f), a2 = _mm512_set1_ps(0.2f), a3 = _mm512_set1_ps(0.3f);
    __m512 a4 = _mm512_set1_ps(0.4f), a5 = _mm512_set1_ps(0.5f), a6 = _mm512_set1_ps(0.6f), a7 = _mm512_set1_ps(0.7f);
    __m512 a8 = _mm512_set1_ps(0.8f), a9 = _mm512_set1_ps(0.9f), a10 = _mm512_set1_ps(1.0f), a11 = _mm512_set1_ps(1.1f);
    __m512 a12 = _mm512_set1_ps(1.2f), a13 = _mm512_set1_ps(1.3f), a14 = _mm512_set1_ps(1.4f), a15 = _mm512_set1_ps(1.5f);
    for (uint64_t i = 0; i < iterations; i++) {
        a0 = _mm512_fmadd_ps(a0, m, c);
        a1 = _mm512_fmadd_ps(a1, m, c);
        a2 = _mm512_fmadd_ps(a2, m, c);
        a3 = _mm512_fmadd_ps(a3, m, c);
        a4 = _mm512_fmadd_ps(a4, m, c);
        a5 = _mm512_fmadd_ps(a5, m, c);
        a6 = _mm512_fmadd_ps(a6, m, c);
        a7 = _mm512_fmadd_ps(a7, m, c);
        a8 = _mm512_fmadd_ps(a8, m, c);
        a9 = _mm512_fmadd_ps(a9, m, c);
        a10 = _mm512_fmadd_ps(a10, m, c);
        a11 = _mm512_fmadd_ps(a11, m, c);
        a12 = _mm512_fmadd_ps(a12, m, c);
        a13 = _mm512_fmadd_ps(a13, m, c);
        a14 = _mm512_fmadd_ps(a14, m, c);
        a15 = _mm512_fmadd_ps(a15, m, c);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                                       _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
    return _mm512_reduce_add_ps(s);
}

float bench_read_avx512(const float *x, size_t n)
{
    /* Four accumulators, one cache line per load: the adds never limit a DRAM-bound loop. */
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_load_ps(x + i));
        s1 = _mm512_add_ps(s1, _mm512_load_ps(x + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_load_ps(x + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_load_ps(x + i + 48));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}
