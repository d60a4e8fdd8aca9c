/* aot_ops_norm.c — Softmax/LogSoftmax, LayerNormalization, row means and inference
 * BatchNormalization.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h).
 *  - Softmax: before opset 13 the input is coerced to 2-D at `axis` (default 1), so a row is the
 *    whole trailing block (inner = 1); from 13 the row runs along the one dim `axis` (default -1)
 *    with stride inner. Both are SOFTMAX's (outer, n, inner).
 *  - LayerNormalization: rows of the trailing product from `axis`; Scale and B must cover exactly
 *    those dims (anything that would broadcast them further stays portable).
 *  - ReduceMean over the last axis only becomes a GEMM against a column of ones with alpha 1/n:
 *    no reduction kernel of its own, and the RMSNorm that LLaMA-style models export (Pow,
 *    ReduceMean, Add, Sqrt, Div, Mul, Mul) stays in one partition, where the lowering fuses it
 *    into a LAYERNORM with rms set (aot_fuse.c).
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

/* The axes of a ReduceMean: the attribute before opset 18, a constant input from 18. One axis,
   the last, is all the GEMM form takes. */
static bool reduces_last_axis(const kiln_node *node, const kiln_tensor *const *in, int64_t rank)
{
    int64_t axis;
    if (node->opset < 18) {
        const int64_t *axes = NULL;
        if (kiln_node_attr_ints(node, "axes", &axes) != 1) return false;
        axis = axes[0];
    } else {
        const kiln_tensor *a = aot_input(node, in, 1);
        if (!a || !a->data || a->dtype != KILN_DTYPE_I64 || kiln_tensor_numel(a) != 1) return false;
        axis = kiln_tensor_get_i64(a, 0);
    }
    return kiln_axis_normalize(axis, rank, &axis) && axis == rank - 1;
}

bool aot_describe_reduce_mean(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                              kiln_arena *arena, aot_step_desc *d)
{
    const kiln_tensor *x = in[0];
    int64_t rank = x->rank;
    if (rank < 1 || !reduces_last_axis(node, in, rank)) return false;
    int64_t n = x->shape[rank - 1], rows = aot_numel(x) / n;
    if (aot_numel(y) != rows) return false; /* keepdims or not: the same rows x 1 bytes */
    float *ones = NULL;
    if (arena) {
        ones = KILN_ARENA_ARRAY(arena, float, (size_t)n);
        if (!ones) return false;
        for (int64_t i = 0; i < n; i++) ones[i] = 1.0f;
    }
    kiln_cpu_gemm_params *p = &d->params.gemm;
    d->op = KILN_CPU_OP_GEMM;
    d->n_inputs = 3;
    p->M = rows, p->N = 1, p->K = n, p->batch = 1;
    p->lda = n, p->ldb = 1, p->ldy = 1;
    p->alpha = (float)(1.0 / (double)n);
    p->b_packed = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    kiln_tensor column = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {n, 1}, .data = ones};
    d->in[1] = aot_weight_raw(&column);
    d->in[1].form = AOT_FORM_PACK_B;
    d->in[1].k = n;
    d->in[1].n = 1;
    d->in[2] = (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
    return true;
}
