/* shard_plan.c — choosing the cut points of a sharded model and each shard's nodes, inputs,
 * outputs and constants (see shard_plan.h for the rules).
 *
 * Layer: compiler. One pass over the runtime nodes gives, per cut position c (1..n-1): the
 * running weight before it, the bytes crossing it and how many crossing values lack a static
 * shape (difference arrays over each value's [producer + 1, last reader] range). Cuts are then
 * picked greedily, each keeping enough allowed positions after it for the cuts still to come,
 * so a model with at least N-1 allowed positions always gets its N shards.
 */
#include "compiler/shard_plan.h"

#include <math.h>
#include <string.h>

#include "compiler/plan.h"
#include "core/check.h"

typedef struct analysis {
    kiln_ir_graph *g;
    int32_t *runtime;           /* (n) IR node indices of the runtime nodes, in order */
    size_t n;
    int32_t *pos;               /* (g->n_nodes) runtime position, -1 for removed nodes */
    int32_t *last_read;         /* (g->n_values) last runtime position reading the value, -1 */
    bool *is_output;            /* (g->n_values) a graph output */
    uint64_t *weight;           /* (n + 1) constant bytes first read before position c */
    uint64_t *cross;            /* (n + 1) bytes crossing cut c */
    int64_t *dynamic;           /* (n + 1) crossing values without a static shape at cut c */
    size_t *allowed_after;      /* (n + 2) allowed cut positions > c */
} analysis;

static int32_t producer_pos(const analysis *an, const kiln_ir_value *v)
{
    return v->producer >= 0 ? an->pos[v->producer] : -1;
}

static kiln_status collect_runtime(analysis *an)
{
    kiln_ir_graph *g = an->g;
    kiln_arena *arena = &g->arena;
    an->runtime = KILN_ARENA_ARRAY(arena, int32_t, g->n_nodes + 1);
    an->pos = KILN_ARENA_ARRAY(arena, int32_t, g->n_nodes + 1);
    an->last_read = KILN_ARENA_ARRAY(arena, int32_t, g->n_values + 1);
    an->is_output = KILN_ARENA_ARRAY(arena, bool, g->n_values + 1);
    KILN_CHECK(an->runtime && an->pos && an->last_read && an->is_output, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t v = 0; v < g->n_values; v++) an->last_read[v] = -1;
    for (size_t k = 0; k < g->n_nodes; k++) {
        an->pos[k] = -1;
        if (g->nodes[k].removed) continue;
        an->pos[k] = (int32_t)an->n;
        an->runtime[an->n++] = (int32_t)k;
    }
    for (size_t p = 0; p < an->n; p++) {
        const kiln_ir_node *node = &g->nodes[an->runtime[p]];
        for (size_t i = 0; i < node->node.n_inputs; i++)
            if (node->inputs[i] >= 0) an->last_read[node->inputs[i]] = (int32_t)p;
    }
    for (size_t i = 0; i < g->n_outputs; i++) an->is_output[g->outputs[i]] = true;
    return KILN_OK;
}

/* Running weights, crossing bytes and dynamic crossings per cut position. */
static kiln_status measure_cuts(analysis *an)
{
    kiln_ir_graph *g = an->g;
    size_t n = an->n;
    an->weight = KILN_ARENA_ARRAY(&g->arena, uint64_t, n + 2);
    an->cross = KILN_ARENA_ARRAY(&g->arena, uint64_t, n + 2);
    an->dynamic = KILN_ARENA_ARRAY(&g->arena, int64_t, n + 2);
    bool *counted = KILN_ARENA_ARRAY(&g->arena, bool, g->n_values + 1);
    KILN_CHECK(an->weight && an->cross && an->dynamic && counted, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t p = 0; p < n; p++) {
        const kiln_ir_node *node = &g->nodes[an->runtime[p]];
        uint64_t w = 0;
        for (size_t i = 0; i < node->node.n_inputs; i++) {
            int32_t v = node->inputs[i];
            if (v < 0 || !g->values[v].is_const || counted[v]) continue;
            counted[v] = true;
            w += kiln_tensor_bytes(&g->values[v].t);
        }
        an->weight[p + 1] = an->weight[p] + w;
    }
    /* Difference arrays: value v crosses every cut c with producer < c <= last reader. */
    uint64_t *add = KILN_ARENA_ARRAY(&g->arena, uint64_t, n + 2), *sub = KILN_ARENA_ARRAY(&g->arena, uint64_t, n + 2);
    KILN_CHECK(add && sub, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t v = 0; v < g->n_values; v++) {
        const kiln_ir_value *val = &g->values[v];
        int32_t from = producer_pos(an, val);
        if (val->is_const || from < 0 || an->last_read[v] <= from) continue;
        bool fixed = val->typed && val->shape_known;
        uint64_t bytes = fixed ? kiln_tensor_bytes(&val->t) : 0;
        add[from + 1] += bytes;
        sub[an->last_read[v] + 1] += bytes;
        an->dynamic[from + 1] += !fixed;
        an->dynamic[an->last_read[v] + 1] -= !fixed;
    }
    uint64_t running = 0;
    for (size_t c = 1; c <= n; c++) {
        running = running + add[c] - sub[c];
        an->cross[c] = running;
        an->dynamic[c] += an->dynamic[c - 1];
    }
    return KILN_OK;
}

