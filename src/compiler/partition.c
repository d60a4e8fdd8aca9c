/* partition.c — the partitioner: runs of nodes a backend supports become its delegate calls.
 *
 * Layer: compiler (see partition.h for the rules). A run consisting only of reshapes (Reshape,
 * Flatten, Squeeze, Unsqueeze, Identity, Dropout) is left portable: it would make a delegate
 * call to copy bytes the portable kernels copy just as fast. A run whose inputs or outputs pass
 * PARTITION_MAX_IO is split in halves until each part fits what an instruction may carry.
 */
#include "compiler/partition.h"

#include <stdio.h>
#include <string.h>

#include "compiler/plan.h"
#include "core/alloc.h"
#include "core/check.h"

#define PARTITION_MAX_IO 64
#define NODE_MAX_ARGS 64

typedef struct finder {
    kiln_ir_graph *g;
    const kiln_compiler_backend *backend;
    const char *method;
    uint32_t *uses;             /* (n_values) input slots of live nodes reading the value */
    uint32_t *uses_inside;      /* (n_values) of those, inside the run being built */
    uint32_t *stamp;            /* (n_values) run id that last mapped the value */
    int32_t *local;             /* (n_values) its index in that run's partition */
    bool *is_graph_output;      /* (n_values) */
    uint32_t run_id;
    kiln_ir_partition *parts;   /* (cap_parts) */
    size_t n_parts, cap_parts;
} finder;

static bool value_used(const finder *f, int32_t v) { return v >= 0 && (f->uses[v] > 0 || f->is_graph_output[v]); }

/* ---- which nodes ------------------------------------------------------------------------------- */

