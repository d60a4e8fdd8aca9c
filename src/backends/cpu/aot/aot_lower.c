/* aot_lower.c — lowering one partition graph to steps over tensors (see aot_lower.h).
 *
 * Layer: backends/cpu/aot (internal). Nodes are visited in order; each is described
 * (aot_ops.h), grown over the nodes it can fuse (aot_fuse.c), and becomes one step whose
 * operands are bound to tensors: partition inputs and outputs to the I/O tensors, constants to
 * weight tensors (one per use: each use may want its own packing), everything else to a
 * scratch tensor created by the step that writes it. A COPY whose output is an intermediate
 * becomes no step at all. Scratch lifetimes (first write, last read, in steps) are recorded
 * here for aot_plan.c.
 */
#include <string.h>

#include "backends/cpu/aot/aot_fuse.h"
#include "backends/cpu/cpu_format.h"
#include "core/check.h"
#include "core/diag.h"

/* Names are left as they are: the line reaches the user through kiln_ir_fail, which escapes it
   as a whole (partition.c). */
static kiln_status fail(aot_lowering *L, kiln_status st, const char *what, const kiln_node *node)
{
    kiln_diag d = kiln_diag_over(L->message, L->message_size);
    if (node) return kiln_diag_fail(&d, st, "cpu lowering: node '%s' (%s): %s", node->name, node->op, what);
    return kiln_diag_fail(&d, st, "cpu lowering: %s", what);
}

int32_t aot_add_tensor(aot_lowering *L, const kiln_tensor *shape, uint8_t kind)
{
    aot_graph *G = L->out;
    if (KILN_NEVER(G->n_tensors >= L->cap_tensors)) return -1;
    aot_tensor *t = &G->tensors[G->n_tensors];
    memset(t, 0, sizeof *t);
    t->t = *shape;
    t->t.data = NULL;
    t->kind = kind;
    t->buffer = -1;
    return (int32_t)G->n_tensors++;
}

/* ---- graph checks and I/O tensors ------------------------------------------------------------ */

static bool value_ok(const aot_lowering *L, int32_t v) { return v >= 0 && (size_t)v < L->g->n_values; }

