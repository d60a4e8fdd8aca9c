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
void kiln_cpu_f32_vact__avx512(const kiln_cpu_act *act, const float *x, float *y, size_t n);
void kiln_cpu_f32_vbinary__avx512(uint32_t kind, const float *a, int64_t sa, const float *b, int64_t sb, float *y,
                                  size_t n);
void kiln_cpu_f32_vscaleshift__avx512(const float *x, float scale, float shift, float *y, size_t n);
void kiln_cpu_f32_dwconv2d__avx512(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias,
                                   float *y);
void kiln_cpu_f32_maxpool2d__avx512(const kiln_cpu_pool_params *p, const float *x, float *y, int64_t oh_lo,
                                    int64_t oh_hi);
void kiln_cpu_f32_im2col__avx512(const kiln_cpu_conv_params *p, const float *x, int64_t pix0, int64_t live,
                                 uint32_t nr, float *dst);
void kiln_cpu_f32_pack_rows__avx512(const float *src, int64_t rs, int64_t live, int64_t kc, uint32_t width,
                                    float *dst);
kiln_status kiln_cpu_f32_softmax__avx512(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                         kiln_cpu_exec *exec);
kiln_status kiln_cpu_f32_layernorm__avx512(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                           kiln_cpu_exec *exec);

#endif
