/* aot_lower_data.c — Concat and Split as steps, and tensors laid out inside other tensors so
 * that bytes need not move (see aot_fuse.h).
 *
 * Layer: backends/cpu/aot (internal). A Concat along an axis with nothing but unit dims before it
 * (any Concat of channels at batch 1: DenseNet's, Inception's) is its inputs side by side in one
 * run of bytes. Before lowering, every such input that a step of this graph writes is placed
 * inside the Concat's output, at its band: its producer then writes it there, and the CONCAT
 * step, finding the input at its place, moves nothing. Placement works backwards from the last
 * Concat, so DenseNet's growing Concats ([x0], [x0, x1], ... of one block) all land in the last
 * one: an earlier Concat whose inputs all lie side by side in some other value's bytes is itself
 * placed over them. Every placement is one value in one root value's bytes, 64-aligned (as the
 * binary requires of scratch tensors); a placed value keeps its own tensor, which is what its
 * one writer writes, so the reader's data-flow check holds. Lifetimes are per buffer, so the
 * root's buffer lives from the first write of any value in it to the last read of any.
 *
 *   root buffer (the last Concat's output, Y):
 *   | x0 (MaxPool writes it) | x1 (a Conv) | x2 (a Conv) | ... |
 *   |<- Concat [x0, x1] ----->|            (no bytes of its own)
 *   |<- Concat [x0, x1, x2] -------------->|
 *
 * A Concat of more than KILN_CPU_CONCAT_MAX_INPUTS inputs is a chain of CONCAT steps, each
 * writing a partial result over the output's bytes (a tensor per step: one writer each) that the
 * next takes as input 0. A Split output, and a Slice, that is one contiguous run of a scratch
 * tensor becomes a tensor over that run, its SLICE step a no-op. Whatever cannot be placed is
 * copied, as before.
 */
#include <string.h>

#include "backends/cpu/aot/aot_fuse.h"
#include "backends/cpu/aot/aot_ops_data.h"
#include "core/check.h"

#define ALIGN 64u /* scratch tensors' offsets in the binary */

static bool is_op(const kiln_cpu_aot_node *n, const char *op)
{
    return kiln_domain_is_onnx(n->node->domain) && strcmp(n->node->op, op) == 0;
}

bool aot_is_data_node(const aot_lowering *L, size_t k)
{
    return is_op(&L->g->nodes[k], "Concat") || is_op(&L->g->nodes[k], "Split");
}

static size_t chain_steps(size_t n)
{
    /* the first step takes KILN_CPU_CONCAT_MAX_INPUTS inputs, each next one a partial and the rest */
    return n <= KILN_CPU_CONCAT_MAX_INPUTS ? 1 : 1 + (n - 2) / (KILN_CPU_CONCAT_MAX_INPUTS - 1);
}

size_t aot_data_extra(const kiln_cpu_aot_graph *g)
{
    size_t extra = 0;
    for (size_t k = 0; k < g->n_nodes; k++) {
        const kiln_cpu_aot_node *n = &g->nodes[k];
        if (!n->node) continue;
        if (is_op(n, "Concat")) extra += n->node->n_inputs + chain_steps(n->node->n_inputs);
        if (is_op(n, "Split")) extra += 2 * n->node->n_outputs;
    }
    return extra;
}

bool aot_is_placed(const aot_lowering *L, int32_t v) { return v >= 0 && L->place_root[v] >= 0; }

/* v gets a scratch tensor from a step of this graph: not a constant, an input or an output. */
static bool placeable(const aot_lowering *L, int32_t v)
{
    if (v < 0 || L->g->values[v].is_const || L->is_output[v] || L->value_tensor[v] >= 0) return false;
    for (size_t i = 0; i < L->g->n_inputs; i++)
        if (L->g->inputs[i] == v) return false;
    return true;
}

static void place(aot_lowering *L, int32_t v, int32_t root, uint64_t offset)
{
    L->place_root[v] = root;
    L->place_offset[v] = offset;
}

/* The Concat at node k laid out backwards: itself over its inputs when they already lie side by
   side (rule 1), then each input not yet placed into its band (rule 2). */