static kiln_status check_graph(aot_lowering *L)
{
    const kiln_cpu_aot_graph *g = L->g;
    bool *ready = KILN_ARENA_ARRAY(L->arena, bool, g->n_values ? g->n_values : 1);
    KILN_CHECK(ready, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < g->n_values; i++) ready[i] = g->values[i].is_const;
    for (size_t i = 0; i < g->n_inputs; i++) {
        KILN_CHECK(value_ok(L, g->inputs[i]) && !ready[g->inputs[i]], KILN_ERROR_INVALID_ARGUMENT);
        ready[g->inputs[i]] = true;
    }
    for (size_t k = 0; k < g->n_nodes; k++) {
        const kiln_cpu_aot_node *n = &g->nodes[k];
        KILN_CHECK(n->node && n->node->n_inputs <= AOT_MAX_NODE_ARGS && n->node->n_outputs <= AOT_MAX_NODE_ARGS,
                   KILN_ERROR_INVALID_ARGUMENT);
        for (size_t i = 0; i < n->node->n_inputs; i++) {
            if (n->inputs[i] < 0) continue;
            KILN_CHECK(value_ok(L, n->inputs[i]) && ready[n->inputs[i]], KILN_ERROR_INVALID_ARGUMENT);
            L->uses[n->inputs[i]]++;
        }
        for (size_t j = 0; j < n->node->n_outputs; j++) {
            if (n->outputs[j] < 0) continue;
            KILN_CHECK(value_ok(L, n->outputs[j]) && !ready[n->outputs[j]], KILN_ERROR_INVALID_ARGUMENT);
            ready[n->outputs[j]] = true;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        KILN_CHECK(value_ok(L, v) && ready[v] && !g->values[v].is_const && !L->is_output[v], KILN_ERROR_INVALID_ARGUMENT);
        L->is_output[v] = true;
    }
    return KILN_OK;
}

static kiln_status add_io_tensors(aot_lowering *L)
{
    const kiln_cpu_aot_graph *g = L->g;
    for (size_t i = 0; i < g->n_inputs + g->n_outputs; i++) {
        bool input = i < g->n_inputs;
        int32_t v = input ? g->inputs[i] : g->outputs[i - g->n_inputs];
        KILN_CHECK(L->value_tensor[v] < 0, KILN_ERROR_INVALID_ARGUMENT); /* an input listed as output */
        int32_t t = aot_add_tensor(L, &g->values[v].t, input ? KILN_CTX_TENSOR_INPUT : KILN_CTX_TENSOR_OUTPUT);
        KILN_CHECK(t >= 0, KILN_ERROR_LIMIT);
        L->out->tensors[t].io_index = (uint32_t)(input ? i : i - g->n_inputs);
        L->value_tensor[v] = t;
        L->ready[v] = input;
    }
    return KILN_OK;
}

/* ---- steps ------------------------------------------------------------------------------------ */

void aot_touch_buffer(aot_lowering *L, int32_t tensor, int32_t step)
{
    if (tensor < 0) return;
    const aot_tensor *t = &L->out->tensors[tensor];
    if (t->kind != KILN_CTX_TENSOR_SCRATCH) return;
    aot_buffer *b = &L->out->buffers[t->buffer];
    if (step < b->first) b->first = step;
    if (step > b->last) b->last = step;
}

int32_t aot_new_buffer(aot_lowering *L, uint64_t size, int32_t step)
{
    aot_graph *G = L->out;
    if (KILN_NEVER(G->n_buffers >= L->cap_buffers)) return -1;
    aot_buffer *b = &G->buffers[G->n_buffers];
    b->size = size;
    b->first = b->last = step;
    b->offset = 0;
    return (int32_t)G->n_buffers++;
}

int32_t aot_new_scratch(aot_lowering *L, const kiln_tensor *shape, int32_t buffer, uint64_t offset, int32_t step)
{
    if (buffer < 0) {
        buffer = aot_new_buffer(L, kiln_tensor_bytes(shape), step);
        offset = 0;
    }
    int32_t t = buffer < 0 ? -1 : aot_add_tensor(L, shape, KILN_CTX_TENSOR_SCRATCH);
    if (t < 0) return -1;
    L->out->tensors[t].buffer = buffer;
    L->out->tensors[t].buffer_offset = offset;
    aot_touch_buffer(L, t, step);
    return t;
}

/* The tensor for step input `o` of node k. */
static int32_t bind_operand(aot_lowering *L, size_t k, const aot_operand *o)
{
    if (o->kind == AOT_OPERAND_ABSENT) return -1;
    if (o->kind == AOT_OPERAND_VALUE) return L->value_tensor[o->value];
    if (!o->t.data) return -2; /* a weight whose data could not be computed */
    int32_t t = aot_add_tensor(L, &o->t, KILN_CTX_TENSOR_WEIGHT);
    if (t >= 0) L->out->tensors[t].weight = *o;
    return t;
}

/* A COPY whose output is an intermediate is no step: its value becomes the input's tensor
 * itself (an input, an output or a scratch tensor). The bytes are the same and every kernel
 * reads shapes from its step's parameters, never from its tensors, so the tensor keeps the
 * input's recorded shape; one tensor keeps one writer, as the reader's data-flow check wants. */
static bool alias_copy(aot_lowering *L, size_t k, const aot_step_desc *d, int32_t y)
{
    if (d->op != KILN_CPU_OP_COPY || d->in[0].kind != AOT_OPERAND_VALUE || L->is_output[y] || aot_is_placed(L, y))
        return false;
    int32_t src = L->value_tensor[d->in[0].value];
    if (src < 0 || L->out->tensors[src].kind == KILN_CTX_TENSOR_WEIGHT) return false;
    L->value_tensor[y] = src;
    L->ready[y] = true;
    return true;
}

kiln_status aot_emit_step(aot_lowering *L, size_t k, const aot_step_desc *d, int32_t y, int32_t out)
{
    aot_graph *G = L->out;
    int32_t index = (int32_t)G->n_steps;
    aot_step *s = &G->steps[G->n_steps];
    memset(s, 0, sizeof *s);
    s->op = d->op;
    s->n_inputs = (uint16_t)d->n_inputs;
    s->n_outputs = 1;
    s->params = d->params;
    for (size_t i = 0; i < KILN_CPU_MAX_STEP_TENSORS; i++) s->tensors[i] = -1;
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        int32_t t = bind_operand(L, k, &d->in[i]);
        if (t == -2) return fail(L, KILN_ERROR_OUT_OF_MEMORY, "weights could not be computed", L->g->nodes[k].node);
        KILN_CHECK(t >= 0 || d->in[i].kind == AOT_OPERAND_ABSENT, KILN_ERROR_INVALID_ARGUMENT);
        s->tensors[i] = t;
        aot_touch_buffer(L, t, index);
    }
    if (out < 0) out = L->value_tensor[y];
    if (out < 0) out = L->value_tensor[y] = aot_value_scratch(L, y, index);
    KILN_CHECK(out >= 0, KILN_ERROR_LIMIT);
    s->tensors[d->n_inputs] = out;
    aot_touch_buffer(L, out, index);
    if (y >= 0) L->ready[y] = true;
    G->n_steps++;
    return KILN_OK;
}

