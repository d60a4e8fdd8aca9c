/* aot_ops.h — what one ONNX node lowers to: a step description (lowered op, parameter block and
 * operands), computed from the node's attributes and static shapes alone.
 *
 * Layer: backends/cpu/aot (internal). Depends on core, kernels/portable (attribute and window
 * helpers) and cpu_ops.h. kiln_cpu_aot_supports() is "describe succeeds", and the lowering
 * (aot_lower.c) starts from the same description, so what the partitioner accepts and what the
 * compiler lowers cannot drift apart.
 *
 * Every node lowers to exactly one step with one output (the node's output 0); nodes whose other
 * outputs are used are refused. Operands are either a value of the graph (an activation: the
 * node input it comes from) or a weight: constant f32 bytes with a logical shape and the form
 * they are stored in (as they are, or packed for the target's GEMM tile). Weights never alias
 * anything the step writes.
 */
#ifndef KILN_BACKENDS_CPU_AOT_AOT_OPS_H
#define KILN_BACKENDS_CPU_AOT_AOT_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/cpu/cpu_ops.h"
#include "core/arena.h"
#include "kernels/portable/kernel.h"

#define AOT_MAX_STEP_INPUTS KILN_CPU_CONCAT_MAX_INPUTS /* a CONCAT step's; the others take at most 4 */

typedef enum aot_weight_form {
    AOT_FORM_RAW = 0,       /* the bytes as they are (bias, scale, depthwise filters, operands) */
    AOT_FORM_PACK_B = 1,    /* kiln_cpu_pack_b(data, k, n, trans, NR): GEMM B panels */
    AOT_FORM_PACK_A = 2,    /* groups x kiln_cpu_pack_a(data + g * rows * k, rows, k, 0, MR), back to
                               back: convolution filters, one panel set per group */
    AOT_FORM_WINOGRAD = 3,  /* kiln_cpu_pack_winograd(data, rows, k, MR): 3x3 filters of rows
                               outputs and k inputs, transformed for Winograd F(2x2, 3x3) */
    AOT_FORM_WINOGRAD_B = 4, /* the same for NR: the B panels of Winograd with tiles as rows */
    AOT_FORM_PACK_B_BF16 = 5, /* kiln_cpu_pack_b_bf16(data, k, n, trans, NR): precision bf16 */
    AOT_FORM_WINOGRAD_B_BF16 = 6, /* WINOGRAD_B's 16 positions, each through kiln_cpu_panels_to_bf16 */
    AOT_FORM_PACK_A_BF16 = 7,     /* PACK_A's groups, each through kiln_cpu_panels_to_bf16 */
    AOT_FORM_WINOGRAD_BF16 = 8,   /* WINOGRAD's 16 positions (MR), each through it */
    AOT_FORM_PACK_B_STRASSEN = 9, /* kiln_cpu_pack_b_strassen(data, k, n, trans, NR): a large GEMM's
                                     B as one Strassen level's seven sums */
} aot_weight_form;

typedef enum aot_operand_kind {
    AOT_OPERAND_ABSENT = 0,
    AOT_OPERAND_VALUE = 1,  /* a non-constant value: node input `input` */
    AOT_OPERAND_WEIGHT = 2, /* constant bytes, see below */
} aot_operand_kind;

typedef struct aot_operand {
    aot_operand_kind kind;
    int input;              /* VALUE: the node input slot it comes from */
    int32_t value;          /* VALUE: the graph value read, filled in by the lowering */
    /* WEIGHT: t.data holds the f32 source (the model's constant, or data the lowering computed in
       its arena), t.shape the logical (unpacked) shape the binary records */
    kiln_tensor t;
    aot_weight_form form;
    int64_t rows, k, n, groups;  /* PACK_B: k x n (n x k when trans); PACK_A: groups x rows x k */
    bool trans;
} aot_operand;

