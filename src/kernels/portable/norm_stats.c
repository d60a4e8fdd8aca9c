/* norm_stats.c — normalisations by per-group statistics: InstanceNormalization,
 * MeanVarianceNormalization and LpNormalization.
 *
 * Layer: kernels/portable (norm family; registered in norm.c).
 * Each group of elements (one (n, c) block; one reduction of an axis set; one lane along an
 * axis) is loaded into a dense double row (reduce_row.h), normalised there and stored back.
 *  - InstanceNormalization: y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] over the
 *    spatial dims of each (n, c); population variance.
 *  - MeanVarianceNormalization (9, 13): y = (x - mean) / (sqrt(var) + 1e-9) over `axes`
 *    (default [0, 2, 3]); the 1e-9 is the epsilon of ONNX's function definition.
 *  - LpNormalization: y = x / ||x||_p along `axis` (default -1), p in {1, 2}. A zero norm means
 *    every element is 0, and the output keeps those zeros rather than producing 0/0.
 */
#include <math.h>

#include "kernels/portable/norm_kernels.h"
#include "kernels/portable/reduce_plan.h"
#include "kernels/portable/reduce_row.h"

/* Mean and population variance of a row. */
static void row_moments(const double *v, int64_t n, double *mean, double *var)
{
    double m = 0.0, s = 0.0;
    for (int64_t k = 0; k < n; k++) m += v[k];
    m /= (double)n;
    for (int64_t k = 0; k < n; k++) s += (v[k] - m) * (v[k] - m);
    *mean = m;
    *var = s / (double)n;
}

/* ---- InstanceNormalization ---- */

/* Elements of one (n, c) block: the product of the spatial dims. */
static int64_t instance_block(const kiln_tensor *x)
{
    int64_t block = 1;
    for (uint32_t d = 2; d < x->rank; d++) block *= x->shape[d];
    return block;
}

kiln_status kiln_norm_instance_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     size_t *scratch_size)
{
    const kiln_tensor *x = in[0];
    if (node->n_inputs != 3 || !x || !in[1] || !in[2] || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < 3; i++) {
        kiln_status st = kiln_norm_check_float(in[i]->dtype);
        if (st != KILN_OK) return st;
        if (in[i]->dtype != x->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    }
    if (x->rank < 2) return KILN_ERROR_SHAPE_MISMATCH;
    for (size_t i = 1; i < 3; i++)
        if (in[i]->rank != 1 || in[i]->shape[0] != x->shape[1]) return KILN_ERROR_SHAPE_MISMATCH;
    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    /* scale and bias (C each), then one block row */
    *scratch_size = (size_t)(2 * x->shape[1] + instance_block(x)) * sizeof(double);
    return KILN_OK;
}

kiln_status kiln_norm_instance_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    int64_t channels = x->shape[1], block = instance_block(x);
    double epsilon = kiln_node_attr_float(node, "epsilon", 1e-5f);
    double *scale = ctx->scratch, *bias = scale + channels, *row = bias + channels;
    kiln_reduce_row_load_f64(in[1], 0, 1, channels, scale);
    kiln_reduce_row_load_f64(in[2], 0, 1, channels, bias);
    for (int64_t nc = 0; nc < x->shape[0] * channels; nc++) {
        int64_t c = nc % channels;
        kiln_reduce_row_load_f64(x, nc * block, 1, block, row);
        double mean, var;
        row_moments(row, block, &mean, &var);
        double a = scale[c] / sqrt(var + epsilon);
        for (int64_t k = 0; k < block; k++) row[k] = (row[k] - mean) * a + bias[c];
        kiln_reduce_row_store_f64(out[0], nc * block, 1, block, row);
    }
    return KILN_OK;
}

/* ---- MeanVarianceNormalization ---- */

static const int64_t mvn_default_axes[] = {0, 2, 3};

