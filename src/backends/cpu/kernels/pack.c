/* pack.c — weight packing into the panel layouts of the GEMM microkernels (see cpu_kernels.h).
 * Layer: backends/cpu/kernels. Plain C: it runs ahead of time in the compiler, and at run time
 * only for activations, through the ISA kernels' own packing loops. */
#include <string.h>

#include "backends/cpu/kernels/cpu_kernels.h"

size_t kiln_cpu_pack_b_size(int64_t K, int64_t N, uint32_t nr)
{
    int64_t panels = (N + nr - 1) / nr;
    return (size_t)(panels * K * nr) * sizeof(float);
}

void kiln_cpu_pack_b(const float *src, int64_t K, int64_t N, int trans, uint32_t nr, float *dst)
{
    for (int64_t p0 = 0; p0 < N; p0 += nr) {
        for (int64_t k = 0; k < K; k++) {
            for (uint32_t j = 0; j < nr; j++) {
                int64_t n = p0 + j;
                *dst++ = n < N ? (trans ? src[n * K + k] : src[k * N + n]) : 0.0f;
            }
        }
    }
}

size_t kiln_cpu_pack_a_size(int64_t M, int64_t K, uint32_t mr)
{
    int64_t panels = (M + mr - 1) / mr;
    return (size_t)(panels * K * mr) * sizeof(float);
}

void kiln_cpu_pack_a(const float *src, int64_t M, int64_t K, int trans, uint32_t mr, float *dst)
{
    for (int64_t p0 = 0; p0 < M; p0 += mr) {
        for (int64_t k = 0; k < K; k++) {
            for (uint32_t i = 0; i < mr; i++) {
                int64_t m = p0 + i;
                *dst++ = m < M ? (trans ? src[k * M + m] : src[m * K + k]) : 0.0f;
            }
        }
    }
}
