/* test_kiln_quant_rows.c — kiln_dequantize_row (src/kernels/portable/quant/quant_rows.c) on
 * hand-built rows of every type it reads.
 *
 * F16/BF16: bit patterns of known values. Q8_0/Q4_0: blocks written byte by byte from a chosen
 * scale and quants. Q4_K/Q6_K: super-blocks packed here from chosen integer sub-block scales,
 * mins and quants, following ggml's layout as documented (docs/llm.md "kiln ops") — the packing
 * is the inverse of the decoder, written separately from it — and every decoded float must
 * equal d * scale * q - dmin * min (Q4_K) or d * scale * (q - 32) (Q6_K) exactly, the scales
 * being chosen so each product is exact in f32. Also: a row of several blocks, bad n, a dtype it
 * does not read.
 * Exit status: 0 when everything passed.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/portable/quant/quant_rows.h"
#include "unit_expect.h"

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xff);
    p[1] = (uint8_t)(v >> 8);
}

static int expect_exact(const char *what, const float *got, const double *want, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        unit_checks++;
        if ((double)got[i] != want[i]) {
            if (bad++ < 5) fprintf(stderr, "%s: element %d is %.9g, expected %.9g\n", what, i, got[i], want[i]);
            unit_failures++;
        }
    }
    return bad;
}

static void halves(void)
{
    unit_section("F16 and BF16 rows");
    /* 1, -2, 1/3 rounded to f16, 65504 (largest), 2^-24 (smallest subnormal), -0 */
    const uint16_t f16[6] = {0x3c00, 0xc000, 0x3555, 0x7bff, 0x0001, 0x8000};
    const double f16_want[6] = {1.0, -2.0, 0.333251953125, 65504.0, 0x1p-24, -0.0};
    uint8_t bytes[12];
    for (int i = 0; i < 6; i++) put_u16(bytes + 2 * i, f16[i]);
    float got[6];
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_F16, bytes + 0, got, 6), KILN_OK);
    expect_exact("f16", got, f16_want, 6);
    EXPECT(signbit(got[5]));

    const uint16_t bf16[4] = {0x3f80, 0xc0a0, 0x4049, 0x0000}; /* 1, -5, 3.140625, 0 */
    const double bf16_want[4] = {1.0, -5.0, 3.140625, 0.0};
    /* at an odd address: the decoder reads bytes, never aligned words */
    uint8_t odd[9];
    for (int i = 0; i < 4; i++) put_u16(odd + 1 + 2 * i, bf16[i]);
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_BF16, odd + 1, got, 4), KILN_OK);
    expect_exact("bf16", got, bf16_want, 4);

    const float f32[3] = {1.5f, -0.25f, 7.0f};
    const double f32_want[3] = {1.5, -0.25, 7.0};
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_F32, f32, got, 3), KILN_OK);
    expect_exact("f32", got, f32_want, 3);
}

static void q8_0_and_q4_0(void)
{
    unit_section("Q8_0 and Q4_0 blocks");
    /* two Q8_0 blocks: d = 0.5 (f16 0x3800) then d = -0.125 (0xb000), quants spanning -128..127 */
    uint8_t q8[68];
    double want[64];
    for (int b = 0; b < 2; b++) {
        put_u16(q8 + 34 * b, b ? 0xb000 : 0x3800);
        for (int j = 0; j < 32; j++) {
            int q = b ? 127 - 8 * j : -128 + 8 * j;
            q8[34 * b + 2 + j] = (uint8_t)(int8_t)q;
            want[32 * b + j] = (b ? -0.125 : 0.5) * q;
        }
    }
    float got[64];
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_Q8_0, q8, got, 64), KILN_OK);
    expect_exact("q8_0", got, want, 64);

    /* Q4_0, d = 0.25 (0x3400): byte j holds element j in its low nibble and j + 16 in its high one */
    uint8_t q4[18];
    put_u16(q4, 0x3400);
    int quants[32];
    for (int e = 0; e < 32; e++) quants[e] = (e * 7 + 3) % 16;
    for (int j = 0; j < 16; j++) q4[2 + j] = (uint8_t)(quants[j] | (quants[j + 16] << 4));
    for (int e = 0; e < 32; e++) want[e] = 0.25 * (quants[e] - 8);
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_Q4_0, q4, got, 32), KILN_OK);
    expect_exact("q4_0", got, want, 32);
}

/* ---- Q4_K: d, dmin (f16), 12 bytes of packed 6-bit scales and mins, 128 bytes of nibbles ---- */

static void pack_q4_k(uint8_t *b, uint16_t d, uint16_t dmin, const int *scale, const int *min, const int *q)
{
    memset(b, 0, 144);
    put_u16(b, d);
    put_u16(b + 2, dmin);
    uint8_t *s = b + 4;
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            s[j] |= (uint8_t)(scale[j] & 63);     /* bits 0-5 of byte j: scale */
            s[j + 4] |= (uint8_t)(min[j] & 63);   /* bits 0-5 of byte j + 4: min */
        } else {
            s[j + 4] |= (uint8_t)((scale[j] & 15) | ((min[j] & 15) << 4)); /* bytes 8-11: low 4 bits */
            s[j - 4] |= (uint8_t)((scale[j] >> 4) << 6);                   /* top 2 bits of scale */
            s[j] |= (uint8_t)((min[j] >> 4) << 6);                         /* top 2 bits of min */
        }
    }
    /* sub-block s (32 elements) lives in quant bytes 32*(s/2) .. +31, low nibble for even s */
    uint8_t *qs = b + 16;
    for (int e = 0; e < 256; e++) {
        int sub = e / 32, l = e % 32;
        qs[32 * (sub / 2) + l] |= (uint8_t)((sub % 2) ? q[e] << 4 : q[e]);
    }
}

