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
void kiln_cpu_f32_vact__generic(const kiln_cpu_act *act, const float *x, float *y, size_t n);
/* One activation of one value: the scalar definition every ISA's vector version follows. */
float kiln_cpu_f32_act_scalar(const kiln_cpu_act *act, float x);
void kiln_cpu_f32_vbinary__generic(uint32_t kind, const float *a, int64_t sa, const float *b, int64_t sb, float *y,
                                   size_t n);
float kiln_cpu_f32_binary_scalar(uint32_t kind, float a, float b);
void kiln_cpu_f32_vscaleshift__generic(const float *x, float scale, float shift, float *y, size_t n);
void kiln_cpu_f32_dwconv2d__generic(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias,
                                    float *y);
void kiln_cpu_f32_maxpool2d__generic(const kiln_cpu_pool_params *p, const float *x, float *y, int64_t oh_lo,
                                     int64_t oh_hi);
void kiln_cpu_f32_im2col__generic(const kiln_cpu_conv_params *p, const float *x, int64_t pix0, int64_t live,
                                  uint32_t nr, float *dst);
void kiln_cpu_f32_pack_rows__generic(const float *src, int64_t rs, int64_t live, int64_t kc, uint32_t width,
                                     float *dst);
kiln_status kiln_cpu_f32_softmax__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                          kiln_cpu_exec *exec);
kiln_status kiln_cpu_f32_layernorm__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                            kiln_cpu_exec *exec);

#endif