static void place_concat(aot_lowering *L, size_t k)
{
    const kiln_cpu_aot_node *n = &L->g->nodes[k];
    int32_t y = n->outputs[0];
    aot_node_view v;
    aot_view_node(L, k, &v);
    aot_concat c;
    if (y < 0 || !v.out[0] || !aot_concat_layout(v.node, v.in, v.out[0], &c) || c.outer != 1 || !placeable(L, y)) return;
    const uint64_t es = sizeof(float);
    int32_t first = n->inputs[0];
    if (!aot_is_placed(L, y) && aot_is_placed(L, first) && L->place_offset[first] >= c.offset[0] * es) {
        int32_t root = L->place_root[first];
        uint64_t base = L->place_offset[first] - (uint64_t)c.offset[0] * es;
        bool side_by_side = root != y && base % ALIGN == 0;
        for (uint32_t i = 0; i < c.n && side_by_side; i++)
            side_by_side = L->place_root[n->inputs[i]] == root && L->place_offset[n->inputs[i]] == base + c.offset[i] * es;
        if (side_by_side) place(L, y, root, base);
    }
    int32_t root = aot_is_placed(L, y) ? L->place_root[y] : y;
    uint64_t base = aot_is_placed(L, y) ? L->place_offset[y] : 0;
    for (uint32_t i = 0; i < c.n; i++) {
        int32_t x = n->inputs[i];
        uint64_t at = base + (uint64_t)c.offset[i] * es;
        bool twice = false;
        for (uint32_t j = 0; j < c.n; j++) twice |= j != i && n->inputs[j] == x;
        if (x == root || twice || at % ALIGN != 0 || !placeable(L, x) || aot_is_placed(L, x)) continue;
        place(L, x, root, at);
    }
}

void aot_place_concats(aot_lowering *L)
{
    for (size_t k = L->g->n_nodes; k-- > 0;)
        if (is_op(&L->g->nodes[k], "Concat")) place_concat(L, k);
}

int32_t aot_value_scratch(aot_lowering *L, int32_t v, int32_t step)
{
    const kiln_tensor *shape = &L->g->values[v].t;
    int32_t root = aot_is_placed(L, v) ? L->place_root[v] : v;
    /* the first value of a root to get a tensor makes the root's buffer, of the root's size */
    if (L->root_buffer[root] < 0) L->root_buffer[root] = aot_new_buffer(L, kiln_tensor_bytes(&L->g->values[root].t), step);
    if (L->root_buffer[root] < 0) return -1;
    return aot_new_scratch(L, shape, L->root_buffer[root], root == v ? 0 : L->place_offset[v], step);
}

void aot_place_slice(aot_lowering *L, const aot_step_desc *d, int32_t y)
{
    if (d->op != KILN_CPU_OP_SLICE || !aot_slice_is_contiguous(&d->params.slice) || d->in[0].kind != AOT_OPERAND_VALUE ||
        !placeable(L, y) || aot_is_placed(L, y))
        return;
    int32_t src = L->value_tensor[d->in[0].value];
    if (src < 0 || L->out->tensors[src].kind != KILN_CTX_TENSOR_SCRATCH) return;
    const aot_tensor *x = &L->out->tensors[src];
    uint64_t at = x->buffer_offset + (uint64_t)d->params.slice.offset * d->params.slice.elem_size;
    if (at % ALIGN != 0) return;
    int32_t t = aot_new_scratch(L, &L->g->values[y].t, x->buffer, at, (int32_t)L->out->n_steps);
    if (t >= 0) L->value_tensor[y] = t;
}

/* ---- Concat ---------------------------------------------------------------------------------- */

/* The tensor a chain step writes: the output itself at the end, else a partial result — over the
   output's own bytes when it is scratch, over one buffer of the output's size when it is an
   output of the graph (the last step then copies the partial over). */
static int32_t chain_target(aot_lowering *L, int32_t y, int32_t out, bool last, int32_t *partial_buffer)
{
    if (last) return out;
    const aot_tensor *o = &L->out->tensors[out];
    int32_t step = (int32_t)L->out->n_steps;
    if (o->kind == KILN_CTX_TENSOR_SCRATCH) return aot_new_scratch(L, &L->g->values[y].t, o->buffer, o->buffer_offset, step);
    int32_t t = aot_new_scratch(L, &L->g->values[y].t, *partial_buffer, 0, step);
    if (t >= 0) *partial_buffer = L->out->tensors[t].buffer;
    return t;
}

