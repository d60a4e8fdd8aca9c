/* kernel.h — the portable-kernel interface: how an op is described, shape-inferred and run.
 *
 * Layer: kernels/portable. Depends on core only. Used by the runtime (to execute portable
 * instructions) and by the compiler (shape inference and constant folding run the very same
 * code, so compile-time and run-time semantics cannot drift apart).
 *
 * An op is identified by its domain, its op_type and the opset version of its domain: the
 * default ONNX domain (NULL or "", which the importer also reads "ai.onnx" as) or kiln's own
 * (KILN_DOMAIN_KILN: RMSNorm, RoPE, Attention over a KV cache, Linear and Embed over quantized
 * weights; kiln_domain_ops.h), so a kiln op never matches an ONNX op of the same name, in the
 * kernel table or in a backend. Each kernel
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

/* Attribute types, X(NAME, value, letter of kiln_kernel.attrs): the value is stored in the
 * program format's attribute records (docs/format.md), so it is explicit and fixed. */
#define KILN_ATTR_TYPE_LIST(X)                                                                \
    X(INT, 0, 'i') X(FLOAT, 1, 'f') X(INTS, 2, 'I') X(FLOATS, 3, 'F') X(STRING, 4, 's') X(TENSOR, 5, 't') \
    X(STRINGS, 6, 'S')

typedef enum kiln_attr_type {
#define KILN_ATTR_TYPE_ENUM_(name, value, letter) KILN_ATTR_##name = value,
    KILN_ATTR_TYPE_LIST(KILN_ATTR_TYPE_ENUM_)
#undef KILN_ATTR_TYPE_ENUM_
} kiln_attr_type;
#define KILN_ATTR_TYPE_ONE_(name, value, letter) +1
#define KILN_ATTR_TYPE_COUNT (0 KILN_ATTR_TYPE_LIST(KILN_ATTR_TYPE_ONE_))
#define KILN_ATTR_TYPE_BIT_(name, value, letter) | (1u << (value))
_Static_assert((0 KILN_ATTR_TYPE_LIST(KILN_ATTR_TYPE_BIT_)) == (1u << KILN_ATTR_TYPE_COUNT) - 1,
               "attribute types are 0 .. KILN_ATTR_TYPE_COUNT - 1, each once");
#undef KILN_ATTR_TYPE_BIT_

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

/* The domain of the ops kiln defines itself (the "kiln.*" ops). */
#define KILN_DOMAIN_KILN "kiln"
/* ONNX's domain of the training ops (Adagrad, Adam, Momentum), which the ONNX importer accepts
   besides the default domain. */
#define KILN_DOMAIN_ONNX_TRAINING "ai.onnx.preview.training"

/* Whether domain names the default ONNX domain (NULL or ""). */
static inline bool kiln_domain_is_onnx(const char *domain) { return !domain || domain[0] == '\0'; }

/* Whether domains a and b are the same (NULL and "" both the default ONNX domain). */
bool kiln_domain_equal(const char *a, const char *b);

