/* ir.h — the compiler's graph IR: values and nodes in topological order.
 *
 * Layer: compiler. Depends on core and kernels/portable (nodes are kiln_node, the very struct
 * the kernels take, so shape inference and folding call the kernels directly).
 * Every piece of a graph lives in its arena and dies with kiln_ir_graph_deinit. Values are
 * referred to by index; -1 means "absent" (empty optional input or unused output).
 */
#ifndef KILN_COMPILER_IR_H
#define KILN_COMPILER_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/diag.h"
#include "kernels/portable/kernel.h"

typedef struct kiln_ir_value {
    const char *name;
    kiln_tensor t;          /* dtype always; rank/shape when shape_known; data when is_const */
    bool typed;             /* dtype known */
    bool shape_known;
    bool is_const;          /* data holds the value (initializer or folded) */
    bool is_input;
    bool is_output;
    int32_t producer;       /* node index, -1 for graph inputs and constants */
    /* filled by the planner */
    int32_t first_use, last_use; /* instruction positions; -1 when unused */
    uint64_t offset;        /* byte offset in the activation arena */
    uint64_t size;          /* bytes */
} kiln_ir_value;

typedef struct kiln_ir_node {
    kiln_node node;         /* op, name, opset, attrs, n_inputs, n_outputs */
    int32_t *inputs;        /* (node.n_inputs) value index or -1 */
    int32_t *outputs;       /* (node.n_outputs) value index or -1 */
    const kiln_kernel *kernel;  /* NULL for a delegate call */
    uint64_t scratch_size;  /* from infer(), when shapes are known */
    bool removed;           /* folded away, dead, or taken into a delegate call */
    /* A delegate call (partition.c): node.op is the backend name ("cpu"), no attributes, and the
       payload (the context binary) is owned by the graph (kiln_ir_graph_adopt). */
    const void *payload;    /* (payload_size) bytes, NULL for a kernel call */
    size_t payload_size;
} kiln_ir_node;

/* Heap blocks a graph owns beyond its arena (delegate payloads: too large to copy into it). */
typedef struct kiln_ir_owned {
    void *ptr;
    struct kiln_ir_owned *next;
} kiln_ir_owned;

/* A program metadata entry the graph's importer attached (key -> bytes, both in the arena). */
typedef struct kiln_ir_metadata {
    const char *key;
    const void *data;
    size_t size;
} kiln_ir_metadata;

typedef struct kiln_ir_graph {
    kiln_arena arena;
    const kiln_allocator *allocator;
    kiln_ir_value *values;  /* (n_values) */
    size_t n_values, cap_values;
    kiln_ir_node *nodes;    /* (n_nodes) */
    size_t n_nodes, cap_nodes;
    int32_t *inputs;        /* (n_inputs) value indices of the runtime inputs, in model order */
    size_t n_inputs;
    int32_t *outputs;       /* (n_outputs) value indices of the graph outputs, in model order */
    size_t n_outputs;
    int opset;
    kiln_ir_metadata *metadata; /* (n_metadata) in the order added; the program gets the union over its methods */
    size_t n_metadata, cap_metadata;
    kiln_diag diag;         /* where kiln_ir_fail writes: the caller's buffer (core/diag.h) */
    kiln_ir_owned *owned;   /* freed with `allocator` by kiln_ir_graph_deinit */
} kiln_ir_graph;

void kiln_ir_graph_init(kiln_ir_graph *g, const kiln_allocator *allocator, char *message, size_t message_size);
void kiln_ir_graph_deinit(kiln_ir_graph *g);
/* Append a value/node; index through *out. KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_ir_value_add(kiln_ir_graph *g, const char *name, int32_t *out);
kiln_status kiln_ir_node_add(kiln_ir_graph *g, size_t n_inputs, size_t n_outputs, int32_t *out);
/* Attach program metadata: key (non-empty) -> size bytes at data, both copied into the arena.
 * compile.c writes the union over a program's methods (docs/format.md, METADATA).
 * KILN_ERROR_INVALID_ARGUMENT (NULL or empty key, NULL data with a nonzero size, key already
 * attached to this graph), KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_ir_graph_add_metadata(kiln_ir_graph *g, const char *key, const void *data, size_t size);
/* Hand ptr (allocated from g->allocator) to the graph, which frees it at deinit. On failure
 * (KILN_ERROR_OUT_OF_MEMORY) ptr is freed at once, so the caller never frees it. */
kiln_status kiln_ir_graph_adopt(kiln_ir_graph *g, void *ptr);
/* printf into g->diag (first error wins: later calls do not overwrite) and return status.
 * The formatted line is escaped as a whole (kiln_text_escape), so callers pass model strings as
 * they are and must not escape them first. */
kiln_status kiln_ir_fail(kiln_ir_graph *g, kiln_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As kiln_ir_fail, for a line whose untrusted parts the caller escaped itself (a string only
 * kiln_text_escape given its length can show, such as one holding a NUL byte). */
kiln_status kiln_ir_fail_escaped(kiln_ir_graph *g, kiln_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The byte size of t (a value `name`, described by `what`: "input", "output 0 of node 'n3'"...)
 * through *out; KILN_ERROR_LIMIT with a message naming it when the size overflows (see
 * kiln_tensor_size), KILN_ERROR_SHAPE_MISMATCH when a block-quantized row is not whole blocks. Every size the compiler records comes through here or a check
 * as strict. */
kiln_status kiln_ir_tensor_size(kiln_ir_graph *g, const kiln_tensor *t, const char *what, const char *name,
                                size_t *out);

/* Shape inference and constant folding in one pass over the nodes (infer.c). Values whose
 * shape depends on runtime data stay !shape_known. Nodes whose inputs are all constant are
 * run at compile time and marked removed. */
kiln_status kiln_ir_infer_and_fold(kiln_ir_graph *g);

#endif
