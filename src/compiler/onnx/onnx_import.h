/* onnx_import.h — ONNX ModelProto -> compiler IR.
 * Layer: compiler/onnx. */
#ifndef KILN_COMPILER_ONNX_IMPORT_H
#define KILN_COMPILER_ONNX_IMPORT_H

#include "compiler/importer.h"
#include "compiler/ir.h"
#include "kiln/compiler.h"

/* Parse a serialized ModelProto and build g: initializers and Constant nodes become constant
 * values, the other graph inputs become runtime inputs (shapes from the model, overridden by
 * `shapes`, by name or, with shapes_by_position, by runtime-input position), each node is bound
 * to its portable kernel. model_path is the file the bytes came from (its folder holds the
 * model's external data), or NULL for a model from memory (external data is then an error).
 * KILN_ERROR_MODEL (not a model, a string holding a NUL byte, no or an unknown opset, dangling
 * or twice-defined names, wrong input/output counts or attribute types, bad external data,
 * symbolic input dims without an override), KILN_ERROR_UNSUPPORTED_OP (message names op,
 * domain, opset and node), KILN_ERROR_LIMIT (a tensor too large), KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_onnx_import(kiln_ir_graph *g, const void *bytes, size_t size, const char *model_path,
                             const kiln_input_shape *shapes, size_t n_shapes, bool shapes_by_position);

/* The ONNX entry of the importer table (importer.h): probe kiln_onnx_probe, import
   kiln_onnx_import. */
extern const kiln_importer kiln_onnx_model_importer;

#endif