static kiln_status lower_concat(aot_lowering *L, size_t k)
{
    const kiln_cpu_aot_node *n = &L->g->nodes[k];
    aot_node_view v;
    aot_view_node(L, k, &v);
    aot_concat c;
    int32_t y = n->outputs[0];
    KILN_CHECK(y >= 0 && v.out[0] && aot_concat_layout(v.node, v.in, v.out[0], &c), KILN_ERROR_INVALID_ARGUMENT);
    int32_t out = L->value_tensor[y];
    if (out < 0) out = L->value_tensor[y] = aot_value_scratch(L, y, (int32_t)L->out->n_steps);
    KILN_CHECK(out >= 0, KILN_ERROR_LIMIT);
    int32_t partial = -1, partial_buffer = -1;
    for (uint32_t i = 0; i < c.n;) {
        aot_step_desc d;
        memset(&d, 0, sizeof d);
        d.op = KILN_CPU_OP_CONCAT;
        kiln_cpu_concat_params *p = &d.params.concat;
        p->elem_size = sizeof(float);
        p->outer = c.outer;
        p->out_row = c.out_row;
        if (partial >= 0) { /* slot 0: what the steps before wrote, the first c.offset[i] of each row */
            d.in[0] = (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
            p->row[0] = c.offset[i];
            p->in_row[0] = c.out_row;
            d.n_inputs = 1;
        }
        for (; i < c.n && d.n_inputs < KILN_CPU_CONCAT_MAX_INPUTS; i++, d.n_inputs++) {
            aot_operand *o = &d.in[d.n_inputs];
            *o = aot_operand_of(v.node, v.in, i);
            if (o->kind == AOT_OPERAND_VALUE) o->value = n->inputs[i];
            p->row[d.n_inputs] = p->in_row[d.n_inputs] = c.row[i];
            p->offset[d.n_inputs] = c.offset[i];
        }
        p->n = d.n_inputs;
        int32_t target = chain_target(L, y, out, i == c.n, &partial_buffer);
        KILN_CHECK(target >= 0, KILN_ERROR_LIMIT);
        KILN_TRY(aot_emit_step(L, k, &d, y, target));
        if (partial >= 0) { /* the partial is a tensor, not a value: bound here */
            aot_step *s = &L->out->steps[L->out->n_steps - 1];
            s->tensors[0] = partial;
            aot_touch_buffer(L, partial, (int32_t)L->out->n_steps - 1);
        }
        partial = target;
    }
    return KILN_OK;
}

/* ---- Split ----------------------------------------------------------------------------------- */

static kiln_status lower_split(aot_lowering *L, size_t k)
{
    const kiln_cpu_aot_node *n = &L->g->nodes[k];
    aot_node_view v;
    aot_view_node(L, k, &v);
    aot_split s;
    KILN_CHECK(v.in[0] && aot_split_layout(v.node, v.in, v.out, &s), KILN_ERROR_INVALID_ARGUMENT);
    for (size_t j = 0; j < n->node->n_outputs; j++) {
        int32_t y = n->outputs[j];
        if (!v.out[j] || y < 0) continue;
        aot_step_desc d;
        memset(&d, 0, sizeof d);
        d.op = KILN_CPU_OP_SLICE;
        d.n_inputs = 1;
        d.in[0] = aot_operand_of(v.node, v.in, 0);
        if (d.in[0].kind == AOT_OPERAND_VALUE) d.in[0].value = n->inputs[0];
        aot_split_part(v.in[0], &s, j, &d.params.slice);
        aot_place_slice(L, &d, y);
        KILN_TRY(aot_emit_step(L, k, &d, y, -1));
    }
    return KILN_OK;
}

kiln_status aot_lower_data_node(aot_lowering *L, size_t k)
{
    return is_op(&L->g->nodes[k], "Concat") ? lower_concat(L, k) : lower_split(L, k);
}
