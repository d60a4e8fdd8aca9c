/* q-dot-4x4-generic.c — the QLINEAR block dot products in plain C (kiln_cpu_qdot_fn,
 * kernel_kit.h): up to 4 weight rows of Q8_0 or Q4_0 blocks against up to 4 rows of f32 X.
 *
 * Layer: backends/cpu/kernels/generic, compiled with the generic flags. Each block's 32 quants
 * become f32 once, are dotted with the same 32 floats of every X row, and the dot is scaled by
 * the block's d (f16, decoded as the portable kernels decode it) into that output's f32 sum.
 * Block layouts: docs/format.md "Block-quantized types" (ggml's).
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"
#include "kernels/portable/elementwise_half.h"

#define QK 32

static float block_scale(const uint8_t *b) { return kiln_ew_f16_to_f32((uint16_t)(b[0] | (b[1] << 8))); }

/* Q8_0, 34 bytes: f16 d, 32 x i8. */
static float unpack_q8_0(const uint8_t *b, float *q)
{
    for (int j = 0; j < QK; j++) q[j] = (float)(int8_t)b[2 + j];
    return block_scale(b);
}

/* Q4_0, 18 bytes: f16 d, 16 bytes: element j in the low nibble of byte j, j + 16 in its high
   nibble, offset by 8. */
static float unpack_q4_0(const uint8_t *b, float *q)
{
    for (int j = 0; j < QK / 2; j++) {
        q[j] = (float)((b[2 + j] & 0x0f) - 8);
        q[j + QK / 2] = (float)((b[2 + j] >> 4) - 8);
    }
    return block_scale(b);
}

static void qdot(float (*unpack)(const uint8_t *, float *), size_t block_bytes, const uint8_t *w, size_t row_size,
                 size_t rows, size_t n_blocks, const float *x, size_t ldx, size_t m, const float *bias, float *y,
                 size_t ldy)
{
    float acc[KILN_CPU_QDOT_M][KILN_CPU_QDOT_ROWS] = {{0}};
    float q[QK];
    for (size_t b = 0; b < n_blocks; b++) {
        for (size_t r = 0; r < rows; r++) {
            float d = unpack(w + r * row_size + b * block_bytes, q);
            for (size_t i = 0; i < m; i++) {
                const float *xb = x + i * ldx + b * QK;
                /* Eight partial sums, so that the compiler can keep them in one vector. */
                float part[8] = {0};
                for (int j = 0; j < QK; j += 8)
                    for (int l = 0; l < 8; l++) part[l] += q[j + l] * xb[j + l];
                float s = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
                acc[i][r] += d * s;
            }
        }
    }
    for (size_t i = 0; i < m; i++)
        for (size_t r = 0; r < rows; r++) y[i * ldy + r] = (bias ? bias[r] : 0.0f) + acc[i][r];
}

void kiln_cpu_q8_0_dot__generic(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                                size_t ldx, size_t m, const float *bias, float *y, size_t ldy)
{
    qdot(unpack_q8_0, 34, w, row_size, rows, n_blocks, x, ldx, m, bias, y, ldy);
}

void kiln_cpu_q4_0_dot__generic(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                                size_t ldx, size_t m, const float *bias, float *y, size_t ldy)
{
    qdot(unpack_q4_0, 18, w, row_size, rows, n_blocks, x, ldx, m, bias, y, ldy);
}
