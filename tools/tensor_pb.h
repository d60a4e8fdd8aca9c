/* tensor_pb.h — ONNX TensorProto (.pb) tensor files for `kiln run` and `kiln bench` inputs.
 *
 * Layer: tools. Depends on the compiler's ONNX bindings (compiler/onnx/onnx_tensor.h) for the
 * decoding, and on read_file.h so the file is opened as a regular file only.
 * Why here and not kiln_onnx_read_tensor_file: a user's tensor file deserves a message saying
 * what is wrong with it (empty, not a TensorProto, external data, a dtype kiln lacks), where the
 * compiler's reader only has a status.
 */
#ifndef KILN_TOOLS_TENSOR_PB_H
#define KILN_TOOLS_TENSOR_PB_H

#include <stddef.h>

#include "kiln/kiln.h"

/* Reads the TensorProto file at path into *out (data from a; kiln_free(a, out->data)).
 * KILN_OK; KILN_ERROR_IO (cannot open or read, not a regular file); KILN_ERROR_FORMAT (empty, not
 * a TensorProto, no data type, data that does not match the dims); KILN_ERROR_NOT_SUPPORTED
 * (string or other dtypes kiln lacks, external data); KILN_ERROR_LIMIT (rank above
 * KILN_MAX_RANK, or larger than 2^40 bytes); KILN_ERROR_OUT_OF_MEMORY. On failure *out is zeroed
 * and message (message_size bytes, may be NULL) holds one printable line without the path. */
kiln_status cli_read_tensor_pb(const char *path, const kiln_allocator *a, kiln_tensor *out, char *message,
                               size_t message_size);

#endif
