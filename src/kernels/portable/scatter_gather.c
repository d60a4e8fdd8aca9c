/* scatter_gather.c — portable kernels of the scatter/gather family (see families.h):
 * GatherElements, GatherND, ScatterElements, Scatter (its opset 9 name) and ScatterND.
 * Layer: kernels/portable.
 *
 * All of them move elements or slices addressed by an index tensor, so the copies are byte-wise
 * and serve every dtype; only the scatter reductions (add, mul, max, min) look at values, in
 * combine(). Indices may be negative (counted from the end of their axis); an index out of
 * range is KILN_ERROR_INVALID_VALUE at run time. Scatters apply their updates in index order,
 * so duplicate indices with reduction "none" keep the last update, as the ONNX reference does.
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/families.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

typedef enum { REDUCE_NONE, REDUCE_ADD, REDUCE_MUL, REDUCE_MAX, REDUCE_MIN } scatter_reduction;

static kiln_status node_reduction(const kiln_node *node, scatter_reduction *r)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *s = node->opset >= 16 ? kiln_node_attr_string(node, "reduction", "none") : "none";
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) {
            KILN_CHECK(i < REDUCE_MAX || node->opset >= 18, KILN_ERROR_INVALID_ARGUMENT);
            *r = (scatter_reduction)i;
            return KILN_OK;
        }
    return KILN_ERROR_INVALID_ARGUMENT;
}

/* An index read from idx at element i, checked against dim and made non-negative. */
static kiln_status read_index(const kiln_tensor *idx, int64_t i, int64_t dim, int64_t *out)
{
    int64_t v = kiln_tensor_get_i64(idx, i);
    KILN_CHECK(v >= -dim && v < dim, KILN_ERROR_INVALID_VALUE);
    *out = v < 0 ? v + dim : v;
    return KILN_OK;
}

#define COMBINE_CASE(DT, T)                                                                      \
    case DT: {                                                                                   \
        T a, b;                                                                                  \
        memcpy(&a, dst, sizeof a);                                                               \
        memcpy(&b, src, sizeof b);                                                               \
        a = r == REDUCE_ADD ? (T)(a + b) : r == REDUCE_MUL ? (T)(a * b) : r == REDUCE_MAX ? (a > b ? a : b) \
                                                                                        : (a < b ? a : b); \
        memcpy(dst, &a, sizeof a);                                                               \
        return;                                                                                  \
    }

/* *dst = dst (op) src for one element of dtype; REDUCE_NONE copies. */
static void combine(kiln_dtype dtype, scatter_reduction r, void *dst, const void *src)
{
    size_t es = kiln_dtype_size(dtype);
    if (r == REDUCE_NONE) {
        memcpy(dst, src, es);
        return;
    }
    switch (dtype) {
        COMBINE_CASE(KILN_DTYPE_F32, float)
        COMBINE_CASE(KILN_DTYPE_F64, double)
        COMBINE_CASE(KILN_DTYPE_I8, int8_t)
        COMBINE_CASE(KILN_DTYPE_I16, int16_t)
        COMBINE_CASE(KILN_DTYPE_I32, int32_t)
        COMBINE_CASE(KILN_DTYPE_I64, int64_t)
        COMBINE_CASE(KILN_DTYPE_U8, uint8_t)
        COMBINE_CASE(KILN_DTYPE_U16, uint16_t)
        COMBINE_CASE(KILN_DTYPE_U32, uint32_t)
        COMBINE_CASE(KILN_DTYPE_U64, uint64_t)
    default: { /* f16, bf16, bool: through double */
        kiln_tensor ta = {.dtype = dtype, .rank = 0, .data = dst}, tb = {.dtype = dtype, .rank = 0, .data = (void *)src};
        double a = kiln_ew_get_f64(&ta, 0), b = kiln_ew_get_f64(&tb, 0);
        double v = r == REDUCE_ADD ? a + b : r == REDUCE_MUL ? a * b : r == REDUCE_MAX ? (a > b ? a : b) : (a < b ? a : b);
        kiln_data_store_f64(dtype, dst, v);
    }
    }
}

