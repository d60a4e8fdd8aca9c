/* emit.c — IR -> program records: values (constants become deduplicated segments), attributes,
 * instructions (portable kernel calls, and delegate calls whose payload is a segment) and the
 * method record. Layer: compiler. */
#include "compiler/emit.h"

#include <stdio.h>
#include <string.h>

#include "core/check.h"

typedef struct emitter {
    kiln_ir_graph *g;
    kiln_program_builder *b;
    int32_t *local;         /* (g->n_values) method-local index of each IR value, -1 if unused */
    uint32_t n_local;
} emitter;

static kiln_status emit_shape(kiln_program_builder *b, const kiln_tensor *t, uint32_t *out)
{
    return kiln_program_builder_i64(b, t->shape, t->rank, out);
}

static kiln_status emit_value(emitter *e, int32_t index)
{
    kiln_ir_value *v = &e->g->values[index];
    kiln_fmt_value rec = {.dtype = (uint8_t)v->t.dtype, .segment = KILN_FMT_NONE};
    KILN_TRY(kiln_program_builder_string(e->b, v->name, strlen(v->name), &rec.name));
    if (v->is_const || v->shape_known) {
        size_t bytes;
        KILN_TRY(kiln_ir_tensor_size(e->g, &v->t, "value", v->name, &bytes));
        rec.rank = (uint8_t)v->t.rank;
        rec.size = bytes;
        KILN_TRY(emit_shape(e->b, &v->t, &rec.shape));
    }
    if (v->is_const) {
        rec.storage = KILN_STORAGE_CONST;
        KILN_TRY(kiln_program_builder_segment(e->b, v->t.data, (size_t)rec.size, &rec.segment));
    } else if (v->shape_known) {
        rec.storage = KILN_STORAGE_ARENA;
        rec.offset = v->offset;
    } else {
        rec.storage = KILN_STORAGE_DYNAMIC;
        rec.size = 0;
    }
    KILN_TRY(kiln_program_builder_value(e->b, &rec, NULL));
    e->local[index] = (int32_t)e->n_local++;
    return KILN_OK;
}

static kiln_status use_value(emitter *e, int32_t index)
{
    if (index < 0 || e->local[index] >= 0) return KILN_OK;
    return emit_value(e, index);
}

static kiln_status emit_attr(emitter *e, const kiln_attr *a)
{
    kiln_program_builder *b = e->b;
    kiln_fmt_attr rec = {.type = (uint32_t)a->type, .count = a->n};
    KILN_TRY(kiln_program_builder_string(b, a->name, strlen(a->name), &rec.name));
    uint32_t ref = 0;
    switch (a->type) {
    case KILN_ATTR_INT: rec.i = a->i; break;
    case KILN_ATTR_FLOAT: {
        uint32_t bits;
        memcpy(&bits, &a->f, 4);
        rec.i = bits;
        break;
    }
    case KILN_ATTR_INTS: KILN_TRY(kiln_program_builder_i64(b, a->ints, a->n, &ref)); break;
    case KILN_ATTR_FLOATS: KILN_TRY(kiln_program_builder_i32(b, (const int32_t *)(const void *)a->floats, a->n, &ref)); break;
    case KILN_ATTR_STRING: KILN_TRY(kiln_program_builder_string(b, a->s, a->n, &ref)); break;
    case KILN_ATTR_STRINGS: {
        /* n strings back to back: store them as one blob whose NULs separate them */
        size_t len = 0;
        for (size_t k = 0; k < a->n; k++) len += strlen(a->s + len) + 1;
        KILN_TRY(kiln_program_builder_string(b, a->s, len ? len - 1 : 0, &ref));
        break;
    }
    case KILN_ATTR_TENSOR: {
        uint32_t shape;
        size_t bytes;
        KILN_TRY(kiln_ir_tensor_size(e->g, &a->tensor, "tensor attribute", a->name, &bytes));
        KILN_TRY(emit_shape(b, &a->tensor, &shape));
        KILN_TRY(kiln_program_builder_segment(b, a->tensor.data, bytes, &ref));
        rec.i = (int64_t)a->tensor.dtype | ((int64_t)a->tensor.rank << 8);
        rec.count = shape;
        break;
    }
    }
    rec.ref = ref;
    return kiln_program_builder_attr(b, &rec, NULL);
}

