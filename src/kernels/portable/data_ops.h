/* data_ops.h — kernels of the data family that live outside data.c (data_slice.c, data_pad.c,
 * data_cast.c), listed by data.c in kiln_kernels_data, plus the element conversion that Pad
 * shares with Cast. Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_DATA_OPS_H
#define KILN_KERNELS_PORTABLE_DATA_OPS_H

#include "kernels/portable/kernel.h"

#define KILN_DATA_KERNEL_DECL_(name)                                                             \
    kiln_status kiln_data_##name##_infer(const kiln_node *node, const kiln_tensor *const *in,   \
                                         kiln_tensor *const *out, size_t *scratch_size);         \
    kiln_status kiln_data_##name##_run(const kiln_node *node, const kiln_tensor *const *in,     \
                                       kiln_tensor *const *out, kiln_kernel_ctx *ctx);

KILN_DATA_KERNEL_DECL_(slice)
KILN_DATA_KERNEL_DECL_(transpose)
KILN_DATA_KERNEL_DECL_(pad)
KILN_DATA_KERNEL_DECL_(trilu)
KILN_DATA_KERNEL_DECL_(cast)
KILN_DATA_KERNEL_DECL_(cast_like)

/* Stores v into element 0 of dst, a buffer of dtype, with Cast's conversion rules (round to
   nearest even for f16/bf16, saturation for float to integer, nonzero is true). */
void kiln_data_store_f64(kiln_dtype dtype, void *dst, double v);

/* The dtype an attribute names (an ONNX DataType code, or a type name as Cast-1 writes one).
   KILN_ERROR_INVALID_ARGUMENT when absent or not a DataType, KILN_ERROR_NOT_SUPPORTED for an
   ONNX type kiln has no dtype for (string, complex, float8). */
kiln_status kiln_data_dtype_attr(const kiln_node *node, const char *name, kiln_dtype *dtype);

#endif /* KILN_KERNELS_PORTABLE_DATA_OPS_H */
