/* onnx_tensor.h — ONNX TensorProto and dtype conversion.
 *
 * Layer: compiler/onnx. Depends on core and the generated protobuf-c bindings.
 */
#ifndef KILN_COMPILER_ONNX_TENSOR_H
#define KILN_COMPILER_ONNX_TENSOR_H

#include <stdint.h>

#include "kiln/kiln.h"
#include "onnx/onnx.pb-c.h"

/* kiln dtype of an ONNX TensorProto.DataType; KILN_ERROR_NOT_SUPPORTED for strings/complex. */
kiln_status kiln_onnx_dtype(int32_t onnx_type, kiln_dtype *out);
/* The ONNX TensorProto.DataType of a kiln dtype. */
int32_t kiln_onnx_dtype_from_kiln(kiln_dtype dtype);

/* Copy a TensorProto into a dense tensor whose data comes from allocator a (free it with
 * kiln_free(a, out->data)). Reads raw_data or the typed repeated fields, checks that their
 * length matches the dims. KILN_ERROR_MODEL (inconsistent tensor), KILN_ERROR_NOT_SUPPORTED
 * (external data, strings, rank > KILN_MAX_RANK), KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_onnx_tensor_to_kiln(const Onnx__TensorProto *tp, const kiln_allocator *a, kiln_tensor *out);

/* Read a serialized TensorProto file (.pb) into a tensor allocated from a. KILN_ERROR_IO,
 * KILN_ERROR_FORMAT (not a TensorProto), and the statuses above. */
kiln_status kiln_onnx_read_tensor_file(const char *path, const kiln_allocator *a, kiln_tensor *out);

/* Read a whole file into memory from a (*data to be freed with kiln_free). KILN_ERROR_IO. */
kiln_status kiln_read_file(const char *path, const kiln_allocator *a, uint8_t **data, size_t *size);

#endif
