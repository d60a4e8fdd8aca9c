/* data_ops.h — kernels of the data family that live outside data.c (data_slice.c, data_pad.c,
 * data_cast.c), listed by data.c in kiln_kernels_data, plus the element conversion that Pad
 * shares with Cast. Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_DATA_OPS_H
#define KILN_KERNELS_PORTABLE_DATA_OPS_H

#include "core/pad_index.h"
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

/* What a Slice node selects along every axis of x (ONNX clamping, negative starts and ends,
   negative steps; attributes before opset 10, inputs from 10 on): the first index, the step and
   the count. Shared with the cpu backend's lowering, so both read a node the same way. */
typedef struct kiln_data_slice_plan {
    int64_t start[KILN_MAX_RANK];
    int64_t step[KILN_MAX_RANK];
    int64_t count[KILN_MAX_RANK];
} kiln_data_slice_plan;
kiln_status kiln_data_slice_make_plan(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *x,
                                      kiln_data_slice_plan *p);

/* What a Pad node does to x: pads before and after every axis (negative: crop), the output
   shape and the mode. Shared with the cpu backend's lowering. */
typedef enum kiln_data_pad_mode {
    KILN_DATA_PAD_CONSTANT = KILN_PAD_CONSTANT,
    KILN_DATA_PAD_REFLECT = KILN_PAD_REFLECT,
    KILN_DATA_PAD_EDGE = KILN_PAD_EDGE,
} kiln_data_pad_mode;
typedef struct kiln_data_pad_plan {
    int64_t begin[KILN_MAX_RANK], end[KILN_MAX_RANK];
    int64_t shape[KILN_MAX_RANK];   /* output shape */
    kiln_data_pad_mode mode;
} kiln_data_pad_plan;
kiln_status kiln_data_pad_make_plan(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *x,
                                    kiln_data_pad_plan *p);

/* Stores v into element 0 of dst, a buffer of dtype, with Cast's conversion rules (round to
   nearest even for f16/bf16, saturation for float to integer, nonzero is true). */
void kiln_data_store_f64(kiln_dtype dtype, void *dst, double v);

/* The dtype of an ONNX TensorProto.DataType code (Cast's `to`, the output_datatype of the window
   ops ...). KILN_ERROR_INVALID_ARGUMENT for a code ONNX does not define, KILN_ERROR_NOT_SUPPORTED
   for a type kiln has no dtype for (string, complex, float8). */
kiln_status kiln_data_dtype_of_onnx(int64_t code, kiln_dtype *dtype);
/* The dtype an attribute names (an ONNX DataType code, or a type name as Cast-1 writes one).
   KILN_ERROR_INVALID_ARGUMENT when absent or not a DataType, KILN_ERROR_NOT_SUPPORTED for an
   ONNX type kiln has no dtype for (string, complex, float8). */
kiln_status kiln_data_dtype_attr(const kiln_node *node, const char *name, kiln_dtype *dtype);

#endif /* KILN_KERNELS_PORTABLE_DATA_OPS_H */
