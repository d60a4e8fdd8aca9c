/* data_slice.c — Slice and Transpose, the data-family ops that read their input through a
 * strided view (listed in kiln_kernels_data, data.c). Layer: kernels/portable.
 *
 * Both build (shape, strides, offset) over the input and hand it to kiln_shape_strided_copy:
 * a slice scales each axis stride by its step and starts at the first selected element (a
 * negative step gives a negative stride), a transpose permutes the strides.
 */
#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

/* ---- Slice ---- */

/* What a slice selects along every axis of the input (data_ops.h). */
typedef kiln_data_slice_plan slice_plan;

/* The per-axis lists of a Slice node: attributes before opset 10, inputs from 10 on. */
typedef struct slice_lists {
    int64_t starts[KILN_MAX_RANK], ends[KILN_MAX_RANK], axes[KILN_MAX_RANK], steps[KILN_MAX_RANK];
    size_t n;
    bool has_axes, has_steps;
} slice_lists;

/* Keeps the first hard error; KILN_ERROR_SHAPE_UNKNOWN only wins over OK, so that every
   static check still runs while some data is unknown. */
static kiln_status worse(kiln_status a, kiln_status b)
{
    if (a != KILN_OK && a != KILN_ERROR_SHAPE_UNKNOWN) return a;
    return b != KILN_OK ? b : a;
}

static kiln_status read_list_input(const kiln_tensor *t, int64_t *values, size_t expect_n, bool *present)
{
    *present = t != NULL;
    if (!t) return KILN_OK;
    size_t n;
    kiln_status st = kiln_shape_read_ints(t, true, values, KILN_MAX_RANK, &n);
    if (st != KILN_OK && st != KILN_ERROR_SHAPE_UNKNOWN) return st;
    KILN_CHECK(n == expect_n, KILN_ERROR_SHAPE_MISMATCH);
    return st;
}

