/* f32-gemm-6x16-generic.c — the plain-C 6x16 GEMM microkernel (kiln_cpu_gemm_ukernel contract).
 *
 * Layer: backends/cpu/kernels/generic. 6x16 is the avx2 table's tile on purpose: weights packed
 * for one are the same bytes as for the other, so a binary holding both records stores them
 * once (docs/targets.md). One accumulator row per tile row with a plain j loop is the shape gcc
 * vectorises without shuffling B across lanes (acc[MR][NR] loops and two 6x8 half passes were
 * both measured slower: gcc's SLP vectoriser then interleaves rows). On baseline x86-64 the 24
 * accumulator vectors do not all fit the 16 xmm registers; gcc keeps the spilled ones on the
 * stack, where store-to-load forwarding makes the extra traffic cheap next to the multiplies.
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

#define MR KILN_CPU_GENERIC_MR
#define NR KILN_CPU_GENERIC_NR

_Static_assert(MR == 6, "the accumulator rows below are spelled out for a 6-row tile");

/* acc = the kc-deep product of an MR-row A panel and an NR-column B panel. */
static void tile_product(size_t kc, const float *restrict a, const float *restrict b, float acc[MR][NR])
{
    float c0[NR] = {0}, c1[NR] = {0}, c2[NR] = {0}, c3[NR] = {0}, c4[NR] = {0}, c5[NR] = {0};
    for (size_t k = 0; k < kc; k++, a += MR, b += NR) {
        const float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5];
        for (int j = 0; j < NR; j++) {
            c0[j] += a0 * b[j];
            c1[j] += a1 * b[j];
            c2[j] += a2 * b[j];
            c3[j] += a3 * b[j];
            c4[j] += a4 * b[j];
            c5[j] += a5 * b[j];
        }
    }
    for (int j = 0; j < NR; j++) {
        acc[0][j] = c0[j];
        acc[1][j] = c1[j];
        acc[2][j] = c2[j];
        acc[3][j] = c3[j];
        acc[4][j] = c4[j];
        acc[5][j] = c5[j];
    }
}

/* acc_row = the kc-deep product of one row of A, a_step floats between its k, and an NR-column
   B panel: rows read in place (decode rows, short products), which must not touch rows past m. */
static void row_product(size_t kc, const float *restrict a, size_t a_step, const float *restrict b, float acc_row[NR])
{
    float c0[NR] = {0};
    for (size_t k = 0; k < kc; k++, a += a_step, b += NR) {
        const float a0 = a[0];
        for (int j = 0; j < NR; j++) c0[j] += a0 * b[j];
    }
    for (int j = 0; j < NR; j++) acc_row[j] = c0[j];
}

void kiln_cpu_f32_gemm_ukernel_6x16__generic(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                             size_t m, size_t n, const kiln_cpu_gemm_tile *tile)
{
    KILN_CPU_GEMM_CONTRACT(kc, a, b, c, ldc, m, n, tile, MR, NR);
    float acc[MR][NR];
    if (m == 1)
        row_product(kc, a, tile->a_step ? tile->a_step : MR, b, acc[0]);
    else if (tile->a_step == 1)
        for (size_t i = 0; i < m; i++) row_product(kc, a + i * tile->a_ld, 1, b, acc[i]);
    else
        tile_product(kc, a, b, acc);
    /* The epilogue of kernel_kit.h on the m x n part of the tile. */
    for (size_t i = 0; i < m; i++) {
        float *row = c + i * ldc;
        float row_add = tile->scalar + (tile->row_bias ? tile->beta * tile->row_bias[i] : 0.0f);
        for (size_t j = 0; j < n; j++) {
            float v = tile->alpha * acc[i][j];
            if (tile->accumulate) v += row[j];
            else v += row_add + (tile->col_bias ? tile->beta * tile->col_bias[j] : 0.0f);
            if (tile->relu) v = v > 0.0f ? v : 0.0f;
            row[j] = v;
        }
    }
    for (size_t i = 0; tile->c2 && i < m; i++)
        for (size_t j = 0; j < n; j++) tile->c2[i * ldc + j] += tile->alpha2 * acc[i][j];
}
