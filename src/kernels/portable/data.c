/* data.c — portable kernels of the data family (see families.h): Concat, Split and Gather
 * here; Slice and Transpose in data_slice.c, Pad and Trilu in data_pad.c, Cast and CastLike in
 * data_cast.c. Layer: kernels/portable.
 *
 * Concat, Split and Gather all see a tensor as (outer, axis, inner) around their axis: for a
 * dense row-major tensor every (outer index, axis index) pair owns one contiguous block of
 * `inner` elements, so each op is a loop of memcpy calls over such blocks, whatever the dtype.
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/families.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

/* Products of the dims before and after axis. */
static void outer_inner(const kiln_tensor *t, int64_t axis, int64_t *outer, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int64_t d = 0; d < (int64_t)t->rank; d++) {
        if (d < axis) *outer *= t->shape[d];
        else if (d > axis) *inner *= t->shape[d];
    }
}

/* Normalises the node's `axis` attribute; negative axes are accepted at every opset since
   they are unambiguous. */
static kiln_status node_axis(const kiln_node *node, int64_t fallback, int64_t rank, int64_t *axis)
{
    KILN_CHECK(kiln_axis_normalize(kiln_node_attr_int(node, "axis", fallback), rank, axis), KILN_ERROR_INVALID_ARGUMENT);
    return KILN_OK;
}

/* ---- Concat ---- */

static kiln_status concat_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    const kiln_tensor *first = IN(0);
    KILN_CHECK(first, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(first->rank >= 1, KILN_ERROR_SHAPE_MISMATCH);
    /* `axis` became required at opset 4; Concat-1 defaulted to 1. */
    KILN_CHECK(node->opset < 4 || kiln_node_attr(node, "axis"), KILN_ERROR_INVALID_ARGUMENT);
    int64_t axis, shape[KILN_MAX_RANK];
    KILN_TRY(node_axis(node, 1, first->rank, &axis));
    memcpy(shape, first->shape, sizeof shape);
    for (size_t k = 1; k < node->n_inputs; k++) {
        const kiln_tensor *t = in[k];
        KILN_CHECK(t, KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(t->dtype == first->dtype, KILN_ERROR_DTYPE_MISMATCH);
        KILN_CHECK(t->rank == first->rank, KILN_ERROR_SHAPE_MISMATCH);
        for (int64_t d = 0; d < (int64_t)t->rank; d++)
            KILN_CHECK(d == axis || t->shape[d] == first->shape[d], KILN_ERROR_SHAPE_MISMATCH);
        KILN_CHECK(!__builtin_add_overflow(shape[axis], t->shape[axis], &shape[axis]), KILN_ERROR_LIMIT);
    }
    KILN_TRY(kiln_shape_check_dims(shape, first->rank, first->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), first->dtype, first->rank, shape);
    return KILN_OK;
}

static kiln_status concat_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t axis, outer, inner;
    KILN_TRY(node_axis(node, 1, y->rank, &axis));
    outer_inner(y, axis, &outer, &inner);
    size_t es = kiln_dtype_size(y->dtype);
    char *dst = y->data;
    for (int64_t o = 0; o < outer; o++) {
        for (size_t k = 0; k < node->n_inputs; k++) {
            size_t block = (size_t)(in[k]->shape[axis] * inner) * es;
            if (block == 0) continue;
            memcpy(dst, (const char *)in[k]->data + (size_t)o * block, block);
            dst += block;
        }
    }
    return KILN_OK;
}

/* ---- Split ---- */

/* Where the part sizes come from: a list (attribute before opset 13, input from 13 and as
   Split-1's optional second input) or equal parts. */
typedef struct split_plan {
    const int64_t *list_attr;       /* (n_outputs) or NULL */
    const kiln_tensor *list_input;  /* (n_outputs) int64 or NULL */
    int64_t equal;                  /* part size when there is no list */
} split_plan;

static int64_t split_part(const split_plan *p, size_t j)
{
    if (p->list_attr) return p->list_attr[j];
    if (p->list_input) return kiln_tensor_get_i64(p->list_input, (int64_t)j);
    return p->equal;
}

static kiln_status split_make_plan(const kiln_node *node, const kiln_tensor *const *in, int64_t dim, split_plan *p)
{
    size_t n = node->n_outputs;
    KILN_CHECK(n >= 1, KILN_ERROR_INVALID_ARGUMENT);
    *p = (split_plan){0};
    const kiln_tensor *s = (node->opset >= 13 || node->opset == 1) ? IN(1) : NULL;
    const kiln_attr *a = node->opset < 13 ? kiln_node_attr(node, "split") : NULL;
    if (s) {
        KILN_CHECK(s->dtype == KILN_DTYPE_I64, KILN_ERROR_DTYPE_MISMATCH);
        KILN_CHECK(s->rank == 1 && s->shape[0] == (int64_t)n, KILN_ERROR_SHAPE_MISMATCH);
        if (!s->data) return KILN_ERROR_SHAPE_UNKNOWN;
        p->list_input = s;
    } else if (a) {
        KILN_CHECK(a->type == KILN_ATTR_INTS && a->n == n, KILN_ERROR_INVALID_ARGUMENT);
        p->list_attr = a->ints;
    } else {
        KILN_CHECK(dim % (int64_t)n == 0, KILN_ERROR_SHAPE_MISMATCH);
        p->equal = dim / (int64_t)n;
        return KILN_OK;
    }
    int64_t sum = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t part = split_part(p, j);
        KILN_CHECK(part >= 0, KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(!__builtin_add_overflow(sum, part, &sum), KILN_ERROR_SHAPE_MISMATCH);
    }
    KILN_CHECK(sum == dim, KILN_ERROR_SHAPE_MISMATCH);
    return KILN_OK;
}

