/* aot_ops_data.c — the data-movement ops: Concat, Split and Slice (copies of bands and strided
 * gathers), Pad and Where.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h). Slice and Pad read their node with the
 * portable kernels' own plans (kernels/portable/data_ops.h), so both paths agree on clamping,
 * negative indices and steps, and the pad modes. Concat and Split describe here only whether the
 * backend takes the node: their operands or outputs outnumber one step description, so the
 * lowering emits their steps itself (aot_lower_data.c) from aot_concat_layout and
 * aot_split_layout.
 */
#include <string.h>

#include "backends/cpu/aot/aot_ops_data.h"
#include "kernels/portable/data_ops.h"

static int64_t prod(const int64_t *shape, uint32_t from, uint32_t to)
{
    int64_t n = 1;
    for (uint32_t d = from; d < to; d++) n *= shape[d];
    return n;
}

static bool axis_of(const kiln_node *node, int64_t fallback, uint32_t rank, uint32_t *axis)
{
    int64_t a = kiln_node_attr_int(node, "axis", fallback);
    if (a < 0) a += rank;
    if (a < 0 || a >= (int64_t)rank) return false;
    *axis = (uint32_t)a;
    return true;
}

/* ---- Concat ---------------------------------------------------------------------------------- */

bool aot_concat_layout(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_concat *c)
{
    if (node->n_inputs < 1 || node->n_inputs > AOT_CONCAT_MAX || y->rank < 1) return false;
    if (node->opset >= 4 && !kiln_node_attr(node, "axis")) return false;
    uint32_t axis;
    if (!axis_of(node, 1, y->rank, &axis)) return false;
    c->n = (uint32_t)node->n_inputs;
    c->outer = prod(y->shape, 0, axis);
    int64_t inner = prod(y->shape, axis + 1, y->rank), sum = 0;
    c->out_row = y->shape[axis] * inner;
    for (uint32_t i = 0; i < c->n; i++) {
        const kiln_tensor *t = in[i];
        if (!aot_is_f32(t) || t->rank != y->rank) return false;
        for (uint32_t d = 0; d < y->rank; d++)
            if (d != axis && t->shape[d] != y->shape[d]) return false;
        c->offset[i] = sum * inner;
        c->row[i] = t->shape[axis] * inner;
        sum += t->shape[axis];
    }
    return sum == y->shape[axis];
}

bool aot_describe_concat(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    aot_concat c;
    if (!aot_concat_layout(node, in, y, &c)) return false;
    d->op = KILN_CPU_OP_CONCAT; /* the steps themselves: aot_lower_data.c */
    return true;
}

/* ---- Slice and Split: strided gathers -------------------------------------------------------- */

/* Drops unit dims and merges neighbours the gather walks contiguously, so a channel slice of
   [1, C, H, W] is one row of c * H * W elements. */
static void merge_slice_dims(kiln_cpu_slice_params *p)
{
    uint32_t r = 0;
    for (uint32_t d = 0; d < p->rank; d++) {
        if (p->out_shape[d] == 1) continue;
        if (r > 0 && p->strides[r - 1] == p->strides[d] * p->out_shape[d]) {
            p->out_shape[r - 1] *= p->out_shape[d];
            p->strides[r - 1] = p->strides[d];
            continue;
        }
        p->out_shape[r] = p->out_shape[d];
        p->strides[r++] = p->strides[d];
    }
    if (r == 0) {
        p->out_shape[0] = 1;
        p->strides[0] = 0;
        r = 1;
    }
    for (uint32_t d = r; d < KILN_CPU_MAX_RANK; d++) p->out_shape[d] = p->strides[d] = 0;
    p->rank = r;
}

