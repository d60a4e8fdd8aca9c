/* kiln.h — the public runtime API of kiln.
 *
 * Layer: public header. Depends on the C standard library (and kiln/export.h) only.
 * This header is the contract: what each function takes, returns and keeps is stated at its
 * declaration. Every fallible call returns a kiln_status (0 = OK, negative =
 * error) and writes its result through a final *_out parameter; on failure *out is NULL (or
 * left unchanged for plain-value outputs) and there is nothing to free.
 *
 * Threading: different modules may be used from different threads at once. Methods of one
 * module may be loaded, unloaded and executed from different threads at once; executions that
 * share a context or a scratch group are serialised inside the runtime.
 *
 * Handles: kiln_program *, kiln_module * and kiln_method * are handles, not addresses. Every call
 * validates its handle before touching the object behind it, so a handle used after its object is
 * gone (closed, destroyed, unloaded — also by the module's destroy — or never created) is reported
 * as KILN_ERROR_STALE_HANDLE, or ignored by the void close/destroy/unload calls, and never
 * dereferenced; handle values are never reused. Destroying or unloading waits for calls on that
 * object that are already running in other threads; calls that start afterwards see a stale
 * handle. Pointers a call returned into an object (names, output views) die with the object.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0

#define KILN_MAX_RANK 8

/* The one status list of kiln: X(NAME, value, message). Ranges:
 *   -1   .. -99   argument and state errors (the caller can fix the call)
 *   -100 .. -199  resource errors (memory, files, threads)
 *   -200 .. -299  format and compatibility errors (the bytes are wrong or not for this build/CPU)
 *   -300 .. -399  backend errors (delegates and their registry)
 *   -400 .. -499  compiler errors (the model or the compile spec)
 *   -900          internal error: a path that cannot happen was taken (a bug in kiln, to report)
 */
#define KILN_STATUS_MAP(X)                                                                       \
    X(OK, 0, "success")                                                                          \
    X(ERROR_INVALID_ARGUMENT, -1, "invalid argument")                                            \
    X(ERROR_INVALID_STATE, -2, "object is not in a state that allows this call")                \
    X(ERROR_NOT_FOUND, -3, "no such method, input, output or name")                              \
    X(ERROR_INDEX_OUT_OF_RANGE, -4, "index out of range")                                         \
    X(ERROR_SHAPE_MISMATCH, -5, "tensor shape does not match what the method expects")           \
    X(ERROR_DTYPE_MISMATCH, -6, "tensor dtype does not match what the method expects")           \
    X(ERROR_STALE_HANDLE, -7, "handle refers to an object that no longer exists")                \
    X(ERROR_NOT_SUPPORTED, -8, "operation not supported by this build or object")                \
    X(ERROR_SHAPE_UNKNOWN, -9, "shape depends on data that is not known yet")                    \
    X(ERROR_INVALID_VALUE, -10, "tensor data is out of the range the operation accepts")         \
    X(ERROR_OUT_OF_MEMORY, -100, "out of memory")                                                \
    X(ERROR_IO, -101, "file could not be read or written")                                      \
    X(ERROR_THREAD, -102, "thread or lock could not be created")                                 \
    X(ERROR_LIMIT, -103, "a size or count exceeds what kiln supports")                           \
    X(ERROR_FORMAT, -200, "file is truncated, corrupt or not a kiln program")                    \
    X(ERROR_VERSION, -201, "file format version is not supported by this build")                 \
    X(ERROR_INCOMPATIBLE, -202, "context binary is incompatible with this runtime")              \
    X(ERROR_NO_RUNNABLE_TARGET, -203, "no record of the context binary can run on this CPU")     \
    X(ERROR_BACKEND, -300, "backend failed")                                                     \
    X(ERROR_BACKEND_UNAVAILABLE, -301, "backend is not registered or not available here")        \
    X(ERROR_BACKEND_REGISTRY_FULL, -302, "backend registry is full")                             \
    X(ERROR_BACKEND_DUPLICATE, -303, "a backend of that name is already registered")             \
    X(ERROR_BACKEND_ABI, -304, "backend was built for another ABI version")                      \
    X(ERROR_UNSUPPORTED_OP, -400, "model uses an operator kiln does not support")               \
    X(ERROR_MODEL, -401, "model is invalid")                                                     \
    X(ERROR_COMPILE_SPEC, -402, "compile options are invalid")                                   \
    X(ERROR_INTERNAL, -900, "internal error in kiln (a bug: please report it)")

