/* aot_fuse.h — the lowering's state, shared by aot_lower.c (steps and tensors) and aot_fuse.c
 * (growing a node's step over the nodes after it).
 *
 * Layer: backends/cpu/aot (internal). A fusion may only take a node whose every input is a
 * constant or a value the growing step already computes, and only values nobody else reads
 * (one use inside the partition, not a partition output) disappear, so the fused step, emitted
 * at the first node's position, computes exactly what the nodes did.
 */
#ifndef KILN_BACKENDS_CPU_AOT_AOT_FUSE_H
#define KILN_BACKENDS_CPU_AOT_AOT_FUSE_H

#include "backends/cpu/aot/aot_lower.h"

#define AOT_MAX_NODE_ARGS 64 /* the partitioner's NODE_MAX_ARGS: DenseNet's Concats reach 25 inputs */

/* A deferred Transpose (aot_views.c): its output as the source value read at element strides,
 * dim by dim (the simplified transpose's output dims), and the step that computes it should a
 * reader need the tensor after all. */
typedef struct aot_view {
    bool pending;           /* no tensor yet */
    int32_t source;         /* the value the Transpose reads */
    size_t node;            /* the Transpose */
    aot_step_desc step;     /* its TRANSPOSE step */
    uint32_t rank;
    int64_t size[KILN_CPU_MAX_RANK], stride[KILN_CPU_MAX_RANK];
} aot_view;

typedef struct aot_lowering {
    const kiln_cpu_aot_graph *g;
    kiln_arena *arena;
    aot_graph *out;
    int32_t *value_tensor;  /* (n_values) tensor holding each value, -1 while none */
    uint32_t *uses;         /* (n_values) node input slots reading it inside the partition */
    bool *is_output;        /* (n_values) listed in g->outputs */
    bool *absorbed;         /* (n_nodes) fused into an earlier node's step */
    bool *ready;            /* (n_values) computed by a step emitted so far, or a graph input */
    aot_view **views;       /* (n_values) deferred Transposes, by the value they write; NULL */
    int32_t *place_root;    /* (n_values) the value whose bytes hold this one (aot_lower_data.c), -1 */
    uint64_t *place_offset; /* (n_values) where in them, bytes */
    int32_t *root_buffer;   /* (n_values) the buffer of a value others are placed in, -1 while none */
    size_t cap_tensors, cap_buffers;
    bool bf16;              /* precision bf16: GEMMs with a packed constant B store it as bf16 */
    bool classical_gemm;    /* no Strassen level for large GEMMs (KILN_CTX_SPEC_NO_STRASSEN) */
    char *message;
    size_t message_size;
} aot_lowering;

/* The tensors a node sees: constants with data, everything else shape only; outputs nobody
 * reads are NULL (output 0 is always given: a step needs somewhere to write). */
typedef struct aot_node_view {
    const kiln_node *node;
    const kiln_tensor *in[AOT_MAX_NODE_ARGS];
    const kiln_tensor *out[AOT_MAX_NODE_ARGS];
} aot_node_view;

void aot_view_node(const aot_lowering *L, size_t k, aot_node_view *v);

/* Grow node k's step d over the nodes it can take, in this order: a BatchNormalization into a
 * Conv's filters; a constant bias Add and constant scalar Mul/Div into a GEMM's bias, alpha and
 * beta, or an Add of a ready tensor of the output's shape as a full bias; then one activation
 * into the epilogue: a single activation node, x * sigmoid(x) (SiLU),
 * or the erf form of GELU; a Sigmoid followed by Mul with its own input becomes SiLU. *y is
 * the value the step writes, moved to the last node taken. */
void aot_fuse_node(aot_lowering *L, size_t k, aot_step_desc *d, int32_t *y);

/* Node k's step d is a Transpose into y that only MatMul / Gemm nodes read: record the view
 * instead of a step (true; y counts as ready). */
bool aot_defer_transpose(aot_lowering *L, size_t k, const aot_step_desc *d, int32_t y);

/* A GEMM step's A and B that are deferred Transposes of the operand's exact shape read the
 * source through strides (lda/ldb, batch strides, trans flags) instead. Views it cannot take stay
 * pending; the lowering emits their steps before it binds the operand. */
void aot_take_views(aot_lowering *L, aot_step_desc *d);

/* ---- steps and tensors (aot_lower.c), for the lowerings of aot_lower_data.c ---- */
int32_t aot_add_tensor(aot_lowering *L, const kiln_tensor *shape, uint8_t kind);
void aot_touch_buffer(aot_lowering *L, int32_t tensor, int32_t step);
/* A buffer of size bytes, first touched by `step`; -1 past the buffer capacity. */
int32_t aot_new_buffer(aot_lowering *L, uint64_t size, int32_t step);
/* A scratch tensor of shape at byte `offset` of buffer `buffer`, or in a new buffer of its own
   (buffer < 0, offset 0), first touched by `step`. -1 past the tensor capacity. */
int32_t aot_new_scratch(aot_lowering *L, const kiln_tensor *shape, int32_t buffer, uint64_t offset, int32_t step);
/* One step of node k from d, writing tensor `out`, or, when out < 0, value y's tensor (created
   after d's inputs are bound, in its placement when it has one). */
kiln_status aot_emit_step(aot_lowering *L, size_t k, const aot_step_desc *d, int32_t y, int32_t out);

/* ---- the data-movement lowerings (aot_lower_data.c) ---- */
/* Steps and tensors the nodes of g may need beyond one step and 1 + AOT_MAX_STEP_INPUTS
   tensors each (a Concat chain, a Split's outputs). */
size_t aot_data_extra(const kiln_cpu_aot_graph *g);
/* Before any node is lowered: lay Concat inputs out inside the Concat's output where the bytes
   line up, so their producers write there and the CONCAT step finds them in place. */
void aot_place_concats(aot_lowering *L);
bool aot_is_placed(const aot_lowering *L, int32_t v);
/* The scratch tensor for value v, written first by `step`: in its placement, or its own. */
int32_t aot_value_scratch(aot_lowering *L, int32_t v, int32_t step);
/* A SLICE step d into y that reads one contiguous run of a scratch tensor: y's tensor becomes
   that run (the step then finds its output in place). Nothing otherwise. */
void aot_place_slice(aot_lowering *L, const aot_step_desc *d, int32_t y);
/* Concat and Split, whose operands or outputs outnumber one step description: true for them,
   and aot_lower_data_node emits their steps. */
bool aot_is_data_node(const aot_lowering *L, size_t k);
kiln_status aot_lower_data_node(aot_lowering *L, size_t k);

#endif
