/* f32-gemm-12x32-avx512.c — the AVX-512 f32 GEMM microkernel, 12 rows x 32 columns
 * (kiln_cpu_gemm_ukernel contract, kernel_kit.h).
 *
 * Layer: backends/cpu/kernels/avx512. 24 zmm accumulators (12 rows x 2 vectors of 16) take
 * one broadcast of A per row and two loads of B per k, so each k step issues 24 FMAs for 14
 * loads; the remaining 8 registers hold the B pair, the broadcast and the epilogue constants.
 * Edge tiles (m < 12 rows or n < 32 columns) run the same code: A and B panels are zero-padded
 * by the packing, and the tile store (gemm-tile-avx512.h) reads and writes C through lane
 * masks, row by row.
 */
#include <immintrin.h>

#include "backends/cpu/kernels/avx512/gemm-tile-avx512.h"
#include "backends/cpu/kernels/avx512/kernels-avx512.h"

#define MR KILN_CPU_AVX512_MR
#define NR KILN_CPU_AVX512_NR

void kiln_cpu_f32_gemm_ukernel_12x32__avx512(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                             size_t m, size_t n, const kiln_cpu_gemm_tile *tile)
{
    KILN_CPU_GEMM_CONTRACT(kc, a, b, c, ldc, m, n, tile, MR, NR);
    /* Named accumulators: GCC may keep arrays of vectors in memory inside this loop. */
    __m512 l0 = _mm512_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0, l4 = l0, h4 = l0,
           l5 = l0, h5 = l0, l6 = l0, h6 = l0, l7 = l0, h7 = l0, l8 = l0, h8 = l0, l9 = l0, h9 = l0, l10 = l0,
           h10 = l0, l11 = l0, h11 = l0;
    kiln_avx512_prefetch_tile(c, ldc, m, tile);
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
    } else if (tile->a_step == 1) {
        /* Rows of A in place: the rows the loop runs past m read row m - 1 again (never stored). */
        size_t off[MR];
        for (size_t i = 0; i < MR; i++) off[i] = (i < m ? i : m - 1) * tile->a_ld;
#define ROW_IN_PLACE(i)                                                                          \
    ai = _mm512_set1_ps(a[off[i]]);                                                              \
    l##i = _mm512_fmadd_ps(ai, b0, l##i);                                                        \
    h##i = _mm512_fmadd_ps(ai, b1, h##i);
#define K_LOOP_IN_PLACE(rows)                                                                    \
    for (size_t k = 0; k < kc; k++, a++, b += NR) {                                              \
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), ai;                        \
        rows                                                                                     \
    }
        KILN_AVX512_ROWS_IN_STEPS_OF_4(m, K_LOOP_IN_PLACE, ROW_IN_PLACE)
#undef K_LOOP_IN_PLACE
#undef ROW_IN_PLACE
    } else {
        KILN_AVX512_ROWS_IN_STEPS_OF_4(m, K_LOOP, ROW)
    }
#undef K_LOOP
#undef ROW
    kiln_avx512_store_accumulators(l0, h0, l1, h1, l2, h2, l3, h3, l4, h4, l5, h5, l6, h6, l7, h7, l8, h8, l9, h9, l10,
                                   h10, l11, h11, c, ldc, m, n, tile);
}