typedef enum kiln_status {
#define KILN_STATUS_ENUM_(name, value, message) KILN_##name = value,
    KILN_STATUS_MAP(KILN_STATUS_ENUM_)
#undef KILN_STATUS_ENUM_
} kiln_status;

/* A fixed, human-readable message for every status (never NULL; unknown codes give
   "unknown status"). The returned string is static. */
KILN_API const char *kiln_status_str(kiln_status status);
/* The symbolic name of a status without the KILN_ prefix, e.g. "ERROR_FORMAT". Static. */
KILN_API const char *kiln_status_name(kiln_status status);

/* Element types, in the order of their values (which are part of the program and context-binary
 * formats, docs/format.md: a new type is appended, never inserted). Each is
 *   X(NAME, name, block elements, block bytes)
 * A plain type stores one element per block (its size in bytes). A block-quantized weight type
 * (ggml's layouts, docs/format.md "Block-quantized types") stores a block of elements in a fixed
 * number of bytes: a row of such a tensor (its last dimension) is a whole number of blocks.
 * Plain types come first (F32 ... BOOL), the block-quantized ones after them. */
#define KILN_DTYPE_MAP(X)                                                                        \
    X(F32, "f32", 1, 4)                                                                          \
    X(F16, "f16", 1, 2)                                                                          \
    X(BF16, "bf16", 1, 2)                                                                        \
    X(F64, "f64", 1, 8)                                                                          \
    X(I8, "i8", 1, 1)                                                                            \
    X(I16, "i16", 1, 2)                                                                          \
    X(I32, "i32", 1, 4)                                                                          \
    X(I64, "i64", 1, 8)                                                                          \
    X(U8, "u8", 1, 1)                                                                            \
    X(U16, "u16", 1, 2)                                                                          \
    X(U32, "u32", 1, 4)                                                                          \
    X(U64, "u64", 1, 8)                                                                          \
    X(BOOL, "bool", 1, 1)                                                                        \
    X(Q8_0, "q8_0", 32, 34)     /* f16 scale, 32 x i8 */                                        \
    X(Q4_0, "q4_0", 32, 18)     /* f16 scale, 32 x 4-bit (offset 8) */                          \
    X(Q4_K, "q4_k", 256, 144)   /* f16 scale and min, 12 bytes of 6-bit sub-block scales, 256 x 4-bit */ \
    X(Q6_K, "q6_k", 256, 210)   /* 128 bytes low 4 bits, 64 high 2 bits, 16 x i8 scales, f16 scale */

typedef enum kiln_dtype {
#define KILN_DTYPE_ENUM_(name, text, block_elements, block_bytes) KILN_DTYPE_##name,
    KILN_DTYPE_MAP(KILN_DTYPE_ENUM_)
#undef KILN_DTYPE_ENUM_
} kiln_dtype;
/* The number of kiln_dtype values, derived from the list (never kept by hand). */
#define KILN_DTYPE_COUNT_ONE_(name, text, block_elements, block_bytes) +1
#define KILN_DTYPE_COUNT (0 KILN_DTYPE_MAP(KILN_DTYPE_COUNT_ONE_))

/* Bytes per element of a plain dtype; 0 for a block-quantized dtype (whose elements are not
   whole bytes: see kiln_dtype_block) and for a value that is not a kiln_dtype. */
KILN_API size_t kiln_dtype_size(kiln_dtype dtype);
/* Lower-case name ("f32", "i64", "bool", "q4_k" ...) or "?" . Static. */
KILN_API const char *kiln_dtype_name(kiln_dtype dtype);
/* Nonzero when dtype is block-quantized (Q8_0, Q4_0, Q4_K, Q6_K ...), 0 otherwise (also for a
   value that is not a kiln_dtype). */
KILN_API int kiln_dtype_is_quantized(kiln_dtype dtype);
/* The storage block of dtype: *elements values in *bytes bytes (1 and kiln_dtype_size for a plain
   type; 32 in 34 for Q8_0, 32 in 18 for Q4_0, 256 in 144 for Q4_K, 256 in 210 for Q6_K).
   KILN_ERROR_INVALID_ARGUMENT for a value that is not a kiln_dtype (nothing written). */
