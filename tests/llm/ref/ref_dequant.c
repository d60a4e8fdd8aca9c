/* ref_dequant.c — scalar dequantization of F32, F16, BF16, Q8_0, Q4_0, Q4_K and Q6_K rows
 * (see ref_dequant.h for why this is a separate, independent copy).
 *
 * The super-block types, per 256 elements (QK_K):
 *   Q4_K (144 B): f16 d | f16 dmin | 12 B scales | 128 B qs. Eight sub-blocks of 32, each with a
 *     6-bit scale sc and a 6-bit min m; element = d*sc*q - dmin*m, q the 4-bit value. Sub-block
 *     pairs (2k, 2k+1) share the 32 bytes qs[32k .. 32k+31]: 2k the low nibbles, 2k+1 the high.
 *     The 12 scale bytes: for j < 4, sc = s[j] & 63 and m = s[j+4] & 63; for j >= 4 the low four
 *     bits come from s[j+4] (sc low nibble, m high nibble) and the top two from the spare top
 *     bits of s[j-4] (sc) and s[j] (m).
 *   Q6_K (210 B): 128 B ql (low 4 bits) | 64 B qh (high 2 bits) | 16 x i8 scales | f16 d.
 *     Two halves of 128 elements; in half h, for l < 32, ql[64h+l] and ql[64h+l+32] hold the low
 *     nibbles of elements l, l+32 (low nibble) and l+64, l+96 (high nibble), and qh[32h+l] their
 *     top bits at shifts 0, 2, 4, 6; element = d * scale[8h + l/16 + 2*quarter] * (q - 32).
 */
#include "ref_dequant.h"

#include <string.h>

enum { QK = 32, QK_K = 256 };

static uint16_t read_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

float ref_f16_to_f32(uint16_t h)
{
    int sign = (h >> 15) & 1, exponent = (h >> 10) & 31, mantissa = h & 1023;
    float value;
    if (exponent == 0) {
        value = (float)mantissa * (1.0f / 16777216.0f); /* subnormal: mantissa * 2^-24 */
    } else if (exponent == 31) {
        uint32_t bits = 0x7f800000u | ((uint32_t)mantissa << 13);
        memcpy(&value, &bits, sizeof value);
    } else {
        uint32_t bits = ((uint32_t)(exponent - 15 + 127) << 23) | ((uint32_t)mantissa << 13);
        memcpy(&value, &bits, sizeof value);
    }
    return sign ? -value : value;
}

float ref_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

kiln_status ref_block_layout(uint32_t ggml_type, int64_t *block_elems, int64_t *block_bytes)
{
    switch (ggml_type) {
    case REF_GGML_F32: *block_elems = 1; *block_bytes = 4; return KILN_OK;
    case REF_GGML_F16: case REF_GGML_BF16: *block_elems = 1; *block_bytes = 2; return KILN_OK;
    case REF_GGML_Q8_0: *block_elems = QK; *block_bytes = 2 + QK; return KILN_OK;
    case REF_GGML_Q4_0: *block_elems = QK; *block_bytes = 2 + QK / 2; return KILN_OK;
    case REF_GGML_Q4_K: *block_elems = QK_K; *block_bytes = 4 + 12 + QK_K / 2; return KILN_OK;
    case REF_GGML_Q6_K: *block_elems = QK_K; *block_bytes = QK_K / 2 + QK_K / 4 + QK_K / 16 + 2; return KILN_OK;
    default: return KILN_ERROR_NOT_SUPPORTED;
    }
}

static void q8_0_block(const uint8_t *b, float *y)
{
    float d = ref_f16_to_f32(read_u16(b));
    for (int i = 0; i < QK; i++) y[i] = d * (float)(int8_t)b[2 + i];
}

static void q4_0_block(const uint8_t *b, float *y)
{
    float d = ref_f16_to_f32(read_u16(b));
    for (int j = 0; j < QK / 2; j++) {
        y[j] = d * (float)((b[2 + j] & 15) - 8);
        y[j + QK / 2] = d * (float)((b[2 + j] >> 4) - 8);
    }
}

/* Sub-block j's 6-bit scale and min from Q4_K's 12 scale bytes s. */
static void q4_k_scale_min(const uint8_t *s, int j, int *scale, int *min)
{
    if (j < 4) {
        *scale = s[j] & 63;
        *min = s[j + 4] & 63;
    } else {
        *scale = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

static void q4_k_block(const uint8_t *b, float *y)
{
    float d = ref_f16_to_f32(read_u16(b)), dmin = ref_f16_to_f32(read_u16(b + 2));
    const uint8_t *scales = b + 4, *qs = b + 16;
    for (int pair = 0; pair < 4; pair++) {
        int sc_lo, m_lo, sc_hi, m_hi;
        q4_k_scale_min(scales, 2 * pair, &sc_lo, &m_lo);
        q4_k_scale_min(scales, 2 * pair + 1, &sc_hi, &m_hi);
        for (int l = 0; l < 32; l++) {
            uint8_t q = qs[32 * pair + l];
            y[64 * pair + l] = d * (float)sc_lo * (float)(q & 15) - dmin * (float)m_lo;
            y[64 * pair + 32 + l] = d * (float)sc_hi * (float)(q >> 4) - dmin * (float)m_hi;
        }
    }
}

static void q6_k_block(const uint8_t *b, float *y)
{
    const uint8_t *ql = b, *qh = b + QK_K / 2;
    const int8_t *scales = (const int8_t *)(b + QK_K / 2 + QK_K / 4);
    float d = ref_f16_to_f32(read_u16(b + QK_K / 2 + QK_K / 4 + QK_K / 16));
    for (int half = 0; half < 2; half++) {
        const uint8_t *l4 = ql + 64 * half, *h2 = qh + 32 * half;
        const int8_t *sc = scales + 8 * half;
        float *out = y + 128 * half;
        for (int l = 0; l < 32; l++) {
            int q[4] = {
                (l4[l] & 15) | (((h2[l] >> 0) & 3) << 4),
                (l4[l + 32] & 15) | (((h2[l] >> 2) & 3) << 4),
                (l4[l] >> 4) | (((h2[l] >> 4) & 3) << 4),
                (l4[l + 32] >> 4) | (((h2[l] >> 6) & 3) << 4),
            };
            for (int quarter = 0; quarter < 4; quarter++)
                out[32 * quarter + l] = d * (float)sc[l / 16 + 2 * quarter] * (float)(q[quarter] - 32);
        }
    }
}

kiln_status ref_dequantize_row(uint32_t ggml_type, const uint8_t *src, float *dst, int64_t n)
{
    int64_t elems, bytes;
    kiln_status s = ref_block_layout(ggml_type, &elems, &bytes);
    if (s != KILN_OK) return s;
    if (n < 0 || n % elems != 0) return KILN_ERROR_SHAPE_MISMATCH;
    for (int64_t i = 0; i < n / elems; i++) {
        const uint8_t *b = src + i * bytes;
        float *y = dst + i * elems;
        switch (ggml_type) {
        case REF_GGML_F32: memcpy(y, b, 4); break;
        case REF_GGML_F16: *y = ref_f16_to_f32(read_u16(b)); break;
        case REF_GGML_BF16: *y = ref_bf16_to_f32(read_u16(b)); break;
        case REF_GGML_Q8_0: q8_0_block(b, y); break;
        case REF_GGML_Q4_0: q4_0_block(b, y); break;
        case REF_GGML_Q4_K: q4_k_block(b, y); break;
        default: q6_k_block(b, y); break;
        }
    }
    return KILN_OK;
}