static bool cut_allowed(const analysis *an, size_t c) { return c >= 1 && c < an->n && an->dynamic[c] == 0; }

static kiln_status count_allowed(analysis *an, size_t *total)
{
    an->allowed_after = KILN_ARENA_ARRAY(&an->g->arena, size_t, an->n + 2);
    KILN_CHECK(an->allowed_after, KILN_ERROR_OUT_OF_MEMORY);
    an->allowed_after[an->n + 1] = 0;
    for (size_t c = an->n + 1; c-- > 0;) an->allowed_after[c] = an->allowed_after[c + 1] + cut_allowed(an, c + 1);
    *total = an->allowed_after[0];
    return KILN_OK;
}

/* Cut k of n_shards: the allowed position after `prev` nearest the k/N weight mark that leaves
   enough allowed positions for the remaining cuts; ties go to fewer crossing bytes, then earlier. */
static size_t pick_cut(const analysis *an, size_t prev, size_t k, size_t n_shards, bool by_weight)
{
    double total = by_weight ? (double)an->weight[an->n] : (double)an->n;
    double mark = total * (double)k / (double)n_shards;
    size_t best = 0;
    double best_gap = INFINITY;
    for (size_t c = prev + 1; c < an->n; c++) {
        if (!cut_allowed(an, c) || an->allowed_after[c] < n_shards - 1 - k) continue;
        double at = by_weight ? (double)an->weight[c] : (double)c;
        double gap = fabs(at - mark);
        if (gap < best_gap || (gap == best_gap && an->cross[c] < an->cross[best])) {
            best = c;
            best_gap = gap;
        }
    }
    return best;
}

/* ---- building the shards ------------------------------------------------------------------------ */

typedef struct builder {
    analysis *an;
    int32_t *stamp;             /* (n_values) 1 + index of the shard that last listed the value */
    int32_t *out_shard;         /* (n_values) shard whose outputs hold the value, -1 */
    size_t *out_index;          /* (n_values) its index there */
    int32_t *input_index;       /* (n_values) graph-input position, -1 */
} builder;

static kiln_status build_shard(builder *b, size_t index, size_t begin, size_t end, bool last, kiln_shard *s)
{
    kiln_ir_graph *g = b->an->g;
    size_t max_in = 0, max_out = 0;
    for (size_t p = begin; p < end; p++) {
        max_in += g->nodes[b->an->runtime[p]].node.n_inputs;
        max_out += g->nodes[b->an->runtime[p]].node.n_outputs;
    }
    if (last) max_out += g->n_outputs, max_in += g->n_outputs;
    memset(s, 0, sizeof *s);
    s->nodes = KILN_ARENA_ARRAY(&g->arena, int32_t, end - begin);
    s->inputs = KILN_ARENA_ARRAY(&g->arena, int32_t, max_in + 1);
    s->consts = KILN_ARENA_ARRAY(&g->arena, int32_t, max_in + 1);
    s->outputs = KILN_ARENA_ARRAY(&g->arena, int32_t, max_out + 1);
    KILN_CHECK(s->nodes && s->inputs && s->consts && s->outputs, KILN_ERROR_OUT_OF_MEMORY);
    int32_t tag = (int32_t)index + 1;
    for (size_t p = begin; p < end; p++) {
        const kiln_ir_node *node = &g->nodes[b->an->runtime[p]];
        s->nodes[s->n_nodes++] = b->an->runtime[p];
        for (size_t i = 0; i < node->node.n_inputs; i++) {
            int32_t v = node->inputs[i];
            if (v < 0 || b->stamp[v] == tag || producer_pos(b->an, &g->values[v]) >= (int32_t)begin) continue;
            b->stamp[v] = tag;
            if (g->values[v].is_const) {
                s->consts[s->n_consts++] = v;
                s->weight_bytes += kiln_tensor_bytes(&g->values[v].t);
            } else {
                s->inputs[s->n_inputs++] = v;
            }
        }
        for (size_t j = 0; j < node->node.n_outputs; j++) {
            int32_t v = node->outputs[j];
            if (v < 0 || !(b->an->is_output[v] || b->an->last_read[v] >= (int32_t)end)) continue;
            b->out_shard[v] = (int32_t)index;
            b->out_index[v] = s->n_outputs;
            s->outputs[s->n_outputs++] = v;
        }
    }
    /* A constant graph output has no producer to run: the last shard hands it out. */
    for (size_t i = 0; last && i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        if (!g->values[v].is_const || b->out_shard[v] >= 0) continue;
        if (b->stamp[v] != tag) {
            b->stamp[v] = tag;
            s->consts[s->n_consts++] = v;
        }
        b->out_shard[v] = (int32_t)index;
        b->out_index[v] = s->n_outputs;
        s->outputs[s->n_outputs++] = v;
    }
    return KILN_OK;
}

