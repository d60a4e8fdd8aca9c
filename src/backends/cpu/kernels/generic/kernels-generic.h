/* kernels-generic.h — the plain-C kernels of the generic table (kernels-generic.c).
 *
 * Layer: backends/cpu/kernels/generic. These are also the semantic reference of the other ISAs:
 * scalar libm math written as the portable kernels (src/kernels/portable) compute each op, which
 * the SIMD versions must match within the conformance tolerance.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_GENERIC_KERNELS_GENERIC_H
#define KILN_BACKENDS_CPU_KERNELS_GENERIC_KERNELS_GENERIC_H

#include "backends/cpu/kernels/kernel_kit.h"

/* The avx2 table's tile, so that generic and x86-64-v3 records share their packed weights. */
#define KILN_CPU_GENERIC_MR 6
#define KILN_CPU_GENERIC_NR 16

void kiln_cpu_f32_gemm_ukernel_6x16__generic(size_t kc, const float *a, const float *b, float *c, size_t ldc,
                                             size_t m, size_t n, const kiln_cpu_gemm_tile *tile);

#define KILN_CPU_KIT_FN(name) kiln_cpu_##name##__generic
#include "backends/cpu/kernels/template/kit-decls.h"
/* One activation of one value: the scalar definition every ISA's vector version follows. */
float kiln_cpu_f32_act_scalar(const kiln_cpu_act *act, float x);
float kiln_cpu_f32_binary_scalar(uint32_t kind, float a, float b);

#endif
