/* shape_common.c — shape validation, index-list reading and the strided copy engine shared by
 * the shape and data families. Layer: kernels/portable. See shape_common.h for the contracts.
 *
 * The strided copy first simplifies its view (drops unit axes, merges axes that are contiguous
 * in the source as they always are in the dense destination), then picks one of three loops:
 * contiguous rows (memcpy), a tiled 2-D transpose when the source's unit-stride axis is not
 * the last one, or a plain strided gather along the last axis.
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/shape_common.h"

enum { TRANSPOSE_TILE = 32 };

kiln_status kiln_shape_check_dims(const int64_t *shape, uint32_t rank, kiln_dtype dtype)
{
    KILN_CHECK(rank <= KILN_MAX_RANK, KILN_ERROR_NOT_SUPPORTED);
    int64_t bytes = (int64_t)kiln_dtype_size(dtype);
    KILN_CHECK(bytes > 0, KILN_ERROR_DTYPE_MISMATCH);
    for (uint32_t d = 0; d < rank; d++) {
        KILN_CHECK(shape[d] >= 0, KILN_ERROR_SHAPE_MISMATCH);
        KILN_CHECK(kiln_mul_i64(bytes, shape[d], &bytes), KILN_ERROR_LIMIT);
    }
    return KILN_OK;
}

kiln_status kiln_shape_read_ints(const kiln_tensor *t, bool allow_i32, int64_t *values, size_t max, size_t *n_out)
{
    KILN_CHECK(t->dtype == KILN_DTYPE_I64 || (allow_i32 && t->dtype == KILN_DTYPE_I32), KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(t->rank <= 1, KILN_ERROR_SHAPE_MISMATCH);
    int64_t n = t->rank == 0 ? 1 : t->shape[0];
    KILN_CHECK(n >= 0 && (uint64_t)n <= max, KILN_ERROR_SHAPE_MISMATCH);
    *n_out = (size_t)n;
    if (!t->data) return KILN_ERROR_SHAPE_UNKNOWN;
    for (int64_t i = 0; i < n; i++) values[i] = kiln_tensor_get_i64(t, i);
    return KILN_OK;
}

kiln_status kiln_shape_attr_ints(const kiln_node *node, const char *name, int64_t *values, size_t max, size_t *n_out,
                                 bool *present)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    *present = a != NULL;
    *n_out = 0;
    if (!a) return KILN_OK;
    /* A one-element list is sometimes written as a plain INT by hand-made models. */
    if (a->type == KILN_ATTR_INT && max >= 1) {
        values[0] = a->i;
        *n_out = 1;
        return KILN_OK;
    }
    KILN_CHECK(a->type == KILN_ATTR_INTS && a->n <= max, KILN_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < a->n; i++) values[i] = a->ints[i];
    *n_out = a->n;
    return KILN_OK;
}

kiln_status kiln_shape_axes_mask(const int64_t *axes, size_t n_axes, int64_t rank, uint32_t *mask_out)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < n_axes; i++) {
        int64_t axis;
        KILN_CHECK(kiln_axis_normalize(axes[i], rank, &axis), KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(!(mask & (1u << axis)), KILN_ERROR_INVALID_ARGUMENT);
        mask |= 1u << axis;
    }
    *mask_out = mask;
    return KILN_OK;
}

void kiln_shape_dense_strides(const int64_t *shape, uint32_t rank, int64_t *strides)
{
    int64_t stride = 1;
    for (uint32_t d = rank; d-- > 0;) {
        strides[d] = stride;
        stride *= shape[d];
    }
}

/* ---- strided copy ---- */

/* An odometer over a set of axes that tracks the matching source and destination offsets. */
typedef struct odometer {
    uint32_t n;
    int64_t shape[KILN_SHAPE_VIEW_MAX_RANK];
    int64_t src_stride[KILN_SHAPE_VIEW_MAX_RANK];
    int64_t dst_stride[KILN_SHAPE_VIEW_MAX_RANK];
    int64_t idx[KILN_SHAPE_VIEW_MAX_RANK];
    int64_t src, dst;
} odometer;

static void odometer_add(odometer *o, int64_t shape, int64_t src_stride, int64_t dst_stride)
{
    o->shape[o->n] = shape;
    o->src_stride[o->n] = src_stride;
    o->dst_stride[o->n] = dst_stride;
    o->idx[o->n] = 0;
    o->n++;
}