static bool reducible(kiln_dtype dtype, scatter_reduction r)
{
    return r == REDUCE_NONE || dtype != KILN_DTYPE_BOOL;
}

/* ---- GatherElements / ScatterElements: one index per element, along one axis ---- */

/* data and indices have the same rank; ScatterElements' updates have the indices' shape. */
static kiln_status elements_check(const kiln_node *node, const kiln_tensor *data, const kiln_tensor *idx,
                                  int64_t *axis)
{
    KILN_CHECK(data && idx, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(kiln_shape_is_index_dtype(idx->dtype), KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(data->rank >= 1 && idx->rank == data->rank, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(kiln_axis_normalize(kiln_node_attr_int(node, "axis", 0), data->rank, axis), KILN_ERROR_INVALID_ARGUMENT);
    return KILN_OK;
}

/* Calls visit for each element of idx with its element offset in data (axis index replaced). */
typedef kiln_status (*element_visit)(void *user, int64_t i, int64_t data_offset);

static kiln_status elements_walk(const kiln_tensor *data, const kiln_tensor *idx, int64_t axis, element_visit visit,
                                 void *user)
{
    int64_t strides[KILN_MAX_RANK], pos[KILN_MAX_RANK] = {0}, n = kiln_numel(idx);
    kiln_shape_dense_strides(data->shape, data->rank, strides);
    for (int64_t i = 0; i < n; i++) {
        int64_t at, offset = 0;
        KILN_TRY(read_index(idx, i, data->shape[axis], &at));
        for (uint32_t d = 0; d < data->rank; d++) offset += ((int64_t)d == axis ? at : pos[d]) * strides[d];
        KILN_TRY(visit(user, i, offset));
        for (int d = (int)idx->rank - 1; d >= 0 && ++pos[d] == idx->shape[d]; d--) pos[d] = 0;
    }
    return KILN_OK;
}

static kiln_status gather_elements_infer(const kiln_node *node, const kiln_tensor *const *in,
                                         kiln_tensor *const *out, size_t *scratch_size)
{
    const kiln_tensor *data = IN(0), *idx = IN(1);
    int64_t axis;
    KILN_TRY(elements_check(node, data, idx, &axis));
    for (uint32_t d = 0; d < data->rank; d++)
        KILN_CHECK((int64_t)d == axis || idx->shape[d] <= data->shape[d], KILN_ERROR_SHAPE_MISMATCH);
    KILN_TRY(kiln_shape_check_dims(idx->shape, idx->rank, data->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), data->dtype, idx->rank, idx->shape);
    return KILN_OK;
}

typedef struct element_copy {
    char *dst;
    const char *src;
    size_t es;
    kiln_dtype dtype;
    scatter_reduction reduction;
} element_copy;

static kiln_status gather_visit(void *user, int64_t i, int64_t data_offset)
{
    element_copy *c = user;
    memcpy(c->dst + (size_t)i * c->es, c->src + (size_t)data_offset * c->es, c->es);
    return KILN_OK;
}

static kiln_status gather_elements_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                       kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t axis;
    KILN_TRY(elements_check(node, in[0], in[1], &axis));
    element_copy c = {y->data, in[0]->data, kiln_dtype_size(y->dtype), y->dtype, REDUCE_NONE};
    return elements_walk(in[0], in[1], axis, gather_visit, &c);
}

static kiln_status scatter_elements_infer(const kiln_node *node, const kiln_tensor *const *in,
                                          kiln_tensor *const *out, size_t *scratch_size)
{
    const kiln_tensor *data = IN(0), *idx = IN(1), *upd = IN(2);
    int64_t axis;
    KILN_TRY(elements_check(node, data, idx, &axis));
    KILN_CHECK(upd, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(upd->dtype == data->dtype, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(kiln_ew_same_shape(upd, idx), KILN_ERROR_SHAPE_MISMATCH);
    for (uint32_t d = 0; d < data->rank; d++)
        KILN_CHECK((int64_t)d == axis || idx->shape[d] <= data->shape[d], KILN_ERROR_SHAPE_MISMATCH);
    scatter_reduction r;
    KILN_TRY(node_reduction(node, &r));
    KILN_CHECK(reducible(data->dtype, r), KILN_ERROR_NOT_SUPPORTED);
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), data->dtype, data->rank, data->shape);
    return KILN_OK;
}

static kiln_status scatter_visit(void *user, int64_t i, int64_t data_offset)
{
    element_copy *c = user;
    combine(c->dtype, c->reduction, c->dst + (size_t)data_offset * c->es, c->src + (size_t)i * c->es);
    return KILN_OK;
}

static kiln_status scatter_elements_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                        kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    int64_t axis;
    scatter_reduction r;
    KILN_TRY(elements_check(node, in[0], in[1], &axis));
    KILN_TRY(node_reduction(node, &r));
    memcpy(y->data, in[0]->data, kiln_tensor_bytes(in[0]));
    element_copy c = {y->data, in[2]->data, kiln_dtype_size(y->dtype), y->dtype, r};
    return elements_walk(in[0], in[1], axis, scatter_visit, &c);
}

/* ---- GatherND / ScatterND: index tuples address slices ---- */

/* indices (..., k) address slices data[b..., i_0, .., i_{k-1}, ...] of `slice` elements, with
   the first batch_dims dims shared by data and indices. */
typedef struct nd_plan {
    int64_t batch_dims, k, n_tuples, slice, batch, tuples_per_batch, batch_stride;
    int64_t strides[KILN_MAX_RANK];
} nd_plan;

static kiln_status nd_plan_make(const kiln_tensor *data, const kiln_tensor *idx, int64_t batch_dims, nd_plan *p)
{
    KILN_CHECK(data && idx, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(idx->dtype == KILN_DTYPE_I64, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(data->rank >= 1 && idx->rank >= 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(batch_dims >= 0 && batch_dims < (int64_t)idx->rank && batch_dims < (int64_t)data->rank,
               KILN_ERROR_INVALID_ARGUMENT);
    *p = (nd_plan){.batch_dims = batch_dims, .k = idx->shape[idx->rank - 1], .slice = 1, .batch = 1};
    KILN_CHECK(p->k >= 1 && p->k <= (int64_t)data->rank - batch_dims, KILN_ERROR_SHAPE_MISMATCH);
    for (int64_t d = 0; d < batch_dims; d++) {
        KILN_CHECK(idx->shape[d] == data->shape[d], KILN_ERROR_SHAPE_MISMATCH);
        p->batch *= data->shape[d];
    }
    kiln_shape_dense_strides(data->shape, data->rank, p->strides);
    p->batch_stride = batch_dims > 0 ? p->strides[batch_dims - 1] : kiln_numel(data);
    for (int64_t d = batch_dims + p->k; d < (int64_t)data->rank; d++) p->slice *= data->shape[d];
    p->n_tuples = kiln_numel(idx) / p->k;
    p->tuples_per_batch = p->batch ? p->n_tuples / p->batch : 0;
    return KILN_OK;
}

/* The element offset in data of the slice that tuple t addresses. */
static kiln_status nd_offset(const nd_plan *p, const kiln_tensor *data, const kiln_tensor *idx, int64_t t,
                             int64_t *offset)
{
    int64_t off = p->tuples_per_batch ? (t / p->tuples_per_batch) * p->batch_stride : 0;
    for (int64_t q = 0; q < p->k; q++) {
        int64_t at, d = p->batch_dims + q;
        KILN_TRY(read_index(idx, t * p->k + q, data->shape[d], &at));
        off += at * p->strides[d];
    }
    *offset = off;
    return KILN_OK;
}

static kiln_status gather_nd_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size)
{
    const kiln_tensor *data = IN(0), *idx = IN(1);
    nd_plan p;
    KILN_TRY(nd_plan_make(data, idx, node->opset >= 12 ? kiln_node_attr_int(node, "batch_dims", 0) : 0, &p));
    /* indices.shape[:-1] + data.shape[batch_dims + k:] */
    int64_t shape[KILN_MAX_RANK];
    uint32_t rank = 0;
    KILN_CHECK(idx->rank - 1 + (data->rank - p.batch_dims - p.k) <= KILN_MAX_RANK, KILN_ERROR_NOT_SUPPORTED);
    for (uint32_t d = 0; d + 1 < idx->rank; d++) shape[rank++] = idx->shape[d];
    for (int64_t d = p.batch_dims + p.k; d < (int64_t)data->rank; d++) shape[rank++] = data->shape[d];
    KILN_TRY(kiln_shape_check_dims(shape, rank, data->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), data->dtype, rank, shape);
    return KILN_OK;
}

static kiln_status gather_nd_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    const kiln_tensor *data = in[0], *idx = in[1];
    nd_plan p;
    KILN_TRY(nd_plan_make(data, idx, node->opset >= 12 ? kiln_node_attr_int(node, "batch_dims", 0) : 0, &p));
    size_t block = (size_t)p.slice * kiln_dtype_size(data->dtype);
    for (int64_t t = 0; t < p.n_tuples; t++) {
        int64_t off;
        KILN_TRY(nd_offset(&p, data, idx, t, &off));
        memcpy((char *)y->data + (size_t)t * block, (const char *)data->data + (size_t)off * kiln_dtype_size(data->dtype),
               block);
    }
    return KILN_OK;
}

static kiln_status scatter_nd_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    size_t *scratch_size)
{
    const kiln_tensor *data = IN(0), *idx = IN(1), *upd = IN(2);
    nd_plan p;
    KILN_TRY(nd_plan_make(data, idx, 0, &p));
    KILN_CHECK(upd, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(upd->dtype == data->dtype, KILN_ERROR_DTYPE_MISMATCH);
    /* updates.shape == indices.shape[:-1] + data.shape[k:] */
    KILN_CHECK(upd->rank == idx->rank - 1 + data->rank - p.k, KILN_ERROR_SHAPE_MISMATCH);
    for (uint32_t d = 0; d + 1 < idx->rank; d++) KILN_CHECK(upd->shape[d] == idx->shape[d], KILN_ERROR_SHAPE_MISMATCH);
    for (int64_t d = p.k; d < (int64_t)data->rank; d++)
        KILN_CHECK(upd->shape[idx->rank - 1 + d - p.k] == data->shape[d], KILN_ERROR_SHAPE_MISMATCH);
    scatter_reduction r;
    KILN_TRY(node_reduction(node, &r));
    KILN_CHECK(reducible(data->dtype, r), KILN_ERROR_NOT_SUPPORTED);
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), data->dtype, data->rank, data->shape);
    return KILN_OK;
}

