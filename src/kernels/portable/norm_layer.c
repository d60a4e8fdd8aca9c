/* norm_layer.c — LayerNormalization (opset 17).
 *
 * Layer: kernels/portable (norm family; registered in norm.c).
 * X is viewed as rows x cols with cols = the product of dims [axis, rank). Each row is
 * standardised with its own mean and population variance, then Y = normalized * Scale + B, where
 * Scale and the optional B broadcast (numpy rules, towards X's shape only) against X. The
 * optional outputs Mean and InvStdDev have X's shape with dims [axis, rank) set to 1, in the
 * float type named by stash_type. Statistics are computed in double whatever stash_type says,
 * which is at least as precise as it asks.
 */
#include <math.h>

#include "kernels/portable/norm_kernels.h"
#include "kernels/portable/reduce_row.h"

typedef struct layer_params {
    uint32_t axis;          /* normalised into [0, rank] */
    int64_t rows, cols;
    double epsilon;
    kiln_dtype stash;       /* dtype of Mean and InvStdDev */
} layer_params;

static kiln_status parse_params(const kiln_node *node, const kiln_tensor *x, layer_params *p)
{
    int64_t rank = x->rank;
    int64_t axis = kiln_node_attr_int(node, "axis", -1);
    if (axis < -rank || axis > rank) return KILN_ERROR_INVALID_ARGUMENT;
    p->axis = (uint32_t)(axis < 0 ? axis + rank : axis);
    p->rows = p->cols = 1;
    for (uint32_t d = 0; d < x->rank; d++) *(d < p->axis ? &p->rows : &p->cols) *= x->shape[d];
    p->epsilon = kiln_node_attr_float(node, "epsilon", 1e-5f);
    switch (kiln_node_attr_int(node, "stash_type", 1)) {
    case 1: p->stash = KILN_DTYPE_F32; break;    /* TensorProto FLOAT */
    case 11: p->stash = KILN_DTYPE_F64; break;   /* TensorProto DOUBLE */
    case 10: case 16: return KILN_ERROR_NOT_SUPPORTED; /* FLOAT16, BFLOAT16 */
    default: return KILN_ERROR_INVALID_ARGUMENT;
    }
    return KILN_OK;
}

/* Scale and B must broadcast to X without changing X's shape. */
static kiln_status check_affine(const kiln_tensor *t, const kiln_tensor *x)
{
    if (t->dtype != x->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    if (t->rank > x->rank) return KILN_ERROR_SHAPE_MISMATCH;
    for (uint32_t d = 0; d < t->rank; d++) {
        int64_t dim = t->shape[d], xdim = x->shape[x->rank - t->rank + d];
        if (dim != xdim && dim != 1) return KILN_ERROR_SHAPE_MISMATCH;
    }
    return KILN_OK;
}

kiln_status kiln_norm_layer_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    const kiln_tensor *x = in[0], *scale = in[1], *bias = node->n_inputs > 2 ? in[2] : NULL;
    if (node->n_inputs < 2 || node->n_inputs > 3 || node->n_outputs > 3 || !x || !scale || !out[0])
        return KILN_ERROR_INVALID_ARGUMENT;
    kiln_status st = kiln_norm_check_float(x->dtype);
    if (st == KILN_OK) st = check_affine(scale, x);
    if (st == KILN_OK && bias) st = check_affine(bias, x);
    layer_params p;
    if (st == KILN_OK) st = parse_params(node, x, &p);
    if (st != KILN_OK) return st;

    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    int64_t stats_shape[KILN_MAX_RANK];
    for (uint32_t d = 0; d < x->rank; d++) stats_shape[d] = d < p.axis ? x->shape[d] : 1;
    for (size_t j = 1; j < node->n_outputs; j++)
        if (out[j]) kiln_tensor_set_shape(out[j], p.stash, x->rank, stats_shape);
    /* x row, scale row, bias row (doubles), scale and bias offsets (int64), cols each */
    *scratch_size = (size_t)p.cols * 5 * sizeof(double);
    return KILN_OK;
}

/* Element offset into an affine param t (broadcast strides `strides` against x) of the i-th
   element of the sub-box of x's dims [first, last). */
static int64_t affine_offset(const kiln_tensor *x, const int64_t *strides, uint32_t first, uint32_t last, int64_t i)
{
    int64_t off = 0;
    for (uint32_t d = last; d-- > first;) {
        off += (i % x->shape[d]) * strides[d];
        i /= x->shape[d];
    }
    return off;
}

/* Values of param t for row r, laid out as the row's columns. */
typedef struct affine_rows {
    const kiln_tensor *t;           /* NULL: absent bias, all zeros */
    int64_t strides[KILN_MAX_RANK]; /* (x rank) broadcast strides of t */
    int64_t *col_offsets;           /* (cols) */
    double *values;                 /* (cols) */
} affine_rows;

static void affine_init(affine_rows *a, const kiln_tensor *t, const kiln_tensor *x, const layer_params *p)
{
    a->t = t;
    if (!t) {
        for (int64_t j = 0; j < p->cols; j++) a->values[j] = 0.0;
        return;
    }
    kiln_broadcast_strides(t, x->shape, x->rank, a->strides);
    for (int64_t j = 0; j < p->cols; j++) a->col_offsets[j] = affine_offset(x, a->strides, p->axis, x->rank, j);
}

static void affine_load_row(affine_rows *a, const kiln_tensor *x, const layer_params *p, int64_t r)
{
    if (!a->t) return;
    int64_t base = affine_offset(x, a->strides, 0, p->axis, r);
    kiln_reduce_row_gather_f64(a->t, base, a->col_offsets, p->cols, a->values);
}

kiln_status kiln_norm_layer_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    layer_params p;
    kiln_status st = parse_params(node, x, &p);
    if (st != KILN_OK) return st;
    double *row = ctx->scratch;
    affine_rows scale = {.values = row + p.cols, .col_offsets = (int64_t *)(row + 3 * p.cols)};
    affine_rows bias = {.values = row + 2 * p.cols, .col_offsets = (int64_t *)(row + 4 * p.cols)};
    affine_init(&scale, in[1], x, &p);
    affine_init(&bias, node->n_inputs > 2 ? in[2] : NULL, x, &p);
    kiln_tensor *mean_out = node->n_outputs > 1 ? out[1] : NULL;
    kiln_tensor *inv_std_out = node->n_outputs > 2 ? out[2] : NULL;

    for (int64_t r = 0; r < p.rows; r++) {
        kiln_reduce_row_load_f64(x, r * p.cols, 1, p.cols, row);
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < p.cols; j++) mean += row[j];
        mean /= (double)p.cols;
        for (int64_t j = 0; j < p.cols; j++) var += (row[j] - mean) * (row[j] - mean);
        var /= (double)p.cols;
        double inv_std = 1.0 / sqrt(var + p.epsilon);

        affine_load_row(&scale, x, &p, r);
        affine_load_row(&bias, x, &p, r);
        for (int64_t j = 0; j < p.cols; j++) row[j] = (row[j] - mean) * inv_std * scale.values[j] + bias.values[j];
        kiln_reduce_row_store_f64(out[0], r * p.cols, 1, p.cols, row);
        if (mean_out) kiln_reduce_row_store_f64(mean_out, r, 1, 1, &mean);
        if (inv_std_out) kiln_reduce_row_store_f64(inv_std_out, r, 1, 1, &inv_std);
    }
    return KILN_OK;
}
