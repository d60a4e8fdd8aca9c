/* compiler.h — the public API of kiln's ahead-of-time compiler (host library kiln_compiler).
 *
 * The compiler imports ONNX models, infers shapes, folds constants, plans memory and writes a
 * program file. It is not part of the embeddable runtime: it links protobuf-c.
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

/* One method of the program: its name and the ONNX file (or bytes) that defines it. */
typedef struct kiln_compile_method {
    const char *name;           /* "forward" when there is a single model */
    const char *model_path;     /* ONNX file; or NULL and model_data/model_size */
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
} kiln_compile_options;

/* Compile the methods into a program written at out_path (atomically: a temporary file renamed
 * into place, removed on any failure). Statuses: KILN_ERROR_INVALID_ARGUMENT, KILN_ERROR_IO,
 * KILN_ERROR_MODEL (unreadable or invalid ONNX), KILN_ERROR_UNSUPPORTED_OP,
 * KILN_ERROR_SHAPE_MISMATCH / KILN_ERROR_DTYPE_MISMATCH (inconsistent model),
 * KILN_ERROR_COMPILE_SPEC, KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT. */
kiln_status kiln_compile_file(const kiln_compile_options *options, const kiln_compile_method *methods,
                              size_t n_methods, const char *out_path, char *message, size_t message_size);

/* As kiln_compile_file, but returns the program bytes in *out_data (allocated from the options'
 * allocator, 64-byte aligned; free with that allocator) and their size in *out_size. */
kiln_status kiln_compile_memory(const kiln_compile_options *options, const kiln_compile_method *methods,
                                size_t n_methods, void **out_data, size_t *out_size, char *message,
                                size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
