/* importer.h — the importer interface: how a model file becomes a compiler IR graph.
 *
 * Layer: compiler. Each model format kiln reads is one importer, an entry of a fixed const table
 * (importer.c; ONNX is entry 0, the GGUF LLM importer entry 1). The
 * compiler never trusts a file name: every importer probes the bytes (a magic number, or for
 * ONNX, which has none, the shape of a ModelProto's top-level fields) and the most confident one
 * imports them. Bytes no importer recognises are KILN_ERROR_MODEL with one line naming what was
 * tried.
 *
 * An importer builds the graph the way onnx_import.c does: values and nodes in topological
 * order, each node bound to the kernel of its (domain, op) (kernel.h), everything it keeps copied
 * into the graph's arena (the source bytes are freed once import returns), diagnostics through
 * kiln_ir_fail into the graph's message. Ops kiln defines itself (RoPE, RMSNorm, quantized
 * MatMul, attention with a KV cache) are nodes of the domain KILN_DOMAIN_KILN, so they never
 * collide with an ONNX op of the same name.
 *
 * What the GGUF importer (src/compiler/gguf/gguf_import.h) brings beside ONNX: a magic-number
 * probe ("GGUF", version 2 or 3: KILN_IMPORTER_MAGIC); one file holding several methods, chosen
 * by kiln_import_options.method ("prefill", "decode"); its weights imported as the
 * block-quantized kiln_dtype of their GGUF type (Q8_0, Q4_0, Q4_K, Q6_K: same block bytes,
 * docs/format.md), never dequantized; and its own options, the context and prefill lengths
 * (llm_context, llm_prefill, from kiln_compile_options).
 */
#ifndef KILN_COMPILER_IMPORTER_H
#define KILN_COMPILER_IMPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/compiler.h"

/* The graph is the compiler IR's (ir.h); declared, not included, so that a tool asking only which
   format a file is (kiln_importer_pick) needs no more of the compiler than this header. */
struct kiln_ir_graph;

/* One model file (or the bytes a caller passed instead). */
typedef struct kiln_import_source {
    const void *bytes;              /* (size) the whole file; valid only during import */
    size_t size;
    const char *path;               /* the file the bytes came from (external data lives beside it),
                                       or NULL for a model from memory */
} kiln_import_source;

/* The part of a GGUF LLM's transformer one shard program holds (kiln_compile_shards; docs/llm.md
   "Sharded LLMs"): blocks [first, first + count), and whether the token embedding (the program
   takes "tokens", else "hidden") and the head (the program gives "logits", else "hidden") are in. */
typedef struct kiln_llm_layers {
    int64_t first;
    int64_t count;
    bool embedding;
    bool head;
    int64_t shard;                  /* this part's index and the number of parts, for the program */
    int64_t n_shards;               /* metadata "llm.shard" */
} kiln_llm_layers;

/* What the compilation asks of every importer. */
typedef struct kiln_import_options {
    const char *method;             /* the method being built ("forward"; a format holding several
                                       entry points, as a GGUF LLM's prefill and decode, picks by it) */
    const kiln_input_shape *shapes; /* (n_shapes) overrides of the inputs' declared shapes */
    size_t n_shapes;
    bool shapes_by_position;        /* shapes[i] is the i-th runtime input, names ignored */
    int64_t llm_context;            /* a GGUF LLM's KV-cache rows C; 0: its default (docs/llm.md) */
    int64_t llm_prefill;            /* a GGUF LLM's prefill tokens T; 0: its default */
    const kiln_llm_layers *llm_layers; /* a GGUF LLM's part to build; NULL: the whole model */
} kiln_import_options;

typedef struct kiln_importer {
    const char *name;               /* "onnx": in messages and for a caller that needs the format */
    /* How surely bytes (size) are this format: 0 not at all, higher more sure (a magic number
       should give KILN_IMPORTER_MAGIC). Reads no more than it must and allocates nothing. */
    int (*probe)(const void *bytes, size_t size);
    /* Build g (initialised by the caller with its allocator and message buffer) from src.
       KILN_ERROR_MODEL, KILN_ERROR_UNSUPPORTED_OP, KILN_ERROR_NOT_SUPPORTED, KILN_ERROR_LIMIT,
       KILN_ERROR_INVALID_ARGUMENT (a shape override naming no input), KILN_ERROR_OUT_OF_MEMORY;
       the message in g says which. */
    kiln_status (*import)(struct kiln_ir_graph *g, const kiln_import_source *src, const kiln_import_options *opt);
} kiln_importer;

/* The confidence of a format identified by its magic number: above any guess from structure. */
#define KILN_IMPORTER_MAGIC 100

/* The built-in importers, in table order (a fixed const table; entry 0 is ONNX). */
const kiln_importer *const *kiln_importers_builtin(size_t *n);

/* The importer whose probe is most confident about bytes (the first in table order on a tie),
   or NULL when none recognises them. */
const kiln_importer *kiln_importer_pick(const void *bytes, size_t size);

/* Picks the importer for src by content and imports it into g; *used (may be NULL) receives the
 * importer, NULL when none recognised the bytes. Bytes no importer recognises are
 * KILN_ERROR_MODEL with one line in g's message: "model '<path>' is not in a format kiln can
 * import (<what the first bytes are>; tried onnx, ...)". Otherwise the importer's status. */
kiln_status kiln_import_model(struct kiln_ir_graph *g, const kiln_import_source *src, const kiln_import_options *opt,
                              const kiln_importer **used);

#endif
