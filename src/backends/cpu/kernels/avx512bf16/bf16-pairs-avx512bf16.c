/* bf16-pairs-avx512bf16.c — rounding f32 rows to bf16 pairs (kiln_cpu_bf16_pairs_fn and
 * kiln_cpu_bf16_row_fn contracts, kernel_kit.h) with AVX512-BF16's vcvtneps2bf16.
 *
 * Layer: backends/cpu/kernels/avx512bf16. Sixteen pairs per step: both rows rounded to bf16
 * (nearest even), widened to 32-bit lanes and the second shifted into the high halves; the tail
 * through lane masks. Denormal inputs are flushed to zero by the instruction, where the plain-C
 * rounding (kiln_cpu_f32_to_bf16) keeps them: values below 2^-126 do not matter to a product of
 * bf16 operands accumulated in f32.
 */
#include <immintrin.h>

#include "backends/cpu/kernels/avx512bf16/kernels-avx512bf16.h"

static inline __m512i widen(__m512 x) { return _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x)); }

void kiln_cpu_bf16_pairs__avx512bf16(const float *lo, const float *hi, size_t n, uint32_t *dst)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i v = widen(_mm512_loadu_ps(lo + i));
        if (hi) v = _mm512_or_si512(v, _mm512_slli_epi32(widen(_mm512_loadu_ps(hi + i)), 16));
        _mm512_storeu_si512(dst + i, v);
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        __m512i v = widen(_mm512_maskz_loadu_ps(m, lo + i));
        if (hi) v = _mm512_or_si512(v, _mm512_slli_epi32(widen(_mm512_maskz_loadu_ps(m, hi + i)), 16));
        _mm512_mask_storeu_epi32(dst + i, m, v);
    }
}

/* 32 floats in order are 32 bf16 in order, which read as 16 words are the 16 pairs. */
void kiln_cpu_bf16_row__avx512bf16(const float *x, size_t n, uint32_t *dst)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        _mm512_storeu_si512(dst + i / 2, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i)));
    if (i < n) {
        size_t rest = n - i, lo_n = rest < 16 ? rest : 16, hi_n = rest - lo_n;
        __m512 lo = _mm512_maskz_loadu_ps((__mmask16)((1u << lo_n) - 1u), x + i);
        __m512 hi = _mm512_maskz_loadu_ps((__mmask16)((1u << hi_n) - 1u), x + i + 16);
        size_t words = (rest + 1) / 2;
        _mm512_mask_storeu_epi32(dst + i / 2, (__mmask16)((1u << words) - 1u), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
}
