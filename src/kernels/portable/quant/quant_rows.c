/* quant_rows.c — decoding rows of F32, F16, BF16 and ggml's Q8_0, Q4_0, Q4_K and Q6_K blocks.
 *
 * Layer: kernels/portable (quant). Every multi-byte field is read byte by byte (little-endian,
 * as GGUF stores it), so a row may start at any address. The arithmetic is ggml's, in f32 and
 * in the same order (d * sc first, then times q), so a row decodes to the floats llama.cpp gets.
 */
#include <string.h>

#include "kernels/portable/elementwise_half.h"
#include "kernels/portable/quant/quant_rows.h"

#define QK_SMALL 32   /* elements of a Q8_0 / Q4_0 block */
#define QK_SUPER 256  /* elements of a Q4_K / Q6_K super-block */

static uint16_t read_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static float read_f16(const uint8_t *p) { return kiln_ew_f16_to_f32(read_u16(p)); }

/* Q8_0, 34 bytes: f16 d, 32 x i8 q; x = d * q. */
static void decode_q8_0(const uint8_t *b, float *y)
{
    float d = read_f16(b);
    for (int j = 0; j < QK_SMALL; j++) y[j] = d * (float)(int8_t)b[2 + j];
}

/* Q4_0, 18 bytes: f16 d, 16 bytes whose low nibble is element j and high nibble element j + 16;
   x = d * (q - 8). */
static void decode_q4_0(const uint8_t *b, float *y)
{
    float d = read_f16(b);
    const uint8_t *qs = b + 2;
    for (int j = 0; j < QK_SMALL / 2; j++) {
        y[j] = d * (float)((qs[j] & 0x0f) - 8);
        y[j + QK_SMALL / 2] = d * (float)((qs[j] >> 4) - 8);
    }
}

/* The 6-bit scale and min of sub-block j (0..7) of a Q4_K super-block, from its 12 scale bytes:
   sub-blocks 0-3 keep theirs in the low 6 bits of bytes j (scale) and j + 4 (min); sub-blocks
   4-7 put their low 4 bits in the nibbles of byte j + 4 and their top 2 bits in the spare top
   bits of bytes j - 4 (scale) and j (min). */
static void q4_k_scale_min(int j, const uint8_t *s, uint8_t *scale, uint8_t *min)
{
    if (j < 4) {
        *scale = s[j] & 63;
        *min = s[j + 4] & 63;
    } else {
        *scale = (uint8_t)((s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4));
        *min = (uint8_t)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

/* Q4_K, 144 bytes: f16 d, f16 dmin, 12 bytes of sub-block scales/mins, 128 bytes of 4-bit quants.
   Eight sub-blocks of 32; each 32 quant bytes hold two sub-blocks, the first in the low nibbles
   and the second in the high ones. x = d * scale * q - dmin * min. */
static void decode_q4_k(const uint8_t *b, float *y)
{
    float d = read_f16(b), dmin = read_f16(b + 2);
    const uint8_t *scales = b + 4, *qs = b + 16;
    for (int pair = 0; pair < 4; pair++, qs += 32, y += 64) {
        uint8_t sc0, m0, sc1, m1;
        q4_k_scale_min(2 * pair, scales, &sc0, &m0);
        q4_k_scale_min(2 * pair + 1, scales, &sc1, &m1);
        float d0 = d * sc0, min0 = dmin * m0, d1 = d * sc1, min1 = dmin * m1;
        for (int l = 0; l < 32; l++) {
            y[l] = d0 * (float)(qs[l] & 0x0f) - min0;
            y[l + 32] = d1 * (float)(qs[l] >> 4) - min1;
        }
    }
}

/* Q6_K, 210 bytes: 128 bytes ql (low 4 bits), 64 bytes qh (high 2 bits), 16 x i8 scales (one per
   16 elements), f16 d. Each half of 128 elements uses 64 ql and 32 qh bytes: for l < 32, the four
   quants l, l+32, l+64, l+96 take the low nibble of ql[l], the low nibble of ql[l+32], the high
   nibble of ql[l], the high nibble of ql[l+32], and bits 0-1, 2-3, 4-5, 6-7 of qh[l].
   x = d * scale * (q - 32). */
static void decode_q6_k(const uint8_t *b, float *y)
{
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    float d = read_f16(b + 208);
    for (int half = 0; half < 2; half++, ql += 64, qh += 32, sc += 8, y += 128) {
        for (int l = 0; l < 32; l++) {
            int s = l / 16;
            int q0 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
            int q1 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
            int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * (float)sc[s] * (float)q0;
            y[l + 32] = d * (float)sc[s + 2] * (float)q1;
            y[l + 64] = d * (float)sc[s + 4] * (float)q2;
            y[l + 96] = d * (float)sc[s + 6] * (float)q3;
        }
    }
}

bool kiln_dequantize_supported(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F32: case KILN_DTYPE_F16: case KILN_DTYPE_BF16:
    case KILN_DTYPE_Q8_0: case KILN_DTYPE_Q4_0: case KILN_DTYPE_Q4_K: case KILN_DTYPE_Q6_K:
        return true;
    default:
        return false;
    }
}

kiln_status kiln_dequantize_row(kiln_dtype dtype, const void *src, float *dst, int64_t n)
{
    if (!kiln_dequantize_supported(dtype)) return KILN_ERROR_NOT_SUPPORTED;
    uint32_t block_elements, block_bytes;
    if (kiln_dtype_block(dtype, &block_elements, &block_bytes) != KILN_OK) return KILN_ERROR_NOT_SUPPORTED;
    if (n < 0 || n % block_elements != 0) return KILN_ERROR_SHAPE_MISMATCH;
    if (n == 0) return KILN_OK; /* src and dst may be NULL then */
    const uint8_t *p = src;
    switch (dtype) {
    case KILN_DTYPE_F32:
        memcpy(dst, p, (size_t)n * sizeof(float));
        return KILN_OK;
    case KILN_DTYPE_F16:
        for (int64_t i = 0; i < n; i++) dst[i] = read_f16(p + 2 * i);
        return KILN_OK;
    case KILN_DTYPE_BF16:
        for (int64_t i = 0; i < n; i++) dst[i] = kiln_ew_bf16_to_f32(read_u16(p + 2 * i));
        return KILN_OK;
    default:
        break;
    }
    void (*decode)(const uint8_t *, float *) = dtype == KILN_DTYPE_Q8_0   ? decode_q8_0
                                               : dtype == KILN_DTYPE_Q4_0 ? decode_q4_0
                                               : dtype == KILN_DTYPE_Q4_K ? decode_q4_k
                                                                          : decode_q6_k;
    for (int64_t b = 0; b < n / block_elements; b++) decode(p + b * block_bytes, dst + b * block_elements);
    return KILN_OK;
}