static bool only_moves_bytes(const kiln_node *node)
{
    static const char *const reshapes[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"};
    for (size_t i = 0; i < sizeof reshapes / sizeof reshapes[0]; i++)
        if (strcmp(node->op, reshapes[i]) == 0) return true;
    return false;
}

/* Static shapes everywhere and the backend takes the node. Tensors are copied so that only
   constants carry data. */
static bool eligible(const finder *f, const kiln_ir_node *n)
{
    if (n->removed || !n->kernel || n->payload || n->node.n_inputs > NODE_MAX_ARGS || n->node.n_outputs > NODE_MAX_ARGS)
        return false;
    kiln_tensor in_t[NODE_MAX_ARGS], out_t[NODE_MAX_ARGS];
    const kiln_tensor *in[NODE_MAX_ARGS] = {0}, *out[NODE_MAX_ARGS] = {0};
    for (size_t i = 0; i < n->node.n_inputs; i++) {
        if (n->inputs[i] < 0) continue;
        const kiln_ir_value *v = &f->g->values[n->inputs[i]];
        if (!v->typed || !v->shape_known) return false;
        in_t[i] = v->t;
        if (!v->is_const) in_t[i].data = NULL;
        in[i] = &in_t[i];
    }
    for (size_t j = 0; j < n->node.n_outputs; j++) {
        if (!value_used(f, n->outputs[j])) continue;
        const kiln_ir_value *v = &f->g->values[n->outputs[j]];
        if (!v->typed || !v->shape_known || v->is_const) return false;
        out_t[j] = v->t;
        out_t[j].data = NULL;
        out[j] = &out_t[j];
    }
    return f->backend->supports(&n->node, in, out);
}

/* ---- building one partition ------------------------------------------------------------------ */

static kiln_status map_value(finder *f, kiln_ir_partition *p, kiln_backend_value *values, int32_t v, int32_t *out)
{
    if (f->stamp[v] != f->run_id) {
        f->stamp[v] = f->run_id;
        f->local[v] = (int32_t)p->graph.n_values;
        const kiln_ir_value *iv = &f->g->values[v];
        kiln_backend_value *pv = &values[p->graph.n_values];
        pv->t = iv->t;
        pv->is_const = iv->is_const;
        if (!iv->is_const) pv->t.data = NULL;
        p->value_of[p->graph.n_values++] = v;
    }
    *out = f->local[v];
    return KILN_OK;
}

/* Partition of the live nodes nodes[0..n): maps values, lists inputs in first-use order and
   outputs in production order. */
static kiln_status build(finder *f, const int32_t *nodes, size_t n, kiln_ir_partition *p)
{
    kiln_ir_graph *g = f->g;
    kiln_arena *arena = &g->arena;
    size_t max_values = 0;
    for (size_t k = 0; k < n; k++) max_values += g->nodes[nodes[k]].node.n_inputs + g->nodes[nodes[k]].node.n_outputs;
    memset(p, 0, sizeof *p);
    p->nodes = KILN_ARENA_ARRAY(arena, int32_t, n);
    p->n_nodes = n;
    p->value_of = KILN_ARENA_ARRAY(arena, int32_t, max_values + 1);
    kiln_backend_value *values = KILN_ARENA_ARRAY(arena, kiln_backend_value, max_values + 1);
    kiln_backend_node *pnodes = KILN_ARENA_ARRAY(arena, kiln_backend_node, n);
    int32_t *inputs = KILN_ARENA_ARRAY(arena, int32_t, max_values + 1);
    int32_t *outputs = KILN_ARENA_ARRAY(arena, int32_t, max_values + 1);
    KILN_CHECK(p->nodes && p->value_of && values && pnodes && inputs && outputs, KILN_ERROR_OUT_OF_MEMORY);
    memcpy(p->nodes, nodes, n * sizeof *nodes);
    f->run_id++;
    for (size_t k = 0; k < n; k++) {
        const kiln_ir_node *node = &g->nodes[nodes[k]];
        int32_t *ins = KILN_ARENA_ARRAY(arena, int32_t, node->node.n_inputs + 1);
        int32_t *outs = KILN_ARENA_ARRAY(arena, int32_t, node->node.n_outputs + 1);
        KILN_CHECK(ins && outs, KILN_ERROR_OUT_OF_MEMORY);
        for (size_t i = 0; i < node->node.n_inputs; i++) {
            int32_t v = node->inputs[i];
            ins[i] = -1;
            if (v < 0) continue;
            bool outside = f->stamp[v] != f->run_id;
            KILN_TRY(map_value(f, p, values, v, &ins[i]));
            if (outside && !g->values[v].is_const) inputs[p->graph.n_inputs++] = ins[i];
            f->uses_inside[v]++;
        }
        for (size_t j = 0; j < node->node.n_outputs; j++) {
            int32_t v = node->outputs[j];
            outs[j] = -1;
            if (value_used(f, v)) KILN_TRY(map_value(f, p, values, v, &outs[j]));
        }
        pnodes[k] = (kiln_backend_node){&node->node, ins, outs};
    }
    /* Outputs: produced here and read by someone after the run (or by the caller). */
    for (size_t k = 0; k < n; k++) {
        const kiln_ir_node *node = &g->nodes[nodes[k]];
        for (size_t j = 0; j < node->node.n_outputs; j++) {
            int32_t v = node->outputs[j];
            if (value_used(f, v) && (f->is_graph_output[v] || f->uses_inside[v] < f->uses[v]))
                outputs[p->graph.n_outputs++] = f->local[v];
        }
    }
    for (size_t i = 0; i < p->graph.n_values; i++) f->uses_inside[p->value_of[i]] = 0;
    p->graph = (kiln_backend_graph){f->method, values, p->graph.n_values, pnodes, n, inputs, p->graph.n_inputs,
                                    outputs, p->graph.n_outputs};
    return KILN_OK;
}

static kiln_status add_partition(finder *f, const kiln_ir_partition *p)
{
    if (f->n_parts == f->cap_parts) {
        size_t cap = f->cap_parts ? 2 * f->cap_parts : 16;
        kiln_ir_partition *parts = KILN_ARENA_ARRAY(&f->g->arena, kiln_ir_partition, cap);
        KILN_CHECK(parts, KILN_ERROR_OUT_OF_MEMORY);
        if (f->n_parts) memcpy(parts, f->parts, f->n_parts * sizeof *parts);
        f->parts = parts;
        f->cap_parts = cap;
    }
    f->parts[f->n_parts++] = *p;
    return KILN_OK;
}

/* A run of live eligible nodes: one partition, or two halves (recursively) when its inputs or
   outputs would not fit one instruction. */
static kiln_status take_run(finder *f, const int32_t *nodes, size_t n)
{
    bool all_reshapes = true;
    for (size_t k = 0; k < n && all_reshapes; k++) all_reshapes = only_moves_bytes(&f->g->nodes[nodes[k]].node);
    if (n == 0 || all_reshapes) return KILN_OK;
    kiln_ir_partition p;
    KILN_TRY(build(f, nodes, n, &p));
    if (p.graph.n_outputs == 0) return KILN_OK; /* cannot happen after dead-node elimination */
    if (p.graph.n_inputs <= PARTITION_MAX_IO && p.graph.n_outputs <= PARTITION_MAX_IO) return add_partition(f, &p);
    if (n == 1) return KILN_OK; /* a single node too wide for an instruction stays portable */
    KILN_TRY(take_run(f, nodes, n / 2));
    return take_run(f, nodes + n / 2, n - n / 2);
}

static kiln_status count_uses(finder *f)
{
    kiln_ir_graph *g = f->g;
    size_t nv = g->n_values ? g->n_values : 1;
    f->uses = KILN_ARENA_ARRAY(&g->arena, uint32_t, nv);
    f->uses_inside = KILN_ARENA_ARRAY(&g->arena, uint32_t, nv);
    f->stamp = KILN_ARENA_ARRAY(&g->arena, uint32_t, nv);
    f->local = KILN_ARENA_ARRAY(&g->arena, int32_t, nv);
    f->is_graph_output = KILN_ARENA_ARRAY(&g->arena, bool, nv);
    KILN_CHECK(f->uses && f->uses_inside && f->stamp && f->local && f->is_graph_output, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t k = 0; k < g->n_nodes; k++) {
        const kiln_ir_node *n = &g->nodes[k];
        if (n->removed) continue;
        for (size_t i = 0; i < n->node.n_inputs; i++)
            if (n->inputs[i] >= 0) f->uses[n->inputs[i]]++;
    }
    for (size_t i = 0; i < g->n_outputs; i++) f->is_graph_output[g->outputs[i]] = true;
    return KILN_OK;
}

kiln_status kiln_ir_partition_find(kiln_ir_graph *g, const kiln_compiler_backend *backend, const char *method,
                                   kiln_ir_partition **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    kiln_ir_eliminate_dead_nodes(g);
    finder f = {.g = g, .backend = backend, .method = method};
    KILN_TRY(count_uses(&f));
    int32_t *run = KILN_ARENA_ARRAY(&g->arena, int32_t, g->n_nodes ? g->n_nodes : 1);
    KILN_CHECK(run, KILN_ERROR_OUT_OF_MEMORY);
    size_t n_run = 0;
    for (size_t k = 0; k < g->n_nodes; k++) {
        const kiln_ir_node *n = &g->nodes[k];
        if (n->removed) continue; /* folded or dead: not executed, so it does not break a run */
        if (eligible(&f, n)) {
            run[n_run++] = (int32_t)k;
            continue;
        }
        KILN_TRY(take_run(&f, run, n_run));
        n_run = 0;
    }
    KILN_TRY(take_run(&f, run, n_run));
    *out = f.parts;
    *n_out = f.n_parts;
    return KILN_OK;
}

/* Replace p's nodes by one delegate node over payload, which the caller keeps alive as long as g. */
static kiln_status replace_nodes(kiln_ir_graph *g, const kiln_ir_partition *p, size_t index, const char *backend,
                                 const void *payload, size_t payload_size)
{
    const kiln_backend_graph *pg = &p->graph;
    int32_t *inputs = KILN_ARENA_ARRAY(&g->arena, int32_t, pg->n_inputs + 1);
    int32_t *outputs = KILN_ARENA_ARRAY(&g->arena, int32_t, pg->n_outputs + 1);
    char name[48];
    snprintf(name, sizeof name, "%s_partition_%zu", backend, index);
    const char *name_copy = kiln_arena_strdup(&g->arena, name);
    KILN_CHECK(inputs && outputs && name_copy, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < pg->n_inputs; i++) inputs[i] = p->value_of[pg->inputs[i]];
    for (size_t i = 0; i < pg->n_outputs; i++) outputs[i] = p->value_of[pg->outputs[i]];
    int32_t at = p->nodes[0];
    for (size_t k = 1; k < p->n_nodes; k++) g->nodes[p->nodes[k]].removed = true;
    kiln_ir_node *d = &g->nodes[at];
    d->node = (kiln_node){.op = backend, .name = name_copy, .opset = g->opset, .n_inputs = pg->n_inputs,
                          .n_outputs = pg->n_outputs};
    d->inputs = inputs;
    d->outputs = outputs;
    d->kernel = NULL;
    d->scratch_size = 0;
    d->payload = payload;
    d->payload_size = payload_size;
    for (size_t i = 0; i < pg->n_outputs; i++) g->values[outputs[i]].producer = at;
    return KILN_OK;
}

kiln_status kiln_ir_partition_replace(kiln_ir_graph *g, const kiln_ir_partition *p, size_t index, const char *backend,
                                      void *payload, size_t payload_size)
{
    KILN_TRY(kiln_ir_graph_adopt(g, payload));
    return replace_nodes(g, p, index, backend, payload, payload_size);
}

/* The backend's compile of one spec. */
typedef struct delegation {
    const kiln_compiler_backend *backend;
    const kiln_compile_kv *spec;
    size_t n_spec;
} delegation;

/* One payload for the given partition graphs (one per method), or *payload NULL when the backend
   cannot take them after all (a requested target has no kernel for some step): the partitions
   then stay portable, which is always correct; the backend's reason is dropped (kiln prints
   nothing itself: `kiln inspect` shows which nodes were delegated). */
static kiln_status compile_partition(kiln_ir_graph *g, const delegation *d, const kiln_backend_graph *graphs,
                                     size_t n_graphs, const char *what, size_t index, void **payload, size_t *size)
{
    char message[512] = "";
    const char *name = d->backend->name;
    kiln_status st = d->backend->compile(d->spec, d->n_spec, g->allocator, graphs, n_graphs, payload, size, message,
                                         sizeof message);
    if (st == KILN_ERROR_NOT_SUPPORTED) {
        *payload = NULL;
        return KILN_OK;
    }
    if (st != KILN_OK)
        return kiln_ir_fail(g, st, "%s, %s partition %zu: %s", what, name, index, message[0] ? message : kiln_status_str(st));
    return KILN_OK;
}

kiln_status kiln_ir_delegate(kiln_ir_graph *g, const char *method, const kiln_compiler_backend *backend,
                             const kiln_compile_kv *spec, size_t n_spec)
{
    kiln_ir_partition *parts;
    size_t n_parts;
    kiln_status st = kiln_ir_partition_find(g, backend, method, &parts, &n_parts);
    if (st != KILN_OK) return kiln_ir_fail(g, st, "partitioning method '%s' failed: %s", method, kiln_status_str(st));
    delegation d = {backend, spec, n_spec};
    char what[160];
    snprintf(what, sizeof what, "method '%s'", method);
    for (size_t i = 0; i < n_parts; i++) {
        void *payload;
        size_t size;
        KILN_TRY(compile_partition(g, &d, &parts[i].graph, 1, what, i, &payload, &size));
        if (!payload) continue;
        st = kiln_ir_partition_replace(g, &parts[i], i, backend->name, payload, size);
        if (st != KILN_OK) return kiln_ir_fail(g, st, "method '%s': %s", method, kiln_status_str(st));
    }
    return KILN_OK;
}

/* ---- weight sharing: partition i of every method in one binary ---------------------------------- */

/* Every method's partitions; COMPILE_SPEC when their counts differ (they are paired by index). */
static kiln_status find_all(kiln_ir_graph *graphs, const kiln_compile_method *methods, size_t n,
                            const kiln_compiler_backend *backend, kiln_ir_partition **parts, size_t *n_parts)
{
    for (size_t m = 0; m < n; m++) {
        kiln_status st = kiln_ir_partition_find(&graphs[m], backend, methods[m].name, &parts[m], &n_parts[m]);
        if (st != KILN_OK)
            return kiln_ir_fail(&graphs[m], st, "partitioning method '%s' failed: %s", methods[m].name,
                                kiln_status_str(st));
    }
    for (size_t m = 1; m < n; m++) {
        if (n_parts[m] == n_parts[0]) continue;
        return kiln_ir_fail(&graphs[0], KILN_ERROR_COMPILE_SPEC,
                            "weight sharing: methods '%s' and '%s' do not partition alike (%zu and %zu %s "
                            "partitions), so their partitions cannot be paired into shared binaries; compile "
                            "without --weight-sharing, or export the methods from one graph so that the same ops "
                            "reach the backend", methods[0].name, methods[m].name, n_parts[0], n_parts[m],
                            backend->name);
    }
    return KILN_OK;
}

/* Partitions reading one constant of at least SHARED_CONSTANT_MIN bytes are compiled into one
   payload. A tied LLM classifier is the case: the token embedding (the Embed partition, first)
   and the logits (the last) read the same GGUF tensor. Small constants are cheap to repeat, and
   a partition joined to others makes its binary carry their graphs: only weights are worth it. */
#define SHARED_CONSTANT_MIN ((size_t)1 << 16)

static size_t find_leader(size_t *leader, size_t i)
{
    while (leader[i] != i) i = leader[i] = leader[leader[i]];
    return i;
}

/* leader[i] (after find_leader): the first partition of method 0 that partition i shares a weight
   with, through any chain of partitions (i itself when none); the same indices serve every
   method. owner: scratch of g->n_values entries. */
static void join_shared(const kiln_ir_graph *g, const kiln_ir_partition *parts, size_t n_parts, size_t *leader,
                        int32_t *owner)
{
    for (size_t v = 0; v < g->n_values; v++) owner[v] = -1;
    for (size_t i = 0; i < n_parts; i++) {
        leader[i] = i;
        for (size_t j = 0; j < parts[i].graph.n_values; j++) {
            int32_t v = parts[i].value_of[j];
            size_t bytes = 0;
            if (!g->values[v].is_const || kiln_tensor_size(&g->values[v].t, &bytes) != KILN_OK ||
                bytes < SHARED_CONSTANT_MIN)
                continue;
            if (owner[v] < 0) {
                owner[v] = (int32_t)i;
                continue;
            }
            size_t x = find_leader(leader, (size_t)owner[v]), y = find_leader(leader, i);
            if (x < y) leader[y] = x;
            else leader[x] = y;
        }
    }
    for (size_t i = 0; i < n_parts; i++) leader[i] = find_leader(leader, i);
}

/* Compile the partitions whose leader is `lead` (every method's) into one payload; with more
   than one, each graph is named `<method>/<delegate name>`, which the run-time backend matches to
   the delegate call it serves (kiln_backend_init_args.delegate_name), and so the weight they share
   is stored once. Replace them all, or leave them portable when the backend declines. */
static kiln_status delegate_group(kiln_ir_graph *graphs, const kiln_compile_method *methods, size_t n,
                                  kiln_ir_partition **parts, size_t n_parts, const size_t *leader, size_t lead,
                                  const delegation *d, const char *what)
{
    kiln_ir_graph *g0 = &graphs[0];
    size_t members = 0;
    for (size_t i = lead; i < n_parts; i++) members += leader[i] == lead;
    kiln_backend_graph *group = KILN_ARENA_ARRAY(&g0->arena, kiln_backend_graph, n * members);
    if (!group) return kiln_ir_fail(g0, KILN_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
    size_t k = 0;
    for (size_t i = lead; i < n_parts; i++) {
        if (leader[i] != lead) continue;
        for (size_t m = 0; m < n; m++, k++) {
            group[k] = parts[m][i].graph;
            if (members == 1) continue;
            char name[160];
            snprintf(name, sizeof name, "%s/%s_partition_%zu", methods[m].name, d->backend->name, i);
            group[k].name = kiln_arena_strdup(&g0->arena, name);
            if (!group[k].name) return kiln_ir_fail(g0, KILN_ERROR_OUT_OF_MEMORY, "%s: out of memory", what);
        }
    }
    void *payload;
    size_t size;
    KILN_TRY(compile_partition(g0, d, group, n * members, what, lead, &payload, &size));
    if (!payload) return KILN_OK;
    /* The first method's graph owns the binary (adopting it once); every graph lives until the
       program is finished, so the other calls may point at it too. */
    kiln_status st = kiln_ir_graph_adopt(g0, payload);
    for (size_t i = lead; i < n_parts && st == KILN_OK; i++) {
        if (leader[i] != lead) continue;
        for (size_t m = 0; m < n && st == KILN_OK; m++)
            st = replace_nodes(&graphs[m], &parts[m][i], i, d->backend->name, payload, size);
    }
    if (st != KILN_OK) return kiln_ir_fail(g0, st, "%s: %s", what, kiln_status_str(st));
    return KILN_OK;
}

kiln_status kiln_ir_delegate_shared(kiln_ir_graph *graphs, const kiln_compile_method *methods, size_t n,
                                    const kiln_compiler_backend *backend, const kiln_compile_kv *spec, size_t n_spec)
{
    kiln_ir_graph *g0 = &graphs[0];
    /* Per-method tables from the first graph's arena: they die with the compilation. */
    kiln_ir_partition **parts = KILN_ARENA_ARRAY(&g0->arena, kiln_ir_partition *, n);
    size_t *n_parts = KILN_ARENA_ARRAY(&g0->arena, size_t, n);
    if (!parts || !n_parts) return kiln_ir_fail(g0, KILN_ERROR_OUT_OF_MEMORY, "weight sharing: out of memory");
    KILN_TRY(find_all(graphs, methods, n, backend, parts, n_parts));
    size_t *leader = KILN_ARENA_ARRAY(&g0->arena, size_t, n_parts[0] + 1);
    int32_t *owner = KILN_ARENA_ARRAY(&g0->arena, int32_t, g0->n_values + 1);
    if (!leader || !owner) return kiln_ir_fail(g0, KILN_ERROR_OUT_OF_MEMORY, "weight sharing: out of memory");
    join_shared(g0, parts[0], n_parts[0], leader, owner);
    delegation d = {backend, spec, n_spec};
    char what[160];
    snprintf(what, sizeof what, "weight sharing over %zu methods", n);
    for (size_t i = 0; i < n_parts[0]; i++)
        if (leader[i] == i) KILN_TRY(delegate_group(graphs, methods, n, parts, n_parts[0], leader, i, &d, what));
    return KILN_OK;
}