static kiln_status mvn_plan(const kiln_node *node, const kiln_tensor *x, kiln_reduce_plan *plan)
{
    const int64_t *axes;
    size_t n = kiln_node_attr_ints(node, "axes", &axes);
    if (!kiln_node_attr(node, "axes")) {
        axes = mvn_default_axes;
        n = 3;
    }
    bool mask[KILN_MAX_RANK];
    kiln_status st = kiln_reduce_axes_mask(axes, n, x->rank, mask);
    if (st != KILN_OK) return st;
    kiln_reduce_plan_init(plan, x, mask);
    return KILN_OK;
}

kiln_status kiln_norm_mvn_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    const kiln_tensor *x = in[0];
    if (node->n_inputs != 1 || !x || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_status st = kiln_norm_check_float(x->dtype);
    kiln_reduce_plan plan;
    if (st == KILN_OK) st = mvn_plan(node, x, &plan);
    if (st != KILN_OK) return st;
    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    /* offsets (int64) and the gathered row (double), n_inner each */
    *scratch_size = (size_t)plan.n_inner * 2 * sizeof(double);
    return KILN_OK;
}

kiln_status kiln_norm_mvn_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_reduce_plan plan;
    kiln_status st = mvn_plan(node, x, &plan);
    if (st != KILN_OK) return st;
    int64_t n = plan.n_inner;
    int64_t *offsets = ctx->scratch;
    double *row = (double *)ctx->scratch + n;
    kiln_reduce_plan_offsets(&plan, offsets);
    for (int64_t o = 0; o < plan.n_outer && n > 0; o++) {
        int64_t base = kiln_reduce_plan_base(&plan, o);
        kiln_reduce_row_gather_f64(x, base, offsets, n, row);
        double mean, var;
        row_moments(row, n, &mean, &var);
        double denom = sqrt(var) + 1e-9;
        for (int64_t k = 0; k < n; k++) row[k] = (row[k] - mean) / denom;
        kiln_reduce_row_scatter_f64(out[0], base, offsets, n, row);
    }
    return KILN_OK;
}

/* ---- LpNormalization ---- */

typedef struct lp_lanes {
    int64_t outer, n, inner;
    int64_t p;
} lp_lanes;

static kiln_status lp_parse(const kiln_node *node, const kiln_tensor *x, lp_lanes *l)
{
    int64_t axis;
    if (!kiln_axis_normalize(kiln_node_attr_int(node, "axis", -1), x->rank, &axis)) return KILN_ERROR_INVALID_ARGUMENT;
    l->p = kiln_node_attr_int(node, "p", 2);
    if (l->p != 1 && l->p != 2) return KILN_ERROR_INVALID_ARGUMENT;
    l->outer = l->inner = 1;
    l->n = x->shape[axis];
    for (int64_t d = 0; d < axis; d++) l->outer *= x->shape[d];
    for (int64_t d = axis + 1; d < x->rank; d++) l->inner *= x->shape[d];
    return KILN_OK;
}

kiln_status kiln_norm_lp_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               size_t *scratch_size)
{
    const kiln_tensor *x = in[0];
    if (node->n_inputs != 1 || !x || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_status st = kiln_norm_check_float(x->dtype);
    lp_lanes l;
    if (st == KILN_OK) st = lp_parse(node, x, &l);
    if (st != KILN_OK) return st;
    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    *scratch_size = (size_t)l.n * sizeof(double);
    return KILN_OK;
}

kiln_status kiln_norm_lp_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    lp_lanes l;
    kiln_status st = lp_parse(node, x, &l);
    if (st != KILN_OK) return st;
    double *row = ctx->scratch; /* (n) */
    for (int64_t o = 0; o < l.outer; o++) {
        for (int64_t i = 0; i < l.inner; i++) {
            int64_t base = o * l.n * l.inner + i;
            kiln_reduce_row_load_f64(x, base, l.inner, l.n, row);
            double norm = 0.0;
            for (int64_t k = 0; k < l.n; k++) norm += l.p == 1 ? fabs(row[k]) : row[k] * row[k];
            if (l.p == 2) norm = sqrt(norm);
            for (int64_t k = 0; k < l.n && norm != 0.0; k++) row[k] /= norm;
            kiln_reduce_row_store_f64(out[0], base, l.inner, l.n, row);
        }
    }
    return KILN_OK;
}
