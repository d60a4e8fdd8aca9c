/* quantize_common.h — what the linear-quantization kernels share (quantize.c, qlinear*.c):
 * which dtypes are 8-bit quantized values, where a per-axis scale applies, and the saturating
 * store.
 *
 * Layer: kernels/portable (internal to those files). Depends on kernel.h.
 */
#ifndef KILN_KERNELS_PORTABLE_QUANTIZE_COMMON_H
#define KILN_KERNELS_PORTABLE_QUANTIZE_COMMON_H

#include "kernels/portable/kernel.h"

/* True for u8 and i8, the quantized types these kernels implement. */
static inline bool kiln_quant_is_8bit(kiln_dtype dtype) { return dtype == KILN_DTYPE_U8 || dtype == KILN_DTYPE_I8; }

/* Which scale applies to element i of x: scale[(i / inner) % n_channels]. Per tensor: n_channels
   and inner are 1 (and the channel always 0). */
typedef struct kiln_quant_axis {
    int64_t n_channels, inner;
} kiln_quant_axis;

/* The scale layout of x: per tensor when scale has one element (rank 0 or 1), per axis (the
   node's `axis`, default 1) when scale is 1-D of x.shape[axis] elements. zp (may be NULL) must
   have scale's shape. KILN_ERROR_SHAPE_MISMATCH otherwise, KILN_ERROR_INVALID_ARGUMENT for an
   axis out of range. */
kiln_status kiln_quant_axis_make(const kiln_node *node, const kiln_tensor *x, const kiln_tensor *scale,
                                 const kiln_tensor *zp, kiln_quant_axis *out);

static inline int64_t kiln_quant_axis_channel(const kiln_quant_axis *qa, int64_t i)
{
    return (i / qa->inner) % qa->n_channels;
}

/* Whether t holds exactly one element (a scalar or a 1-element 1-D tensor). */
bool kiln_quant_is_scalar(const kiln_tensor *t);

/* Whether t is a per-tensor value (one element) or a vector of n values (1-D), as the zero
   points and scales of the quantized products are (per row of A, per column of B, per output
   channel of a convolution). */
bool kiln_quant_vector_ok(const kiln_tensor *t, int64_t n);

/* Element i of such a vector, or its single element. */
static inline int64_t kiln_quant_vector_index(const kiln_tensor *t, int64_t i) { return kiln_quant_is_scalar(t) ? 0 : i; }

/* t[i] = q (already rounded) saturated to t's dtype: u8, i8 or i32; NaN stores 0. */
void kiln_quant_store(kiln_tensor *t, int64_t i, double q);

#endif /* KILN_KERNELS_PORTABLE_QUANTIZE_COMMON_H */
