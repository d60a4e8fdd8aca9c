/* select.c — portable kernels of the select family (see families.h): TopK, NonZero, Compress
 * and Unique, the ops that pick elements by their values. Layer: kernels/portable.
 *
 * All but TopK have output shapes that depend on input values: their infer() needs the data
 * and returns KILN_ERROR_SHAPE_UNKNOWN without it, and the runtime then infers them again on
 * the real inputs (docs/design.md, dynamic values). So infer() counts what run() will write,
 * using no memory (infer() has none): NonZero and Compress count in one pass, Unique compares
 * each slice with the ones before it. Values are compared as double (float dtypes) or int64
 * (integers), loaded through reduce_row.h, so large integers compare exactly.
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/index_sort.h"
#include "kernels/portable/reduce_row.h"
#include "kernels/portable/select_ops.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

int kiln_select_key_compare(const kiln_select_keys *k, int64_t a, int64_t b)
{
    if (k->f) return (k->f[a] > k->f[b]) - (k->f[a] < k->f[b]);
    return (k->i[a] > k->i[b]) - (k->i[a] < k->i[b]);
}

kiln_select_keys kiln_select_keys_load(const kiln_tensor *t, int64_t base, int64_t stride, int64_t n, void *buffer)
{
    kiln_select_keys k = {0};
    if (kiln_reduce_row_is_float(t->dtype)) {
        kiln_reduce_row_load_f64(t, base, stride, n, buffer);
        k.f = buffer;
    } else {
        kiln_reduce_row_load_i64(t, base, stride, n, buffer);
        k.i = buffer;
    }
    return k;
}

void kiln_select_outer_inner(const kiln_tensor *t, int64_t axis, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int64_t d = 0; d < (int64_t)t->rank; d++) {
        if (d < axis) *outer *= t->shape[d];
        else if (d > axis) *inner *= t->shape[d];
    }
}

/* ---- TopK ---- */

typedef struct topk_order {
    kiln_select_keys k;
    bool largest;
} topk_order;

static int topk_compare(const void *ctx, int64_t a, int64_t b)
{
    const topk_order *o = ctx;
    int c = kiln_select_key_compare(&o->k, a, b);
    return o->largest ? -c : c;
}

static kiln_status topk_params(const kiln_node *node, const kiln_tensor *const *in, int64_t *axis, int64_t *k)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank >= 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(kiln_reduce_row_dtype_ok(x->dtype), KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(kiln_axis_normalize(kiln_node_attr_int(node, "axis", -1), x->rank, axis), KILN_ERROR_INVALID_ARGUMENT);
    if (node->opset < 10) {
        KILN_CHECK(kiln_node_attr(node, "k"), KILN_ERROR_INVALID_ARGUMENT);
        *k = kiln_node_attr_int(node, "k", 0);
    } else {
        int64_t v[1];
        size_t n;
        KILN_CHECK(IN(1), KILN_ERROR_INVALID_ARGUMENT);
        KILN_TRY(kiln_shape_read_ints(IN(1), false, v, 1, &n));
        KILN_CHECK(n == 1, KILN_ERROR_SHAPE_MISMATCH);
        *k = v[0];
    }
    KILN_CHECK(*k >= 0 && *k <= x->shape[*axis], KILN_ERROR_INVALID_ARGUMENT);
    return KILN_OK;
}

static kiln_status topk_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size)
{
    int64_t axis, k;
    KILN_TRY(topk_params(node, in, &axis, &k));
    const kiln_tensor *x = IN(0);
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = k;
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, shape);
    if (OUT(1)) kiln_tensor_set_shape(OUT(1), KILN_DTYPE_I64, x->rank, shape);
    *scratch_size = (size_t)x->shape[axis] * 3 * sizeof(int64_t); /* keys, order, sort scratch */
    return KILN_OK;
}

static kiln_status topk_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    int64_t axis, k, outer, inner;
    KILN_TRY(topk_params(node, in, &axis, &k));
    const kiln_tensor *x = in[0];
    kiln_tensor *values = OUT(0), *indices = OUT(1);
    int64_t dim = x->shape[axis];
    kiln_select_outer_inner(x, axis, &outer, &inner);
    int64_t *key_buf = ctx->scratch, *order = key_buf + dim, *tmp = order + dim;
    topk_order o = {.largest = node->opset < 11 || kiln_node_attr_int(node, "largest", 1) != 0};
    size_t es = kiln_dtype_size(x->dtype);
    for (int64_t lane = 0; lane < outer * inner && k > 0; lane++) {
        int64_t base = (lane / inner) * dim * inner + lane % inner, out_base = (lane / inner) * k * inner + lane % inner;
        o.k = kiln_select_keys_load(x, base, inner, dim, key_buf);
        for (int64_t e = 0; e < dim; e++) order[e] = e;
        /* Sorted output whether or not `sorted` asks for it: any order is valid without it. */
        kiln_index_sort(order, tmp, dim, topk_compare, &o);
        for (int64_t e = 0; e < k; e++) {
            int64_t at = out_base + e * inner;
            if (values)
                memcpy((char *)values->data + (size_t)at * es, (const char *)x->data + (size_t)(base + order[e] * inner) * es,
                       es);
            if (indices) ((int64_t *)indices->data)[at] = order[e];
        }
    }
    return KILN_OK;
}

