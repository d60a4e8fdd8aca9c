/* rearrange.c — portable kernels of the rearrange family (see families.h): DepthToSpace,
 * SpaceToDepth, ReverseSequence, EyeLike and OneHot: ops that place elements at computed
 * positions without arithmetic on them. Layer: kernels/portable.
 *
 * DepthToSpace and SpaceToDepth are a reshape followed by a transpose (as the ONNX
 * specification defines them), so each builds the 6-D view of its input that reads the output
 * in order and hands it to the strided copy (shape_common.h), whatever the dtype.
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/families.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

/* ---- DepthToSpace / SpaceToDepth ---- */

typedef struct block_view {
    int64_t shape[6], strides[6]; /* the input read in output order */
    int64_t out_shape[4];
} block_view;

static kiln_status block_view_make(const kiln_node *node, const kiln_tensor *x, block_view *v)
{
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank == 4, KILN_ERROR_SHAPE_MISMATCH);
    int64_t b = kiln_node_attr_int(node, "blocksize", 0);
    KILN_CHECK(b >= 1 && b <= 65536, KILN_ERROR_INVALID_ARGUMENT);
    int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3], grown;
    /* The output holds as many elements as the input; only a spatial dim times b may overflow. */
    KILN_CHECK(!__builtin_mul_overflow(h > w ? h : w, b, &grown) && !__builtin_mul_overflow(c, b * b, &grown),
               KILN_ERROR_LIMIT);
    if (strcmp(node->op, "SpaceToDepth") == 0) {
        KILN_CHECK(h % b == 0 && w % b == 0, KILN_ERROR_SHAPE_MISMATCH);
        /* y[n, (i * b + j) * C + c, h', w'] = x[n, c, h' * b + i, w' * b + j] */
        int64_t shape[6] = {n, b, b, c, h / b, w / b}, strides[6] = {c * h * w, w, 1, h * w, b * w, b};
        int64_t out_shape[4] = {n, c * b * b, h / b, w / b};
        memcpy(v->shape, shape, sizeof shape);
        memcpy(v->strides, strides, sizeof strides);
        memcpy(v->out_shape, out_shape, sizeof out_shape);
        return KILN_OK;
    }
    KILN_CHECK(c % (b * b) == 0, KILN_ERROR_SHAPE_MISMATCH);
    const char *mode = node->opset >= 11 ? kiln_node_attr_string(node, "mode", "DCR") : "DCR";
    bool crd = strcmp(mode, "CRD") == 0;
    KILN_CHECK(crd || strcmp(mode, "DCR") == 0, KILN_ERROR_INVALID_ARGUMENT);
    int64_t c2 = c / (b * b), hw = h * w;
    /* The input as (N, b, b, C', H, W) for DCR, (N, C', b, b, H, W) for CRD; the output reads it
       as [n, c', h, i, w, j]. */
    int64_t s_c = crd ? b * b * hw : hw, s_i = crd ? b * hw : b * c2 * hw, s_j = crd ? hw : c2 * hw;
    int64_t shape[6] = {n, c2, h, b, w, b}, strides[6] = {c * hw, s_c, w, s_i, 1, s_j};
    int64_t out_shape[4] = {n, c2, h * b, w * b};
    memcpy(v->shape, shape, sizeof shape);
    memcpy(v->strides, strides, sizeof strides);
    memcpy(v->out_shape, out_shape, sizeof out_shape);
    return KILN_OK;
}

static kiln_status block_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               size_t *scratch_size)
{
    block_view v;
    KILN_TRY(block_view_make(node, IN(0), &v));
    KILN_TRY(kiln_shape_check_dims(v.out_shape, 4, IN(0)->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), IN(0)->dtype, 4, v.out_shape);
    return KILN_OK;
}

static kiln_status block_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    block_view v;
    KILN_TRY(block_view_make(node, in[0], &v));
    kiln_shape_strided_copy(y->data, in[0]->data, kiln_dtype_size(y->dtype), 6, v.shape, v.strides, 0);
    return KILN_OK;
}

/* ---- ReverseSequence ---- */

static kiln_status reverse_axes(const kiln_node *node, const kiln_tensor *const *in, int64_t *time, int64_t *batch)
{
    const kiln_tensor *x = IN(0), *lens = IN(1);
    KILN_CHECK(x && lens, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank >= 2 && lens->rank == 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(kiln_shape_is_index_dtype(lens->dtype), KILN_ERROR_DTYPE_MISMATCH);
    *time = kiln_node_attr_int(node, "time_axis", 0);
    *batch = kiln_node_attr_int(node, "batch_axis", 1);
    KILN_CHECK((*time == 0 && *batch == 1) || (*time == 1 && *batch == 0), KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(lens->shape[0] == x->shape[*batch], KILN_ERROR_SHAPE_MISMATCH);
    return KILN_OK;
}

static kiln_status reverse_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    int64_t time, batch;
    KILN_TRY(reverse_axes(node, in, &time, &batch));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), IN(0)->dtype, IN(0)->rank, IN(0)->shape);
    return KILN_OK;
}

