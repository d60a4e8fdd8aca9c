/* f32-gemm-6x16-avx2.c — the AVX2 + FMA f32 GEMM microkernel, 6 rows x 16 columns
 * (kiln_cpu_gemm_ukernel contract, kernel_kit.h).
 *
 * Layer: backends/cpu/kernels/avx2. 12 ymm accumulators (6 rows x 2 vectors of 8), two B
 * loads and six A broadcasts per k: 12 FMAs for 8 loads, in 15 of the 16 ymm registers. A
 * partial tile (m < 6 or n < 16) is finished in a 6x16 stack tile: the part of C it covers is
 * copied in, the same vector epilogue runs there, and the part is copied back, so the
 * arithmetic stays vectorised and C is never touched outside m x n. (vmaskmovps would do the
 * same without the copies, but its store form is microcoded on AMD cores.)
 */
#include <immintrin.h>
#include <string.h>

#include "backends/cpu/kernels/avx2/kernels-avx2.h"
#include "backends/cpu/kernels/avx2/vec-avx2.h"
#include "backends/cpu/kernels/template/gemm-tile-store.h"

#define MR KILN_CPU_AVX2_MR
#define NR KILN_CPU_AVX2_NR

/* The epilogue of kernel_kit.h on a full MR x NR tile at c (row stride ldc), whole vectors (the
   template's, ../template/gemm-tile-store.h); col_bias has NR readable floats when set. */
static inline void tile_epilogue(const __m256 *lo, const __m256 *hi, float *c, size_t ldc,
                                 const kiln_cpu_gemm_tile *tile, const float *col_bias)
{
    const gemm_tile_store k = gemm_tile_setup(NR, false, tile, col_bias);
    for (int i = 0; i < MR; i++) gemm_tile_row(lo[i], hi[i], c + (size_t)i * ldc, (size_t)i, false, &k, tile);
}

/* c2 += alpha2 * acc on a full MR x NR tile at c2 (row stride ldc). */
static inline void tile_add_second(const __m256 *lo, const __m256 *hi, float *c2, size_t ldc, float alpha2)
{
    const gemm_tile_store k = {.n0 = VF_WIDTH, .n1 = VF_WIDTH};
    const __m256 a2 = _mm256_set1_ps(alpha2);
    for (int i = 0; i < MR; i++) gemm_tile_add_row(lo[i], hi[i], c2 + (size_t)i * ldc, a2, false, &k);
}

void kiln_cpu_f32_gemm_ukernel_6x16__avx2(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t m,
                                          size_t n, const kiln_cpu_gemm_tile *tile)
{
    KILN_CPU_GEMM_CONTRACT(kc, a, b, c, ldc, m, n, tile, MR, NR);
    /* Named accumulators: GCC keeps arrays of vectors in memory inside this loop. */
    __m256 l0 = _mm256_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0, l4 = l0, h4 = l0,
           l5 = l0, h5 = l0;
    if (tile->accumulate)
        for (size_t i = 0; i < m; i++) _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    /* The K loop runs only the rows the tile has, rounded up to 1, 3 or 6: at m = 1 (decode
       rows) the FMAs on zero rows, not memory, bounded the weight stream. Each accumulator
       still sums its k in order, so the bits do not depend on which loop ran. */
#define ROW(i)                                                                                   \
    ai = _mm256_broadcast_ss(a + i);                                                             \
    l##i = _mm256_fmadd_ps(ai, b0, l##i);                                                        \
    h##i = _mm256_fmadd_ps(ai, b1, h##i);
#define K_LOOP(rows)                                                                             \
    for (size_t k = 0; k < kc; k++, a += MR, b += NR) {                                          \
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), ai;                         \
        rows                                                                                     \
    }
    if (m == 1) {
        /* B streams from memory here (decode: read once per token), one contiguous stream that
           the hardware prefetchers follow best alone (software prefetches measured slower, as
           in the AVX-512 kernel). A is a packed panel or, for decode rows, the row itself. */
        const size_t as = tile->a_step ? tile->a_step : MR;
        for (size_t k = 0; k < kc; k++, a += as, b += NR) {
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), ai;
            ROW(0)
        }
    } else if (tile->a_step == 1) {
        /* Rows of A in place: the rows the loop runs past m read row m - 1 again (never stored). */
        size_t off[MR];
        for (size_t i = 0; i < MR; i++) off[i] = (i < m ? i : m - 1) * tile->a_ld;
#define ROW_IN_PLACE(i)                                                                          \
    ai = _mm256_broadcast_ss(a + off[i]);                                                        \
    l##i = _mm256_fmadd_ps(ai, b0, l##i);                                                        \
    h##i = _mm256_fmadd_ps(ai, b1, h##i);
#define K_LOOP_IN_PLACE(rows)                                                                    \
    for (size_t k = 0; k < kc; k++, a++, b += NR) {                                              \
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), ai;                         \
        rows                                                                                     \
    }
        if (m <= 3) {
            K_LOOP_IN_PLACE(ROW_IN_PLACE(0) ROW_IN_PLACE(1) ROW_IN_PLACE(2))
        } else {
            K_LOOP_IN_PLACE(ROW_IN_PLACE(0) ROW_IN_PLACE(1) ROW_IN_PLACE(2) ROW_IN_PLACE(3) ROW_IN_PLACE(4)
                                ROW_IN_PLACE(5))
        }
#undef K_LOOP_IN_PLACE
#undef ROW_IN_PLACE
    } else if (m <= 3) {
        K_LOOP(ROW(0) ROW(1) ROW(2))
    } else {
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5))
    }
#undef K_LOOP
#undef ROW
    const __m256 out_lo[MR] = {l0, l1, l2, l3, l4, l5}, out_hi[MR] = {h0, h1, h2, h3, h4, h5};
    if (m == MR && n == NR) {
        tile_epilogue(out_lo, out_hi, c, ldc, tile, tile->col_bias);
        if (tile->c2) tile_add_second(out_lo, out_hi, tile->c2, ldc, tile->alpha2);
        return;
    }
    /* Partial tile: the same epilogue on a padded copy. A row bias is only read for rows < m. */
    float pad[MR * NR] = {0}, bias_pad[NR] = {0};
    kiln_cpu_gemm_tile t = *tile;
    float row_bias[MR] = {0};
    if (t.row_bias) {
        memcpy(row_bias, t.row_bias, m * sizeof(float));
        t.row_bias = row_bias;
    }
    if (t.col_bias) memcpy(bias_pad, t.col_bias, n * sizeof(float));
    if (t.accumulate)
        for (size_t i = 0; i < m; i++) memcpy(pad + i * NR, c + i * ldc, n * sizeof(float));
    tile_epilogue(out_lo, out_hi, pad, NR, &t, t.col_bias ? bias_pad : NULL);
    for (size_t i = 0; i < m; i++) memcpy(c + i * ldc, pad + i * NR, n * sizeof(float));
    if (!tile->c2) return;
    for (size_t i = 0; i < m; i++) memcpy(pad + i * NR, tile->c2 + i * ldc, n * sizeof(float));
    tile_add_second(out_lo, out_hi, pad, NR, tile->alpha2);
    for (size_t i = 0; i < m; i++) memcpy(tile->c2 + i * ldc, pad + i * NR, n * sizeof(float));
}
