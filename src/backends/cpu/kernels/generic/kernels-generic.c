/* kernels-generic.c — the generic kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/generic, compiled with the generic flags only: runs on any CPU.
 * The kit feeds the shared drivers (kernel_kit.h) with the plain-C microkernels of this
 * directory; gemm_mr/gemm_nr are the 6x16 microkernel's panel widths, the same as the avx2
 * table's, so generic and x86-64-v3 records of one binary share every packed weight block.
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

static const kiln_cpu_kit kit = {
    .mr = KILN_CPU_GENERIC_MR,
    .nr = KILN_CPU_GENERIC_NR,
    .gemm = kiln_cpu_f32_gemm_ukernel_6x16__generic,
    .act = kiln_cpu_f32_vact__generic,
    .binary = kiln_cpu_f32_vbinary__generic,
    .scale_shift = kiln_cpu_f32_vscaleshift__generic,
    .dwconv = kiln_cpu_f32_dwconv2d__generic,
    .maxpool = kiln_cpu_f32_maxpool2d__generic,
    .im2col = kiln_cpu_f32_im2col__generic,
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

const kiln_cpu_kernels kiln_cpu_kernels_generic = {
    .isa = "generic",
    .gemm_mr = KILN_CPU_GENERIC_MR,
    .gemm_nr = KILN_CPU_GENERIC_NR,
    .ops = {
        [KILN_CPU_OP_GEMM] = gemm_step,
        [KILN_CPU_OP_CONV2D] = conv2d_step,
        [KILN_CPU_OP_POOL2D] = pool2d_step,
        [KILN_CPU_OP_UNARY] = unary_step,
        [KILN_CPU_OP_BINARY] = binary_step,
        [KILN_CPU_OP_SOFTMAX] = kiln_cpu_f32_softmax__generic,
        [KILN_CPU_OP_LAYERNORM] = kiln_cpu_f32_layernorm__generic,
        [KILN_CPU_OP_CHANNEL_AFFINE] = affine_step,
        [KILN_CPU_OP_COPY] = kiln_cpu_x_copy__generic,
        [KILN_CPU_OP_TRANSPOSE] = kiln_cpu_x_transpose__generic,
    },
};