/* Advances to the next index; false once every index has been visited. */
static bool odometer_next(odometer *o)
{
    for (uint32_t d = o->n; d-- > 0;) {
        o->src += o->src_stride[d];
        o->dst += o->dst_stride[d];
        if (++o->idx[d] < o->shape[d]) return true;
        o->src -= o->src_stride[d] * o->shape[d];
        o->dst -= o->dst_stride[d] * o->shape[d];
        o->idx[d] = 0;
    }
    return false;
}

/* dst[i] = src[i * stride] for i < n. The element size is a constant in each case so the
   compiler turns the memcpy into one load and one store. */
static void gather_run(char *dst, const char *src, int64_t n, int64_t stride, size_t es)
{
#define GATHER_RUN_(size)                                                                        \
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * (size), src + i * stride * (size), (size)); \
    return;
    switch (es) {
    case 1: GATHER_RUN_(1)
    case 2: GATHER_RUN_(2)
    case 4: GATHER_RUN_(4)
    case 8: GATHER_RUN_(8)
    default:
        for (int64_t i = 0; i < n; i++) memcpy(dst + i * (int64_t)es, src + i * stride * (int64_t)es, es);
    }
#undef GATHER_RUN_
}

/* Removes unit axes and merges neighbours that are contiguous in the source; a zero-sized
   view reports false (nothing to copy). */
static bool simplify_view(uint32_t rank, const int64_t *shape, const int64_t *strides, uint32_t *out_rank,
                          int64_t *out_shape, int64_t *out_strides)
{
    uint32_t r = 0;
    for (uint32_t d = 0; d < rank; d++) {
        if (shape[d] == 0) return false;
        if (shape[d] == 1) continue;
        if (r > 0 && out_strides[r - 1] == strides[d] * shape[d]) {
            out_shape[r - 1] *= shape[d];
            out_strides[r - 1] = strides[d];
            continue;
        }
        out_shape[r] = shape[d];
        out_strides[r] = strides[d];
        r++;
    }
    *out_rank = r;
    return true;
}

/* Copies the plane of axes (p, last) where the source is contiguous along p: read and write
   in TRANSPOSE_TILE squares so both sides stay within a few cache lines. */
static void transpose_plane(char *dst, const char *src, size_t es, int64_t rows, int64_t cols, int64_t src_col_stride,
                            int64_t dst_row_stride)
{
    for (int64_t i0 = 0; i0 < rows; i0 += TRANSPOSE_TILE) {
        int64_t i1 = i0 + TRANSPOSE_TILE < rows ? i0 + TRANSPOSE_TILE : rows;
        for (int64_t j0 = 0; j0 < cols; j0 += TRANSPOSE_TILE) {
            int64_t j1 = j0 + TRANSPOSE_TILE < cols ? j0 + TRANSPOSE_TILE : cols;
            for (int64_t i = i0; i < i1; i++)
                gather_run(dst + (i * dst_row_stride + j0) * (int64_t)es, src + (i + j0 * src_col_stride) * (int64_t)es,
                           j1 - j0, src_col_stride, es);
        }
    }
}

void kiln_shape_strided_copy(void *dst, const void *src, size_t elem_size, uint32_t rank, const int64_t *shape,
                             const int64_t *src_strides, int64_t src_offset)
{
    int64_t vshape[KILN_SHAPE_VIEW_MAX_RANK], vstride[KILN_SHAPE_VIEW_MAX_RANK], dstride[KILN_SHAPE_VIEW_MAX_RANK];
    uint32_t r;
    if (!simplify_view(rank, shape, src_strides, &r, vshape, vstride)) return;
    char *d = dst;
    const char *s = (const char *)src + src_offset * (int64_t)elem_size;
    int64_t es = (int64_t)elem_size;
    if (r == 0) {
        memcpy(d, s, elem_size);
        return;
    }
    kiln_shape_dense_strides(vshape, r, dstride);
    int64_t last = vshape[r - 1], last_stride = vstride[r - 1];

    /* Find a source unit-stride axis other than the last: then the view is a transpose. */
    uint32_t p = r;
    if (last_stride != 1)
        for (uint32_t k = 0; k + 1 < r; k++)
            if (vstride[k] == 1) p = k;

    odometer o = {0};
    for (uint32_t k = 0; k + 1 < r; k++)
        if (k != p) odometer_add(&o, vshape[k], vstride[k], dstride[k]);
    do {
        char *drow = d + o.dst * es;
        const char *srow = s + o.src * es;
        if (last_stride == 1) memcpy(drow, srow, (size_t)(last * es));
        else if (p < r) transpose_plane(drow, srow, elem_size, vshape[p], last, last_stride, dstride[p]);
        else gather_run(drow, srow, last, last_stride, elem_size);
    } while (odometer_next(&o));
}
