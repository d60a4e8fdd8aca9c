/* bf16-gemm-12x32-avx512bf16.c — the AVX512-BF16 GEMM microkernel, 12 rows x 32 columns on
 * bf16 pairs with f32 accumulators (kiln_cpu_gemm_bf16_ukernel contract, kernel_kit.h).
 *
 * Layer: backends/cpu/kernels/avx512bf16. Per pair of k, one broadcast of A's pair per row and
 * two loads of B's 32 pairs; vdpbf16ps multiplies both halves of each 32-bit lane and adds them
 * to the f32 accumulator, so each instruction does twice the multiply-adds of an f32 FMA. The
 * rows the tile has are run in steps of 4, as in the f32 kernel; the store is the f32 kernel's
 * (avx512/gemm-tile-avx512.h).
 */
#include <immintrin.h>

#include "backends/cpu/kernels/avx512/gemm-tile-avx512.h"
#include "backends/cpu/kernels/avx512bf16/kernels-avx512bf16.h"

#define MR KILN_CPU_AVX512_MR
#define NR KILN_CPU_AVX512_NR

void kiln_cpu_bf16_gemm_ukernel_12x32__avx512bf16(size_t kp, const uint32_t *a, const uint32_t *b, float *c,
                                                  size_t ldc, size_t m, size_t n, const kiln_cpu_gemm_tile *tile)
{
    KILN_CPU_GEMM_CONTRACT(kp, a, b, c, ldc, m, n, tile, MR, NR);
    /* Named accumulators, as in the f32 kernel. */
    __m512 l0 = _mm512_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0, l4 = l0, h4 = l0,
           l5 = l0, h5 = l0, l6 = l0, h6 = l0, l7 = l0, h7 = l0, l8 = l0, h8 = l0, l9 = l0, h9 = l0, l10 = l0,
           h10 = l0, l11 = l0, h11 = l0;
    kiln_avx512_prefetch_tile(c, ldc, m, tile);
#define ROW(i)                                                                                   \
    ai = (__m512bh)_mm512_set1_epi32((int)a[i]);                                                 \
    l##i = _mm512_dpbf16_ps(l##i, ai, b0);                                                       \
    h##i = _mm512_dpbf16_ps(h##i, ai, b1);
#define K_LOOP(rows)                                                                             \
    for (size_t k = 0; k < kp; k++, a += MR, b += NR) {                                          \
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16), ai; \
        rows                                                                                     \
    }
    if (m == 1) {
        K_LOOP(ROW(0))
    } else {
        KILN_AVX512_ROWS_IN_STEPS_OF_4(m, K_LOOP, ROW)
    }
#undef K_LOOP
#undef ROW
    kiln_avx512_store_accumulators(l0, h0, l1, h1, l2, h2, l3, h3, l4, h4, l5, h5, l6, h6, l7, h7, l8, h8, l9, h9, l10,
                                   h10, l11, h11, c, ldc, m, n, tile);
}