static kiln_status split_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank >= 1, KILN_ERROR_SHAPE_MISMATCH);
    int64_t axis;
    KILN_TRY(node_axis(node, 0, x->rank, &axis));
    split_plan plan;
    KILN_TRY(split_make_plan(node, in, x->shape[axis], &plan));
    for (size_t j = 0; j < node->n_outputs; j++) {
        if (!out[j]) continue;
        kiln_tensor_set_shape(out[j], x->dtype, x->rank, x->shape);
        out[j]->shape[axis] = split_part(&plan, j);
    }
    return KILN_OK;
}

static kiln_status split_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    int64_t axis, outer, inner;
    KILN_TRY(node_axis(node, 0, x->rank, &axis));
    split_plan plan;
    KILN_TRY(split_make_plan(node, in, x->shape[axis], &plan));
    outer_inner(x, axis, &outer, &inner);
    size_t es = kiln_dtype_size(x->dtype), src_block = (size_t)(x->shape[axis] * inner) * es;
    size_t offset = 0;
    for (size_t j = 0; j < node->n_outputs; j++) {
        size_t block = (size_t)(split_part(&plan, j) * inner) * es;
        if (out[j] && block > 0)
            for (int64_t o = 0; o < outer; o++)
                memcpy((char *)out[j]->data + (size_t)o * block, (const char *)x->data + (size_t)o * src_block + offset,
                       block);
        offset += block;
    }
    return KILN_OK;
}

/* ---- Gather ---- */

static kiln_status gather_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    const kiln_tensor *x = IN(0), *idx = IN(1);
    KILN_CHECK(x && idx, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(kiln_shape_is_index_dtype(idx->dtype), KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(x->rank >= 1, KILN_ERROR_SHAPE_MISMATCH);
    int64_t axis;
    KILN_TRY(node_axis(node, 0, x->rank, &axis));
    KILN_CHECK(x->rank - 1 + idx->rank <= KILN_MAX_RANK, KILN_ERROR_NOT_SUPPORTED);
    /* data.shape[:axis] + indices.shape + data.shape[axis+1:] */
    int64_t shape[KILN_MAX_RANK];
    uint32_t rank = 0;
    for (int64_t d = 0; d < axis; d++) shape[rank++] = x->shape[d];
    for (uint32_t d = 0; d < idx->rank; d++) shape[rank++] = idx->shape[d];
    for (int64_t d = axis + 1; d < (int64_t)x->rank; d++) shape[rank++] = x->shape[d];
    KILN_TRY(kiln_shape_check_dims(shape, rank, x->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, rank, shape);
    return KILN_OK;
}

static kiln_status gather_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0], *idx = in[1];
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t axis, outer, inner;
    KILN_TRY(node_axis(node, 0, x->rank, &axis));
    outer_inner(x, axis, &outer, &inner);
    int64_t dim = x->shape[axis], n_idx = kiln_numel(idx);
    size_t es = kiln_dtype_size(x->dtype), block = (size_t)inner * es;
    char *dst = y->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t k = 0; k < n_idx; k++) {
            int64_t i = kiln_tensor_get_i64(idx, k);
            KILN_CHECK(i >= -dim && i < dim, KILN_ERROR_INVALID_VALUE);
            if (i < 0) i += dim;
            memcpy(dst, (const char *)x->data + (size_t)(o * dim + i) * block, block);
            dst += block;
        }
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_data[] = {
    {"Concat", 1, concat_infer, concat_run, {{0, 1, KILN_ARITY_ANY, 1, 1}}, "axis:i"},
    {"Split", 1, split_infer, split_run,
     {{0, 1, 2, 1, KILN_ARITY_ANY}, {2, 1, 1, 1, KILN_ARITY_ANY}, {13, 1, 2, 1, KILN_ARITY_ANY}},
     "axis:i num_outputs:i split:I"},
    {"Gather", 1, gather_infer, gather_run, {{0, 2, 2, 1, 1}}, "axis:i"},
    {"Slice", 1, kiln_data_slice_infer, kiln_data_slice_run, {{0, 1, 1, 1, 1}, {10, 3, 5, 1, 1}},
     "axes:iI ends:iI starts:iI"},
    {"Transpose", 1, kiln_data_transpose_infer, kiln_data_transpose_run, {{0, 1, 1, 1, 1}}, "perm:iI"},
    {"Pad", 1, kiln_data_pad_infer, kiln_data_pad_run, {{0, 1, 1, 1, 1}, {11, 2, 3, 1, 1}, {18, 2, 4, 1, 1}},
     "mode:s paddings:iI pads:iI value:f"},
    {"Trilu", 14, kiln_data_trilu_infer, kiln_data_trilu_run, {{0, 1, 2, 1, 1}}, "upper:i"},
    {"Cast", 1, kiln_data_cast_infer, kiln_data_cast_run, {{0, 1, 1, 1, 1}}, "saturate:i to:is"},
    {"CastLike", 15, kiln_data_cast_like_infer, kiln_data_cast_like_run, {{0, 2, 2, 1, 1}}, "saturate:i"},
    {0},
};
