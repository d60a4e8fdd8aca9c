/* f32-gemm-4x8-generic.c — the plain-C 4x8 GEMM microkernel (kiln_cpu_gemm_ukernel contract).
 *
 * Layer: backends/cpu/kernels/generic. The accumulator tile is a local array the compiler keeps
 * in (SSE) registers; A and B are the packed panels, so both inner loops are unit-stride.
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

#define MR KILN_CPU_GENERIC_MR
#define NR KILN_CPU_GENERIC_NR

void kiln_cpu_f32_gemm_ukernel_4x8__generic(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                            size_t m, size_t n, const kiln_cpu_gemm_tile *tile)
{
    float acc[MR][NR] = {{0}};
    for (size_t k = 0; k < kc; k++, a += MR, b += NR)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++) acc[i][j] += a[i] * b[j];
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
}
