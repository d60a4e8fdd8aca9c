/* partition.h — moving the nodes a compile-time backend supports into delegate calls.
 *
 * Layer: compiler. Depends on the IR and on the compile-time backend interface
 * (compiler_backend.h: supports + compile), which sees a neutral description of each
 * partition, never the IR. Runs after kiln_ir_infer_and_fold and
 * before planning.
 *
 * A partition is a maximal run of consecutive live nodes (in node order, which is topological,
 * so a contiguous run is convex: no path leaves it and comes back) that the backend accepts with
 * static shapes throughout (a node an earlier backend took is a delegate call, which no backend
 * takes). Its inputs are the non-constant values it reads from outside, in
 * first-use order; its outputs the values it produces that a later node or the graph's outputs
 * read, in production order. The run is replaced by ONE delegate node (op = the backend's name,
 * payload = what its compile returned) at the position of its first node; the others are removed, and the values
 * internal to the run no longer exist for the planner.
 *
 * Finding and replacing are separate steps so that partition i of several methods can later be
 * compiled together into one multi-graph binary (weight sharing): find every method's
 * partitions, compile matching ones with one kiln_cpu_aot_compile call, then replace each.
 */
#ifndef KILN_COMPILER_PARTITION_H
#define KILN_COMPILER_PARTITION_H

#include "compiler/compiler_backend.h"
#include "compiler/ir.h"
#include "kiln/compiler.h"

typedef struct kiln_ir_partition {
    int32_t *nodes;             /* (n_nodes) IR node indices, in order */
    size_t n_nodes;
    int32_t *value_of;          /* (graph.n_values) IR value index of each partition value */
    kiln_backend_graph graph;   /* the backend's view; every array lives in the IR arena */
} kiln_ir_partition;

/* Every partition of g that backend supports (dead nodes are eliminated first), named after
 * method for the graphs. Arrays from g's arena. KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_ir_partition_find(kiln_ir_graph *g, const kiln_compiler_backend *backend, const char *method,
                                   kiln_ir_partition **out, size_t *n_out);

/* Replace partition p's nodes by one delegate node calling `backend` with payload (allocated
 * from g->allocator; the graph takes it in every case). index numbers the delegate's name.
 * KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_ir_partition_replace(kiln_ir_graph *g, const kiln_ir_partition *p, size_t index, const char *backend,
                                      void *payload, size_t payload_size);

/* Find, compile (one payload per partition, with the normal-form spec the backend's
 * validate_spec wrote; payloads from g's allocator) and replace. Failures are reported through
 * kiln_ir_fail. */
kiln_status kiln_ir_delegate(kiln_ir_graph *g, const char *method, const kiln_compiler_backend *backend,
                             const kiln_compile_kv *spec, size_t n_spec);

/* Weight sharing: find every method's partitions first, then compile partition i of all n
 * methods together into ONE payload holding a graph per method (named after it, over one
 * weight pool), and replace partition i of each method by a call to it. The graphs must all
 * live until the program is finished (graphs[0] owns the binaries). The methods must partition
 * alike: different partition counts are KILN_ERROR_COMPILE_SPEC saying so. Partitions that read
 * one large constant (a tied LLM classifier: the Embed partition and the logits) are compiled
 * into one payload too, a graph per method and call named `<method>/<backend>_partition_<i>`
 * (the run-time backend picks it by the instruction's name), so the constant is stored once. A
 * partition (or such a group) some target cannot run stays portable in every method. */
kiln_status kiln_ir_delegate_shared(kiln_ir_graph *graphs, const kiln_compile_method *methods, size_t n,
                                    const kiln_compiler_backend *backend, const kiln_compile_kv *spec, size_t n_spec);

#endif