KILN_API kiln_status kiln_dtype_block(kiln_dtype dtype, uint32_t *elements, uint32_t *bytes);
/* Bytes of n consecutive elements of dtype (a row of a tensor) through *out. Statuses:
   KILN_ERROR_INVALID_ARGUMENT (not a kiln_dtype, or n negative), KILN_ERROR_SHAPE_MISMATCH (n is
   not a multiple of the dtype's block), KILN_ERROR_LIMIT (the size overflows size_t). */
KILN_API kiln_status kiln_dtype_row_size(kiln_dtype dtype, int64_t n, size_t *out);

typedef struct kiln_tensor {
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    void *data;                 /* dense, row-major */
} kiln_tensor;

/* Number of elements of a tensor's shape (1 for rank 0), or -1 if it overflows int64. */
KILN_API int64_t kiln_tensor_numel(const kiln_tensor *tensor);
/* Bytes of a dense tensor of this dtype and shape through *out: numel x element size, or for a
   block-quantized dtype rows of whole blocks (the last dimension a multiple of the block; a
   scalar is no such row). Statuses: KILN_ERROR_INVALID_ARGUMENT (not a kiln_dtype, rank above
   KILN_MAX_RANK, a negative dimension), KILN_ERROR_SHAPE_MISMATCH (a block-quantized tensor whose
   last dimension is not a multiple of its block, or of rank 0), KILN_ERROR_LIMIT (the size
   overflows size_t). */
KILN_API kiln_status kiln_tensor_size(const kiln_tensor *tensor, size_t *out);

typedef struct kiln_allocator {
    void *ctx;
    void *(*alloc)(void *ctx, size_t size, size_t alignment);   /* NULL on failure */
    void (*free)(void *ctx, void *ptr);
} kiln_allocator;

typedef struct kiln_program kiln_program;
typedef struct kiln_module kiln_module;
typedef struct kiln_method kiln_method;
typedef struct kiln_scratch_group kiln_scratch_group;

typedef struct kiln_module_options {
    size_t struct_size;                 /* sizeof(kiln_module_options); lets the struct grow */
    const kiln_allocator *allocator;    /* the module's runtime allocator; NULL: the module makes
                                           its own default one. Must outlive the module. Its
                                           identity is the module's identity for context sharing:
                                           modules given the same allocator object share
                                           contexts, as methods of one module do. */
    kiln_scratch_group *scratch_group;  /* NULL: default grouping; else share scratch with every
                                           module given the same group */
    int num_threads;                    /* 0: one per available core */
    const char *target;                 /* NULL: best record for this CPU; else that record, a name
                                           some context binary of the program has and this runtime
                                           knows (checked by kiln_module_create). Not retained
                                           after kiln_module_create returns. */
} kiln_module_options;

/* ---- Programs ------------------------------------------------------------------------------
 * A program stays valid until kiln_program_close has been called and its last module is
 * destroyed (closing earlier is allowed; the memory goes when the last module goes).
 *
 * Program files changed after open. The file stays mapped and its weights are read in place;
 * everything kiln interprets — the program's method, value, instruction, attribute and string
 * tables and its metadata values, each context binary's records, graphs, tensors and steps, and
 * every constant whose bytes decide a shape or an index (non-floating-point constants and any
 * constant up to 4 KB) — is
 * copied into kiln's own memory when it is validated (at open, or at the load that first uses a
 * context binary). What is guaranteed:
 *  - a change to the file can at worst change the numbers of the weights kiln reads from it,
 *    never where kiln reads or writes memory;
 *  - kiln_method_load, kiln_module_create (with a target) and kiln_method_execute first compare
 *    the file's size and modification time with those at open (one fstat of the descriptor kiln
 *    keeps) and fail with KILN_ERROR_IO, "program file X changed since it was opened; reopen
 *    it", instead of touching the mapping — so a truncated file is caught before any read.
 * What is not: a truncation while an execute is already running can still end the process with
 * SIGBUS (only a full copy would prevent it), and a rewrite that keeps the size and the
 * modification time (same clock tick) goes unnoticed, with only the numbers changed. Replace a
 * program file by writing a new file and renaming it over the old one, as kiln's own writers do:
 * that is always safe, because the mapping and the descriptor keep the old file. */

/* Opens the regular file at path (a FIFO, device or directory is refused without blocking),
 * maps it read-only and validates every table, count, offset and size in it.
 * Returns KILN_ERROR_INVALID_ARGUMENT (NULL path/out), KILN_ERROR_IO (cannot open/map, not a
 * regular file), KILN_ERROR_FORMAT (truncated, corrupt or foreign file), KILN_ERROR_VERSION
 * (a format version this runtime does not read: it reads versions 1 and 2),
 * KILN_ERROR_OUT_OF_MEMORY. The program keeps the file descriptor open until it is freed. */
