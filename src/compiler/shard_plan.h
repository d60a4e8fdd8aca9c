/* shard_plan.h — cutting a model into N shards (kiln_compile_shards) and writing each shard
 * back out as an ONNX model that the ordinary compiler pipeline compiles.
 *
 * Layer: compiler (internal). The plan works on the IR after import, inference, folding and
 * dead-node elimination. Its unit is the list of RUNTIME nodes (live, not folded) in node order,
 * which is topological; a cut at position c puts runtime nodes [.., c) before it and [c, ..)
 * after it, so every shard is a contiguous run and every value flows forward only:
 *
 *   runtime nodes   n0 n1 n2 | n3 n4 n5 n6 | n7 n8      (cuts at 3 and 7: 3 shards)
 *   shard inputs    the non-constant values its nodes read and did not produce (graph inputs,
 *                   or outputs of earlier shards), in first-use order
 *   shard outputs   the values it produces that a later shard or the graph's outputs read, in
 *                   production order
 *   shard consts    the constants its nodes read (weights, Constant nodes, values folded at
 *                   compile time — also those whose folded producer sits in an earlier shard);
 *                   each shard carries its own copy
 *
 * A cut is allowed only where every value crossing it has a static dtype and shape (a shard's
 * inputs are method inputs). Cuts are placed so the shards' constant bytes (their weights) are
 * as even as possible: cut k goes where the running weight total is nearest k/N of the whole,
 * and among equally good places, where the fewest bytes cross it.
 */
#ifndef KILN_COMPILER_SHARD_PLAN_H
#define KILN_COMPILER_SHARD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/ir.h"
#include "onnx/onnx.pb-c.h"

typedef struct kiln_shard {
    int32_t *nodes;             /* (n_nodes) IR node indices, in order; at least one */
    size_t n_nodes;
    int32_t *inputs;            /* (n_inputs) IR value indices */
    size_t n_inputs;
    int32_t *outputs;           /* (n_outputs) IR value indices; at least one */
    size_t n_outputs;
    int32_t *consts;            /* (n_consts) IR value indices of constants */
    size_t n_consts;
    uint64_t weight_bytes;      /* bytes of its consts */
} kiln_shard;

/* Where a shard input or a final output comes from. */
typedef struct kiln_shard_source {
    int32_t shard;              /* -1: the graph input `index`; else output `index` of that shard */
    size_t index;
} kiln_shard_source;

typedef struct kiln_shard_plan {
    kiln_shard *shards;         /* (n_shards) */
    size_t n_shards;
    kiln_shard_source **input_from; /* (n_shards) x (shards[i].n_inputs) */
    kiln_shard_source *output_from; /* (g->n_outputs) */
} kiln_shard_plan;

/* Cut g (imported, inferred and folded) into n_shards shards; everything from g's arena.
 * Marks dead nodes removed. KILN_ERROR_COMPILE_SPEC when the model has fewer places to cut
 * than needed (message says how many shards it can take), KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_shard_plan_make(kiln_ir_graph *g, size_t n_shards, kiln_shard_plan *out);

/* Serialize shard s of plan as an ONNX model: model's header and opsets, the shard's nodes
 * (model's own NodeProtos: IR node i is the i-th node of the model that is not a Constant),
 * its inputs and outputs with static types, and its constants as initializers. *out from the
 * allocator a. KILN_ERROR_MODEL if model and g do not correspond, KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_shard_to_onnx(const kiln_ir_graph *g, const Onnx__ModelProto *model, const kiln_shard *s,
                               size_t index, const kiln_allocator *a, void **out, size_t *out_size);

#endif
