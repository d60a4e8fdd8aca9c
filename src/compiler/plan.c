/* plan.c — liveness and greedy best-fit placement of activations.
 *
 * Layer: compiler. Placement takes values in decreasing size (ties: earlier definition first)
 * and puts each at the lowest 64-byte-aligned offset that does not collide with an
 * already-placed value whose lifetime intersects; a classic heuristic that is near-optimal for
 * the chain-like graphs of CNNs and transformers and costs O(n^2) at compile time only.
 */
#define _GNU_SOURCE /* qsort_r */
#include "compiler/plan.h"

#include <stdlib.h>

#include "core/check.h"

static void mark_use(kiln_ir_value *v, int32_t pos)
{
    if (v->first_use < 0 || pos < v->first_use) v->first_use = pos;
    if (pos > v->last_use) v->last_use = pos;
}

void kiln_ir_eliminate_dead_nodes(kiln_ir_graph *g)
{
    bool *needed = KILN_ARENA_ARRAY(&g->arena, bool, g->n_values ? g->n_values : 1);
    if (!needed) return; /* keeping dead nodes is always correct */
    for (size_t i = 0; i < g->n_outputs; i++) needed[g->outputs[i]] = true;
    for (size_t k = g->n_nodes; k-- > 0;) {
        kiln_ir_node *n = &g->nodes[k];
        if (n->removed) continue;
        bool live = false;
        for (size_t j = 0; j < n->node.n_outputs; j++)
            if (n->outputs[j] >= 0 && needed[n->outputs[j]]) live = true;
        if (!live) {
            n->removed = true;
            continue;
        }
        for (size_t i = 0; i < n->node.n_inputs; i++)
            if (n->inputs[i] >= 0) needed[n->inputs[i]] = true;
    }
}

typedef struct placed {
    uint64_t offset, size;
    int32_t first, last;
} placed;

static int by_size_desc(const void *pa, const void *pb, void *ctx)
{
    const kiln_ir_graph *g = ctx;
    const kiln_ir_value *a = &g->values[*(const int32_t *)pa], *b = &g->values[*(const int32_t *)pb];
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->first_use != b->first_use) return a->first_use < b->first_use ? -1 : 1;
    return *(const int32_t *)pa - *(const int32_t *)pb;
}

static int by_offset(const void *pa, const void *pb)
{
    const placed *a = pa, *b = pb;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* 64-byte alignment without wrapping: false when x is within 63 of UINT64_MAX. */
static bool align_u64(uint64_t x, uint64_t *out)
{
    if (!kiln_add_u64(x, 63, out)) return false;
    *out &= ~(uint64_t)63;
    return true;
}

/* The lowest offset for v; false when it would pass 2^64 bytes. */
static bool place(placed *done, size_t n_done, const kiln_ir_value *v, uint64_t *out)
{
    uint64_t offset = 0, end;
    /* done[] is sorted by offset: walk it, bumping past every lifetime-overlapping block that
       the candidate range would hit. Every placed block's end fits (it was checked when placed). */
    for (size_t i = 0; i < n_done; i++) {
        const placed *p = &done[i];
        bool alive_together = !(p->last < v->first_use || v->last_use < p->first);
        if (!alive_together) continue;
        if (!kiln_add_u64(offset, v->size, &end)) return false;
        if (p->offset + p->size <= offset || end <= p->offset) continue;
        if (!align_u64(p->offset + p->size, &offset)) return false;
    }
    *out = offset;
    return true;
}

kiln_status kiln_ir_plan_memory(kiln_ir_graph *g, kiln_ir_plan *plan)
{
    kiln_ir_eliminate_dead_nodes(g);
    size_t n_live = 0;
    for (size_t k = 0; k < g->n_nodes; k++) n_live += !g->nodes[k].removed;
    plan->order = KILN_ARENA_ARRAY(&g->arena, int32_t, n_live ? n_live : 1);
    KILN_CHECK(plan->order, KILN_ERROR_OUT_OF_MEMORY);
    plan->n_instrs = 0;
    plan->scratch_size = 0;
    for (size_t k = 0; k < g->n_nodes; k++) {
        kiln_ir_node *n = &g->nodes[k];
        if (n->removed) continue;
        int32_t pos = (int32_t)plan->n_instrs;
        plan->order[plan->n_instrs++] = (int32_t)k;
        if (n->scratch_size > plan->scratch_size) plan->scratch_size = n->scratch_size;
        for (size_t i = 0; i < n->node.n_inputs; i++)
            if (n->inputs[i] >= 0) mark_use(&g->values[n->inputs[i]], pos);
        for (size_t j = 0; j < n->node.n_outputs; j++)
            if (n->outputs[j] >= 0) mark_use(&g->values[n->outputs[j]], pos);
    }
    int32_t end = (int32_t)plan->n_instrs;
    for (size_t i = 0; i < g->n_outputs; i++) mark_use(&g->values[g->outputs[i]], end);
    /* Inputs last: an input that is also a graph output must stay live from before the first
       instruction (mark_use would have read its -1 as "unused" and started it at `end`, letting
       a temporary share its bytes). */
    for (size_t i = 0; i < g->n_inputs; i++) {
        kiln_ir_value *v = &g->values[g->inputs[i]];
        v->first_use = -1; /* set before the first instruction, kept across executes */
        v->last_use = end;
    }

    int32_t *todo = KILN_ARENA_ARRAY(&g->arena, int32_t, g->n_values ? g->n_values : 1);
    placed *done = KILN_ARENA_ARRAY(&g->arena, placed, g->n_values ? g->n_values : 1);
    KILN_CHECK(todo && done, KILN_ERROR_OUT_OF_MEMORY);
    size_t n_todo = 0, n_done = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        kiln_ir_value *v = &g->values[i];
        if (v->is_const || !v->shape_known || v->last_use < 0) continue;
        size_t bytes;
        KILN_TRY(kiln_ir_tensor_size(g, &v->t, "value", v->name, &bytes));
        v->size = bytes;
        todo[n_todo++] = (int32_t)i;
    }
    qsort_r(todo, n_todo, sizeof *todo, by_size_desc, g);
    plan->arena_size = 0;
    for (size_t i = 0; i < n_todo; i++) {
        kiln_ir_value *v = &g->values[todo[i]];
        uint64_t end_offset;
        if (!place(done, n_done, v, &v->offset) || !kiln_add_u64(v->offset, v->size, &end_offset))
            return kiln_ir_fail(g, KILN_ERROR_LIMIT, "value '%s': the activations alive with it pass 2^64 bytes",
                                v->name);
        if (end_offset > plan->arena_size) plan->arena_size = end_offset;
        placed p = {v->offset, v->size, v->first_use, v->last_use};
        /* insert keeping done[] sorted by offset */
        size_t at = n_done;
        while (at > 0 && by_offset(&done[at - 1], &p) > 0) {
            done[at] = done[at - 1];
            at--;
        }
        done[at] = p;
        n_done++;
    }
    if (!align_u64(plan->arena_size, &plan->arena_size))
        return kiln_ir_fail(g, KILN_ERROR_LIMIT, "the activations pass 2^64 bytes");
    return KILN_OK;
}