/* Precision bf16: packed weights — a GEMM's constant B, the filters of convolutions but
   depthwise ones — are stored as bf16 pairs (half the bytes; the bf16 microkernel rounds the
   other operand to bf16 as it packs it, with the table's vector rounding). Everything else
   stays f32: depthwise convolutions, normalisation, activations. (With the rounding in plain C,
   MobileNetV2's 16- to 32-channel projections ran slower in bf16; with vcvtneps2bf16 every
   layer gains.) */
static void to_bf16(aot_step_desc *d)
{
    aot_operand *w = &d->in[1];
    if (d->op == KILN_CPU_OP_GEMM && ((d->params.gemm.b_packed == 1 && w->form == AOT_FORM_PACK_B) ||
                                      (d->params.gemm.b_packed == KILN_CPU_PACKED_STRASSEN &&
                                       w->form == AOT_FORM_PACK_B_STRASSEN))) {
        d->params.gemm.b_packed = KILN_CPU_PACKED_BF16;
        w->form = AOT_FORM_PACK_B_BF16;
    } else if (d->op == KILN_CPU_OP_CONV2D && !d->params.conv.depthwise && !d->params.conv.taps &&
               (w->form == AOT_FORM_PACK_B || w->form == AOT_FORM_WINOGRAD_B || w->form == AOT_FORM_PACK_A ||
                w->form == AOT_FORM_WINOGRAD)) {
        d->params.conv.bf16 = 1;
        w->form = w->form == AOT_FORM_PACK_B       ? AOT_FORM_PACK_B_BF16
                  : w->form == AOT_FORM_WINOGRAD_B ? AOT_FORM_WINOGRAD_B_BF16
                  : w->form == AOT_FORM_PACK_A     ? AOT_FORM_PACK_A_BF16
                                                   : AOT_FORM_WINOGRAD_BF16;
    } else {
        return;
    }
    w->t.dtype = KILN_DTYPE_BF16;
}

/* Without Strassen (KILN_CTX_SPEC_NO_STRASSEN) a large GEMM keeps B as plain panels. */
static void to_classical(aot_step_desc *d)
{
    if (d->op != KILN_CPU_OP_GEMM || d->params.gemm.b_packed != KILN_CPU_PACKED_STRASSEN) return;
    d->params.gemm.b_packed = 1;
    d->in[1].form = AOT_FORM_PACK_B;
}

/* Every operand of d that is a deferred Transpose (aot_views.c) the step did not take as a view
   gets its tensor now: the Transpose's step, emitted before d's. */
static kiln_status materialize_views(aot_lowering *L, const aot_step_desc *d)
{
    for (uint32_t i = 0; i < d->n_inputs; i++) {
        aot_view *v = d->in[i].kind == AOT_OPERAND_VALUE ? L->views[d->in[i].value] : NULL;
        if (!v || !v->pending) continue;
        v->pending = false;
        KILN_TRY(aot_emit_step(L, v->node, &v->step, d->in[i].value, -1));
    }
    return KILN_OK;
}

