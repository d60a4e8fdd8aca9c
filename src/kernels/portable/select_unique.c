/* select_unique.c — Unique (listed in kiln_kernels_select, select.c). Layer: kernels/portable.
 *
 * Unique works on slices: the elements of the flattened input (no `axis`) or the sub-tensors at
 * each index of `axis`, compared lexicographically in row-major order. run() sorts the slice
 * indices stably, so each group of equal slices starts with its first occurrence; sorted=0
 * then orders the groups by that first occurrence. infer() has no memory to sort in, so it
 * counts the slices equal to none before them, in O(n^2) slice comparisons.
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/index_sort.h"
#include "kernels/portable/reduce_row.h"
#include "kernels/portable/select_ops.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

typedef struct slices {
    const kiln_tensor *x;
    int64_t outer, dim, inner; /* the input as (outer, dim, inner): slice i is [:, i, :] */
    bool is_float;
} slices;

static kiln_status slices_make(const kiln_node *node, const kiln_tensor *x, slices *s, bool *has_axis, int64_t *axis)
{
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(kiln_reduce_row_dtype_ok(x->dtype), KILN_ERROR_NOT_SUPPORTED);
    *s = (slices){.x = x, .outer = 1, .dim = kiln_numel(x), .inner = 1, .is_float = kiln_reduce_row_is_float(x->dtype)};
    *has_axis = kiln_node_attr(node, "axis") != NULL;
    if (*has_axis) {
        KILN_CHECK(kiln_axis_normalize(kiln_node_attr_int(node, "axis", 0), x->rank, axis), KILN_ERROR_INVALID_ARGUMENT);
        kiln_select_outer_inner(x, *axis, &s->outer, &s->inner);
        s->dim = x->shape[*axis];
    }
    return KILN_OK;
}

static int slice_compare(const void *ctx, int64_t a, int64_t b)
{
    const slices *s = ctx;
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t q = 0; q < s->inner; q++) {
            int64_t ia = (o * s->dim + a) * s->inner + q, ib = (o * s->dim + b) * s->inner + q;
            int c;
            if (s->is_float) {
                double va = kiln_tensor_get_f64(s->x, ia), vb = kiln_tensor_get_f64(s->x, ib);
                c = (va > vb) - (va < vb);
            } else {
                int64_t va = kiln_tensor_get_i64(s->x, ia), vb = kiln_tensor_get_i64(s->x, ib);
                c = (va > vb) - (va < vb);
            }
            if (c) return c;
        }
    return 0;
}

static int64_t count_unique(const slices *s)
{
    int64_t n = 0;
    for (int64_t i = 0; i < s->dim; i++) {
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++) seen = slice_compare(s, j, i) == 0;
        n += !seen;
    }
    return n;
}

kiln_status kiln_select_unique_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    slices s;
    bool has_axis;
    int64_t axis;
    KILN_TRY(slices_make(node, x, &s, &has_axis, &axis));
    if (!x->data) return KILN_ERROR_SHAPE_UNKNOWN;
    int64_t n_unique = count_unique(&s);
    if (OUT(0)) {
        if (has_axis) {
            kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, x->shape);
            OUT(0)->shape[axis] = n_unique;
        } else kiln_tensor_set_shape(OUT(0), x->dtype, 1, &n_unique);
    }
    if (OUT(1)) kiln_tensor_set_shape(OUT(1), KILN_DTYPE_I64, 1, &n_unique);
    if (OUT(2)) kiln_tensor_set_shape(OUT(2), KILN_DTYPE_I64, 1, &s.dim);
    if (OUT(3)) kiln_tensor_set_shape(OUT(3), KILN_DTYPE_I64, 1, &n_unique);
    *scratch_size = (size_t)s.dim * 6 * sizeof(int64_t);
    return KILN_OK;
}

static int by_value(const void *ctx, int64_t a, int64_t b)
{
    const int64_t *v = ctx;
    return (v[a] > v[b]) - (v[a] < v[b]);
}

kiln_status kiln_select_unique_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    slices s;
    bool has_axis;
    int64_t axis, n = 0;
    KILN_TRY(slices_make(node, x, &s, &has_axis, &axis));
    int64_t *order = ctx->scratch, *tmp = order + s.dim, *group = tmp + s.dim, *first = group + s.dim;
    int64_t *count = first + s.dim, *place = count + s.dim;
    for (int64_t i = 0; i < s.dim; i++) order[i] = i;
    kiln_index_sort(order, tmp, s.dim, slice_compare, &s);
    for (int64_t p = 0; p < s.dim; p++) {
        if (p == 0 || slice_compare(&s, order[p - 1], order[p]) != 0) {
            first[n] = order[p];
            count[n++] = 0;
        }
        count[n - 1]++;
        group[order[p]] = n - 1;
    }
    /* place[g]: where group g goes in the output; order[u]: the group at output position u. */
    for (int64_t g = 0; g < n; g++) order[g] = g;
    if (node->opset >= 11 && kiln_node_attr_int(node, "sorted", 1) == 0) kiln_index_sort(order, tmp, n, by_value, first);
    for (int64_t u = 0; u < n; u++) place[order[u]] = u;
    KILN_CHECK(!OUT(1) || OUT(1)->shape[0] == n, KILN_ERROR_INVALID_VALUE);
    kiln_tensor *y = OUT(0);
    KILN_CHECK(!y || (has_axis ? y->shape[axis] : y->shape[0]) == n, KILN_ERROR_INVALID_VALUE);
    size_t block = (size_t)s.inner * kiln_dtype_size(x->dtype);
    for (int64_t u = 0; u < n; u++) {
        int64_t g = order[u];
        if (y)
            for (int64_t o = 0; o < s.outer; o++)
                memcpy((char *)y->data + (size_t)(o * n + u) * block,
                       (const char *)x->data + (size_t)(o * s.dim + first[g]) * block, block);
        if (OUT(1)) ((int64_t *)OUT(1)->data)[u] = first[g];
        if (OUT(3)) ((int64_t *)OUT(3)->data)[u] = count[g];
    }
    if (OUT(2))
        for (int64_t i = 0; i < s.dim; i++) ((int64_t *)OUT(2)->data)[i] = place[group[i]];
    return KILN_OK;
}
