/* aot_lower.h — a partition graph lowered to steps over tensors, before any target is chosen.
 *
 * Layer: backends/cpu/aot (internal). aot_lower.c builds it from a kiln_cpu_aot_graph (fusing
 * activations, folding BatchNormalization, aliasing reshapes); aot_plan.c places its scratch
 * buffers; aot_target.c turns it into one record per target (packing weights, sizing workspace);
 * ctxbin_writer.c writes it. Everything lives in the arena passed to aot_lower_graph.
 *
 * Tensors [0, n_inputs) are the graph inputs and [n_inputs, n_inputs + n_outputs) its outputs,
 * in the partition's order, as the context binary requires. Each scratch tensor has its own
 * buffer; a reshape whose output is an intermediate makes no tensor, it reuses its input's.
 */
#ifndef KILN_BACKENDS_CPU_AOT_AOT_LOWER_H
#define KILN_BACKENDS_CPU_AOT_AOT_LOWER_H

#include "backends/cpu/aot/aot_ops.h"
#include "backends/cpu/aot/cpu_aot.h"
#include "backends/cpu/cpu_format.h"

typedef struct aot_tensor {
    kiln_tensor t;          /* dtype, rank, shape; data unused */
    uint8_t kind;           /* kiln_ctx_tensor_kind */
    uint32_t io_index;      /* INPUT / OUTPUT: position in the graph's inputs / outputs */
    int32_t buffer;         /* SCRATCH: buffer index */
    uint64_t buffer_offset; /* SCRATCH: bytes into the buffer (64-aligned): a tensor the lowering
                               laid out inside another, e.g. a Concat input (aot_lower_data.c) */
    aot_operand weight;     /* WEIGHT: source bytes and form */
} aot_tensor;

typedef struct aot_buffer {
    uint64_t size;          /* bytes */
    int32_t first, last;    /* steps that write it first and read it last */
    uint64_t offset;        /* placed by aot_plan_scratch, 64-aligned */
} aot_buffer;

typedef struct aot_step {
    uint32_t op;
    uint16_t n_inputs, n_outputs;
    int32_t tensors[KILN_CPU_MAX_STEP_TENSORS]; /* inputs then outputs, -1 = absent */
    aot_params params;
} aot_step;

typedef struct aot_graph {
    const char *name;
    uint32_t n_inputs, n_outputs;
    aot_tensor *tensors;    /* (n_tensors) */
    size_t n_tensors;
    aot_step *steps;        /* (n_steps) in execution order */
    size_t n_steps;
    aot_buffer *buffers;    /* (n_buffers) */
    size_t n_buffers;
    uint64_t intermediates_size; /* end of the placed buffers, 64-aligned (aot_plan_scratch) */
} aot_graph;

/* Lower g into *out, every allocation from arena; precision (kiln_ctx_precision) bf16 stores the
 * GEMMs' packed constant B as bf16 pairs; spec_flags with KILN_CTX_SPEC_NO_STRASSEN keeps every
 * GEMM classical. KILN_ERROR_NOT_SUPPORTED (a node the backend
 * does not take; message names it), KILN_ERROR_INVALID_ARGUMENT (malformed graph),
 * KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT. */
kiln_status aot_lower_graph(const kiln_cpu_aot_graph *g, uint32_t precision, uint32_t spec_flags, kiln_arena *arena,
                            aot_graph *out, char *message, size_t message_size);

/* Give every buffer an offset: lowest 64-aligned place clear of every buffer alive at the same
 * time (largest first). Sets intermediates_size. KILN_ERROR_LIMIT on overflow. */
kiln_status aot_plan_scratch(aot_graph *g, kiln_arena *arena);

#endif
