/* q-dot-4x4-avx2.c — the QLINEAR block dot products for AVX2 + FMA + F16C (kiln_cpu_qdot_fn,
 * kernel_kit.h): up to 4 weight rows of Q8_0 or Q4_0 blocks against up to 4 rows of f32 X.
 *
 * Layer: backends/cpu/kernels/avx2, compiled with the avx2 flags. A block's 32 quants are
 * widened to four vectors of 8 f32 (vpmovsxbd, vcvtdq2ps), multiplied with the X row's 32
 * floats in two chains, and the block's sum vector scaled by d into the output's accumulator
 * with one FMA: per output one dependent FMA per block, so the four rows' chains overlap and a
 * decode step (one X row) is limited by the weight stream, not by FMA latency. X rows go in
 * pairs (8 accumulators, 4 quant vectors: the 16 registers), each pair re-reading the rows'
 * blocks from L1.
 */
#include "backends/cpu/kernels/avx2/kernels-avx2.h"

#include <immintrin.h>
#include <string.h>

#define QK 32

enum { Q8_0, Q4_0 };

static inline __m256 widen8(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)); }

/* The block's quants as f32, q[k] holding elements 8k .. 8k + 7, and its scale d. */
static inline __attribute__((always_inline)) __m256 unpack(int type, const uint8_t *b, __m256 q[4])
{
    uint16_t h;
    memcpy(&h, b, sizeof h);
    if (type == Q8_0) {
        for (int k = 0; k < 4; k++) {
            __m128i bytes;
            memcpy(&bytes, b + 2 + 8 * k, 8); /* vmovq: the low 8 bytes */
            q[k] = widen8(bytes);
        }
    } else {
        /* Byte j holds element j (low nibble) and j + 16 (high nibble), both offset by 8. */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + 2)), nibble = _mm_set1_epi8(0x0f),
                eight = _mm_set1_epi8(8);
        __m128i lo = _mm_sub_epi8(_mm_and_si128(v, nibble), eight);
        __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), nibble), eight);
        q[0] = widen8(lo);
        q[1] = widen8(_mm_srli_si128(lo, 8));
        q[2] = widen8(hi);
        q[3] = widen8(_mm_srli_si128(hi, 8));
    }
    return _mm256_set1_ps(_cvtsh_ss(h));
}

static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* ROWS weight rows by MI X rows, both compile-time constants once inlined, so that the
   accumulators live in registers. */
static inline __attribute__((always_inline)) void tile(int type, size_t ROWS, size_t MI, const uint8_t *w,
                                                       size_t row_size, size_t n_blocks, const float *x, size_t ldx,
                                                       const float *bias, float *y, size_t ldy)
{
    size_t block_bytes = type == Q8_0 ? 34 : 18;
    __m256 acc[4][2];
    for (size_t r = 0; r < ROWS; r++)
        for (size_t i = 0; i < MI; i++) acc[r][i] = _mm256_setzero_ps();
    for (size_t b = 0; b < n_blocks; b++) {
        for (size_t r = 0; r < ROWS; r++) {
            __m256 q[4];
            __m256 d = unpack(type, w + r * row_size + b * block_bytes, q);
            for (size_t i = 0; i < MI; i++) {
                const float *xb = x + i * ldx + b * QK;
                __m256 s0 = _mm256_mul_ps(q[0], _mm256_loadu_ps(xb));
                __m256 s1 = _mm256_mul_ps(q[1], _mm256_loadu_ps(xb + 8));
                s0 = _mm256_fmadd_ps(q[2], _mm256_loadu_ps(xb + 16), s0);
                s1 = _mm256_fmadd_ps(q[3], _mm256_loadu_ps(xb + 24), s1);
                acc[r][i] = _mm256_fmadd_ps(_mm256_add_ps(s0, s1), d, acc[r][i]);
            }
        }
    }
    for (size_t i = 0; i < MI; i++)
        for (size_t r = 0; r < ROWS; r++) y[i * ldy + r] = (bias ? bias[r] : 0.0f) + hsum(acc[r][i]);
}

static inline __attribute__((always_inline)) void qdot(int type, const uint8_t *w, size_t row_size, size_t rows,
                                                       size_t n_blocks, const float *x, size_t ldx, size_t m,
                                                       const float *bias, float *y, size_t ldy)
{
    for (size_t i0 = 0; i0 < m; i0 += 2) {
        const float *xi = x + i0 * ldx;
        float *yi = y + i0 * ldy;
        bool pair = m - i0 >= 2;
#define TILE(R)                                                                                  \
    case R:                                                                                      \
        if (pair) tile(type, R, 2, w, row_size, n_blocks, xi, ldx, bias, yi, ldy);               \
        else tile(type, R, 1, w, row_size, n_blocks, xi, ldx, bias, yi, ldy);                    \
        break;
        switch (rows) {
            TILE(1)
            TILE(2)
            TILE(3)
            default: TILE(4)
        }
#undef TILE
    }
}

void kiln_cpu_q8_0_dot__avx2(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                             size_t ldx, size_t m, const float *bias, float *y, size_t ldy)
{
    qdot(Q8_0, w, row_size, rows, n_blocks, x, ldx, m, bias, y, ldy);
}

void kiln_cpu_q4_0_dot__avx2(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                             size_t ldx, size_t m, const float *bias, float *y, size_t ldy)
{
    qdot(Q4_0, w, row_size, rows, n_blocks, x, ldx, m, bias, y, ldy);
}
