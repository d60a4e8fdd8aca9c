/* kernels-avx512bf16.h — the kernels of the avx512bf16 table (kernels-avx512bf16.c): the avx512
 * table's kit plus a GEMM microkernel on bf16 pairs (AVX512-BF16 vdpbf16ps).
 *
 * Layer: backends/cpu/kernels/avx512bf16. Everything here may execute AVX-512 and AVX512-BF16
 * instructions: call it only through the avx512bf16 table, which the runtime selects only on
 * CPUs with the x86-64-v4-bf16 features.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_AVX512BF16_KERNELS_AVX512BF16_H
#define KILN_BACKENDS_CPU_KERNELS_AVX512BF16_KERNELS_AVX512BF16_H

#include "backends/cpu/kernels/avx512/kernels-avx512.h"

void kiln_cpu_bf16_pairs__avx512bf16(const float *lo, const float *hi, size_t n, uint32_t *dst);
void kiln_cpu_bf16_row__avx512bf16(const float *x, size_t n, uint32_t *dst);
void kiln_cpu_bf16_gemm_ukernel_12x32__avx512bf16(size_t kp, const uint32_t *a, const uint32_t *b, float *c,
                                                  size_t ldc, size_t m, size_t n, const kiln_cpu_gemm_tile *tile);

#endif
