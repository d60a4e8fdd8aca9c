/* f32-gemm-12x32-avx512.c — the AVX-512 f32 GEMM microkernel, 12 rows x 32 columns
 * (kiln_cpu_gemm_ukernel contract, kernel_kit.h).
 *
 * Layer: backends/cpu/kernels/avx512. 24 zmm accumulators (12 rows x 2 vectors of 16) take
 * one broadcast of A per row and two loads of B per k, so each k step issues 24 FMAs for 14
 * loads; the remaining 8 registers hold the B pair, the broadcast and the epilogue constants.
 * Edge tiles (m < 12 rows or n < 32 columns) run the same code: A and B panels are zero-padded
 * by the packing, and the epilogue reads and writes C through lane masks, row by row.
 */
#include <immintrin.h>

#include "backends/cpu/kernels/avx512/kernels-avx512.h"

#define MR KILN_CPU_AVX512_MR
#define NR KILN_CPU_AVX512_NR

static inline __mmask16 lanes_from(size_t n, size_t first)
{
    if (n <= first) return 0;
    return n - first >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - first)) - 1u);
}

void kiln_cpu_f32_gemm_ukernel_12x32__avx512(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                             size_t m, size_t n, const kiln_cpu_gemm_tile *tile)
{
    /* Named accumulators: GCC may keep arrays of vectors in memory inside this loop. */
    __m512 l0 = _mm512_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0, l4 = l0, h4 = l0,
           l5 = l0, h5 = l0, l6 = l0, h6 = l0, l7 = l0, h7 = l0, l8 = l0, h8 = l0, l9 = l0, h9 = l0, l10 = l0,
           h10 = l0, l11 = l0, h11 = l0;
    if (tile->accumulate) {
        for (size_t i = 0; i < m; i++) {
            _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
            _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
        }
    }
    /* The K loop runs only the rows the tile has, rounded up to 1, 4, 8 or 12: a short tile
       (M = 1 decode, the last panel of M = 64) would otherwise spend most FMAs on zero rows,
       and at m = 1 those FMAs, not memory, bounded the weight stream. Each accumulator still
       sums its k in order, so the bits do not depend on which loop ran. */
#define ROW(i)                                                                                   \
    ai = _mm512_set1_ps(a[i]);                                                                   \
    l##i = _mm512_fmadd_ps(ai, b0, l##i);                                                        \
    h##i = _mm512_fmadd_ps(ai, b1, h##i);
#define K_LOOP(rows)                                                                             \
    for (size_t k = 0; k < kc; k++, a += MR, b += NR) {                                          \
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), ai;                        \
        rows                                                                                     \
    }
    /* At m = 1 B streams from memory (decode: weights read once per token) as one contiguous
       stream, which the hardware prefetchers follow best alone: software prefetches of B (into
       L2 at 2-16 KiB ahead, or L1) measured 5-20% slower with the weights out of cache. A is
       then the row itself (a_step 1): a packed panel would put one float per 48 bytes, 192 KiB
       at K = 4096, between the stream and L1 (measured 15-25% slower). */
    if (m == 1) {
        const size_t as = tile->a_step ? tile->a_step : MR;
        for (size_t k = 0; k < kc; k++, a += as, b += NR) {
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), ai;
            ROW(0)
        }
    } else if (m <= 4) {
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3))
    } else if (m <= 8) {
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7))
    } else {
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7) ROW(8) ROW(9) ROW(10) ROW(11))
    }
#undef K_LOOP
#undef ROW
    const __m512 lo[MR] = {l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11};
    const __m512 hi[MR] = {h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11};

    const __mmask16 m0 = lanes_from(n, 0), m1 = lanes_from(n, 16);
    const __m512 alpha = _mm512_set1_ps(tile->alpha), beta = _mm512_set1_ps(tile->beta), zero = _mm512_setzero_ps();
    __m512 add0 = _mm512_set1_ps(tile->scalar), add1 = add0;
    if (!tile->accumulate && tile->col_bias) {
        add0 = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(m0, tile->col_bias), add0);
        add1 = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(m1, tile->col_bias + 16), add1);
    }
    for (int i = 0; i < MR; i++) {
        if ((size_t)i >= m) break;
        float *row = c + (size_t)i * ldc;
        __m512 v0, v1;
        if (tile->accumulate) {
            v0 = _mm512_maskz_loadu_ps(m0, row);
            v1 = _mm512_maskz_loadu_ps(m1, row + 16);
        } else if (tile->row_bias) {
            __m512 rb = _mm512_mul_ps(beta, _mm512_set1_ps(tile->row_bias[i]));
            v0 = _mm512_add_ps(add0, rb);
            v1 = _mm512_add_ps(add1, rb);
        } else {
            v0 = add0;
            v1 = add1;
        }
        v0 = _mm512_fmadd_ps(alpha, lo[i], v0);
        v1 = _mm512_fmadd_ps(alpha, hi[i], v1);
        if (tile->relu) {
            v0 = _mm512_max_ps(v0, zero);
            v1 = _mm512_max_ps(v1, zero);
        }
        _mm512_mask_storeu_ps(row, m0, v0);
        _mm512_mask_storeu_ps(row + 16, m1, v1);
    }
}
