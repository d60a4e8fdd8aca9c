/* onnx_importer.h — state shared by the two halves of the ONNX importer: onnx_import.c (the
 * model and graph: opsets, initializers, inputs, outputs) and onnx_node.c (one node: attributes,
 * Constant nodes, the op's arity and attribute types).
 *
 * Layer: compiler/onnx (internal). Values are single-assignment, as ONNX requires: every name
 * is defined once (by an initializer, a graph input or one node output), before it is used.
 */
#ifndef KILN_COMPILER_ONNX_IMPORTER_H
#define KILN_COMPILER_ONNX_IMPORTER_H

#include <string.h>

#include "compiler/ir.h"
#include "compiler/onnx/onnx_external.h"
#include "compiler/strmap.h"
#include "onnx/onnx.pb-c.h"

typedef struct kiln_onnx_importer {
    kiln_ir_graph *g;
    bool shapes_by_position;
    kiln_strmap names;              /* value name -> value index */
    kiln_allocator arena_alloc;     /* the graph's arena as an allocator (tensor data) */
    kiln_onnx_external *external;   /* where external tensor data is found */
    int training_opset;             /* the version of KILN_DOMAIN_ONNX_TRAINING imported; 0: none */
} kiln_onnx_importer;

/* The default ONNX domain is named "" or "ai.onnx" (an absent domain is "" too). */
static inline bool kiln_onnx_is_default_domain(const char *domain)
{
    return !domain || domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
}

/* Defines value `name` (not yet defined; `definer` says who defines it, for the message when it
 * is). An empty name defines an anonymous value. KILN_ERROR_MODEL (name already defined),
 * KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_onnx_define_value(kiln_onnx_importer *im, const char *name, const char *definer, int32_t *out);

/* Imports node `index` of the graph (a Constant becomes a constant value, any other node an IR
 * node bound to its portable kernel). KILN_ERROR_MODEL, KILN_ERROR_UNSUPPORTED_OP,
 * KILN_ERROR_NOT_SUPPORTED, KILN_ERROR_LIMIT, KILN_ERROR_OUT_OF_MEMORY, message in the graph. */
kiln_status kiln_onnx_import_node(kiln_onnx_importer *im, const Onnx__NodeProto *np, size_t index);

#endif
