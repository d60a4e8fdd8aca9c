/* aot_ops_norm.c — Softmax/LogSoftmax, LayerNormalization and inference BatchNormalization.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h).
 *  - Softmax: before opset 13 the input is coerced to 2-D at `axis` (default 1), so a row is the
 *    whole trailing block (inner = 1); from 13 the row runs along the one dim `axis` (default -1)
 *    with stride inner. Both are SOFTMAX's (outer, n, inner).
 *  - LayerNormalization: rows of the trailing product from `axis`; Scale and B must cover exactly
 *    those dims (anything that would broadcast them further stays portable).
 *  - BatchNormalization with its estimated statistics becomes CHANNEL_AFFINE: scale = gamma /
 *    sqrt(var + epsilon), shift = beta - mean * scale, computed once here (in double) from the
 *    constant parameters. Training mode, non-spatial (opset < 9) and non-constant parameters
 *    stay portable. The lowering may fold the same scale/shift into a preceding Conv.
 */
#include <math.h>
#include <string.h>

#include "backends/cpu/aot/aot_ops.h"

/* Normalise an axis in [-rank, rank] (the end allowed) to [0, rank]; false outside. */
static bool axis_inclusive(int64_t axis, int64_t rank, int64_t *out)
{
    if (axis < -rank || axis > rank) return false;
    *out = axis < 0 ? axis + rank : axis;
    return true;
}

bool aot_describe_softmax(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *x = in[0];
    int64_t rank = x->rank, axis;
    if (rank < 1 || node->n_inputs != 1 || y->rank != x->rank) return false;
    kiln_cpu_softmax_params *p = &d->params.softmax;
    p->outer = p->n = p->inner = 1;
    if (node->opset < 13) {
        if (!axis_inclusive(kiln_node_attr_int(node, "axis", 1), rank, &axis)) return false;
        for (int64_t i = 0; i < rank; i++) *(i < axis ? &p->outer : &p->n) *= x->shape[i];
    } else {
        if (!kiln_axis_normalize(kiln_node_attr_int(node, "axis", -1), rank, &axis)) return false;
        for (int64_t i = 0; i < rank; i++) *(i < axis ? &p->outer : i == axis ? &p->n : &p->inner) *= x->shape[i];
    }
    p->log = strcmp(node->op, "LogSoftmax") == 0;
    d->op = KILN_CPU_OP_SOFTMAX;
    d->n_inputs = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    return true;
}

/* Scale or B of LayerNormalization equals X's dims [axis, rank) (leading unit dims allowed). */
static bool covers_normalized_dims(const kiln_tensor *t, const kiln_tensor *x, int64_t axis, int64_t n)
{
    if (!aot_is_f32(t) || aot_numel(t) != n || t->rank > x->rank) return false;
    for (uint32_t i = 0; i < t->rank; i++) {
        int64_t xd = (int64_t)(x->rank - t->rank + i);
        if (xd < axis ? t->shape[i] != 1 : t->shape[i] != x->shape[xd]) return false;
    }
    return true;
}

bool aot_describe_layernorm(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                            aot_step_desc *d)
{
    const kiln_tensor *x = in[0], *scale = aot_input(node, in, 1), *bias = aot_input(node, in, 2);
    int64_t axis;
    if (!axis_inclusive(kiln_node_attr_int(node, "axis", -1), x->rank, &axis) || axis == (int64_t)x->rank)
        return false;
    if (kiln_node_attr_int(node, "stash_type", 1) != 1 || y->rank != x->rank) return false;
    kiln_cpu_layernorm_params *p = &d->params.layernorm;
    p->outer = p->n = 1;
    for (int64_t i = 0; i < (int64_t)x->rank; i++) *(i < axis ? &p->outer : &p->n) *= x->shape[i];
    if (!covers_normalized_dims(scale, x, axis, p->n)) return false;
    if (bias && !covers_normalized_dims(bias, x, axis, p->n)) return false;
    p->epsilon = kiln_node_attr_float(node, "epsilon", 1e-5f);
    p->has_bias = bias != NULL;
    d->op = KILN_CPU_OP_LAYERNORM;
    d->n_inputs = 3;
    d->in[0] = aot_operand_of(node, in, 0);
    d->in[1] = aot_operand_of(node, in, 1);
    d->in[2] = aot_operand_of(node, in, 2);
    return true;
}

/* A constant f32 parameter of c elements. */
static bool channel_param(const kiln_tensor *t, int64_t c)
{
    return aot_is_f32(t) && t->data && t->rank == 1 && t->shape[0] == c;
}

static aot_operand channel_weight(float *data, int64_t c)
{
    kiln_tensor t = {.dtype = KILN_DTYPE_F32, .rank = 1, .shape = {c}, .data = data};
    return aot_weight_raw(&t);
}

bool aot_describe_batchnorm(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                            kiln_arena *arena, aot_step_desc *d)
{
    const kiln_tensor *x = in[0];
    if (node->n_inputs != 5 || x->rank < 2 || y->rank != x->rank) return false;
    if (node->opset < 9 && kiln_node_attr_int(node, "spatial", 1) != 1) return false;
    if (node->opset >= 14 && kiln_node_attr_int(node, "training_mode", 0) != 0) return false;
    int64_t c = x->shape[1];
    for (size_t i = 1; i < 5; i++)
        if (!channel_param(in[i], c)) return false;
    kiln_cpu_affine_params *p = &d->params.affine;
    p->N = x->shape[0], p->C = c, p->inner = aot_numel(x) / (p->N * c);
    float *scale = NULL, *shift = NULL;
    if (arena) {
        scale = KILN_ARENA_ARRAY(arena, float, (size_t)c);
        shift = KILN_ARENA_ARRAY(arena, float, (size_t)c);
        if (!scale || !shift) return false;
        double epsilon = kiln_node_attr_float(node, "epsilon", 1e-5f);
        const float *gamma = in[1]->data, *beta = in[2]->data, *mean = in[3]->data, *var = in[4]->data;
        for (int64_t i = 0; i < c; i++) {
            double s = (double)gamma[i] / sqrt((double)var[i] + epsilon);
            scale[i] = (float)s;
            shift[i] = (float)((double)beta[i] - (double)mean[i] * s);
        }
    }
    d->op = KILN_CPU_OP_CHANNEL_AFFINE;
    d->n_inputs = 3;
    d->in[0] = aot_operand_of(node, in, 0);
    d->in[1] = channel_weight(scale, c);
    d->in[2] = channel_weight(shift, c);
    return true;
}