typedef union aot_params {
    kiln_cpu_gemm_params gemm;
    kiln_cpu_conv_params conv;
    kiln_cpu_pool_params pool;
    kiln_cpu_unary_params unary;
    kiln_cpu_binary_params binary;
    kiln_cpu_softmax_params softmax;
    kiln_cpu_layernorm_params layernorm;
    kiln_cpu_affine_params affine;
    kiln_cpu_copy_params copy;
    kiln_cpu_transpose_params transpose;
    kiln_cpu_concat_params concat;
    kiln_cpu_slice_params slice;
    kiln_cpu_pad_params pad;
    kiln_cpu_where_params where;
    kiln_cpu_qlinear_params qlinear;
    kiln_cpu_embed_params embed;
    uint8_t bytes[KILN_CPU_PARAMS_SIZE];
} aot_params;

typedef struct aot_step_desc {
    uint32_t op;            /* kiln_cpu_op */
    uint32_t n_inputs;      /* step input slots, absent optional ones included */
    aot_operand in[AOT_MAX_STEP_INPUTS];
    aot_params params;      /* zero-filled beyond the op's struct */
} aot_step_desc;

/* Describe node with inputs in (data set exactly for constants) and outputs out (NULL where
 * unused). arena receives data the description computes (BatchNormalization's scale and shift);
 * when arena is NULL only the decision is made and such data is left NULL. false when the
 * backend does not implement this node exactly. */
bool aot_describe(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out,
                  kiln_arena *arena, aot_step_desc *d);

/* The activation slot of a step's parameters (GEMM, CONV, BINARY, CHANNEL_AFFINE), or NULL for
 * ops without an epilogue. */
kiln_cpu_act *aot_step_act(aot_step_desc *d);

/* ---- per family (aot_ops_*.c); each gets a node the dispatcher already checked: output 0 used,
 * f32, non-empty, every other output unused, input 0 present and f32. ---- */
bool aot_describe_gemm(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_matmul(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_conv(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, kiln_arena *arena,
                       aot_step_desc *d);
bool aot_describe_unary(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_binary(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_pool(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_softmax(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_layernorm(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                            aot_step_desc *d);
bool aot_describe_batchnorm(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                            kiln_arena *arena, aot_step_desc *d);
bool aot_describe_reduce_mean(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                              kiln_arena *arena, aot_step_desc *d);
bool aot_describe_copy(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_transpose(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                            aot_step_desc *d);

/* Nodes of domain KILN_DOMAIN_KILN (aot_ops_qlinear.c): kiln.Linear over Q8_0 / Q4_0 blocks
 * (QLINEAR) and kiln.Embed of Q8_0 / Q4_0 / F32 rows (EMBED), both recording the weight's bytes
 * as they are, so a classifier tied to the embedding is one tensor of the context binary.
 * The dispatcher's checks are its own here: their weights are not f32, Embed's input 0 is W. */
bool aot_describe_kiln(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out,
                       aot_step_desc *d);

/* ---- shared helpers (aot_ops.c) ---- */
/* Input i of node, NULL when absent or beyond n_inputs. */
const kiln_tensor *aot_input(const kiln_node *node, const kiln_tensor *const *in, size_t i);
/* Non-empty f32 tensor of at most KILN_CPU_MAX_RANK dims. */
bool aot_is_f32(const kiln_tensor *t);
/* The operand for node input i: a RAW weight when it is constant, else a VALUE. */
aot_operand aot_operand_of(const kiln_node *node, const kiln_tensor *const *in, size_t i);
/* A RAW weight over data with t's shape. */
aot_operand aot_weight_raw(const kiln_tensor *t);
int64_t aot_numel(const kiln_tensor *t);
/* d as a COPY of node input 0, all of it (aot_ops_layout.c): for nodes that move nothing. */
void aot_describe_copy_of(const kiln_node *node, const kiln_tensor *const *in, aot_step_desc *d);

#endif
