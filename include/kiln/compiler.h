/* compiler.h — the public API of kiln's ahead-of-time compiler (host library kiln_compiler).
 *
 * The compiler imports models, infers shapes, folds constants, plans memory and writes a
 * program file. A model's format is found from its bytes, never its file name, by the one of
 * kiln's importers most sure of them (ONNX, GGUF); bytes none recognises are KILN_ERROR_MODEL
 * with a message naming how they start and the formats tried. It is not part of the embeddable runtime: it links protobuf-c.
 * Every call returns a kiln_status; on failure `message` (when non-NULL) receives one line
 * naming the problem (the op, its domain, opset and node for unsupported ops), and no output
 * file is left behind.
 */
#ifndef KILN_COMPILER_H
#define KILN_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A static shape for a model input, overriding what the model declares (needed for symbolic
   dimensions such as a dynamic batch). */
typedef struct kiln_input_shape {
    const char *name;
    uint32_t rank;
    int64_t dims[KILN_MAX_RANK];
} kiln_input_shape;

/* One method of the program: its name and the model file (or bytes) that defines it. */
typedef struct kiln_compile_method {
    const char *name;           /* "forward" when there is a single model */
    const char *model_path;     /* model file (ONNX); or NULL and model_data/model_size */
    const void *model_data;
    size_t model_size;
} kiln_compile_method;

typedef struct kiln_compile_options {
    size_t struct_size;                     /* sizeof(kiln_compile_options) */
    const kiln_allocator *allocator;        /* NULL: default; every compile-time allocation */
    const kiln_input_shape *input_shapes;   /* (n_input_shapes), by input name; not retained */
    size_t n_input_shapes;
    int input_shapes_by_position;           /* nonzero: input_shapes[i] is the i-th runtime input
                                               (graph inputs that are not initializers, in model
                                               order) and names are ignored */
    int no_delegate;                        /* keep every op on portable kernels */
    const char *const *targets;             /* `cpu` targets to compile delegates for, one record
                                               each ("generic", "x86-64-v3", "x86-64-v4"; see
                                               docs/targets.md); not retained. NULL (with
                                               n_targets 0): the best target of the compiling
                                               machine. Unknown or repeated names, an empty list,
                                               or targets with no_delegate: KILN_ERROR_COMPILE_SPEC */
    size_t n_targets;
    int slc;                                /* nonzero: cache-resident scratch planning for the
                                               `cpu` delegates (docs/slc.md): short-lived
                                               intermediates in a region sized to the targets'
                                               last-level cache, most recently freed block reused
                                               first. Changes placement only, never results */
    const char *target;                     /* the scalar form of `targets`: one target, exactly as
                                               a list of one (same bytes); NULL: none. Giving both
                                               target and targets: KILN_ERROR_COMPILE_SPEC */
    const char *const *precisions;          /* per-target precision names ("f32"; "bf16": GEMM and
                                               conv weights in bf16, target x86-64-v4-bf16 only,
                                               docs/targets.md): none (f32), one for
                                               every target, or exactly one per target in target
                                               order (records of one binary may differ); any other
                                               count, an unknown name or one a target cannot
                                               execute: KILN_ERROR_COMPILE_SPEC. Without targets,
                                               "bf16" selects this machine's best target that
                                               executes it, and is KILN_ERROR_COMPILE_SPEC on a
                                               machine that runs none */
    size_t n_precisions;
    int weight_sharing;                     /* nonzero: partition i of every method is compiled into
                                               ONE context binary with a graph per method (named
                                               after it) over one copy of the weights; the methods
                                               must partition alike (docs/cli.md) */
    int no_strassen;                        /* nonzero: every GEMM of the cpu delegates classical.
                                               By default products of at least 1024 x 1024 x 1024
                                               with a constant B take one level of Strassen's
                                               algorithm: faster, 7/4 of that B's bytes, a larger
                                               rounding error (docs/kernels.md) */
    int64_t llm_context;                    /* a GGUF LLM's KV-cache length C (`--context`): rows of
                                               the methods' cache_k/cache_v inputs; 0: the model's
                                               context_length, at most 2048 (docs/llm.md). Above
                                               context_length or negative: KILN_ERROR_INVALID_ARGUMENT.
                                               Ignored for other formats */
    int64_t llm_prefill;                    /* a GGUF LLM's prefill length T (`--prefill`): tokens per
                                               prefill call; 0: min(128, C). Above C or negative:
                                               KILN_ERROR_INVALID_ARGUMENT. Ignored for other formats */
} kiln_compile_options;