/* ---- NonZero ---- */

static bool element_nonzero(const kiln_tensor *t, int64_t i)
{
    size_t es = kiln_dtype_size(t->dtype);
    const unsigned char *p = (const unsigned char *)t->data + (size_t)i * es;
    if (kiln_reduce_row_is_float(t->dtype) || t->dtype == KILN_DTYPE_F16 || t->dtype == KILN_DTYPE_BF16) {
        /* -0.0 is zero: every bit but the sign clear. */
        for (size_t b = 0; b < es; b++) {
            unsigned char mask = b == es - 1 ? 0x7f : 0xff;
            if (p[b] & mask) return true;
        }
        return false;
    }
    for (size_t b = 0; b < es; b++)
        if (p[b]) return true;
    return false;
}

static int64_t count_nonzero(const kiln_tensor *t)
{
    int64_t n = 0;
    for (int64_t i = 0, all = kiln_numel(t); i < all; i++) n += element_nonzero(t, i);
    return n;
}

static kiln_status nonzero_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    if (!x->data) return KILN_ERROR_SHAPE_UNKNOWN;
    /* A scalar is one element of a rank-1 view: numpy's nonzero of a 0-d array. */
    int64_t shape[2] = {x->rank ? x->rank : 1, count_nonzero(x)};
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), KILN_DTYPE_I64, 2, shape);
    return KILN_OK;
}

static kiln_status nonzero_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    int64_t nnz = y->shape[1], rank = x->rank, pos[KILN_MAX_RANK] = {0}, k = 0;
    int64_t *dst = y->data;
    for (int64_t i = 0, all = kiln_numel(x); i < all; i++) {
        if (element_nonzero(x, i)) {
            KILN_CHECK(k < nnz, KILN_ERROR_INVALID_VALUE);
            for (int64_t d = 0; d < rank; d++) dst[d * nnz + k] = pos[d];
            if (rank == 0) dst[k] = 0;
            k++;
        }
        for (int64_t d = rank - 1; d >= 0 && ++pos[d] == x->shape[d]; d--) pos[d] = 0;
    }
    return KILN_OK;
}

/* ---- Compress ---- */

/* The axis (or -1: the flattened input) and the number of slices the condition keeps. */
static kiln_status compress_plan(const kiln_node *node, const kiln_tensor *const *in, int64_t *axis, int64_t *kept)
{
    const kiln_tensor *x = IN(0), *cond = IN(1);
    KILN_CHECK(x && cond, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(cond->dtype == KILN_DTYPE_BOOL, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(cond->rank == 1, KILN_ERROR_SHAPE_MISMATCH);
    *axis = -1;
    int64_t dim = kiln_numel(x);
    if (kiln_node_attr(node, "axis")) {
        KILN_CHECK(kiln_axis_normalize(kiln_node_attr_int(node, "axis", 0), x->rank, axis), KILN_ERROR_INVALID_ARGUMENT);
        dim = x->shape[*axis];
    }
    if (!cond->data) return KILN_ERROR_SHAPE_UNKNOWN;
    /* A condition longer than the axis may only be false past it; a shorter one drops the rest. */
    *kept = 0;
    for (int64_t i = 0; i < cond->shape[0]; i++) {
        bool keep = ((const uint8_t *)cond->data)[i] != 0;
        KILN_CHECK(!keep || i < dim, KILN_ERROR_INVALID_VALUE);
        *kept += keep;
    }
    return KILN_OK;
}

static kiln_status compress_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    int64_t axis, kept;
    KILN_TRY(compress_plan(node, in, &axis, &kept));
    const kiln_tensor *x = IN(0);
    if (!OUT(0)) return KILN_OK;
    if (axis < 0) kiln_tensor_set_shape(OUT(0), x->dtype, 1, &kept);
    else {
        kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, x->shape);
        OUT(0)->shape[axis] = kept;
    }
    return KILN_OK;
}

static kiln_status compress_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    int64_t axis, kept, outer = 1, inner = 1, dim;
    KILN_TRY(compress_plan(node, in, &axis, &kept));
    const kiln_tensor *x = in[0], *cond = in[1];
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    if (axis < 0) dim = kiln_numel(x);
    else {
        kiln_select_outer_inner(x, axis, &outer, &inner);
        dim = x->shape[axis];
    }
    size_t block = (size_t)inner * kiln_dtype_size(x->dtype);
    char *dst = y->data;
    int64_t n = cond->shape[0] < dim ? cond->shape[0] : dim;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n; i++) {
            if (!((const uint8_t *)cond->data)[i]) continue;
            memcpy(dst, (const char *)x->data + (size_t)(o * dim + i) * block, block);
            dst += block;
        }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_select[] = {
    {"TopK", 1, topk_infer, topk_run, {{0, 1, 1, 2, 2}, {10, 2, 2, 2, 2}}, "axis:i k:i largest:i sorted:i"},
    {"NonZero", 9, nonzero_infer, nonzero_run, {{0, 1, 1, 1, 1}}, ""},
    {"Compress", 9, compress_infer, compress_run, {{0, 2, 2, 1, 1}}, "axis:i"},
    {"Unique", 11, kiln_select_unique_infer, kiln_select_unique_run, {{0, 1, 1, 1, 4}}, "axis:i sorted:i"},
    {0},
};
