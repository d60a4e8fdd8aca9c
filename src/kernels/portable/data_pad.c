/* data_pad.c — Pad and Trilu, the data-family ops that mix input elements with constants
 * (listed in kiln_kernels_data, data.c). Layer: kernels/portable.
 *
 * Pad maps every output coordinate of every axis to a source coordinate, or to "constant",
 * once per call (tables in scratch: one int64 per output index of each axis, asked for by
 * infer); the copy then walks output rows, memcpy-ing the in-bounds middle of each. Negative
 * pads crop: they only shift the mapping. Pad forms: opset 1 `paddings`/`value` attributes,
 * opset 2-10 `pads`/`value`, opset 11+ `pads` and optional `constant_value` inputs.
 */
#include <string.h>

#include "core/check.h"
#include "core/pad_index.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

/* ---- Pad ---- */

/* The plan of data_ops.h. */
typedef kiln_data_pad_mode pad_mode;
typedef kiln_data_pad_plan pad_plan;
#define PAD_CONSTANT KILN_DATA_PAD_CONSTANT
#define PAD_REFLECT KILN_DATA_PAD_REFLECT
#define PAD_EDGE KILN_DATA_PAD_EDGE

static kiln_status pad_read_mode(const kiln_node *node, pad_mode *mode)
{
    const char *s = kiln_node_attr_string(node, "mode", "constant");
    if (strcmp(s, "constant") == 0) *mode = PAD_CONSTANT;
    else if (strcmp(s, "reflect") == 0) *mode = PAD_REFLECT;
    else if (strcmp(s, "edge") == 0) *mode = PAD_EDGE;
    else return KILN_ERROR_INVALID_ARGUMENT;
    return KILN_OK;
}

/* The 2*rank pad amounts, [x1_begin, x2_begin, ..., x1_end, x2_end, ...]. */
static kiln_status pad_read_pads(const kiln_node *node, const kiln_tensor *const *in, uint32_t rank, int64_t *pads)
{
    size_t n;
    if (node->opset < 11) {
        bool present;
        const char *name = node->opset < 2 && kiln_node_attr(node, "paddings") ? "paddings" : "pads";
        KILN_TRY(kiln_shape_attr_ints(node, name, pads, 2 * KILN_MAX_RANK, &n, &present));
        KILN_CHECK(present && n == 2 * rank, KILN_ERROR_INVALID_ARGUMENT);
        return KILN_OK;
    }
    const kiln_tensor *p = IN(1);
    KILN_CHECK(p, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(p->rank == 1 && p->shape[0] == 2 * (int64_t)rank, KILN_ERROR_SHAPE_MISMATCH);
    return kiln_shape_read_ints(p, false, pads, 2 * KILN_MAX_RANK, &n);
}

kiln_status kiln_data_pad_make_plan(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *x, pad_plan *p)
{
    int64_t pads[2 * KILN_MAX_RANK];
    KILN_TRY(pad_read_mode(node, &p->mode));
    KILN_TRY(pad_read_pads(node, in, x->rank, pads));
    for (uint32_t d = 0; d < x->rank; d++) {
        int64_t dim = x->shape[d], size;
        p->begin[d] = pads[d];
        p->end[d] = pads[d + x->rank];
        KILN_CHECK(!__builtin_add_overflow(dim, p->begin[d], &size) && !__builtin_add_overflow(size, p->end[d], &size),
                   KILN_ERROR_NOT_SUPPORTED);
        KILN_CHECK(size >= 0, KILN_ERROR_SHAPE_MISMATCH);
        /* Cropping past the whole axis is meaningless; refusing it also bounds o - begin. */
        KILN_CHECK(p->begin[d] >= -dim && p->end[d] >= -dim, KILN_ERROR_INVALID_ARGUMENT);
        /* reflect and edge have nothing to replicate from an empty axis */
        KILN_CHECK(p->mode == PAD_CONSTANT || dim > 0 || size == 0, KILN_ERROR_INVALID_ARGUMENT);
        p->shape[d] = size;
    }
    return KILN_OK;
}

/* The constant_value input (opset 11+) must be a one-element tensor of the data's dtype. */
static kiln_status pad_check_value_input(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *x)
{
    const kiln_tensor *v = node->opset >= 11 ? IN(2) : NULL;
    if (!v) return KILN_OK;
    KILN_CHECK(v->dtype == x->dtype, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(v->rank <= 1 && kiln_numel(v) == 1, KILN_ERROR_SHAPE_MISMATCH);
    return KILN_OK;
}

kiln_status kiln_data_pad_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_TRY(pad_check_value_input(node, in, x));
    pad_plan p;
    KILN_TRY(kiln_data_pad_make_plan(node, in, x, &p));
    KILN_TRY(kiln_shape_check_dims(p.shape, x->rank, x->dtype));
    int64_t table = 0;
    for (uint32_t d = 0; d < x->rank; d++)
        KILN_CHECK(!__builtin_add_overflow(table, p.shape[d], &table), KILN_ERROR_LIMIT);
    KILN_CHECK(!__builtin_mul_overflow(table, (int64_t)sizeof(int64_t), &table), KILN_ERROR_LIMIT);
    *scratch_size = (size_t)table;
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, p.shape);
    return KILN_OK;
}

/* Source coordinate of output coordinate o along an axis, or -1 for the constant. */
static int64_t pad_source_index(int64_t o, int64_t begin, int64_t dim, pad_mode mode)
{
    return kiln_pad_source_index(o, begin, dim, (kiln_pad_mode)mode);
}