/* The gather of x's elements start[d] + i * step[d], i < count[d], along every dim. */
static void gather_params(const kiln_tensor *x, const int64_t *start, const int64_t *step, const int64_t *count,
                          kiln_cpu_slice_params *p)
{
    memset(p, 0, sizeof *p);
    p->rank = x->rank;
    p->elem_size = sizeof(float);
    int64_t dense = 1;
    for (uint32_t d = x->rank; d-- > 0;) {
        p->offset += start[d] * dense;
        p->out_shape[d] = count[d];
        p->strides[d] = count[d] > 1 ? step[d] * dense : 0;
        dense *= x->shape[d];
    }
    merge_slice_dims(p);
}

bool aot_slice_is_contiguous(const kiln_cpu_slice_params *p) { return p->rank == 1 && p->strides[0] == 1; }

bool aot_describe_slice(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *x = in[0];
    kiln_data_slice_plan plan;
    /* starts, ends, axes and steps must be constants: their data is there only then */
    if (x->rank != y->rank || kiln_data_slice_make_plan(node, in, x, &plan) != KILN_OK) return false;
    for (uint32_t a = 0; a < x->rank; a++)
        if (plan.count[a] != y->shape[a]) return false;
    d->op = KILN_CPU_OP_SLICE;
    d->n_inputs = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    gather_params(x, plan.start, plan.step, plan.count, &d->params.slice);
    return true;
}

bool aot_split_layout(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out,
                      aot_split *s)
{
    const kiln_tensor *x = in[0], *list = node->n_inputs > 1 ? in[1] : NULL;
    size_t n = node->n_outputs;
    if (n < 1 || n > AOT_CONCAT_MAX || x->rank < 1 || !axis_of(node, 0, x->rank, &s->axis)) return false;
    int64_t dim = x->shape[s->axis], sum = 0;
    const kiln_attr *a = node->opset < 13 ? kiln_node_attr(node, "split") : NULL;
    for (size_t j = 0; j < n; j++) {
        if (list) {
            if (list->dtype != KILN_DTYPE_I64 || !list->data || list->rank != 1 || list->shape[0] != (int64_t)n)
                return false;
            s->part[j] = ((const int64_t *)list->data)[j];
        } else if (a) {
            if (a->type != KILN_ATTR_INTS || a->n != n) return false;
            s->part[j] = a->ints[j];
        } else {
            if (dim % (int64_t)n != 0) return false; /* as the portable Split: equal parts only */
            s->part[j] = dim / (int64_t)n;
        }
        if (s->part[j] < 1) return false; /* empty parts stay portable */
        if (out[j] && (out[j]->rank != x->rank || out[j]->shape[s->axis] != s->part[j])) return false;
        sum += s->part[j];
    }
    return sum == dim;
}

void aot_split_part(const kiln_tensor *x, const aot_split *s, size_t j, kiln_cpu_slice_params *p)
{
    int64_t start[KILN_CPU_MAX_RANK] = {0}, step[KILN_CPU_MAX_RANK], count[KILN_CPU_MAX_RANK];
    for (uint32_t d = 0; d < x->rank; d++) {
        step[d] = 1;
        count[d] = x->shape[d];
    }
    for (size_t i = 0; i < j; i++) start[s->axis] += s->part[i];
    count[s->axis] = s->part[j];
    gather_params(x, start, step, count, p);
}

bool aot_describe_split(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    (void)y;
    d->op = KILN_CPU_OP_SLICE; /* one per used output: aot_lower_data.c */
    return true;
}

/* ---- Pad ----------------------------------------------------------------------------------- */

