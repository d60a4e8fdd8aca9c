/* onnx_external.h — ONNX external tensor data: initializer bytes kept in files beside the model.
 *
 * Layer: compiler/onnx. Depends on core (file_open) and the generated protobuf-c bindings.
 * Why: models over 2 GB cannot hold their weights in one protobuf message, so exporters
 * (onnx.save(..., save_as_external_data=True), torch.onnx.export of large models) write a
 * TensorProto with data_location EXTERNAL and external_data entries `location` (a path relative
 * to the model file's folder), `offset` and `length` (bytes; `checksum` is ignored).
 *
 * The location is untrusted: an absolute path, a `..` component, or a symbolic link that
 * resolves outside the model's folder is refused, so a model cannot make kiln read (and embed
 * in a program) a file it does not ship with. Only the tensor's range is read, after the file
 * is opened through kiln_file_open_read (a FIFO or device is refused before any read) and the
 * range is bounds-checked against the file's size.
 */
#ifndef KILN_COMPILER_ONNX_EXTERNAL_H
#define KILN_COMPILER_ONNX_EXTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "kiln/kiln.h"
#include "onnx/onnx.pb-c.h"

/* Where a model's external data may come from. The folder is resolved when the first external
   tensor needs it, so a model without external data never depends on it. */
typedef struct kiln_onnx_external {
    const char *model_path; /* the model file, not retained past the import; NULL: from memory */
    bool resolved;          /* dir holds the folder */
    char dir[PATH_MAX];     /* the model file's folder, canonical (realpath) */
} kiln_onnx_external;

/* Sets up ext for the model file at model_path (NULL: a model from memory). */
void kiln_onnx_external_init(kiln_onnx_external *ext, const char *model_path);

/* Whether tp keeps its data in an external file. */
bool kiln_onnx_tensor_is_external(const Onnx__TensorProto *tp);

/* Reads tp's external bytes (exactly `bytes` of them, what its dims and type need) into dst.
 * KILN_ERROR_MODEL when the model has no folder, the entries are missing or malformed, the
 * location is absolute, has a `..` component or resolves outside the folder, the file is not a
 * regular file or cannot be opened, or the range is not inside the file or not `bytes` long;
 * KILN_ERROR_IO when the folder cannot be resolved or reading fails. why (always NUL-terminated) receives a phrase naming the
 * location as the model wrote it, for a message that names the tensor (not escaped:
 * kiln_ir_fail escapes the whole line). */
kiln_status kiln_onnx_external_read(kiln_onnx_external *ext, const Onnx__TensorProto *tp, void *dst,
                                    size_t bytes, char *why, size_t why_size);

#endif
