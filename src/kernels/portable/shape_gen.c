/* shape_gen.c — shape-family kernels whose output shape comes from input data: Expand, Tile,
 * ConstantOfShape, Range. Listed in kiln_kernels_shape (shape.c). Layer: kernels/portable.
 *
 * infer() needs the shape-giving input's data and returns KILN_ERROR_SHAPE_UNKNOWN without it.
 * run() re-derives what it needs from the output shape infer() set (Expand, Tile) or from the
 * same inputs, so the two cannot disagree.
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/shape_common.h"
#include "kernels/portable/shape_ops.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

static kiln_status set_output(kiln_tensor *y, kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    KILN_TRY(kiln_shape_check_dims(shape, rank, dtype));
    if (y) kiln_tensor_set_shape(y, dtype, rank, shape);
    return KILN_OK;
}

/* Reads a 1-D int64 shape tensor of at most KILN_MAX_RANK values (more is a rank kiln cannot
   hold, hence NOT_SUPPORTED rather than a mismatch). */
static kiln_status read_shape_input(const kiln_tensor *t, int64_t *dims, size_t *n)
{
    KILN_CHECK(t, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(t->rank == 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(t->shape[0] <= KILN_MAX_RANK, KILN_ERROR_NOT_SUPPORTED);
    return kiln_shape_read_ints(t, false, dims, KILN_MAX_RANK, n);
}

/* ---- Expand: bidirectional broadcast of the input to a shape ---- */

kiln_status kiln_shape_expand_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    kiln_tensor target = {.dtype = x->dtype};
    size_t n;
    KILN_TRY(read_shape_input(IN(1), target.shape, &n));
    target.rank = (uint32_t)n;
    for (size_t d = 0; d < n; d++) KILN_CHECK(target.shape[d] >= 0, KILN_ERROR_SHAPE_MISMATCH);
    const kiln_tensor *both[2] = {x, &target};
    int64_t shape[KILN_MAX_RANK];
    uint32_t rank;
    KILN_TRY(kiln_broadcast_shapes(both, 2, shape, &rank));
    return set_output(OUT(0), x->dtype, rank, shape);
}

kiln_status kiln_shape_expand_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    int64_t strides[KILN_MAX_RANK];
    kiln_broadcast_strides(in[0], y->shape, y->rank, strides);
    kiln_shape_strided_copy(y->data, in[0]->data, kiln_dtype_size(y->dtype), y->rank, y->shape, strides, 0);
    return KILN_OK;
}

/* ---- Tile ---- */

/* The repeat count per axis: a `repeats` list from opset 6, a (tiles, axis) pair of scalars
   before. */
