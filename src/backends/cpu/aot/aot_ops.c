/* aot_ops.c — the table of ONNX ops the `cpu` backend lowers, the checks every node passes
 * before its family sees it, and kiln_cpu_aot_supports().
 *
 * Layer: backends/cpu/aot. Conservative by construction: a node is taken only when its output
 * 0 is the one output used, every tensor involved is non-empty f32 (parameter inputs such as
 * Reshape's shape excepted, which are constants), and its family can state it exactly as a
 * lowered step. Anything else stays on the portable kernels.
 * Each entry also names the lowered ops its family produces, so a listing can say which
 * targets' kernel tables run the op (docs/ops.md) without lowering a sample node.
 */
#include <string.h>

#include "backends/cpu/aot/aot_ops.h"
#include "backends/cpu/aot/aot_ops_data.h"
#include "backends/cpu/aot/cpu_aot.h"
#include "core/check.h"

typedef bool (*describe_fn)(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                            aot_step_desc *d);
/* For ops whose step carries weights the lowering computes (in the arena; NULL when only asked
   whether the node is supported). */
typedef bool (*describe_arena_fn)(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                                  kiln_arena *arena, aot_step_desc *d);

typedef struct op_entry {
    const char *op;
    describe_fn describe;
    describe_arena_fn describe_arena; /* when describe is NULL */
    uint32_t steps;                   /* the lowered ops (STEP bits) describe can produce; listings
                                         (docs/ops.md) read it, debug builds check it */
} op_entry;

#define STEP(op) (1u << KILN_CPU_OP_##op)

static const op_entry op_table[] = {
    {"Gemm", aot_describe_gemm, NULL, STEP(GEMM)},
    {"MatMul", aot_describe_matmul, NULL, STEP(GEMM)},
    {"Conv", NULL, aot_describe_conv, STEP(CONV2D)},
    /* Binary arithmetic and the activations of their own ONNX op: their lists in cpu_ops.h. */
#define BINARY_OP(name, value, onnx_op) {onnx_op, aot_describe_binary, NULL, STEP(BINARY)},
    KILN_CPU_BIN_LIST(BINARY_OP)
#undef BINARY_OP
#define UNARY_OP(name, value, onnx_op, alpha, beta) {onnx_op, aot_describe_unary, NULL, STEP(UNARY)},
    KILN_CPU_ACT_ONNX_LIST(UNARY_OP)
#undef UNARY_OP
    {"Clip", aot_describe_unary, NULL, STEP(UNARY)},
    {"Softmax", aot_describe_softmax, NULL, STEP(SOFTMAX)},
    {"LogSoftmax", aot_describe_softmax, NULL, STEP(SOFTMAX)},
    {"LayerNormalization", aot_describe_layernorm, NULL, STEP(LAYERNORM)},
    {"BatchNormalization", NULL, aot_describe_batchnorm, STEP(CHANNEL_AFFINE)},
    {"ReduceMean", NULL, aot_describe_reduce_mean, STEP(GEMM)},
    {"MaxPool", aot_describe_pool, NULL, STEP(POOL2D)},
    {"AveragePool", aot_describe_pool, NULL, STEP(POOL2D)},
    {"GlobalAveragePool", aot_describe_pool, NULL, STEP(POOL2D)},
    {"GlobalMaxPool", aot_describe_pool, NULL, STEP(POOL2D)},
    {"Reshape", aot_describe_copy, NULL, STEP(COPY)},
    {"Flatten", aot_describe_copy, NULL, STEP(COPY)},
    {"Squeeze", aot_describe_copy, NULL, STEP(COPY)},
    {"Unsqueeze", aot_describe_copy, NULL, STEP(COPY)},
    {"Identity", aot_describe_copy, NULL, STEP(COPY)},
    {"Dropout", aot_describe_copy, NULL, STEP(COPY)},
    {"Transpose", aot_describe_transpose, NULL, STEP(TRANSPOSE) | STEP(COPY)}, /* COPY: nothing moves */
    /* The data-movement ops (aot_ops_data.c); Concat and Split are lowered by aot_lower_data.c. */
    {"Concat", aot_describe_concat, NULL, STEP(CONCAT)},
    {"Split", aot_describe_split, NULL, STEP(SLICE)},
    {"Slice", aot_describe_slice, NULL, STEP(SLICE)},
    {"Pad", aot_describe_pad, NULL, STEP(PAD) | STEP(COPY)}, /* COPY: pads of zero */
    {"Where", aot_describe_where, NULL, STEP(WHERE)},
};