typedef struct kiln_node {
    const char *op;         /* op_type within the domain, e.g. "Conv" */
    const char *domain;     /* NULL or "": the default ONNX domain; else e.g. KILN_DOMAIN_KILN */
    const char *name;       /* node name for messages; may be "" */
    int opset;              /* opset version of the node's domain the model imports */
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

/* How many inputs and outputs a node of an op may have, counted as kiln_node counts them (empty
 * optional slots included), from opset `since` on (0: from the kernel's min_opset). The first
 * min_inputs inputs and the first min_outputs outputs are required and may not be empty; ONNX
 * puts an op's optional inputs after its required ones. KILN_ARITY_ANY: no upper bound. */
typedef struct kiln_arity {
    uint16_t since;
    uint8_t min_inputs, max_inputs;
    uint8_t min_outputs, max_outputs;
} kiln_arity;
#define KILN_ARITY_ANY 255
#define KILN_ARITY_VERSIONS 3   /* the most arity changes one op has had (Split: 1, 2, 13) */

/* The newest opset of the default ONNX domain the kernels were written against: a model importing
   a newer one may mean something these kernels do not implement, so it is refused. */
#define KILN_PORTABLE_OPSET_MAX 20

typedef struct kiln_kernel {
    const char *op;
    int min_opset;          /* lowest opset version this kernel implements */
    /* Validate inputs and attributes, set output dtype/rank/shape, and say how much scratch
       run() needs (0 if none; *scratch_size is 0 on entry). Statuses: KILN_ERROR_SHAPE_MISMATCH,
       KILN_ERROR_DTYPE_MISMATCH, KILN_ERROR_INVALID_ARGUMENT (bad attribute), KILN_ERROR_NOT_SUPPORTED
       (valid ONNX this kernel does not implement), KILN_ERROR_LIMIT (an output too large to
       address: kiln_shape_check_dims), KILN_ERROR_SHAPE_UNKNOWN. */
    kiln_status (*infer)(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                         size_t *scratch_size);
    /* Compute outputs. Called only after infer() accepted the same shapes and attributes;
       may still return KILN_ERROR_INVALID_VALUE for data-dependent errors (index out of range). */
    kiln_status (*run)(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                       kiln_kernel_ctx *ctx);
    /* Input and output counts by opset, ascending `since`; unused entries are all zero. */
    kiln_arity arity[KILN_ARITY_VERSIONS];
    /* The op's attributes (every ONNX version from min_opset) and the types each may have:
       "name:T..." entries separated by spaces, T one of i (INT), f (FLOAT), I (INTS), F (FLOATS),
       s (STRING), S (STRINGS), t (TENSOR). A FLOAT attribute may also be written as an INT (the
       helpers convert it exactly); an INT accepted where ONNX says INTS is listed ("axes:iI") where
       the kernel reads a one-element list from it. Attributes the op does not define are ignored. */
    const char *attrs;
} kiln_kernel;

/* The kernel for op of domain (NULL or "": the default ONNX domain) at this opset, or NULL. */
const kiln_kernel *kiln_portable_kernel_find(const char *domain, const char *op, int opset);
/* Every registered op name, for listings: calls fn for each kernel of the default ONNX domain. */
void kiln_portable_kernel_foreach(void (*fn)(const kiln_kernel *kernel, void *user), void *user);
/* The same for the kernels of one domain (NULL or "": the default ONNX domain; KILN_DOMAIN_KILN). */
void kiln_portable_kernel_foreach_in(const char *domain, void (*fn)(const kiln_kernel *kernel, void *user), void *user);
/* The index of the first block-quantized input (kiln_dtype_is_quantized) of a node of the
   default ONNX domain, or -1. The ONNX kernels address elements, which a block-quantized tensor
   has no bytes of their own for, so compiler and runtime refuse such a node before any kernel
   sees it; a kiln-domain kernel that reads quantized weights checks its inputs itself. */
int kiln_kernel_quantized_input(const kiln_node *node, const kiln_tensor *const *in);
/* After kernel->infer() refused a node: one line on why into why (why_size bytes, always
   terminated), e.g. "K has shape [2, 6], expected [2, 4]", for the caller's message next to the
   status; "" when the kernel says no more than its status (the ONNX kernels, so far). */
void kiln_kernel_explain(const kiln_kernel *kernel, const kiln_node *node, const kiln_tensor *const *in, char *why,
                         size_t why_size);
/* The kernel's arity at this opset (never NULL for a kernel kiln_portable_kernel_find returned). */
const kiln_arity *kiln_kernel_arity(const kiln_kernel *kernel, int opset);
/* Whether the op takes attribute a as it is: true when a's type is one the op's `attrs` allow,
   or when the op defines no attribute of that name (kiln ignores it). When false, expected (may
   be NULL) receives the accepted types for a message, e.g. "INTS or INT". */
bool kiln_kernel_attr_ok(const kiln_kernel *kernel, const kiln_attr *a, char *expected, size_t expected_size);
/* "INT", "FLOAT", "INTS", "FLOATS", "STRING", "TENSOR", "STRINGS"; "?" when out of range. */
const char *kiln_attr_type_name(kiln_attr_type type);

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
/* Bytes of data in a tensor whose shape was validated (kiln_tensor_size: block-quantized rows in
   whole blocks). */
size_t kiln_tensor_bytes(const kiln_tensor *t);
/* The bytes of t's data through *out, when its dims are non-negative, a block-quantized row is
   whole blocks and the byte count fits int64 (what kernels index with) and size_t; false when
   it does not (a model's shape, not a kernel's, so callers report KILN_ERROR_LIMIT naming the
   value). */
bool kiln_tensor_bytes_checked(const kiln_tensor *t, size_t *out);
/* "[2, 3]" (truncated to size, always NUL-terminated), for messages. */
void kiln_tensor_shape_text(const kiln_tensor *t, char *buf, size_t size);

/* ---- broadcasting (broadcast.c) ---- */
/* Multidirectional (numpy) broadcast of n shapes into out/out_rank. KILN_ERROR_SHAPE_MISMATCH
   when incompatible. */
kiln_status kiln_broadcast_shapes(const kiln_tensor *const *ts, size_t n, int64_t *out, uint32_t *out_rank);
/* Element strides of t broadcast to out_shape/out_rank (0 for broadcast dims), right-aligned. */
void kiln_broadcast_strides(const kiln_tensor *t, const int64_t *out_shape, uint32_t out_rank, int64_t *strides);

#endif /* KILN_KERNELS_PORTABLE_KERNEL_H */
