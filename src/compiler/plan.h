/* plan.h — dead-code elimination, lifetimes and activation-memory planning.
 *
 * Layer: compiler. After kiln_ir_plan, every value a live node touches has first_use/last_use
 * (instruction positions; -1 = live from before the first instruction, n_instrs = live after the
 * last) and, if its shape is static, an arena offset and size. The plan is what the runtime
 * verifies at load; it never re-plans.
 *
 * Arena map (one method; offsets 64-byte aligned, values whose lifetimes overlap never overlap
 * in memory; inputs and outputs are live for the whole execution):
 *
 *   0                                                          arena_size
 *   | input 0 | input 1 | out 0 | t3 ... t7 (reused) | t4 ... |
 */
#ifndef KILN_COMPILER_PLAN_H
#define KILN_COMPILER_PLAN_H

#include "compiler/ir.h"

typedef struct kiln_ir_plan {
    int32_t *order;         /* (n_instrs) node indices of the live nodes, in execution order */
    size_t n_instrs;
    uint64_t arena_size;
    uint64_t scratch_size;  /* max over instructions */
} kiln_ir_plan;

/* Mark removed every node none of whose outputs reaches a graph output (the partitioner runs
 * it first too, so dead nodes never end up inside a delegate). Delegate calls are planned like
 * any node: their inputs and outputs are values; what happens inside is the backend's. */
void kiln_ir_eliminate_dead_nodes(kiln_ir_graph *g);
kiln_status kiln_ir_plan_memory(kiln_ir_graph *g, kiln_ir_plan *plan);

#endif