KILN_API kiln_status kiln_program_open(const char *path, kiln_program **out);
/* As kiln_program_open over caller memory; data must be 8-byte aligned (64 for best use) and
 * must outlive the program. The tables are copied as for a file; weights are read in place. */
KILN_API kiln_status kiln_program_open_memory(const void *data, size_t size, kiln_program **out);
/* Releases the caller's reference; NULL and stale handles are ignored. */
KILN_API void        kiln_program_close(kiln_program *program);

/* Number of methods in the program and the name of method i (valid while the program is).
 * kiln_program_method_name returns NULL when i is out of range; both give 0/NULL for a stale
 * handle. */
KILN_API size_t      kiln_program_method_count(const kiln_program *program);
KILN_API const char *kiln_program_method_name(const kiln_program *program, size_t i);

/* Program metadata: named byte strings a program carries for its users (program format version
 * 2, docs/format.md; "llm.gguf" holds the GGUF key/values of an LLM program, docs/llm.md).
 * Keys are non-empty, unique and listed in bytewise (strcmp) order; a version 1 program has none.
 * kiln_program_metadata_count gives their number (0 for a stale handle);
 * kiln_program_metadata_key the key at index i (NULL when i is out of range or the handle is
 * stale). kiln_program_metadata_get sets *data and *size to key's value and returns KILN_OK, or
 * KILN_ERROR_NOT_FOUND (no such key), KILN_ERROR_INVALID_ARGUMENT (NULL argument),
 * KILN_ERROR_STALE_HANDLE (closed program); on failure *data is NULL and *size 0 (when they are
 * not NULL). The values are copied into kiln's memory at open, 64-byte aligned, so they do not
 * change with the file; keys and values stay valid as long as the program is (until
 * kiln_program_close and its last module's destruction), and are read-only. */
KILN_API size_t      kiln_program_metadata_count(const kiln_program *program);
KILN_API const char *kiln_program_metadata_key(const kiln_program *program, size_t i);
KILN_API kiln_status kiln_program_metadata_get(const kiln_program *program, const char *key, const void **data,
                                               size_t *size);

/* ---- Modules: one loaded instance of a program. options may be NULL (all defaults). --------
 * Returns KILN_ERROR_INVALID_ARGUMENT (NULL program/out, struct_size too small or options
 * fields out of range), KILN_ERROR_STALE_HANDLE (closed program), KILN_ERROR_OUT_OF_MEMORY,
 * KILN_ERROR_THREAD, KILN_ERROR_NO_RUNNABLE_TARGET (options->target is a name no context binary
 * of the program has a record for, or not a target this runtime knows), KILN_ERROR_IO (the file
 * changed since open, checked when a target is given). */
KILN_API kiln_status kiln_module_create(kiln_program *program, const kiln_module_options *options, kiln_module **out);
/* As kiln_module_create; on failure message (message_size bytes, may be NULL/0) receives one
 * line saying why — for a target, the names that exist. The caller owns the buffer; it is set
 * to "" on success. */
KILN_API kiln_status kiln_module_create_with_message(kiln_program *program, const kiln_module_options *options, kiln_module **out,
                                                     char *message, size_t message_size);
/* One line describing the most recent failure of kiln_method_load in the calling thread on this
 * module, or "" if there was none (or for a stale handle). Each thread has its own text, valid
 * until that thread's next kiln_method_load on the module or the module's destroy. Prefer
 * kiln_method_load_with_message, whose message buffer is the caller's. */
KILN_API const char *kiln_module_last_error(const kiln_module *module);

/* Unloads every method still loaded (waiting for calls running on them) and frees the module;
 * NULL and stale handles are ignored. */
KILN_API void        kiln_module_destroy(kiln_module *module);

/* ---- Methods --------------------------------------------------------------------------------
 * kiln_method_load: KILN_ERROR_INVALID_ARGUMENT, KILN_ERROR_STALE_HANDLE (destroyed module),
 * KILN_ERROR_NOT_FOUND (no method of that name), KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_FORMAT
 * (the plan does not verify), KILN_ERROR_IO (the program file changed since open), backend
 * errors from delegate initialisation (KILN_ERROR_NO_RUNNABLE_TARGET, KILN_ERROR_INCOMPATIBLE ...).
 * The method belongs to the module and is unloaded by kiln_method_unload or kiln_module_destroy. */
