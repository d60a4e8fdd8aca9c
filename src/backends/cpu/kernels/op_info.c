/* op_info.c — one row per lowered op: what the runtime does with its parameters (see
 * cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels. Adding an op to KILN_CPU_OP_LIST (cpu_ops.h) means adding its
 * row here; test_cpu_op_info fails for an op without one. The weight predicates are here
 * because they read the same parameter fields the validators check: which weights a step packs
 * for the register tile, and which it holds as bf16 pairs.
 */
#include "backends/cpu/kernels/op_info.h"

static bool gemm_reads_packed(const void *params)
{
    const kiln_cpu_gemm_params *p = params;
    return p->b_packed != 0;
}

static bool gemm_reads_bf16(const void *params)
{
    const kiln_cpu_gemm_params *p = params;
    return p->b_packed == KILN_CPU_PACKED_BF16;
}

/* Filters other than depthwise ones are packed: A panels per group, or B panels (pixel rows). */
static bool conv_reads_packed(const void *params)
{
    const kiln_cpu_conv_params *p = params;
    return !p->depthwise;
}

static bool conv_reads_bf16(const void *params)
{
    const kiln_cpu_conv_params *p = params;
    return p->bf16 != 0;
}

const kiln_cpu_op_descriptor kiln_cpu_op_info[KILN_CPU_OP_COUNT] = {
    [KILN_CPU_OP_GEMM] = {sizeof(kiln_cpu_gemm_params), kiln_cpu_validate_gemm, kiln_cpu_gemm_step_workspace,
                          gemm_reads_packed, gemm_reads_bf16},
    [KILN_CPU_OP_CONV2D] = {sizeof(kiln_cpu_conv_params), kiln_cpu_validate_conv, kiln_cpu_conv_step_workspace,
                            conv_reads_packed, conv_reads_bf16},
    [KILN_CPU_OP_POOL2D] = {sizeof(kiln_cpu_pool_params), kiln_cpu_validate_pool, NULL, NULL, NULL},
    [KILN_CPU_OP_UNARY] = {sizeof(kiln_cpu_unary_params), kiln_cpu_validate_unary, NULL, NULL, NULL},
    [KILN_CPU_OP_BINARY] = {sizeof(kiln_cpu_binary_params), kiln_cpu_validate_binary, NULL, NULL, NULL},
    [KILN_CPU_OP_SOFTMAX] = {sizeof(kiln_cpu_softmax_params), kiln_cpu_validate_softmax, NULL, NULL, NULL},
    [KILN_CPU_OP_LAYERNORM] = {sizeof(kiln_cpu_layernorm_params), kiln_cpu_validate_layernorm, NULL, NULL, NULL},
    [KILN_CPU_OP_CHANNEL_AFFINE] = {sizeof(kiln_cpu_affine_params), kiln_cpu_validate_affine, NULL, NULL, NULL},
    [KILN_CPU_OP_COPY] = {sizeof(kiln_cpu_copy_params), kiln_cpu_validate_copy, NULL, NULL, NULL},
    [KILN_CPU_OP_TRANSPOSE] = {sizeof(kiln_cpu_transpose_params), kiln_cpu_validate_transpose, NULL, NULL, NULL},
    [KILN_CPU_OP_CONCAT] = {sizeof(kiln_cpu_concat_params), kiln_cpu_validate_concat, NULL, NULL, NULL},
    [KILN_CPU_OP_SLICE] = {sizeof(kiln_cpu_slice_params), kiln_cpu_validate_slice, NULL, NULL, NULL},
    [KILN_CPU_OP_PAD] = {sizeof(kiln_cpu_pad_params), kiln_cpu_validate_pad, NULL, NULL, NULL},
    [KILN_CPU_OP_WHERE] = {sizeof(kiln_cpu_where_params), kiln_cpu_validate_where, NULL, NULL, NULL},
    /* W's blocks are the GGUF's bytes as they are: the same for every target, never packed */
    [KILN_CPU_OP_QLINEAR] = {sizeof(kiln_cpu_qlinear_params), kiln_cpu_validate_qlinear, NULL, NULL, NULL},
    /* W's rows too: a tied classifier's QLINEAR reads the same tensor */
    [KILN_CPU_OP_EMBED] = {sizeof(kiln_cpu_embed_params), kiln_cpu_validate_embed, NULL, NULL, NULL},
};

const kiln_cpu_op_descriptor *kiln_cpu_op_find(uint32_t op)
{
    return op < KILN_CPU_OP_COUNT && kiln_cpu_op_info[op].validate ? &kiln_cpu_op_info[op] : NULL;
}