static kiln_status slice_read_lists(const kiln_node *node, const kiln_tensor *const *in, slice_lists *l)
{
    l->has_steps = false;
    if (node->opset < 10) {
        size_t n_ends, n_axes;
        bool has_starts, has_ends;
        KILN_TRY(kiln_shape_attr_ints(node, "starts", l->starts, KILN_MAX_RANK, &l->n, &has_starts));
        KILN_TRY(kiln_shape_attr_ints(node, "ends", l->ends, KILN_MAX_RANK, &n_ends, &has_ends));
        KILN_TRY(kiln_shape_attr_ints(node, "axes", l->axes, KILN_MAX_RANK, &n_axes, &l->has_axes));
        KILN_CHECK(has_starts && has_ends && n_ends == l->n, KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(!l->has_axes || n_axes == l->n, KILN_ERROR_INVALID_ARGUMENT);
        return KILN_OK;
    }
    const kiln_tensor *starts = IN(1), *ends = IN(2);
    KILN_CHECK(starts && ends, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(starts->dtype == ends->dtype, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(starts->rank == 1 && starts->shape[0] <= KILN_MAX_RANK, KILN_ERROR_SHAPE_MISMATCH);
    l->n = (size_t)starts->shape[0];
    bool present;
    kiln_status st = read_list_input(starts, l->starts, l->n, &present);
    st = worse(st, read_list_input(ends, l->ends, l->n, &present));
    st = worse(st, read_list_input(IN(3), l->axes, l->n, &l->has_axes));
    st = worse(st, read_list_input(IN(4), l->steps, l->n, &l->has_steps));
    return st;
}

/* Clamps one axis the way ONNX Slice-10+ does (Slice-1 is the step 1 case of it) and counts
   the selected elements: starts clamp to [0, dim] (to [0, dim-1] stepping backwards), ends to
   [0, dim] ([-1, dim-1] backwards). Values stay within [-1, dim], so nothing overflows. */
static void slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count)
{
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
    start = start < 0 ? 0 : start > hi ? hi : start;
    end = end < lo ? lo : end > hi ? hi : end;
    int64_t span = step > 0 ? end - start : start - end;
    /* |step| of INT64_MIN saturates to INT64_MAX: either way it exceeds any span. */
    int64_t mag = step > 0 ? step : step == INT64_MIN ? INT64_MAX : -step;
    *first = start;
    *count = span > 0 ? (span - 1) / mag + 1 : 0;
}

kiln_status kiln_data_slice_make_plan(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *x,
                                      slice_plan *p)
{
    slice_lists l;
    KILN_TRY(slice_read_lists(node, in, &l));
    for (uint32_t d = 0; d < x->rank; d++) {
        p->start[d] = 0;
        p->step[d] = 1;
        p->count[d] = x->shape[d];
    }
    uint32_t seen = 0;
    for (size_t i = 0; i < l.n; i++) {
        int64_t axis, step = l.has_steps ? l.steps[i] : 1;
        KILN_CHECK(kiln_axis_normalize(l.has_axes ? l.axes[i] : (int64_t)i, x->rank, &axis), KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(!(seen & (1u << axis)), KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(step != 0, KILN_ERROR_INVALID_ARGUMENT);
        seen |= 1u << axis;
        p->step[axis] = step;
        slice_axis(x->shape[axis], l.starts[i], l.ends[i], step, &p->start[axis], &p->count[axis]);
    }
    return KILN_OK;
}

kiln_status kiln_data_slice_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    slice_plan p;
    KILN_TRY(kiln_data_slice_make_plan(node, in, x, &p));
    KILN_TRY(kiln_shape_check_dims(p.count, x->rank, x->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, p.count);
    return KILN_OK;
}

kiln_status kiln_data_slice_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    slice_plan p;
    KILN_TRY(kiln_data_slice_make_plan(node, in, x, &p));
    int64_t dense[KILN_MAX_RANK], strides[KILN_MAX_RANK], offset = 0;
    kiln_shape_dense_strides(x->shape, x->rank, dense);
    for (uint32_t d = 0; d < x->rank; d++) {
        if (p.count[d] == 0) return KILN_OK;
        offset += p.start[d] * dense[d];
        /* A single selected element never moves along the axis; skipping the product also
           keeps a huge step from overflowing. */
        strides[d] = p.count[d] > 1 ? p.step[d] * dense[d] : 0;
    }
    kiln_shape_strided_copy(y->data, x->data, kiln_dtype_size(x->dtype), x->rank, p.count, strides, offset);
    return KILN_OK;
}

/* ---- Transpose ---- */

/* The permutation: the `perm` attribute, or the reversed axes when it is absent. */
static kiln_status transpose_perm(const kiln_node *node, uint32_t rank, int64_t *perm)
{
    size_t n;
    bool present;
    KILN_TRY(kiln_shape_attr_ints(node, "perm", perm, KILN_MAX_RANK, &n, &present));
    if (!present) {
        for (uint32_t d = 0; d < rank; d++) perm[d] = rank - 1 - d;
        return KILN_OK;
    }
    KILN_CHECK(n == rank, KILN_ERROR_INVALID_ARGUMENT);
    uint32_t seen = 0;
    for (uint32_t d = 0; d < rank; d++) {
        KILN_CHECK(perm[d] >= 0 && perm[d] < (int64_t)rank && !(seen & (1u << perm[d])), KILN_ERROR_INVALID_ARGUMENT);
        seen |= 1u << perm[d];
    }
    return KILN_OK;
}

kiln_status kiln_data_transpose_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    int64_t perm[KILN_MAX_RANK], shape[KILN_MAX_RANK];
    KILN_TRY(transpose_perm(node, x->rank, perm));
    for (uint32_t d = 0; d < x->rank; d++) shape[d] = x->shape[perm[d]];
    KILN_TRY(kiln_shape_check_dims(shape, x->rank, x->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, shape);
    return KILN_OK;
}

kiln_status kiln_data_transpose_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    int64_t perm[KILN_MAX_RANK], dense[KILN_MAX_RANK], strides[KILN_MAX_RANK];
    KILN_TRY(transpose_perm(node, x->rank, perm));
    kiln_shape_dense_strides(x->shape, x->rank, dense);
    for (uint32_t d = 0; d < x->rank; d++) strides[d] = dense[perm[d]];
    kiln_shape_strided_copy(y->data, x->data, kiln_dtype_size(x->dtype), x->rank, y->shape, strides, 0);
    return KILN_OK;
}