static void q4_k(void)
{
    unit_section("Q4_K super-blocks");
    /* every scale and min 6-bit value somewhere across the two blocks, including 63 and 0 */
    int scale[2][8] = {{1, 63, 17, 32, 48, 5, 60, 33}, {0, 2, 31, 47, 63, 16, 15, 62}};
    int min[2][8] = {{0, 9, 63, 1, 50, 34, 19, 63}, {63, 40, 0, 7, 30, 61, 2, 48}};
    uint16_t d_bits[2] = {0x2c00, 0x3000}, dmin_bits[2] = {0x2400, 0x2800}; /* 1/16, 1/8; 1/64, 1/32 */
    double d[2] = {1.0 / 16, 1.0 / 8}, dmin[2] = {1.0 / 64, 1.0 / 32};
    static int q[2][256];
    static uint8_t row[288];
    static double want[512];
    for (int b = 0; b < 2; b++) {
        for (int e = 0; e < 256; e++) q[b][e] = (e * 5 + b * 3 + e / 32) % 16;
        pack_q4_k(row + 144 * b, d_bits[b], dmin_bits[b], scale[b], min[b], q[b]);
        for (int e = 0; e < 256; e++)
            want[256 * b + e] = d[b] * scale[b][e / 32] * q[b][e] - dmin[b] * min[b][e / 32];
    }
    static float got[512];
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_Q4_K, row, got, 512), KILN_OK);
    expect_exact("q4_k", got, want, 512);
}

/* ---- Q6_K: ql[128], qh[64], 16 x i8 scales, f16 d; q in [0, 64), value q - 32 ---- */

static void pack_q6_k(uint8_t *b, uint16_t d, const int8_t *scale, const int *q)
{
    memset(b, 0, 210);
    uint8_t *ql = b, *qh = b + 128;
    for (int e = 0; e < 256; e++) {
        /* element e: half h = e / 128; within it, quarter r = (e % 128) / 32 and lane l = e % 32.
           Low 4 bits: ql[64h + l + 32*(r % 2)], low nibble for r < 2, high for r >= 2.
           High 2 bits: qh[32h + l], bits 2r .. 2r+1. */
        int h = e / 128, r = (e % 128) / 32, l = e % 32;
        int low = q[e] & 15, high = q[e] >> 4;
        ql[64 * h + l + 32 * (r % 2)] |= (uint8_t)(r < 2 ? low : low << 4);
        qh[32 * h + l] |= (uint8_t)(high << (2 * r));
    }
    memcpy(b + 192, scale, 16);
    put_u16(b + 208, d);
}

static void q6_k(void)
{
    unit_section("Q6_K super-blocks");
    int8_t scale[2][16] = {{1, -1, 127, -128, 2, 3, -7, 64, 5, 9, -33, 100, 0, 11, -2, 42},
                           {-128, 127, 1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6, -7, 8}};
    uint16_t d_bits[2] = {0x2000, 0xa400}; /* 2^-7, -2^-6 */
    double d[2] = {1.0 / 128, -1.0 / 64};
    static int q[2][256];
    static uint8_t row[420];
    static double want[512];
    for (int b = 0; b < 2; b++) {
        for (int e = 0; e < 256; e++) q[b][e] = (e * 11 + b * 7 + e / 16) % 64; /* every 6-bit value */
        pack_q6_k(row + 210 * b, d_bits[b], scale[b], q[b]);
        for (int e = 0; e < 256; e++) want[256 * b + e] = d[b] * scale[b][e / 16] * (q[b][e] - 32);
    }
    static float got[512];
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_Q6_K, row, got, 512), KILN_OK);
    expect_exact("q6_k", got, want, 512);
}

static void refusals(void)
{
    unit_section("bad rows");
    uint8_t block[210] = {0};
    float got[256];
    got[0] = 42.0f;
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_Q4_K, block, got, 128), KILN_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_Q8_0, block, got, 33), KILN_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_F16, block, got, -1), KILN_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_I32, block, got, 4), KILN_ERROR_NOT_SUPPORTED);
    EXPECT_STATUS(kiln_dequantize_row((kiln_dtype)999, block, got, 4), KILN_ERROR_NOT_SUPPORTED);
    EXPECT(got[0] == 42.0f); /* nothing written */
    EXPECT_STATUS(kiln_dequantize_row(KILN_DTYPE_Q6_K, NULL, NULL, 0), KILN_OK);
    EXPECT(kiln_dequantize_supported(KILN_DTYPE_Q4_K) && !kiln_dequantize_supported(KILN_DTYPE_F64));
}

int main(void)
{
    halves();
    q8_0_and_q4_0();
    q4_k();
    q6_k();
    refusals();
    return unit_finish("test_kiln_quant_rows");
}
