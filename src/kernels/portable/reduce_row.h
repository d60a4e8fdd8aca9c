/* reduce_row.h — moving one "row" of tensor elements to and from a dense work buffer.
 *
 * Layer: kernels/portable (internal to the reduce, softmax and norm families).
 * Those kernels compute one reduction, scan or normalisation at a time over elements that are
 * evenly strided (along one axis) or scattered (over an axis set). Loading them into a dense
 * double or int64 row first lets a single arithmetic routine serve every dtype without a
 * per-element dtype switch, and gives f32 inputs double-precision accumulation for free.
 * Integer dtypes go through int64 rows so that values above 2^53 stay exact.
 *
 * Element offsets are in elements, not bytes. Callers guarantee every offset is inside the
 * tensor and that the dtype is one the row functions accept (kiln_reduce_row_dtype_ok).
 */
#ifndef KILN_KERNELS_PORTABLE_REDUCE_ROW_H
#define KILN_KERNELS_PORTABLE_REDUCE_ROW_H

#include "kernels/portable/kernel.h"

/* True for the dtypes these helpers move: f32, f64 and the 8..64-bit integers. */
bool kiln_reduce_row_dtype_ok(kiln_dtype dtype);
/* True for f32 and f64 (rows of double); false for integers (rows of int64). */
bool kiln_reduce_row_is_float(kiln_dtype dtype);

/* dst[k] = t[base + k * stride] for k < n. */
void kiln_reduce_row_load_f64(const kiln_tensor *t, int64_t base, int64_t stride, int64_t n, double *dst);
void kiln_reduce_row_load_i64(const kiln_tensor *t, int64_t base, int64_t stride, int64_t n, int64_t *dst);
/* t[base + k * stride] = src[k] for k < n, converted to t's dtype (integers wrap, as a cast would). */
void kiln_reduce_row_store_f64(kiln_tensor *t, int64_t base, int64_t stride, int64_t n, const double *src);
void kiln_reduce_row_store_i64(kiln_tensor *t, int64_t base, int64_t stride, int64_t n, const int64_t *src);
/* dst[k] = t[base + offsets[k]] for k < n. */
void kiln_reduce_row_gather_f64(const kiln_tensor *t, int64_t base, const int64_t *offsets, int64_t n, double *dst);
void kiln_reduce_row_gather_i64(const kiln_tensor *t, int64_t base, const int64_t *offsets, int64_t n, int64_t *dst);
/* t[base + offsets[k]] = src[k] for k < n. */
void kiln_reduce_row_scatter_f64(kiln_tensor *t, int64_t base, const int64_t *offsets, int64_t n, const double *src);

/* A double converted to int64 without undefined behaviour: NaN gives 0, out-of-range values
   saturate. Used where an integer reduction passes through floating point (ReduceL2 ...). */
int64_t kiln_reduce_f64_to_i64(double v);

#endif /* KILN_KERNELS_PORTABLE_REDUCE_ROW_H */
