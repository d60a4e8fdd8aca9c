/* q-dot-4x4-avx512.c — the QLINEAR block dot products for AVX-512 (kiln_cpu_qdot_fn,
 * kernel_kit.h): up to 4 weight rows of Q8_0 or Q4_0 blocks against up to 4 rows of f32 X.
 *
 * Layer: backends/cpu/kernels/avx512, compiled with the avx512 flags (F16C included). A block's
 * 32 quants are two vectors of 16 f32 (vpmovsxbd from 16 bytes for Q8_0; for Q4_0 the 16 bytes
 * zero-extended once, the low nibbles elements 0-15 and the high ones 16-31), multiplied with
 * the X row's 32 floats and the sum scaled by d into the output's accumulator with one FMA.
 * 4 x 4 accumulators fit the 32 registers, so every converted block serves four X rows.
 */
#include "backends/cpu/kernels/avx512/kernels-avx512.h"

#include <immintrin.h>
#include <string.h>

#define QK 32

enum { Q8_0, Q4_0 };

/* The block's quants as f32, q[0] elements 0-15 and q[1] 16-31, and its scale d. */
static inline __attribute__((always_inline)) __m512 unpack(int type, const uint8_t *b, __m512 q[2])
{
    uint16_t h;
    memcpy(&h, b, sizeof h);
    if (type == Q8_0) {
        q[0] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + 2))));
        q[1] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + 18))));
    } else {
        __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + 2)));
        __m512i eight = _mm512_set1_epi32(8);
        q[0] = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(v, _mm512_set1_epi32(0x0f)), eight));
        q[1] = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(v, 4), eight));
    }
    return _mm512_set1_ps(_cvtsh_ss(h));
}

/* ROWS weight rows by MI X rows, compile-time constants once inlined (accumulators in
   registers). */
static inline __attribute__((always_inline)) void tile(int type, size_t ROWS, size_t MI, const uint8_t *w,
                                                       size_t row_size, size_t n_blocks, const float *x, size_t ldx,
                                                       const float *bias, float *y, size_t ldy)
{
    size_t block_bytes = type == Q8_0 ? 34 : 18;
    __m512 acc[4][4];
    for (size_t r = 0; r < ROWS; r++)
        for (size_t i = 0; i < MI; i++) acc[r][i] = _mm512_setzero_ps();
    for (size_t b = 0; b < n_blocks; b++) {
        for (size_t r = 0; r < ROWS; r++) {
            __m512 q[2];
            __m512 d = unpack(type, w + r * row_size + b * block_bytes, q);
            for (size_t i = 0; i < MI; i++) {
                const float *xb = x + i * ldx + b * QK;
                __m512 s = _mm512_mul_ps(q[0], _mm512_loadu_ps(xb));
                s = _mm512_fmadd_ps(q[1], _mm512_loadu_ps(xb + 16), s);
                acc[r][i] = _mm512_fmadd_ps(s, d, acc[r][i]);
            }
        }
    }
    for (size_t i = 0; i < MI; i++)
        for (size_t r = 0; r < ROWS; r++) y[i * ldy + r] = (bias ? bias[r] : 0.0f) + _mm512_reduce_add_ps(acc[r][i]);
}

static inline __attribute__((always_inline)) void qdot(int type, const uint8_t *w, size_t row_size, size_t rows,
                                                       size_t n_blocks, const float *x, size_t ldx, size_t m,
                                                       const float *bias, float *y, size_t ldy)
{
#define TILE_M(R, M)                                                                             \
    case M: tile(type, R, M, w, row_size, n_blocks, x, ldx, bias, y, ldy); break;
#define TILE(R)                                                                                  \
    case R:                                                                                      \
        switch (m) {                                                                             \
            TILE_M(R, 1)                                                                         \
            TILE_M(R, 2)                                                                         \
            TILE_M(R, 3)                                                                         \
            default: TILE_M(R, 4)                                                                \
        }                                                                                        \
        break;
    switch (rows) {
        TILE(1)
        TILE(2)
        TILE(3)
        default: TILE(4)
    }
#undef TILE
#undef TILE_M
}

void kiln_cpu_q8_0_dot__avx512(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                               size_t ldx, size_t m, const float *bias, float *y, size_t ldy)
{
    qdot(Q8_0, w, row_size, rows, n_blocks, x, ldx, m, bias, y, ldy);
}

void kiln_cpu_q4_0_dot__avx512(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                               size_t ldx, size_t m, const float *bias, float *y, size_t ldy)
{
    qdot(Q4_0, w, row_size, rows, n_blocks, x, ldx, m, bias, y, ldy);
}