static kiln_status emit_instr(emitter *e, const kiln_ir_node *n)
{
    kiln_fmt_instr rec = {.kind = KILN_INSTR_KERNEL, .opset = n->node.opset, .segment = KILN_FMT_NONE,
                          .scratch_size = n->scratch_size};
    if (n->payload) {
        /* A delegate call: op names the backend, the payload (its context binary) is a segment,
           deduplicated like any other, so identical partitions are stored once. */
        rec.kind = KILN_INSTR_DELEGATE;
        KILN_TRY(kiln_program_builder_segment(e->b, n->payload, n->payload_size, &rec.segment));
    }
    KILN_CHECK(n->node.n_inputs <= UINT16_MAX && n->node.n_outputs <= UINT16_MAX, KILN_ERROR_LIMIT);
    rec.n_inputs = (uint16_t)n->node.n_inputs;
    rec.n_outputs = (uint16_t)n->node.n_outputs;
    /* The op's domain travels in its op string (program_format.h): "kiln.RMSNorm", never a bare
       "RMSNorm" a reader would take for an ONNX op. Ops of a domain are kiln's own: short names. */
    if (!n->payload && !kiln_domain_is_onnx(n->node.domain)) {
        char op[256];
        int op_size = snprintf(op, sizeof op, "%s.%s", n->node.domain, n->node.op);
        KILN_CHECK(op_size >= 0 && (size_t)op_size < sizeof op, KILN_ERROR_LIMIT);
        KILN_TRY(kiln_program_builder_string(e->b, op, (size_t)op_size, &rec.op));
    } else {
        KILN_TRY(kiln_program_builder_string(e->b, n->node.op, strlen(n->node.op), &rec.op));
    }
    KILN_TRY(kiln_program_builder_string(e->b, n->node.name, strlen(n->node.name), &rec.name));
    rec.first_attr = kiln_program_builder_n_attrs(e->b);
    rec.n_attrs = (uint32_t)n->node.n_attrs;
    for (size_t k = 0; k < n->node.n_attrs; k++) KILN_TRY(emit_attr(e, &n->node.attrs[k]));
    int32_t args[2 * 64 + 2];
    size_t n_args = 0;
    KILN_CHECK(n->node.n_inputs + n->node.n_outputs <= sizeof args / sizeof args[0], KILN_ERROR_LIMIT);
    for (size_t i = 0; i < n->node.n_inputs; i++) args[n_args++] = n->inputs[i] >= 0 ? e->local[n->inputs[i]] : -1;
    for (size_t j = 0; j < n->node.n_outputs; j++) args[n_args++] = n->outputs[j] >= 0 ? e->local[n->outputs[j]] : -1;
    KILN_TRY(kiln_program_builder_i32(e->b, args, n_args, &rec.args));
    return kiln_program_builder_instr(e->b, &rec, NULL);
}

kiln_status kiln_ir_emit_method(kiln_ir_graph *g, const kiln_ir_plan *plan, const char *method_name,
                                kiln_program_builder *b)
{
    emitter e = {g, b, KILN_ARENA_ARRAY(&g->arena, int32_t, g->n_values ? g->n_values : 1), 0};
    KILN_CHECK(e.local, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < g->n_values; i++) e.local[i] = -1;
    kiln_fmt_method m = {.first_value = kiln_program_builder_n_values(b), .first_instr = kiln_program_builder_n_instrs(b),
                         .arena_size = plan->arena_size, .scratch_size = plan->scratch_size};
    KILN_TRY(kiln_program_builder_string(b, method_name, strlen(method_name), &m.name));
    /* Values first (inputs, then in instruction order, then outputs), so instructions can name
       their local indices. */
    for (size_t i = 0; i < g->n_inputs; i++) KILN_TRY(use_value(&e, g->inputs[i]));
    for (size_t k = 0; k < plan->n_instrs; k++) {
        const kiln_ir_node *n = &g->nodes[plan->order[k]];
        for (size_t i = 0; i < n->node.n_inputs; i++) KILN_TRY(use_value(&e, n->inputs[i]));
        for (size_t j = 0; j < n->node.n_outputs; j++) KILN_TRY(use_value(&e, n->outputs[j]));
    }
    for (size_t i = 0; i < g->n_outputs; i++) KILN_TRY(use_value(&e, g->outputs[i]));
    m.n_values = e.n_local;
    for (size_t k = 0; k < plan->n_instrs; k++) KILN_TRY(emit_instr(&e, &g->nodes[plan->order[k]]));
    m.n_instrs = (uint32_t)plan->n_instrs;
    int32_t *io = KILN_ARENA_ARRAY(&g->arena, int32_t, g->n_inputs + g->n_outputs + 1);
    KILN_CHECK(io, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < g->n_inputs; i++) io[i] = e.local[g->inputs[i]];
    for (size_t i = 0; i < g->n_outputs; i++) io[g->n_inputs + i] = e.local[g->outputs[i]];
    KILN_TRY(kiln_program_builder_i32(b, io, g->n_inputs, &m.inputs));
    KILN_TRY(kiln_program_builder_i32(b, io + g->n_inputs, g->n_outputs, &m.outputs));
    m.n_inputs = (uint32_t)g->n_inputs;
    m.n_outputs = (uint32_t)g->n_outputs;
    return kiln_program_builder_method(b, &m, NULL);
}