KILN_API kiln_status kiln_method_load(kiln_module *module, const char *name, kiln_method **out);
/* As kiln_method_load; on failure message (message_size bytes, may be NULL/0) receives one line
 * saying why ("loading method 'm' failed: ..."), set to "" on success. The buffer is the
 * caller's, so concurrent loads never share it; the same text is kiln_module_last_error's. */
KILN_API kiln_status kiln_method_load_with_message(kiln_module *module, const char *name, kiln_method **out, char *message,
                                                   size_t message_size);
/* Releases the method, its memory and the references it holds, waiting for calls on it that are
 * running in other threads; NULL and stale handles are ignored. */
KILN_API void        kiln_method_unload(kiln_method *method);
KILN_API size_t      kiln_method_input_count(const kiln_method *method);
KILN_API size_t      kiln_method_output_count(const kiln_method *method);
/* Name of input/output index as the model gave it (valid while the method is loaded), or NULL
 * for an out-of-range index or a stale handle. */
KILN_API const char *kiln_method_input_name(const kiln_method *method, size_t index);
KILN_API const char *kiln_method_output_name(const kiln_method *method, size_t index);
/* Declared dtype and shape of input/output index; data = NULL. KILN_ERROR_INDEX_OUT_OF_RANGE. */
KILN_API kiln_status kiln_method_input_info(const kiln_method *method, size_t index, kiln_tensor *out);
KILN_API kiln_status kiln_method_output_info(const kiln_method *method, size_t index, kiln_tensor *out);
/* Copies tensor->data into the method's input buffer; the caller's buffer is not retained.
 * KILN_ERROR_INDEX_OUT_OF_RANGE, KILN_ERROR_DTYPE_MISMATCH, KILN_ERROR_SHAPE_MISMATCH (the
 * shape is not the declared one and the method cannot run with it), KILN_ERROR_STALE_HANDLE. */
KILN_API kiln_status kiln_method_set_input(kiln_method *method, size_t index, const kiln_tensor *tensor);
/* Runs the method on the inputs set so far. KILN_ERROR_INVALID_STATE (an input was never set),
 * KILN_ERROR_SHAPE_MISMATCH / KILN_ERROR_INVALID_VALUE (data-dependent checks failed),
 * KILN_ERROR_OUT_OF_MEMORY, backend errors, KILN_ERROR_STALE_HANDLE, KILN_ERROR_IO (the program
 * file changed since open: nothing was run). */
KILN_API kiln_status kiln_method_execute(kiln_method *method);
/* A view of output index; out->data points into the method's memory and stays valid until the
 * next execute or unload. KILN_ERROR_INVALID_STATE before the first successful execute. */
KILN_API kiln_status kiln_method_get_output(kiln_method *method, size_t index, kiln_tensor *out);

/* Identity of the backend context that delegate call `index` of this method uses (0-based, in
 * program order). Two methods share a context exactly when they report the same id. Ids are
 * never reused within a process. */
KILN_API size_t      kiln_method_delegate_count(const kiln_method *method);
KILN_API kiln_status kiln_method_context_id(const kiln_method *method, size_t index, uint64_t *out);

/* Cross-module scratch sharing (opt-in). The group lives until it has been released and its
 * last member context is destroyed. */
KILN_API kiln_status kiln_scratch_group_create(kiln_scratch_group **out);
KILN_API void        kiln_scratch_group_release(kiln_scratch_group *group);

/* Process-wide counters of every backend's contexts and scratch groups (kept by the runtime;
   backends report through kiln_runtime_services), for users debugging memory and for tests. */
typedef struct kiln_runtime_stats {
    size_t   struct_size;               /* set by the caller to sizeof(kiln_runtime_stats) */
    uint64_t live_contexts;
    uint64_t contexts_created;          /* since process start */
    uint64_t contexts_destroyed;
    uint64_t live_scratch_groups;
    uint64_t scratch_bytes_reserved;    /* sum of the scratch buffers currently held */
} kiln_runtime_stats;
KILN_API kiln_status kiln_runtime_stats_get(kiln_runtime_stats *out);

/* "major.minor.patch" of the library. Static. */
KILN_API const char *kiln_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* KILN_KILN_H */