static kiln_status reverse_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    int64_t time, batch;
    KILN_TRY(reverse_axes(node, in, &time, &batch));
    const kiln_tensor *x = in[0], *lens = in[1];
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t n_time = x->shape[time], n_batch = x->shape[batch], inner = 1;
    for (uint32_t d = 2; d < x->rank; d++) inner *= x->shape[d];
    size_t block = (size_t)inner * kiln_dtype_size(x->dtype);
    for (int64_t b = 0; b < n_batch; b++) {
        int64_t len = kiln_tensor_get_i64(lens, b);
        KILN_CHECK(len >= 0 && len <= n_time, KILN_ERROR_INVALID_VALUE);
        for (int64_t t = 0; t < n_time; t++) {
            int64_t from = t < len ? len - 1 - t : t;
            int64_t dst = time == 0 ? t * n_batch + b : b * n_time + t, src = time == 0 ? from * n_batch + b : b * n_time + from;
            memcpy((char *)y->data + (size_t)dst * block, (const char *)x->data + (size_t)src * block, block);
        }
    }
    return KILN_OK;
}

/* ---- EyeLike ---- */

static kiln_status eyelike_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank == 2, KILN_ERROR_SHAPE_MISMATCH);
    kiln_dtype dtype = x->dtype;
    if (kiln_node_attr(node, "dtype")) KILN_TRY(kiln_data_dtype_attr(node, "dtype", &dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), dtype, 2, x->shape);
    return KILN_OK;
}

static kiln_status eyelike_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t rows = y->shape[0], cols = y->shape[1], k = kiln_node_attr_int(node, "k", 0);
    size_t es = kiln_dtype_size(y->dtype);
    memset(y->data, 0, kiln_tensor_bytes(y));
    for (int64_t r = 0; r < rows; r++) {
        int64_t c = r + k;
        if (c >= 0 && c < cols) kiln_data_store_f64(y->dtype, (char *)y->data + (size_t)(r * cols + c) * es, 1.0);
    }
    return KILN_OK;
}

/* ---- OneHot ---- */

static kiln_status onehot_plan(const kiln_node *node, const kiln_tensor *const *in, int64_t *axis, int64_t *depth)
{
    const kiln_tensor *idx = IN(0), *d = IN(1), *values = IN(2);
    KILN_CHECK(idx && d && values, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(kiln_numel(d) == 1 && d->rank <= 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(values->rank == 1 && values->shape[0] == 2, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(idx->rank < KILN_MAX_RANK, KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(kiln_axis_normalize(kiln_node_attr_int(node, "axis", -1), idx->rank + 1, axis),
               KILN_ERROR_INVALID_ARGUMENT);
    if (!d->data) return KILN_ERROR_SHAPE_UNKNOWN;
    double v = kiln_tensor_get_f64(d, 0); /* depth may be of any numeric type; ONNX rounds it down */
    KILN_CHECK(v >= 1 && v < 9.0e15, KILN_ERROR_INVALID_ARGUMENT);
    *depth = (int64_t)v;
    return KILN_OK;
}

static kiln_status onehot_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    int64_t axis, depth, shape[KILN_MAX_RANK];
    KILN_TRY(onehot_plan(node, in, &axis, &depth));
    const kiln_tensor *idx = IN(0);
    for (int64_t d = 0, k = 0; d <= (int64_t)idx->rank; d++) shape[d] = d == axis ? depth : idx->shape[k++];
    KILN_TRY(kiln_shape_check_dims(shape, idx->rank + 1, IN(2)->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), IN(2)->dtype, idx->rank + 1, shape);
    return KILN_OK;
}

static kiln_status onehot_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t axis, depth, outer = 1, inner = 1;
    KILN_TRY(onehot_plan(node, in, &axis, &depth));
    const kiln_tensor *idx = in[0], *values = in[2];
    for (int64_t d = 0; d < (int64_t)idx->rank; d++) {
        if (d < axis) outer *= idx->shape[d];
        else inner *= idx->shape[d];
    }
    size_t es = kiln_dtype_size(y->dtype);
    const char *off = values->data, *on = off + es;
    char *dst = y->data;
    for (int64_t e = 0, n = kiln_numel(y); e < n; e++) memcpy(dst + (size_t)e * es, off, es);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t q = 0; q < inner; q++) {
            double v = kiln_tensor_get_f64(idx, o * inner + q);
            if (v < 0) v += (double)depth; /* negative indices count from the end */
            if (!(v >= 0 && v < (double)depth)) continue; /* out of range: all off */
            int64_t at = (o * depth + (int64_t)v) * inner + q;
            memcpy(dst + (size_t)at * es, on, es);
        }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_rearrange[] = {
    {"DepthToSpace", 1, block_infer, block_run, {{0, 1, 1, 1, 1}}, "blocksize:i mode:s"},
    {"SpaceToDepth", 1, block_infer, block_run, {{0, 1, 1, 1, 1}}, "blocksize:i"},
    {"ReverseSequence", 10, reverse_infer, reverse_run, {{0, 2, 2, 1, 1}}, "batch_axis:i time_axis:i"},
    {"EyeLike", 9, eyelike_infer, eyelike_run, {{0, 1, 1, 1, 1}}, "dtype:i k:i"},
    {"OneHot", 9, onehot_infer, onehot_run, {{0, 3, 3, 1, 1}}, "axis:i"},
    {0},
};
