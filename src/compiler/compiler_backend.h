/* compiler_backend.h — the compile-time backend interface: what the compiler asks of a backend
 * that takes over nodes ahead of time (the `cpu` backend's aot half, or a test's toy backend).
 *
 * Layer: compiler (the interface; a backend's aot half includes this header, nothing else of
 * the compiler). The partitioner hands a backend a neutral description of each partition
 * (kiln_backend_graph: tensors, kiln_node attributes and value indices — never the compiler
 * IR); the backend returns an opaque payload that becomes the segment of a DELEGATE
 * instruction whose op is the backend's name, the run-time backend of that name reads it.
 *
 * Options travel as key/value compile specs (as ExecuTorch's CompileSpec list does): the
 * compiler checks their shape and passes them on; the backend's validate_spec interprets its
 * own keys, rejects unknown ones naming the fix, and writes the normal form (defaults filled
 * in) that compile then reads. The public kiln_compile_options fields are translated into the
 * first built-in backend's keys by the compiler (compile_spec.h).
 *
 * Registry: the built-in backends are a fixed const table (builtin_backends.c, the one compiler
 * file that includes a backend's headers); a caller may pass extra backends in front of it
 * (kiln_compile_memory_backends), which claim nodes first. No mutable global.
 */
#ifndef KILN_COMPILER_COMPILER_BACKEND_H
#define KILN_COMPILER_COMPILER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/portable/kernel.h"
#include "kiln/compiler.h"
#include "kiln/kiln.h"

/* ---- a partition as a backend sees it ----------------------------------------------------------- */

typedef struct kiln_backend_value {
    kiln_tensor t;                  /* dtype, rank, shape always static; data when is_const */
    bool is_const;
} kiln_backend_value;

typedef struct kiln_backend_node {
    const kiln_node *node;          /* op, opset, attributes */
    const int32_t *inputs;          /* (node->n_inputs) value indices, -1 = absent */
    const int32_t *outputs;         /* (node->n_outputs) value indices, -1 = unused */
} kiln_backend_node;

/* One method's partition. inputs are the non-constant values entering it (the delegate call's
 * inputs, in this order), outputs the values leaving it (its outputs, in this order). */
typedef struct kiln_backend_graph {
    const char *name;               /* method name = graph name */
    const kiln_backend_value *values;
    size_t n_values;
    const kiln_backend_node *nodes; /* in execution order */
    size_t n_nodes;
    const int32_t *inputs;
    size_t n_inputs;
    const int32_t *outputs;
    size_t n_outputs;
} kiln_backend_graph;

/* ---- compile specs ------------------------------------------------------------------------------ */

typedef struct kiln_compile_kv {
    const char *key;
    const char *value;              /* static or owned by whoever built the list */
} kiln_compile_kv;

/* Room for a normal form: a key per target and a precision per target, plus flags. */
#define KILN_COMPILE_KV_MAX 48

/* ---- the backend ------------------------------------------------------------------------------ */

typedef struct kiln_compiler_backend {
    const char *name;               /* the DELEGATE op and the run-time backend it names */

    /* Interpret kv (n entries) for a compiling machine with the kiln_cpu_feature bits
     * host_features, and write its normal form to normal (cap entries, values static or
     * pointing into kv). KILN_OK or KILN_ERROR_COMPILE_SPEC (INVALID_ARGUMENT for API misuse)
     * with one line in message naming the key and the fix. */
    kiln_status (*validate_spec)(const kiln_compile_kv *kv, size_t n, uint64_t host_features, kiln_compile_kv *normal,
                                 size_t cap, size_t *n_normal, char *message, size_t message_size);

    /* Whether the backend implements this node with these static shapes (constant inputs carry
     * data; an unused output is NULL). Conservative. */
    bool (*supports)(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out);

    /* Lower the graphs (one per method; several = weight sharing) with the normal-form spec into
     * one payload (*out from allocator, 64-byte aligned). KILN_ERROR_NOT_SUPPORTED leaves the
     * partition portable; other failures stop the compilation. message gets one line. */
    kiln_status (*compile)(const kiln_compile_kv *spec, size_t n_spec, const kiln_allocator *allocator,
                           const kiln_backend_graph *graphs, size_t n_graphs, void **out, size_t *out_size,
                           char *message, size_t message_size);

    /* Print the payload for `kiln inspect` (NULL: the tool prints only its size). */
    kiln_status (*describe)(const void *payload, size_t size, FILE *out);

    /* Optional (NULL: the backend's payloads take no part in scratch groups): the largest
     * scratch need and the recorded group size of a payload, and recording a group size. */
    kiln_status (*scratch_info)(const void *payload, size_t size, uint64_t *need, uint64_t *group);
    kiln_status (*set_group_scratch)(void *payload, size_t size, uint64_t group_size);
} kiln_compiler_backend;

/* The built-in backends, in claiming order (a fixed const table). Entry 0 is the backend the
 * public kiln_compile_options fields configure. */
const kiln_compiler_backend *const *kiln_compiler_builtin_backends(size_t *n);

/* The built-in backend named name, or NULL. */
const kiln_compiler_backend *kiln_compiler_backend_find(const char *name);

/* One extra backend for a compilation, with its own key/value spec. */
typedef struct kiln_compiler_backend_use {
    const kiln_compiler_backend *backend;
    const kiln_compile_kv *spec;
    size_t n_spec;
} kiln_compiler_backend_use;

/* kiln_compile_memory with extra backends that claim nodes before the built-in ones, in order.
 * Their specs go through their validate_spec before any model is read. */
kiln_status kiln_compile_memory_backends(const kiln_compile_options *opt, const kiln_compile_method *methods,
                                         size_t n_methods, const kiln_compiler_backend_use *extra, size_t n_extra,
                                         void **out_data, size_t *out_size, char *message, size_t message_size);

/* Describe every distinct delegate payload of the program at data (8-byte aligned; validated by
 * the format reader first): a line "delegate <name> segment <k>: <size> bytes, backend <b>"
 * then, when the backend (extra ones first, then the built-in table) has describe, its text.
 * A delegate naming no known backend gets "(no compile-time backend)". Format reader errors,
 * or the first describe failure. */
kiln_status kiln_program_describe_delegates(const void *data, size_t size, const kiln_compiler_backend *const *extra,
                                            size_t n_extra, FILE *out);

#endif
