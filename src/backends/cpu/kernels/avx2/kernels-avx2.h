/* kernels-avx2.h — the AVX2 + FMA kernels of the avx2 table (kernels-avx2.c).
 *
 * Layer: backends/cpu/kernels/avx2. Everything here executes AVX2 + FMA instructions: call it
 * only through the avx2 table, which the runtime selects only on CPUs with the x86-64-v3
 * features.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_AVX2_KERNELS_AVX2_H
#define KILN_BACKENDS_CPU_KERNELS_AVX2_KERNELS_AVX2_H

#include "backends/cpu/kernels/kernel_kit.h"

#define KILN_CPU_AVX2_MR 6
#define KILN_CPU_AVX2_NR 16

void kiln_cpu_f32_gemm_ukernel_6x16__avx2(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                             size_t m, size_t n, const kiln_cpu_gemm_tile *tile);

#define KILN_CPU_KIT_FN(name) kiln_cpu_##name##__avx2
#include "backends/cpu/kernels/template/kit-decls.h"

#endif
