/* shape_common.h — helpers shared by the shape and data op families (shape*.c, data*.c).
 *
 * Layer: kernels/portable (internal to these two families). Depends on kernel.h and core.
 * Everything here moves bytes without looking at their meaning, so every dtype is served by
 * the same code; the element size is the only thing that matters.
 *
 * The strided copy is the one engine behind Transpose, Slice, Expand and Tile: each of those
 * ops is "read the input through a view with some strides (possibly 0 or negative) and write
 * it densely", so they differ only in how they build the view.
 */
#ifndef KILN_KERNELS_PORTABLE_SHAPE_COMMON_H
#define KILN_KERNELS_PORTABLE_SHAPE_COMMON_H

#include "kernels/portable/kernel.h"

/* Views handed to the strided copy may have twice the tensor rank (Tile splits every axis
   into a repeat axis and a data axis). */
#define KILN_SHAPE_VIEW_MAX_RANK (2 * KILN_MAX_RANK)

/* Input i of the node, NULL when absent or past the node's input count. */
static inline const kiln_tensor *kiln_shape_in(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    return i < node->n_inputs ? in[i] : NULL;
}

/* Output j of the node, NULL when unused or past the node's output count. */
static inline kiln_tensor *kiln_shape_out(const kiln_node *node, kiln_tensor *const *out, size_t j)
{
    return j < node->n_outputs ? out[j] : NULL;
}

/* True for the integer dtypes ONNX accepts as index tensors (Tind = int32 | int64). */
static inline bool kiln_shape_is_index_dtype(kiln_dtype dtype)
{
    return dtype == KILN_DTYPE_I64 || dtype == KILN_DTYPE_I32;
}

/* Checks that a shape about to be given to an output is representable: every dim >= 0 and the
   byte size of the tensor fits in int64. KILN_ERROR_SHAPE_MISMATCH for a negative dim,
   KILN_ERROR_LIMIT when the tensor would be too large to address. */
kiln_status kiln_shape_check_dims(const int64_t *shape, uint32_t rank, kiln_dtype dtype);

/* Reads a 0-D or 1-D integer tensor (int64, or int32 too when allow_i32) into values[max].
 * Returns KILN_ERROR_DTYPE_MISMATCH (wrong dtype), KILN_ERROR_SHAPE_MISMATCH (rank > 1 or more
 * than max values), KILN_ERROR_SHAPE_UNKNOWN (data not known yet; the checks above still ran). */
kiln_status kiln_shape_read_ints(const kiln_tensor *t, bool allow_i32, int64_t *values, size_t max, size_t *n_out);

/* Reads an INTS attribute into values[max]; *present tells whether it was there at all.
   KILN_ERROR_INVALID_ARGUMENT when it has the wrong type or more than max values. */
kiln_status kiln_shape_attr_ints(const kiln_node *node, const char *name, int64_t *values, size_t max, size_t *n_out,
                                 bool *present);

/* Turns an axis list into a bit mask over [0, rank): negative axes count from the end,
   out-of-range or repeated axes are KILN_ERROR_INVALID_ARGUMENT. */
kiln_status kiln_shape_axes_mask(const int64_t *axes, size_t n_axes, int64_t rank, uint32_t *mask_out);

/* Row-major element strides of a dense shape. */
void kiln_shape_dense_strides(const int64_t *shape, uint32_t rank, int64_t *strides);

/* Writes the dense tensor of `shape` (rank <= KILN_SHAPE_VIEW_MAX_RANK) whose element at
 * index (i_0 .. i_{rank-1}) is the source element at src_offset + sum(i_d * src_strides[d])
 * (element units; strides may be 0 or negative). The caller guarantees every addressed source
 * element lies inside the source buffer. Contiguous runs become memcpy, and a view whose
 * fastest source axis is not the last output axis (a transpose) is copied in cache tiles. */
void kiln_shape_strided_copy(void *dst, const void *src, size_t elem_size, uint32_t rank, const int64_t *shape,
                             const int64_t *src_strides, int64_t src_offset);

#endif /* KILN_KERNELS_PORTABLE_SHAPE_COMMON_H */
