/* kit-decls.h — TEMPLATE: the declarations of one ISA's kit functions and whole steps (the
 * contracts are in kernel_kit.h), named through KILN_CPU_KIT_FN(name) — e.g.
 * kiln_cpu_##name##__avx2 — which the including kernels-<isa>.h defines first. The GEMM
 * microkernel, whose name carries its tile, is declared by the ISA header itself.
 *
 * Layer: backends/cpu/kernels (template). No include guard: each ISA header includes it once,
 * under its own guard; KILN_CPU_KIT_FN is undefined again at the end, as one file may include
 * two ISA headers (the vector kernels use the generic scalar helpers).
 */
#ifndef KILN_CPU_KIT_FN
#error "kit-decls.h: define KILN_CPU_KIT_FN(name) first"
#endif

void KILN_CPU_KIT_FN(f32_vact)(const kiln_cpu_act *act, const float *x, float *y, size_t n);
void KILN_CPU_KIT_FN(f32_vbinary)(uint32_t kind, const float *a, int64_t sa, const float *b, int64_t sb, float *y,
                                  size_t n);
void KILN_CPU_KIT_FN(f32_vscaleshift)(const float *x, float scale, float shift, float *y, size_t n);
void KILN_CPU_KIT_FN(f32_dwconv2d)(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias, float *y);
void KILN_CPU_KIT_FN(f32_maxpool2d)(const kiln_cpu_pool_params *p, const float *x, float *y, int64_t oh_lo,
                                    int64_t oh_hi);
void KILN_CPU_KIT_FN(f32_im2col)(const kiln_cpu_conv_params *p, const float *x, int64_t pix0, int64_t live, uint32_t nr,
                                 float *dst);
void KILN_CPU_KIT_FN(f32_pack_rows)(const float *src, int64_t rs, int64_t live, int64_t kc, uint32_t width,
                                    float *dst);
void KILN_CPU_KIT_FN(f32_pack_rows_sum)(const float *x, const float *y, float sign, int64_t rs, int64_t live,
                                        int64_t kc, uint32_t width, float *dst);
void KILN_CPU_KIT_FN(f32_wino_in)(const kiln_cpu_conv_params *p, const float *x, int64_t t0, int64_t live, uint32_t nr,
                                  float *v, size_t v_stride);
void KILN_CPU_KIT_FN(f32_wino_out)(const kiln_cpu_conv_params *p, const float *m, size_t m_stride, int64_t ldm,
                                   int64_t rows, int64_t t0, int64_t live, const float *bias, const float *res,
                                   float *y);
void KILN_CPU_KIT_FN(q8_0_dot)(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                               size_t ldx, size_t m, const float *bias, float *y, size_t ldy);
void KILN_CPU_KIT_FN(q4_0_dot)(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                               size_t ldx, size_t m, const float *bias, float *y, size_t ldy);
kiln_status KILN_CPU_KIT_FN(f32_softmax)(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                         kiln_cpu_exec *exec);
kiln_status KILN_CPU_KIT_FN(f32_layernorm)(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                           kiln_cpu_exec *exec);

#undef KILN_CPU_KIT_FN