static kiln_status lower_node(aot_lowering *L, size_t k)
{
    if (aot_is_data_node(L, k)) return aot_lower_data_node(L, k);
    aot_node_view v;
    aot_view_node(L, k, &v);
    aot_step_desc d;
    if (!aot_describe(v.node, v.in, v.out, L->arena, &d))
        return fail(L, KILN_ERROR_NOT_SUPPORTED, "not supported by the cpu backend", v.node);
    int32_t y = L->g->nodes[k].outputs[0];
    if (y < 0) return fail(L, KILN_ERROR_INVALID_ARGUMENT, "output 0 is absent", v.node);
    for (uint32_t i = 0; i < d.n_inputs; i++)
        if (d.in[i].kind == AOT_OPERAND_VALUE) d.in[i].value = L->g->nodes[k].inputs[d.in[i].input];
    aot_fuse_node(L, k, &d, &y);
    if (L->classical_gemm) to_classical(&d);
    if (L->bf16) to_bf16(&d);
    if (aot_defer_transpose(L, k, &d, y)) return KILN_OK;
    aot_take_views(L, &d);
    KILN_TRY(materialize_views(L, &d));
    if (alias_copy(L, k, &d, y)) return KILN_OK;
    aot_place_slice(L, &d, y);
    return aot_emit_step(L, k, &d, y, -1);
}

kiln_status aot_lower_graph(const kiln_cpu_aot_graph *g, uint32_t precision, uint32_t spec_flags, kiln_arena *arena,
                            aot_graph *out,
                            char *message,
                            size_t message_size)
{
    memset(out, 0, sizeof *out);
    aot_lowering L = {.g = g, .arena = arena, .out = out, .bf16 = precision == KILN_CTX_PRECISION_BF16,
                      .classical_gemm = (spec_flags & KILN_CTX_SPEC_NO_STRASSEN) != 0,
                      .message = message, .message_size = message_size};
    KILN_CHECK(g && g->name && (g->values || !g->n_values) && (g->nodes || !g->n_nodes), KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(g->n_values < INT32_MAX && g->n_nodes < INT32_MAX / 8, KILN_ERROR_LIMIT);
    size_t nv = g->n_values ? g->n_values : 1, nn = g->n_nodes ? g->n_nodes : 1;
    L.value_tensor = KILN_ARENA_ARRAY(arena, int32_t, nv);
    L.uses = KILN_ARENA_ARRAY(arena, uint32_t, nv);
    L.is_output = KILN_ARENA_ARRAY(arena, bool, nv);
    L.absorbed = KILN_ARENA_ARRAY(arena, bool, nn);
    L.ready = KILN_ARENA_ARRAY(arena, bool, nv);
    L.views = KILN_ARENA_ARRAY(arena, aot_view *, nv);
    L.place_root = KILN_ARENA_ARRAY(arena, int32_t, nv);
    L.place_offset = KILN_ARENA_ARRAY(arena, uint64_t, nv);
    L.root_buffer = KILN_ARENA_ARRAY(arena, int32_t, nv);
    size_t extra = aot_data_extra(g); /* Concat chains, Split outputs: at most 2 per node arg */
    L.cap_tensors = g->n_inputs + g->n_outputs + (1 + AOT_MAX_STEP_INPUTS) * nn + extra;
    out->tensors = KILN_ARENA_ARRAY(arena, aot_tensor, L.cap_tensors);
    out->steps = KILN_ARENA_ARRAY(arena, aot_step, nn + extra);
    L.cap_buffers = nn + extra;
    out->buffers = KILN_ARENA_ARRAY(arena, aot_buffer, L.cap_buffers);
    KILN_CHECK(L.value_tensor && L.uses && L.is_output && L.absorbed && L.ready && L.views && L.place_root &&
                   L.place_offset && L.root_buffer && out->tensors && out->steps && out->buffers,
               KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < nv; i++) L.value_tensor[i] = L.place_root[i] = L.root_buffer[i] = -1;
    out->name = g->name;
    out->n_inputs = (uint32_t)g->n_inputs;
    out->n_outputs = (uint32_t)g->n_outputs;
    kiln_status st = check_graph(&L);
    if (st != KILN_OK) return fail(&L, st, "malformed partition graph", NULL);
    KILN_TRY(add_io_tensors(&L));
    aot_place_concats(&L);
    for (size_t k = 0; k < g->n_nodes; k++)
        if (!L.absorbed[k]) KILN_TRY(lower_node(&L, k));
    return KILN_OK;
}