static void fill_constant(char *dst, int64_t n, const void *value, size_t es)
{
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * es, value, es);
}

/* Writes one output row (the last axis) whose outer coordinates map to source row src. */
static void pad_row(char *dst, const char *src, const int64_t *map, int64_t n, int64_t begin, int64_t dim,
                    const void *value, size_t es)
{
    /* [lo, hi) maps to the source one to one and is copied in one go. */
    int64_t lo = begin > 0 ? begin : 0, hi = begin + dim < n ? begin + dim : n;
    if (hi < lo) hi = lo;
    for (int64_t o = 0; o < n; o++) {
        if (o == lo && hi > lo) {
            memcpy(dst + (size_t)o * es, src + (size_t)(o - begin) * es, (size_t)(hi - lo) * es);
            o = hi - 1;
            continue;
        }
        if (map[o] < 0) memcpy(dst + (size_t)o * es, value, es);
        else memcpy(dst + (size_t)o * es, src + (size_t)map[o] * es, es);
    }
}

kiln_status kiln_data_pad_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    size_t es = kiln_dtype_size(x->dtype);
    if (x->rank == 0) {
        memcpy(y->data, x->data, es);
        return KILN_OK;
    }
    pad_plan p;
    KILN_TRY(kiln_data_pad_make_plan(node, in, x, &p));
    uint64_t value[1] = {0};
    const kiln_tensor *v = node->opset >= 11 ? IN(2) : NULL;
    if (v) memcpy(value, v->data, es);
    else kiln_data_store_f64(x->dtype, value, node->opset < 11 ? kiln_node_attr_float(node, "value", 0.0f) : 0.0);

    uint32_t rank = x->rank, last = rank - 1;
    int64_t *maps[KILN_MAX_RANK], *table = ctx->scratch, in_strides[KILN_MAX_RANK];
    for (uint32_t d = 0; d < rank; d++) {
        maps[d] = table;
        for (int64_t o = 0; o < p.shape[d]; o++) table[o] = pad_source_index(o, p.begin[d], x->shape[d], p.mode);
        table += p.shape[d];
    }
    kiln_shape_dense_strides(x->shape, rank, in_strides);

    int64_t idx[KILN_MAX_RANK] = {0}, rows = kiln_numel(y) / p.shape[last], row_len = p.shape[last];
    char *dst = y->data;
    for (int64_t r = 0; r < rows; r++, dst += (size_t)row_len * es) {
        int64_t src = 0;
        bool constant_row = false;
        for (uint32_t d = 0; d < last; d++) {
            int64_t m = maps[d][idx[d]];
            constant_row |= m < 0;
            src += m * in_strides[d];
        }
        if (constant_row) fill_constant(dst, row_len, value, es);
        else pad_row(dst, (const char *)x->data + (size_t)src * es, maps[last], row_len, p.begin[last],
                     x->shape[last], value, es);
        for (uint32_t d = last; d-- > 0;) {
            if (++idx[d] < p.shape[d]) break;
            idx[d] = 0;
        }
    }
    return KILN_OK;
}

/* ---- Trilu ---- */

static kiln_status trilu_read_k(const kiln_tensor *k_t, int64_t *k)
{
    *k = 0;
    if (!k_t) return KILN_OK;
    size_t n;
    KILN_TRY(kiln_shape_read_ints(k_t, false, k, 1, &n));
    KILN_CHECK(n == 1, KILN_ERROR_SHAPE_MISMATCH);
    return KILN_OK;
}

kiln_status kiln_data_trilu_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank >= 2, KILN_ERROR_SHAPE_MISMATCH);
    int64_t k;
    kiln_status st = trilu_read_k(IN(1), &k);
    /* k only changes values, not the shape, so it may stay unknown until run(). */
    if (st != KILN_ERROR_SHAPE_UNKNOWN) KILN_TRY(st);
    KILN_TRY(kiln_shape_check_dims(x->shape, x->rank, x->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, x->shape);
    return KILN_OK;
}

kiln_status kiln_data_trilu_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    int64_t k;
    KILN_TRY(trilu_read_k(IN(1), &k));
    bool upper = kiln_node_attr_int(node, "upper", 1) != 0;
    int64_t rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1];
    int64_t mats = kiln_numel(x) / (rows * cols);
    /* Beyond +-(rows + cols) every k keeps all or nothing; clamping keeps i + k in range. */
    int64_t bound = rows + cols;
    k = k < -bound ? -bound : k > bound ? bound : k;
    size_t es = kiln_dtype_size(x->dtype), row_bytes = (size_t)cols * es;
    const char *src = x->data;
    char *dst = y->data;
    for (int64_t m = 0; m < mats; m++) {
        for (int64_t i = 0; i < rows; i++, src += row_bytes, dst += row_bytes) {
            /* Columns j with j - i >= k (upper) or j - i <= k (lower) keep their value;
               the kept run starts (upper) or ends (lower) at column `split`. Zero bytes are
               zero in every dtype. */
            int64_t split = upper ? i + k : i + k + 1;
            split = split < 0 ? 0 : split > cols ? cols : split;
            size_t head = (size_t)split * es;
            if (upper) {
                memset(dst, 0, head);
                memcpy(dst + head, src + head, row_bytes - head);
            } else {
                memcpy(dst, src, head);
                memset(dst + head, 0, row_bytes - head);
            }
        }
    }
    return KILN_OK;
}