static kiln_status tile_repeats(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *x,
                                int64_t *repeats)
{
    if (node->opset >= 6) {
        const kiln_tensor *r = IN(1);
        KILN_CHECK(r, KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(r->rank == 1 && r->shape[0] == x->rank, KILN_ERROR_SHAPE_MISMATCH);
        size_t n;
        return kiln_shape_read_ints(r, false, repeats, KILN_MAX_RANK, &n);
    }
    const kiln_tensor *tiles = IN(1), *axis_t = IN(2);
    KILN_CHECK(tiles && axis_t, KILN_ERROR_INVALID_ARGUMENT);
    int64_t count, axis;
    size_t n;
    KILN_TRY(kiln_shape_read_ints(tiles, true, &count, 1, &n));
    KILN_CHECK(n == 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_TRY(kiln_shape_read_ints(axis_t, true, &axis, 1, &n));
    KILN_CHECK(n == 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(kiln_axis_normalize(axis, x->rank, &axis), KILN_ERROR_INVALID_ARGUMENT);
    for (uint32_t d = 0; d < x->rank; d++) repeats[d] = 1;
    repeats[axis] = count;
    return KILN_OK;
}

kiln_status kiln_shape_tile_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    int64_t repeats[KILN_MAX_RANK], shape[KILN_MAX_RANK];
    KILN_TRY(tile_repeats(node, in, x, repeats));
    for (uint32_t d = 0; d < x->rank; d++) {
        KILN_CHECK(repeats[d] >= 0, KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(kiln_mul_i64(x->shape[d], repeats[d], &shape[d]), KILN_ERROR_LIMIT);
    }
    return set_output(OUT(0), x->dtype, x->rank, shape);
}

kiln_status kiln_shape_tile_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    /* Axis d of the output splits into (repeat, d): the repeat axis reads with stride 0, so
       the tiled output is a plain strided copy of twice the rank. */
    kiln_tensor *y = OUT(0);
    const kiln_tensor *x = in[0];
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t in_strides[KILN_MAX_RANK], shape[KILN_SHAPE_VIEW_MAX_RANK], strides[KILN_SHAPE_VIEW_MAX_RANK];
    kiln_shape_dense_strides(x->shape, x->rank, in_strides);
    for (uint32_t d = 0; d < x->rank; d++) {
        shape[2 * d] = y->shape[d] / x->shape[d];
        strides[2 * d] = 0;
        shape[2 * d + 1] = x->shape[d];
        strides[2 * d + 1] = in_strides[d];
    }
    kiln_shape_strided_copy(y->data, x->data, kiln_dtype_size(x->dtype), 2 * x->rank, shape, strides, 0);
    return KILN_OK;
}

/* ---- ConstantOfShape ---- */

/* The fill value: the one-element `value` tensor attribute, or float32 0. */
static kiln_status fill_value(const kiln_node *node, kiln_dtype *dtype, const void **bytes)
{
    static const float zero = 0.0f;
    const kiln_attr *a = kiln_node_attr(node, "value");
    *dtype = KILN_DTYPE_F32;
    *bytes = &zero;
    if (!a) return KILN_OK;
    KILN_CHECK(a->type == KILN_ATTR_TENSOR && a->tensor.data, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(a->tensor.rank <= 1 && kiln_tensor_numel(&a->tensor) == 1, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(kiln_dtype_size(a->tensor.dtype) > 0, KILN_ERROR_INVALID_ARGUMENT);
    *dtype = a->tensor.dtype;
    *bytes = a->tensor.data;
    return KILN_OK;
}

kiln_status kiln_shape_constant_of_shape_infer(const kiln_node *node, const kiln_tensor *const *in,
                                               kiln_tensor *const *out, size_t *scratch_size)
{
    kiln_dtype dtype;
    const void *value;
    KILN_TRY(fill_value(node, &dtype, &value));
    int64_t shape[KILN_MAX_RANK];
    size_t n;
    KILN_TRY(read_shape_input(IN(0), shape, &n));
    return set_output(OUT(0), dtype, (uint32_t)n, shape);
}

kiln_status kiln_shape_constant_of_shape_run(const kiln_node *node, const kiln_tensor *const *in,
                                             kiln_tensor *const *out, kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    kiln_dtype dtype;
    const void *value;
    KILN_TRY(fill_value(node, &dtype, &value));
    if (!y) return KILN_OK;
    size_t es = kiln_dtype_size(dtype);
    int64_t n = kiln_numel(y);
    char *d = y->data;
    for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * es, value, es);
    return KILN_OK;
}

/* ---- Range ---- */

static bool range_dtype_ok(kiln_dtype dtype)
{
    return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F64 || dtype == KILN_DTYPE_I16 ||
           dtype == KILN_DTYPE_I32 || dtype == KILN_DTYPE_I64;
}

static bool range_is_float(kiln_dtype dtype) { return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F64; }

/* Element count max(ceil((limit - start) / delta), 0), computed without overflow. */
static kiln_status range_count(const kiln_tensor *start, const kiln_tensor *limit, const kiln_tensor *delta,
                               int64_t *count)
{
    if (range_is_float(start->dtype)) {
        double s = kiln_tensor_get_f64(start, 0), l = kiln_tensor_get_f64(limit, 0), d = kiln_tensor_get_f64(delta, 0);
        KILN_CHECK(d != 0 && isfinite(s) && isfinite(l) && isfinite(d), KILN_ERROR_INVALID_ARGUMENT);
        double n = ceil((l - s) / d);
        KILN_CHECK(n < 9.0e18, KILN_ERROR_LIMIT);
        *count = n > 0 ? (int64_t)n : 0;
        return KILN_OK;
    }
    int64_t s = kiln_tensor_get_i64(start, 0), l = kiln_tensor_get_i64(limit, 0), d = kiln_tensor_get_i64(delta, 0);
    KILN_CHECK(d != 0, KILN_ERROR_INVALID_ARGUMENT);
    int64_t span;
    KILN_CHECK(!__builtin_sub_overflow(l, s, &span), KILN_ERROR_LIMIT);
    if ((span > 0) != (d > 0) || span == 0) {
        *count = 0;
        return KILN_OK;
    }
    /* Same signs: ceil(span / d) = (|span| - 1) / |d| + 1; |d| of INT64_MIN saturates harmlessly. */
    uint64_t aspan = span > 0 ? (uint64_t)span : (uint64_t)0 - (uint64_t)span;
    uint64_t ad = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
    *count = (int64_t)((aspan - 1) / ad + 1);
    return KILN_OK;
}

static kiln_status range_inputs(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor **t)
{
    for (size_t i = 0; i < 3; i++) {
        t[i] = IN(i);
        KILN_CHECK(t[i], KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(range_dtype_ok(t[i]->dtype) && t[i]->dtype == t[0]->dtype, KILN_ERROR_DTYPE_MISMATCH);
        KILN_CHECK(t[i]->rank <= 1 && kiln_numel(t[i]) == 1, KILN_ERROR_SHAPE_MISMATCH);
    }
    for (size_t i = 0; i < 3; i++)
        if (!t[i]->data) return KILN_ERROR_SHAPE_UNKNOWN;
    return KILN_OK;
}

kiln_status kiln_shape_range_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size)
{
    const kiln_tensor *t[3];
    KILN_TRY(range_inputs(node, in, t));
    int64_t count;
    KILN_TRY(range_count(t[0], t[1], t[2], &count));
    return set_output(OUT(0), t[0]->dtype, 1, &count);
}

kiln_status kiln_shape_range_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    int64_t n = y->shape[0];
    if (range_is_float(y->dtype)) {
        double s = kiln_tensor_get_f64(in[0], 0), d = kiln_tensor_get_f64(in[2], 0);
        for (int64_t i = 0; i < n; i++) {
            double v = s + (double)i * d;
            if (y->dtype == KILN_DTYPE_F32) ((float *)y->data)[i] = (float)v;
            else ((double *)y->data)[i] = v;
        }
        return KILN_OK;
    }
    /* Every value lies between start and limit, so it fits the dtype; unsigned arithmetic
       keeps the intermediate product defined. */
    uint64_t s = (uint64_t)kiln_tensor_get_i64(in[0], 0), d = (uint64_t)kiln_tensor_get_i64(in[2], 0);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t)(s + (uint64_t)i * d);
        switch (y->dtype) {
        case KILN_DTYPE_I16: ((int16_t *)y->data)[i] = (int16_t)v; break;
        case KILN_DTYPE_I32: ((int32_t *)y->data)[i] = (int32_t)v; break;
        default: ((int64_t *)y->data)[i] = v; break;
        }
    }
    return KILN_OK;
}