bool aot_describe_pad(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *x = in[0], *value = node->opset >= 11 ? aot_input(node, in, 2) : NULL;
    if (aot_input(node, in, 3)) return false; /* opset 18's axes: the portable kernels' */
    if (node->opset >= 11 && aot_input(node, in, 1) && !aot_input(node, in, 1)->data) return false;
    kiln_data_pad_plan plan;
    if (kiln_data_pad_make_plan(node, in, x, &plan) != KILN_OK || y->rank != x->rank) return false;
    kiln_cpu_pad_params *p = &d->params.pad;
    p->value = node->opset < 11 ? kiln_node_attr_float(node, "value", 0) : 0;
    if (value) {
        if (value->dtype != KILN_DTYPE_F32 || !value->data || kiln_tensor_numel(value) != 1) return false;
        p->value = ((const float *)value->data)[0];
    }
    p->rank = x->rank;
    p->mode = plan.mode == KILN_DATA_PAD_CONSTANT ? KILN_CPU_PAD_CONSTANT
              : plan.mode == KILN_DATA_PAD_REFLECT ? KILN_CPU_PAD_REFLECT
                                                   : KILN_CPU_PAD_EDGE;
    bool moves = false;
    for (uint32_t a = 0; a < x->rank; a++) {
        if (plan.shape[a] != y->shape[a]) return false;
        p->in_shape[a] = x->shape[a];
        p->out_shape[a] = y->shape[a];
        p->begin[a] = plan.begin[a];
        moves |= plan.begin[a] != 0 || plan.end[a] != 0;
    }
    if (!moves) { /* pads of zero (PyTorch's exports put them before average pools): no step */
        aot_describe_copy_of(node, in, d);
        return true;
    }
    d->op = KILN_CPU_OP_PAD;
    d->n_inputs = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    return true;
}

/* ---- Where ---------------------------------------------------------------------------------- */

/* Drops unit dims and merges neighbours that all three operands traverse contiguously. */
static bool merge_where_dims(const kiln_tensor *y, int64_t strides[3][KILN_MAX_RANK], kiln_cpu_where_params *p)
{
    int64_t shape[KILN_MAX_RANK], s[3][KILN_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t d = 0; d < y->rank; d++) {
        int64_t n = y->shape[d];
        if (n == 1) continue;
        bool merge = r > 0;
        for (int k = 0; k < 3 && merge; k++) merge = s[k][r - 1] == strides[k][d] * n;
        if (merge) {
            shape[r - 1] *= n;
            for (int k = 0; k < 3; k++) s[k][r - 1] = strides[k][d];
            continue;
        }
        shape[r] = n;
        for (int k = 0; k < 3; k++) s[k][r] = strides[k][d];
        r++;
    }
    if (r == 0) { /* one element */
        shape[0] = 1;
        for (int k = 0; k < 3; k++) s[k][0] = 0;
        r = 1;
    }
    if (r > KILN_CPU_WHERE_MAX_RANK) return false;
    p->rank = r;
    for (uint32_t i = 0; i < r; i++) {
        p->out_shape[i] = shape[i];
        p->cond_strides[i] = s[0][i];
        p->a_strides[i] = s[1][i];
        p->b_strides[i] = s[2][i];
    }
    return true;
}

bool aot_describe_where(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *ops[3] = {in[0], aot_input(node, in, 1), aot_input(node, in, 2)};
    if (node->n_inputs != 3 || !ops[0] || ops[0]->dtype != KILN_DTYPE_BOOL || kiln_tensor_numel(ops[0]) < 1 ||
        !aot_is_f32(ops[1]) || !aot_is_f32(ops[2]))
        return false;
    int64_t strides[3][KILN_MAX_RANK];
    for (int k = 0; k < 3; k++) {
        /* Every operand dim must be 1 or the output's (the strides below rely on it). */
        if (ops[k]->rank > y->rank) return false;
        for (uint32_t i = 0; i < ops[k]->rank; i++) {
            int64_t dim = ops[k]->shape[i], want = y->shape[y->rank - ops[k]->rank + i];
            if (dim != 1 && dim != want) return false;
        }
        kiln_broadcast_strides(ops[k], y->shape, y->rank, strides[k]);
    }
    if (!merge_where_dims(y, strides, &d->params.where)) return false;
    d->op = KILN_CPU_OP_WHERE;
    d->n_inputs = 3;
    for (int k = 0; k < 3; k++) d->in[k] = aot_operand_of(node, in, (size_t)k);
    return true;
}
