/* gemm-tile-avx512.h — the store of a 12 x 32 GEMM tile (kiln_cpu_gemm_tile contract,
 * kernel_kit.h), shared by the AVX-512 microkernels (f32, and bf16 pairs in ../avx512bf16).
 *
 * Layer: backends/cpu/kernels/avx512; include only from files compiled with the avx512 flags.
 * The accumulators are f32 whatever the operands were: c = alpha * acc + (accumulate ? c :
 * scalar + beta * (row_bias[i] + col_bias[j])), then ReLU when asked, and c2 += alpha2 * acc
 * when c2 is set; lanes past n and rows past m are neither read nor written.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_AVX512_GEMM_TILE_AVX512_H
#define KILN_BACKENDS_CPU_KERNELS_AVX512_GEMM_TILE_AVX512_H

#include <immintrin.h>

#include "backends/cpu/kernels/kernel_kit.h"

#define KILN_CPU_AVX512_TILE_ROWS 12

static inline __mmask16 kiln_avx512_lanes_from(size_t n, size_t first)
{
    if (n <= first) return 0;
    return n - first >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - first)) - 1u);
}

/* Rows i < m of the tile: lo[i] holds columns 0..15, hi[i] columns 16..31. */
static inline void kiln_avx512_store_tile(const __m512 *lo, const __m512 *hi, float *c, size_t ldc, size_t m,
                                          size_t n, const kiln_cpu_gemm_tile *tile)
{
    const __mmask16 m0 = kiln_avx512_lanes_from(n, 0), m1 = kiln_avx512_lanes_from(n, 16);
    const __m512 alpha = _mm512_set1_ps(tile->alpha), beta = _mm512_set1_ps(tile->beta), zero = _mm512_setzero_ps();
    __m512 add0 = _mm512_set1_ps(tile->scalar), add1 = add0;
    if (!tile->accumulate && tile->col_bias) {
        add0 = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(m0, tile->col_bias), add0);
        add1 = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(m1, tile->col_bias + 16), add1);
    }
    for (int i = 0; i < KILN_CPU_AVX512_TILE_ROWS; i++) {
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
    if (!tile->c2) return;
    const __m512 alpha2 = _mm512_set1_ps(tile->alpha2);
    for (int i = 0; i < KILN_CPU_AVX512_TILE_ROWS; i++) {
        if ((size_t)i >= m) break;
        float *row = tile->c2 + (size_t)i * ldc;
        _mm512_mask_storeu_ps(row, m0, _mm512_fmadd_ps(alpha2, lo[i], _mm512_maskz_loadu_ps(m0, row)));
        _mm512_mask_storeu_ps(row + 16, m1, _mm512_fmadd_ps(alpha2, hi[i], _mm512_maskz_loadu_ps(m1, row + 16)));
    }
}

/* The K loop for the rows a tile has (m > 1), rounded up to 4, 8 or 12: K_LOOP(body) runs one
   k step of body, ROW(i) is row i's work in it. A short tile (the last panel of M = 64) would
   otherwise spend most FMAs on zero rows; each accumulator still sums its k in order, so the
   bits do not depend on which loop ran. */
#define KILN_AVX512_ROWS_IN_STEPS_OF_4(K_LOOP, ROW)                                                \
    if (m <= 4) {                                                                                \
        K_LOOP(ROW(0) ROW(1) ROW(2) ROW(3))                                                      \
    } else if (m <= 8) {                                                                         \
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
