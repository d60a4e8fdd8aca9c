/* kernel.h — the portable-kernel interface: how an op is described, shape-inferred and run.
 *
 * Layer: kernels/portable. Depends on core only. Used by the runtime (to execute portable
 * instructions) and by the compiler (shape inference and constant folding run the very same
 * code, so compile-time and run-time semantics cannot drift apart).
 *
 * An op is identified by its ONNX op_type and the opset version of its domain; each kernel
 * handles every version it claims itself (old `broadcast` attributes, attribute-vs-input forms
 * of Slice/Reshape/..., PRelu-6 slopes), so the compiler need not rewrite legacy nodes.
 *
 * Tensors handed to kernels:
 *  - in[i] is NULL when input i is absent (optional input left empty, or i >= n_inputs);
 *  - in infer(), in[i]->data may be NULL when the value is not known at compile time; an op
 *    whose output shape needs that data returns KILN_ERROR_SHAPE_UNKNOWN;
 *  - out[j] is NULL when output j is not used by the graph; infer() sets dtype, rank and shape
 *    of the others; run() finds out[j]->data allocated to exactly numel * dtype_size bytes
 *    (1-byte buffers for empty tensors are allowed, never read).
 *  - all data is dense row-major; input and output buffers never alias.
 */
#ifndef KILN_KERNELS_PORTABLE_KERNEL_H
#define KILN_KERNELS_PORTABLE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

typedef enum kiln_attr_type {
    KILN_ATTR_INT = 0,
    KILN_ATTR_FLOAT = 1,
    KILN_ATTR_INTS = 2,
    KILN_ATTR_FLOATS = 3,
    KILN_ATTR_STRING = 4,
    KILN_ATTR_TENSOR = 5,
    KILN_ATTR_STRINGS = 6,
} kiln_attr_type;
#define KILN_ATTR_TYPE_COUNT 7

typedef struct kiln_attr {
    const char *name;
    kiln_attr_type type;
    int64_t i;              /* INT */
    float f;                /* FLOAT */
    size_t n;               /* element count of INTS/FLOATS/STRINGS, byte length of STRING */
    const int64_t *ints;    /* INTS, (n) */
    const float *floats;    /* FLOATS, (n) */
    const char *s;          /* STRING, (n) bytes, also NUL-terminated; STRINGS: n strings back to back, each NUL-terminated */
    kiln_tensor tensor;     /* TENSOR, data read-only */
} kiln_attr;

typedef struct kiln_node {
    const char *op;         /* ONNX op_type, e.g. "Conv" */
    const char *name;       /* node name for messages; may be "" */
    int opset;              /* opset version of the default ONNX domain the model imports */
    const kiln_attr *attrs; /* (n_attrs) */
    size_t n_attrs;
    size_t n_inputs;        /* as written in the model, counting empty optional slots */
    size_t n_outputs;
} kiln_node;

/* Per-call environment of run(). scratch is the per-call scratch memory infer() asked for
   (64-byte aligned, contents undefined). parallel_for(pool, n, fn, arg) runs fn(arg, i) for all
   i < n on the module's threads and returns when all are done; it is never NULL (single-threaded
   callers pass an inline loop), and fn must not use ctx->scratch from several indices at once
   unless it partitions it. */
typedef struct kiln_kernel_ctx {
    void *scratch;
    size_t scratch_size;
    void (*parallel_for)(void *pool, size_t n, void (*fn)(void *arg, size_t i), void *arg);
    void *pool;
    int n_threads;
} kiln_kernel_ctx;

typedef struct kiln_kernel {
    const char *op;
    int min_opset;          /* lowest opset version this kernel implements */
    /* Validate inputs and attributes, set output dtype/rank/shape, and say how much scratch
       run() needs (0 if none; *scratch_size is 0 on entry). Statuses: KILN_ERROR_SHAPE_MISMATCH,
       KILN_ERROR_DTYPE_MISMATCH, KILN_ERROR_INVALID_ARGUMENT (bad attribute), KILN_ERROR_NOT_SUPPORTED
       (valid ONNX this kernel does not implement), KILN_ERROR_SHAPE_UNKNOWN. */
    kiln_status (*infer)(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                         size_t *scratch_size);
    /* Compute outputs. Called only after infer() accepted the same shapes and attributes;
       may still return KILN_ERROR_INVALID_VALUE for data-dependent errors (index out of range). */
    kiln_status (*run)(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                       kiln_kernel_ctx *ctx);
} kiln_kernel;

/* The kernel for op (default ONNX domain) at this opset, or NULL. */
const kiln_kernel *kiln_portable_kernel_find(const char *op, int opset);
/* Every registered op name, for listings: calls fn for each kernel. */
void kiln_portable_kernel_foreach(void (*fn)(const kiln_kernel *kernel, void *user), void *user);

/* ---- attribute helpers (attr.c) ---- */
const kiln_attr *kiln_node_attr(const kiln_node *node, const char *name);
int64_t kiln_node_attr_int(const kiln_node *node, const char *name, int64_t fallback);
float kiln_node_attr_float(const kiln_node *node, const char *name, float fallback);
/* Count of the INTS attribute and its values through *values; 0 and NULL when absent. */
size_t kiln_node_attr_ints(const kiln_node *node, const char *name, const int64_t **values);
size_t kiln_node_attr_floats(const kiln_node *node, const char *name, const float **values);
/* The STRING attribute or fallback. */
const char *kiln_node_attr_string(const kiln_node *node, const char *name, const char *fallback);

/* ---- small tensor helpers (tensor_util.c) ---- */
/* Element count (1 for scalars); assumes infer() validated the shape (no overflow). */
int64_t kiln_numel(const kiln_tensor *t);
/* Copy dtype/rank/shape (not data). */
void kiln_tensor_set_shape(kiln_tensor *dst, kiln_dtype dtype, uint32_t rank, const int64_t *shape);
/* Read element i of an integer tensor (i32/i64/u8/bool...) as int64; float tensors truncate. */
int64_t kiln_tensor_get_i64(const kiln_tensor *t, int64_t i);
double kiln_tensor_get_f64(const kiln_tensor *t, int64_t i);
/* Normalise an axis in [-rank, rank) to [0, rank); false when out of range. */
bool kiln_axis_normalize(int64_t axis, int64_t rank, int64_t *out);
/* Bytes of data in a tensor whose shape was validated. */
size_t kiln_tensor_bytes(const kiln_tensor *t);

/* ---- broadcasting (broadcast.c) ---- */
/* Multidirectional (numpy) broadcast of n shapes into out/out_rank. KILN_ERROR_SHAPE_MISMATCH
   when incompatible. */
kiln_status kiln_broadcast_shapes(const kiln_tensor *const *ts, size_t n, int64_t *out, uint32_t *out_rank);
/* Element strides of t broadcast to out_shape/out_rank (0 for broadcast dims), right-aligned. */
void kiln_broadcast_strides(const kiln_tensor *t, const int64_t *out_shape, uint32_t out_rank, int64_t *strides);

#endif /* KILN_KERNELS_PORTABLE_KERNEL_H */