/* Compile the methods into a program written at out_path (atomically: a temporary file, flushed
 * to disk and renamed into place, removed on any failure — out_path keeps its previous content or
 * stays absent; if the removal fails too, the message adds "; also: could not remove temporary
 * file ..." after the original error, whose status is returned). A symbolic link at out_path is
 * followed and the file it names replaced; an existing file keeps its mode, a new one gets 0666
 * minus the umask; a device, FIFO, socket or directory there is KILN_ERROR_IO and nothing is
 * created; out_path being the same file as a method's model_path (after links) is
 * KILN_ERROR_INVALID_ARGUMENT, checked before any work. The compile spec is checked
 * before any model is read. Statuses: KILN_ERROR_INVALID_ARGUMENT, KILN_ERROR_IO,
 * KILN_ERROR_MODEL (unreadable, in no format kiln imports, or an invalid model), KILN_ERROR_UNSUPPORTED_OP,
 * KILN_ERROR_SHAPE_MISMATCH / KILN_ERROR_DTYPE_MISMATCH (inconsistent model),
 * KILN_ERROR_COMPILE_SPEC, KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT. */
KILN_API kiln_status kiln_compile_file(const kiln_compile_options *options, const kiln_compile_method *methods,
                                       size_t n_methods, const char *out_path, char *message, size_t message_size);

/* As kiln_compile_file, but returns the program bytes in *out_data (allocated from the options'
 * allocator, 64-byte aligned; free with that allocator) and their size in *out_size. Both
 * record the largest scratch need of the program's `cpu` context binaries as the scratch-group
 * size of each (docs/format.md), so the contexts of one module share one scratch buffer. */
KILN_API kiln_status kiln_compile_memory(const kiln_compile_options *options, const kiln_compile_method *methods,
                                         size_t n_methods, void **out_data, size_t *out_size, char *message,
                                         size_t message_size);

/* Compile one model as n_shards programs that run in sequence (`kiln compile --shards N`).
 * The model is cut at n_shards - 1 points of its node order, balanced by weight bytes, where
 * every value crossing a cut has a static shape; each shard's inputs are the values crossing
 * into it (graph inputs and earlier shards' outputs), its outputs those later shards or the
 * graph's outputs read. Shard i is compiled with these options (input_shapes apply to the
 * whole model) as method->name into "<manifest_path minus its extension>-shard<i>.kiln", then
 * the largest scratch need of all shards is recorded as the scratch-group size of every shard's
 * context binaries, and manifest_path receives the text manifest that connects them (format in
 * docs/cli.md; `kiln run MANIFEST` runs it). All files are written atomically, as by
 * kiln_compile_file, and only after every shard compiled; on failure none is left behind; a
 * shard path or manifest_path that is the model file is KILN_ERROR_INVALID_ARGUMENT. Statuses: those of kiln_compile_file;
 * KILN_ERROR_COMPILE_SPEC when n_shards is 0, above 1024, or more than the model can be cut into.
 * A GGUF LLM (method->name "forward") is cut by transformer blocks instead: contiguous ranges
 * balanced by weight bytes, n_shards at most its block count, each shard a program of both
 * methods prefill and decode with weight sharing, its program metadata "llm.gguf" and
 * "llm.shard" naming its blocks; shards pass the residual stream as "hidden" (docs/llm.md
 * "Sharded LLMs"). */
KILN_API kiln_status kiln_compile_shards(const kiln_compile_options *options, const kiln_compile_method *method,
                                         size_t n_shards, const char *manifest_path, char *message,
                                         size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