static kiln_status source_of(const builder *b, int32_t v, kiln_shard_source *out)
{
    if (b->out_shard[v] >= 0) *out = (kiln_shard_source){b->out_shard[v], b->out_index[v]};
    else if (b->input_index[v] >= 0) *out = (kiln_shard_source){-1, (size_t)b->input_index[v]};
    else
        return kiln_ir_fail(b->an->g, KILN_ERROR_MODEL, "sharding: value '%s' has no source", b->an->g->values[v].name);
    return KILN_OK;
}

static kiln_status build_plan(analysis *an, const size_t *cuts, size_t n_shards, kiln_shard_plan *plan)
{
    kiln_ir_graph *g = an->g;
    size_t nv = g->n_values + 1;
    builder b = {an, KILN_ARENA_ARRAY(&g->arena, int32_t, nv), KILN_ARENA_ARRAY(&g->arena, int32_t, nv),
                 KILN_ARENA_ARRAY(&g->arena, size_t, nv), KILN_ARENA_ARRAY(&g->arena, int32_t, nv)};
    plan->shards = KILN_ARENA_ARRAY(&g->arena, kiln_shard, n_shards);
    plan->input_from = KILN_ARENA_ARRAY(&g->arena, kiln_shard_source *, n_shards);
    plan->output_from = KILN_ARENA_ARRAY(&g->arena, kiln_shard_source, g->n_outputs + 1);
    KILN_CHECK(b.stamp && b.out_shard && b.out_index && b.input_index && plan->shards && plan->input_from &&
                   plan->output_from, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t v = 0; v < g->n_values; v++) b.out_shard[v] = b.input_index[v] = -1;
    for (size_t i = 0; i < g->n_inputs; i++) b.input_index[g->inputs[i]] = (int32_t)i;
    plan->n_shards = n_shards;
    for (size_t i = 0; i < n_shards; i++) {
        kiln_shard *s = &plan->shards[i];
        KILN_TRY(build_shard(&b, i, cuts[i], cuts[i + 1], i + 1 == n_shards, s));
        plan->input_from[i] = KILN_ARENA_ARRAY(&g->arena, kiln_shard_source, s->n_inputs + 1);
        KILN_CHECK(plan->input_from[i], KILN_ERROR_OUT_OF_MEMORY);
        for (size_t j = 0; j < s->n_inputs; j++) KILN_TRY(source_of(&b, s->inputs[j], &plan->input_from[i][j]));
    }
    for (size_t j = 0; j < g->n_outputs; j++) KILN_TRY(source_of(&b, g->outputs[j], &plan->output_from[j]));
    return KILN_OK;
}

kiln_status kiln_shard_plan_make(kiln_ir_graph *g, size_t n_shards, kiln_shard_plan *out)
{
    memset(out, 0, sizeof *out);
    KILN_CHECK(n_shards >= 1, KILN_ERROR_INVALID_ARGUMENT);
    kiln_ir_eliminate_dead_nodes(g);
    analysis an = {.g = g};
    KILN_TRY(collect_runtime(&an));
    KILN_TRY(measure_cuts(&an));
    size_t allowed;
    KILN_TRY(count_allowed(&an, &allowed));
    if (an.n == 0 || allowed + 1 < n_shards)
        return kiln_ir_fail(g, KILN_ERROR_COMPILE_SPEC,
                            "cannot cut the model into %zu shards: it has %zu runtime nodes and %zu places where every "
                            "value crossing the cut has a static shape, so at most %zu shards; ask for fewer",
                            n_shards, an.n, allowed, an.n ? allowed + 1 : 0);
    size_t *cuts = KILN_ARENA_ARRAY(&g->arena, size_t, n_shards + 1);
    KILN_CHECK(cuts, KILN_ERROR_OUT_OF_MEMORY);
    bool by_weight = an.weight[an.n] > 0;
    cuts[0] = 0;
    cuts[n_shards] = an.n;
    for (size_t k = 1; k < n_shards; k++) {
        cuts[k] = pick_cut(&an, cuts[k - 1], k, n_shards, by_weight);
        if (KILN_NEVER(cuts[k] == 0)) return KILN_ERROR_INTERNAL; /* count_allowed guarantees a place */
    }
    return build_plan(&an, cuts, n_shards, out);
}
