/* kernels-avx2.c — the avx2 kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/avx2, compiled with the avx2 flags only. The kit feeds the
 * shared drivers (kernel_kit.h) with the 6x16 GEMM microkernel and the AVX2 row kernels;
 * softmax and layernorm are whole AVX2 steps; pooling, copy and transpose are the generic
 * steps (memory-bound or rare: no ISA variant). gemm_mr/gemm_nr: the 6x16 panel layout.
 */
#include "backends/cpu/kernels/avx2/kernels-avx2.h"

static const kiln_cpu_kit kit = {
    .mr = KILN_CPU_AVX2_MR,
    .nr = KILN_CPU_AVX2_NR,
    .gemm = kiln_cpu_f32_gemm_ukernel_6x16__avx2,
    .act = kiln_cpu_f32_vact__avx2,
    .binary = kiln_cpu_f32_vbinary__avx2,
    .scale_shift = kiln_cpu_f32_vscaleshift__avx2,
    .dwconv = kiln_cpu_f32_dwconv2d__avx2,
    .maxpool = kiln_cpu_f32_maxpool2d__avx2,
    .im2col = kiln_cpu_f32_im2col__avx2,
};

#define KIT_STEP(name, driver)                                                                   \
    static kiln_status name(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out, \
                            kiln_cpu_exec *exec)                                                 \
    {                                                                                            \
        return driver(&kit, params, in, out, exec);                                              \
    }
KIT_STEP(gemm_step, kiln_cpu_gemm_step)
KIT_STEP(conv2d_step, kiln_cpu_conv2d_step)
KIT_STEP(unary_step, kiln_cpu_unary_step)
KIT_STEP(binary_step, kiln_cpu_binary_step)
KIT_STEP(affine_step, kiln_cpu_affine_step)
KIT_STEP(pool2d_step, kiln_cpu_pool2d_step)
#undef KIT_STEP

const kiln_cpu_kernels kiln_cpu_kernels_avx2 = {
    .isa = "avx2",
    .gemm_mr = KILN_CPU_AVX2_MR,
    .gemm_nr = KILN_CPU_AVX2_NR,
    .ops = {
        [KILN_CPU_OP_GEMM] = gemm_step,
        [KILN_CPU_OP_CONV2D] = conv2d_step,
        [KILN_CPU_OP_POOL2D] = pool2d_step,
        [KILN_CPU_OP_UNARY] = unary_step,
        [KILN_CPU_OP_BINARY] = binary_step,
        [KILN_CPU_OP_SOFTMAX] = kiln_cpu_f32_softmax__avx2,
        [KILN_CPU_OP_LAYERNORM] = kiln_cpu_f32_layernorm__avx2,
        [KILN_CPU_OP_CHANNEL_AFFINE] = affine_step,
        [KILN_CPU_OP_COPY] = kiln_cpu_x_copy__generic,
        [KILN_CPU_OP_TRANSPOSE] = kiln_cpu_x_transpose__generic,
    },
};
