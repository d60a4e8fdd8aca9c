/* gemm-tile-avx512.h — the store of a 12 x 32 GEMM tile (kiln_cpu_gemm_tile contract,
 * kernel_kit.h), shared by the AVX-512 microkernels (f32, and bf16 pairs in ../avx512bf16).
 *
 * Layer: backends/cpu/kernels/avx512; include only from files compiled with the avx512 flags.
 * The accumulators are f32 whatever the operands were: c = alpha * acc + (accumulate ? c :
 * scalar + beta * (row_bias[i] + col_bias[j])), then ReLU when asked, and c2 += alpha2 * acc
 * when c2 is set; lanes past n and rows past m are neither read nor written. The arithmetic of
 * a row is the template's (../template/gemm-tile-store.h), shared with the AVX2 kernel.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_AVX512_GEMM_TILE_AVX512_H
#define KILN_BACKENDS_CPU_KERNELS_AVX512_GEMM_TILE_AVX512_H

#include <immintrin.h>

#include "backends/cpu/kernels/avx512/vec-avx512.h"
#include "backends/cpu/kernels/kernel_kit.h"
#include "backends/cpu/kernels/template/gemm-tile-store.h"

#define KILN_CPU_AVX512_TILE_ROWS 12

/* Row i of the tile (lo: columns 0..15, hi: 16..31) into c's row i, and into c2's when set:
   the template's store through lane masks (part), so nothing past n is read or written. */
static inline void kiln_avx512_store_row(__m512 lo, __m512 hi, float *c, size_t ldc, size_t i, const gemm_tile_store *k,
                                         const kiln_cpu_gemm_tile *tile)
{
    gemm_tile_row(lo, hi, c + i * ldc, i, true, k, tile);
    if (tile->c2) gemm_tile_add_row(lo, hi, tile->c2 + i * ldc, vf_set1(tile->alpha2), true, k);
}

/* Rows i < m of the tile: lo[i] holds columns 0..15, hi[i] columns 16..31. */
static inline void kiln_avx512_store_tile(const __m512 *lo, const __m512 *hi, float *c, size_t ldc, size_t m,
                                          size_t n, const kiln_cpu_gemm_tile *tile)
{
    const gemm_tile_store k = gemm_tile_setup(n, true, tile, tile->col_bias);
    for (size_t i = 0; i < m && i < KILN_CPU_AVX512_TILE_ROWS; i++) kiln_avx512_store_row(lo[i], hi[i], c, ldc, i, &k, tile);
}

/* The end of a 12 x 32 microkernel: its accumulators (l: columns 0..15, h: 16..31 of rows
   0..11) into the tile. A tile with all 12 rows is stored row by row straight from them, with no
   array in between (an array of 24 vectors went through the stack, 48 memory operations a tile;
   kc = 128 tiles, the products of a BERT-like layer, lost 3%); a shorter one (the last panel of
   M) through arrays. Always inlined, so that the accumulators stay in their registers. */
static inline __attribute__((always_inline)) void
kiln_avx512_store_accumulators(__m512 l0, __m512 h0, __m512 l1, __m512 h1, __m512 l2, __m512 h2, __m512 l3, __m512 h3,
                               __m512 l4, __m512 h4, __m512 l5, __m512 h5, __m512 l6, __m512 h6, __m512 l7, __m512 h7,
                               __m512 l8, __m512 h8, __m512 l9, __m512 h9, __m512 l10, __m512 h10, __m512 l11,
                               __m512 h11, float *c, size_t ldc, size_t m, size_t n, const kiln_cpu_gemm_tile *tile)
{
    if (m == KILN_CPU_AVX512_TILE_ROWS) {
        const gemm_tile_store k = gemm_tile_setup(n, true, tile, tile->col_bias);
        kiln_avx512_store_row(l0, h0, c, ldc, 0, &k, tile);
        kiln_avx512_store_row(l1, h1, c, ldc, 1, &k, tile);
        kiln_avx512_store_row(l2, h2, c, ldc, 2, &k, tile);
        kiln_avx512_store_row(l3, h3, c, ldc, 3, &k, tile);
        kiln_avx512_store_row(l4, h4, c, ldc, 4, &k, tile);
        kiln_avx512_store_row(l5, h5, c, ldc, 5, &k, tile);
        kiln_avx512_store_row(l6, h6, c, ldc, 6, &k, tile);
        kiln_avx512_store_row(l7, h7, c, ldc, 7, &k, tile);
        kiln_avx512_store_row(l8, h8, c, ldc, 8, &k, tile);
        kiln_avx512_store_row(l9, h9, c, ldc, 9, &k, tile);
        kiln_avx512_store_row(l10, h10, c, ldc, 10, &k, tile);
        kiln_avx512_store_row(l11, h11, c, ldc, 11, &k, tile);
        return;
    }
    const __m512 lo[KILN_CPU_AVX512_TILE_ROWS] = {l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11};
    const __m512 hi[KILN_CPU_AVX512_TILE_ROWS] = {h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11};
    kiln_avx512_store_tile(lo, hi, c, ldc, m, n, tile);
}

/* The K loop for the m rows a tile has (m > 1), rounded up to 4, 8 or 12: K_LOOP(body) runs one
   k step of body, ROW(i) is row i's work in it (both macros of the microkernel, which name its
   accumulators). A short tile (the last panel of M = 64) would otherwise spend most FMAs on
   zero rows; each accumulator still sums its k in order, so the bits do not depend on which
   loop ran. */
#define KILN_AVX512_ROWS_IN_STEPS_OF_4(m, K_LOOP, ROW)                                             \
    if ((m) <= 4) {                                                                              \
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3))                                                      \
    } else if ((m) <= 8) {                                                                       \
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7))                          \
    } else {                                                                                     \
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7) ROW(8) ROW(9) ROW(10) ROW(11)) \
    }

/* Prefetch the tile's rows of C when they will be read (accumulate), and of c2. */
static inline void kiln_avx512_prefetch_tile(const float *c, size_t ldc, size_t m, const kiln_cpu_gemm_tile *tile)
{
    for (size_t i = 0; i < m && tile->accumulate; i++) {
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
    }
    for (size_t i = 0; i < m && tile->c2; i++) {
        _mm_prefetch((const char *)(tile->c2 + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(tile->c2 + i * ldc + 16), _MM_HINT_T0);
    }
}

#endif
