/* kernels-avx512.h — the AVX-512 kernels of the avx512 table (kernels-avx512.c).
 *
 * Layer: backends/cpu/kernels/avx512. Everything here executes AVX-512 instructions: call it
 * only through the avx512 table, which the runtime selects only on CPUs with the x86-64-v4
 * features.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_AVX512_KERNELS_AVX512_H
#define KILN_BACKENDS_CPU_KERNELS_AVX512_KERNELS_AVX512_H

#include "backends/cpu/kernels/kernel_kit.h"

#define KILN_CPU_AVX512_MR 12
#define KILN_CPU_AVX512_NR 32

void kiln_cpu_f32_gemm_ukernel_12x32__avx512(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                             size_t m, size_t n, const kiln_cpu_gemm_tile *tile);

#define KILN_CPU_KIT_FN(name) kiln_cpu_##name##__avx512
#include "backends/cpu/kernels/template/kit-decls.h"

#endif