static kiln_status scatter_nd_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    const kiln_tensor *data = in[0], *idx = in[1], *upd = in[2];
    nd_plan p;
    scatter_reduction r;
    KILN_TRY(nd_plan_make(data, idx, 0, &p));
    KILN_TRY(node_reduction(node, &r));
    memcpy(y->data, data->data, kiln_tensor_bytes(data));
    size_t es = kiln_dtype_size(data->dtype);
    for (int64_t t = 0; t < p.n_tuples; t++) {
        int64_t off;
        KILN_TRY(nd_offset(&p, data, idx, t, &off));
        char *dst = (char *)y->data + (size_t)off * es;
        const char *src = (const char *)upd->data + (size_t)(t * p.slice) * es;
        if (r == REDUCE_NONE) memcpy(dst, src, (size_t)p.slice * es);
        else
            for (int64_t e = 0; e < p.slice; e++) combine(data->dtype, r, dst + (size_t)e * es, src + (size_t)e * es);
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_scatter_gather[] = {
    {"GatherElements", 11, gather_elements_infer, gather_elements_run, {{0, 2, 2, 1, 1}}, "axis:i"},
    {"GatherND", 11, gather_nd_infer, gather_nd_run, {{0, 2, 2, 1, 1}}, "batch_dims:i"},
    {"Scatter", 9, scatter_elements_infer, scatter_elements_run, {{0, 3, 3, 1, 1}}, "axis:i"},
    {"ScatterElements", 11, scatter_elements_infer, scatter_elements_run, {{0, 3, 3, 1, 1}}, "axis:i reduction:s"},
    {"ScatterND", 11, scatter_nd_infer, scatter_nd_run, {{0, 3, 3, 1, 1}}, "reduction:s"},
    {0},
};
