/* onnx_wire.h — checks on a serialized ModelProto that protobuf-c's unpacked structs cannot show.
 *
 * Layer: compiler/onnx. Depends on core and the generated protobuf-c bindings (their descriptors
 * say which field of which message is a string or a nested message).
 * Why: protobuf-c hands a `string` field to C as a NUL-terminated copy, so "Add\0Evil" arrives as
 * "Add" and a model would run with a meaning its bytes do not have. Only the wire bytes still
 * hold the whole string, so this walks them, guided by the descriptors, before the model is
 * unpacked; it also bounds the nesting depth, which protobuf-c's recursive unpack does not.
 */
#ifndef KILN_COMPILER_ONNX_WIRE_H
#define KILN_COMPILER_ONNX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

/* Messages may nest at most this deep (a model, its graph, a node, an attribute, a tensor is 5;
   each subgraph adds 3). */
#define KILN_ONNX_MAX_DEPTH 64

/* Where a string field holding a NUL byte is. */
typedef struct kiln_onnx_nul_string {
    char where[384];        /* e.g. "node 'n3' (graph.node[3])" or "graph.initializer[0] 'w'";
                               escaped (kiln_text_escape), ready for a message */
    char field[64];         /* the field's name in onnx.proto, e.g. "op_type" */
    const uint8_t *value;   /* (value_size) the field's bytes in the model, NUL included */
    size_t value_size;
} kiln_onnx_nul_string;

/* Walks the serialized ModelProto `bytes` (size bytes). KILN_OK when no `string` field (other
 * than the free-text doc_string fields, which kiln never reads) holds a NUL byte;
 * KILN_ERROR_MODEL when one does (*found says where) or when the bytes are not a well-formed
 * protobuf message (found->where is then empty); KILN_ERROR_LIMIT when messages nest deeper
 * than KILN_ONNX_MAX_DEPTH. Allocates nothing. */
kiln_status kiln_onnx_check_wire(const void *bytes, size_t size, kiln_onnx_nul_string *found);

/* How much bytes look like a serialized ModelProto, for the importer table (importer.h), from its
 * top-level fields alone (protobuf has no magic number): 0 when they cannot be one (empty, a
 * malformed field, a field of ModelProto with the wrong wire type, no ModelProto field at all),
 * 2 when every field parses and a graph is present, 1 otherwise. Allocates nothing; reads each
 * top-level key once, so it is cheap even on a large model. */
int kiln_onnx_probe(const void *bytes, size_t size);

#endif
