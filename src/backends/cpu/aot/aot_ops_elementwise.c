/* aot_ops_elementwise.c — activations as UNARY steps and the arithmetic ops as BINARY steps.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h). Attribute defaults are ONNX's, per
 * version: Clip reads `min`/`max` attributes below opset 11 (defaults -FLT_MAX/FLT_MAX, as the
 * portable kernel) and optional constant scalar inputs from 11 (absent: no bound). Binary
 * operands are laid over the output shape as element strides (0 on broadcast dims), after the
 * legacy `broadcast`/`axis` rule below opset 7; dimensions the strides let merge are merged so
 * the kernels see the shortest loop nest.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backends/cpu/aot/aot_ops.h"
#include "kernels/portable/elementwise_iter.h"

/* ---- activations --------------------------------------------------------------------------- */

typedef struct act_entry {
    const char *op;
    kiln_cpu_act_kind kind;
    float alpha, beta;      /* attribute defaults */
} act_entry;

static const act_entry act_table[] = {
#define ACT_ENTRY(name, value, onnx_op, alpha, beta) {onnx_op, KILN_CPU_ACT_##name, alpha, beta},
    KILN_CPU_ACT_ONNX_LIST(ACT_ENTRY)
#undef ACT_ENTRY
};

/* A Clip bound input (opset >= 11): absent keeps the default; otherwise a constant f32 scalar. */
static bool clip_bound(const kiln_node *node, const kiln_tensor *const *in, size_t i, float *bound)
{
    const kiln_tensor *t = aot_input(node, in, i);
    if (!t) return true;
    if (t->dtype != KILN_DTYPE_F32 || !t->data || kiln_tensor_numel(t) != 1) return false;
    *bound = ((const float *)t->data)[0];
    return true;
}

static bool clip_act(const kiln_node *node, const kiln_tensor *const *in, kiln_cpu_act *act)
{
    act->kind = KILN_CPU_ACT_CLIP;
    if (node->opset < 11) {
        act->alpha = kiln_node_attr_float(node, "min", -FLT_MAX);
        act->beta = kiln_node_attr_float(node, "max", FLT_MAX);
        return true;
    }
    act->alpha = -INFINITY;
    act->beta = INFINITY;
    return clip_bound(node, in, 1, &act->alpha) && clip_bound(node, in, 2, &act->beta);
}

bool aot_describe_unary(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *x = in[0];
    if (aot_numel(x) != aot_numel(y)) return false;
    kiln_cpu_act *act = &d->params.unary.act;
    if (strcmp(node->op, "Clip") == 0) {
        if (!clip_act(node, in, act)) return false;
    } else {
        const act_entry *e = NULL;
        for (size_t i = 0; i < sizeof act_table / sizeof act_table[0] && !e; i++)
            if (strcmp(act_table[i].op, node->op) == 0) e = &act_table[i];
        if (!e || node->n_inputs != 1) return false;
        act->kind = e->kind;
        act->alpha = kiln_node_attr_float(node, "alpha", e->alpha);
        act->beta = kiln_node_attr_float(node, "beta", e->beta);
    }
    d->op = KILN_CPU_OP_UNARY;
    d->n_inputs = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    d->params.unary.count = aot_numel(x);
    return true;
}

/* ---- binary arithmetic --------------------------------------------------------------------- */

typedef struct binary_entry {
    const char *op;
    kiln_cpu_binary_kind kind;
} binary_entry;

static const binary_entry binary_table[] = {
#define BINARY_ENTRY(name, value, onnx_op) {onnx_op, KILN_CPU_BIN_##name},
    KILN_CPU_BIN_LIST(BINARY_ENTRY)
#undef BINARY_ENTRY
};

/* Drops unit dims and merges neighbours that both operands traverse contiguously (or both
 * broadcast), so [N,C,H,W] + [1,C,1,1] becomes [N, C, H*W] with strides for each operand. */
static void merge_dims(kiln_cpu_binary_params *p)
{
    uint32_t r = 0;
    for (uint32_t d = 0; d < p->rank; d++) {
        if (p->out_shape[d] == 1) continue;
        if (r > 0) {
            int64_t n = p->out_shape[d];
            bool a_ok = p->a_strides[r - 1] == p->a_strides[d] * n;
            bool b_ok = p->b_strides[r - 1] == p->b_strides[d] * n;
            if (a_ok && b_ok) {
                p->out_shape[r - 1] *= n;
                p->a_strides[r - 1] = p->a_strides[d];
                p->b_strides[r - 1] = p->b_strides[d];
                continue;
            }
        }
        p->out_shape[r] = p->out_shape[d];
        p->a_strides[r] = p->a_strides[d];
        p->b_strides[r] = p->b_strides[d];
        r++;
    }
    if (r == 0) { /* a scalar result: one element, both operands read at offset 0 */
        p->out_shape[0] = 1;
        p->a_strides[0] = p->b_strides[0] = 0;
        r = 1;
    }
    for (uint32_t d = r; d < KILN_CPU_MAX_RANK; d++) p->out_shape[d] = p->a_strides[d] = p->b_strides[d] = 0;
    p->rank = r;
}

bool aot_describe_binary(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *a = in[0], *b = aot_input(node, in, 1);
    if (node->n_inputs != 2 || !aot_is_f32(b)) return false;
    const binary_entry *e = NULL;
    for (size_t i = 0; i < sizeof binary_table / sizeof binary_table[0] && !e; i++)
        if (strcmp(binary_table[i].op, node->op) == 0) e = &binary_table[i];
    if (!e) return false;
    kiln_tensor b_view, shape;
    if (node->opset < 7 && e->kind != KILN_CPU_BIN_MAX && e->kind != KILN_CPU_BIN_MIN) {
        if (kiln_ew_binary_operands(node, a, b, &b_view, &shape) != KILN_OK) return false;
    } else {
        b_view = *b;
    }
    kiln_cpu_binary_params *p = &d->params.binary;
    p->kind = e->kind;
    p->rank = y->rank;
    for (uint32_t i = 0; i < y->rank; i++) p->out_shape[i] = y->shape[i];
    /* Every operand dim must be 1 or the output's (inference checked it; re-checked as the strides
       below rely on it). */
    const kiln_tensor *ops[2] = {a, &b_view};
    for (int k = 0; k < 2; k++) {
        if (ops[k]->rank > y->rank) return false;
        for (uint32_t i = 0; i < ops[k]->rank; i++) {
            int64_t dim = ops[k]->shape[i], want = y->shape[y->rank - ops[k]->rank + i];
            if (dim != 1 && dim != want) return false;
        }
    }
    kiln_broadcast_strides(a, y->shape, y->rank, p->a_strides);
    kiln_broadcast_strides(&b_view, y->shape, y->rank, p->b_strides);
    merge_dims(p);
    d->op = KILN_CPU_OP_BINARY;
    d->n_inputs = 2;
    d->in[0] = aot_operand_of(node, in, 0);
    d->in[1] = aot_operand_of(node, in, 1);
    return true;
}
