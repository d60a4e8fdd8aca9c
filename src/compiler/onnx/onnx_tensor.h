/* onnx_tensor.h — ONNX TensorProto and dtype conversion.
 *
 * Layer: compiler/onnx. Depends on core and the generated protobuf-c bindings.
 */
#ifndef KILN_COMPILER_ONNX_TENSOR_H
#define KILN_COMPILER_ONNX_TENSOR_H

#include <stdint.h>

#include "compiler/onnx/onnx_external.h"
#include "kiln/kiln.h"
#include "onnx/onnx.pb-c.h"

/* kiln dtype of an ONNX TensorProto.DataType; KILN_ERROR_NOT_SUPPORTED for strings/complex. */
kiln_status kiln_onnx_dtype(int32_t onnx_type, kiln_dtype *out);
/* The ONNX TensorProto.DataType of a kiln dtype. */
int32_t kiln_onnx_dtype_from_kiln(kiln_dtype dtype);

/* Tensors (initializers, tensor attributes) of at least this many bytes are refused
   (KILN_ERROR_LIMIT): 1 TiB, far past any model, well inside every size kiln computes. */
#define KILN_ONNX_TENSOR_MAX_BYTES ((uint64_t)1 << 40)

/* Copy a TensorProto into a dense tensor whose data comes from allocator a (free it with
 * kiln_free(a, out->data)). Reads raw_data, the typed repeated fields, or external data (ext:
 * the model's folder, NULL when it has none), checks that their length matches the dims.
 * KILN_ERROR_MODEL (inconsistent tensor, bad external data), KILN_ERROR_LIMIT (too large),
 * KILN_ERROR_NOT_SUPPORTED (strings, complex, rank > KILN_MAX_RANK), KILN_ERROR_IO,
 * KILN_ERROR_OUT_OF_MEMORY; why (always NUL-terminated) receives a phrase for the message, not
 * escaped (see kiln_ir_fail). */
kiln_status kiln_onnx_tensor_to_kiln(const Onnx__TensorProto *tp, kiln_onnx_external *ext,
                                     const kiln_allocator *a, kiln_tensor *out, char *why, size_t why_size);

/* Read a serialized TensorProto file (.pb) into a tensor allocated from a. KILN_ERROR_IO,
 * KILN_ERROR_FORMAT (not a TensorProto), and the statuses above. */
kiln_status kiln_onnx_read_tensor_file(const char *path, const kiln_allocator *a, kiln_tensor *out);

/* Read a whole file into memory from a (*data to be freed with kiln_free). KILN_ERROR_IO, also
 * for anything but a regular file (a FIFO is refused before it is read: kiln_file_open_read);
 * KILN_ERROR_OUT_OF_MEMORY. On failure *why (may be NULL) is a static phrase for the message. */
kiln_status kiln_read_file(const char *path, const kiln_allocator *a, uint8_t **data, size_t *size, const char **why);

#endif
