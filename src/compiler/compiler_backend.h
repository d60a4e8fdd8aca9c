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

/* ---- reading a payload back -------------------------------------------------------------------- */

typedef enum kiln_describe_format {
    KILN_DESCRIBE_TEXT,
    KILN_DESCRIBE_JSON,
} kiln_describe_format;

/* What checking a payload found (the backend's check). */
typedef struct kiln_payload_check {
    kiln_status status;             /* KILN_OK: the run-time backend accepts it; else why in message */
    bool intact;                    /* accepted and its signatures and hashes match the contents */
    char message[256];              /* one line, when !intact: what is invalid or does not match */
} kiln_payload_check;

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

    /* ---- reading a compiled payload back (`kiln inspect`, `kiln verify`, `kiln scratch-size`,
     * the --target check of `kiln run`); each optional. Every one validates the bytes itself,
     * as the run-time backend would, before following anything in them. */

    /* Whether the run-time backend would accept the payload (check->status, with why in
     * check->message) and whether what loading skips to stay O(metadata) holds (check->intact:
     * signatures, weight hashes; the first mismatch in check->message). Returns KILN_OK or
     * KILN_ERROR_OUT_OF_MEMORY. NULL: nothing to check (accepted, intact). */
    kiln_status (*check)(const void *payload, size_t size, kiln_payload_check *check);

    /* Print what the payload holds on out. TEXT: lines indented by four spaces. JSON: members
     * of the object `kiln inspect --json` prints for the payload, each starting with ", ".
     * NULL: the tools print only the payload's size. */
    kiln_status (*describe)(const void *payload, size_t size, kiln_describe_format format, FILE *out);

    /* Call fn with the name of each target the payload carries a record for, in payload order
     * (the names `--target` accepts at run time). NULL: the payload names no targets. */
    kiln_status (*targets)(const void *payload, size_t size, void (*fn)(void *arg, const char *target), void *arg);

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

/* The backend named name: one of extra (n_extra, searched first, NULL entries skipped) or of the
 * built-in table, or NULL. */
const kiln_compiler_backend *kiln_compiler_backend_lookup(const char *name, const kiln_compiler_backend *const *extra,
                                                          size_t n_extra);

/* Check one payload through backend b (NULL, or without check: accepted and intact). */
kiln_status kiln_payload_check_run(const kiln_compiler_backend *b, const void *payload, size_t size,
                                   kiln_payload_check *check);

/* One payload as `kiln inspect` prints it, after check (by kiln_payload_check_run). TEXT:
 *   "  context binary in segment <k>: <size> bytes, <n> delegate call(s)" then, when the payload
 *   is invalid, "    INVALID (<status>): <why>", else b's describe text (without describe, a line
 *   saying so; op names the delegate's backend for it). JSON: one object {"segment", "size",
 *   "delegate_calls", "valid", then "error" or b's describe members}. */
kiln_status kiln_payload_print(const kiln_compiler_backend *b, const char *op, const void *payload, size_t size,
                               uint32_t segment, size_t uses, const kiln_payload_check *check,
                               kiln_describe_format format, FILE *out);

/* Every distinct delegate payload of the program at data (8-byte aligned; validated by the
 * format reader first), checked and printed as kiln_payload_print does, in program order (JSON:
 * the objects separated by ", "), each through the backend its DELEGATE instruction names
 * (kiln_compiler_backend_lookup). Format reader errors, or the first describe failure. */
kiln_status kiln_program_describe_delegates(const void *data, size_t size, const kiln_compiler_backend *const *extra,
                                            size_t n_extra, kiln_describe_format format, FILE *out);

#endif