const kiln_tensor *aot_input(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    return i < node->n_inputs ? in[i] : NULL;
}

int64_t aot_numel(const kiln_tensor *t)
{
    int64_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) n *= t->shape[d];
    return n;
}

bool aot_is_f32(const kiln_tensor *t)
{
    if (!t || t->dtype != KILN_DTYPE_F32 || t->rank > KILN_CPU_MAX_RANK) return false;
    for (uint32_t d = 0; d < t->rank; d++)
        if (t->shape[d] <= 0) return false; /* empty tensors stay portable */
    return kiln_tensor_numel(t) > 0;
}

aot_operand aot_weight_raw(const kiln_tensor *t)
{
    aot_operand o = {.kind = AOT_OPERAND_WEIGHT, .input = -1, .form = AOT_FORM_RAW};
    o.t = *t;
    return o;
}

aot_operand aot_operand_of(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    const kiln_tensor *t = aot_input(node, in, i);
    if (!t) return (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
    if (t->data) return aot_weight_raw(t);
    return (aot_operand){.kind = AOT_OPERAND_VALUE, .input = (int)i};
}

/* Where's condition, the one weight that is not f32: bool bytes, stored as they are. */
static bool is_where_cond(const aot_step_desc *d, uint32_t i)
{
    return d->op == KILN_CPU_OP_WHERE && i == 0 && d->in[0].t.dtype == KILN_DTYPE_BOOL;
}

static const op_entry *find_op(const char *op)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (strcmp(op_table[i].op, op) == 0) return &op_table[i];
    return NULL;
}

bool aot_describe(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out,
                  kiln_arena *arena, aot_step_desc *d)
{
    memset(d, 0, sizeof *d);
    if (!node || !node->op || node->n_outputs < 1 || node->n_inputs < 1) return false;
    /* The table holds ONNX op names: a node of another domain (kiln.RMSNorm) is another op,
       kiln's own described apart. */
    if (!kiln_domain_is_onnx(node->domain)) return aot_describe_kiln(node, in, out, d);
    const op_entry *e = find_op(node->op);
    /* The input that must be f32: Where's input 0 is its bool condition. Every output of a Split
       may be used: it is one step per output. */
    size_t data_input = e && e->describe == aot_describe_where ? 1 : 0;
    bool all_outputs = e && e->describe == aot_describe_split;
    if (!e || !aot_is_f32(out[0]) || node->n_inputs <= data_input || !aot_is_f32(in[data_input])) return false;
    for (size_t j = 1; j < node->n_outputs && !all_outputs; j++)
        if (out[j]) return false; /* Indices, Mask, Mean ... are not produced by the steps */
    bool ok = e->describe ? e->describe(node, in, out[0], d) : e->describe_arena(node, in, out[0], arena, d);
    if (ok && all_outputs) ok = aot_split_layout(node, in, out, &(aot_split){0});
    for (uint32_t i = 0; ok && i < d->n_inputs; i++)
        if (d->in[i].kind == AOT_OPERAND_WEIGHT && !aot_is_f32(&d->in[i].t) && !is_where_cond(d, i)) ok = false;
    /* The steps of the table are what listings report (docs/ops.md), never a reason to refuse a
       node: a family making another step means the table is wrong, which the sanitizer runs of
       the test suites (KILN_DEBUG) stop at. A contract, not KILN_NEVER: its assert goes with
       NDEBUG, which RelWithDebInfo sets, and its release branch would refuse the node. */
    KILN_CONTRACT(!ok || (d->op < KILN_CPU_OP_COUNT && (e->steps & (1u << d->op))));
    return ok;
}

const char *kiln_cpu_aot_op_at(size_t i, uint32_t *steps_out)
{
    if (i >= sizeof op_table / sizeof op_table[0]) return NULL;
    if (steps_out) *steps_out = op_table[i].steps;
    return op_table[i].op;
}

kiln_cpu_act *aot_step_act(aot_step_desc *d)
{
    switch (d->op) {
    case KILN_CPU_OP_GEMM: return &d->params.gemm.act;
    case KILN_CPU_OP_CONV2D: return &d->params.conv.act;
    case KILN_CPU_OP_BINARY: return &d->params.binary.act;
    case KILN_CPU_OP_CHANNEL_AFFINE: return &d->params.affine.act;
    default: return NULL;
    }
}

bool kiln_cpu_aot_supports(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out)
{
    aot_step_desc d;
    return in && out && aot_describe(node, in, out, NULL, &d);
}
