/* ctxbin_steps.c — validation of a graph's steps (see ctxbin_reader.h).
 *
 * Layer: backends/cpu/rt. Runs after the graph's tensors were proved sane. Beyond references in
 * range it proves the data flow a kernel relies on: steps write only scratch tensors and the
 * graph's outputs (never an input the caller owns, never a weight in a read-only mapping), read
 * nothing that no earlier step wrote, and every output is written. The parameters of each step
 * are then checked against its tensors by the kernels' own kiln_cpu_step_validate, so a step
 * that passes cannot make a kernel read or write out of bounds.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "backends/cpu/rt/ctxbin_reader.h"
#include "core/alloc.h"
#include "core/check.h"

static const char *const op_names[KILN_CPU_OP_COUNT] = {
#define OP_NAME(name, value, step_name, params) [value] = step_name,
    KILN_CPU_OP_LIST(OP_NAME)
#undef OP_NAME
};

const char *kiln_ctxbin_op_name(uint32_t op) { return op < KILN_CPU_OP_COUNT && op_names[op] ? op_names[op] : "?"; }

/* The tensors of one step as kiln_cpu_step_validate wants them. */
typedef struct step_io {
    kiln_tensor views[KILN_CPU_MAX_STEP_TENSORS];
    const kiln_tensor *in[KILN_CPU_MAX_STEP_TENSORS];
    kiln_tensor *out[KILN_CPU_MAX_STEP_TENSORS];
    size_t in_sizes[KILN_CPU_MAX_STEP_TENSORS];
    size_t out_sizes[KILN_CPU_MAX_STEP_TENSORS];
} step_io;

typedef struct step_check {
    const kiln_ctx_graph *g;
    const kiln_ctx_tensor *tensors;
    uint8_t *written;               /* (n_tensors) 1 once some step (or the caller) defined it */
    const char *where;
    char *message;
    size_t message_size;
} step_check;

#define REJECT(c, ...) kiln_ctxbin_reject((c)->message, (c)->message_size, __VA_ARGS__)

static kiln_status gather_inputs(step_check *c, uint32_t k, const kiln_ctx_step *s, step_io *io)
{
    for (uint32_t i = 0; i < s->n_inputs; i++) {
        int32_t t = s->tensors[i];
        if (t == -1) continue;
        if (t < 0 || (uint32_t)t >= c->g->n_tensors) return REJECT(c, "%s: step %u input %u out of range", c->where, k, i);
        if (!c->written[t]) return REJECT(c, "%s: step %u reads tensor %d before any step writes it", c->where, k, t);
        kiln_ctxbin_tensor_view(&c->tensors[t], &io->views[i]);
        io->in[i] = &io->views[i];
        io->in_sizes[i] = (size_t)c->tensors[t].size;
    }
    return KILN_OK;
}

static kiln_status gather_outputs(step_check *c, uint32_t k, const kiln_ctx_step *s, step_io *io)
{
    for (uint32_t j = 0; j < s->n_outputs; j++) {
        int32_t t = s->tensors[s->n_inputs + j];
        if (t < 0 || (uint32_t)t >= c->g->n_tensors) return REJECT(c, "%s: step %u output %u out of range", c->where, k, j);
        uint8_t kind = c->tensors[t].kind;
        if (kind != KILN_CTX_TENSOR_SCRATCH && kind != KILN_CTX_TENSOR_OUTPUT)
            return REJECT(c, "%s: step %u writes tensor %d, which is an input or a weight", c->where, k, t);
        kiln_tensor *v = &io->views[s->n_inputs + j];
        kiln_ctxbin_tensor_view(&c->tensors[t], v);
        io->out[j] = v;
        io->out_sizes[j] = (size_t)c->tensors[t].size;
    }
    return KILN_OK;
}

static kiln_status check_step(step_check *c, const kiln_ctx_record *r, uint32_t k, const kiln_ctx_step *s)
{
    const kiln_ctx_graph *g = c->g;
    if (!kiln_cpu_op_find(s->op)) return REJECT(c, "%s: step %u has unknown op %u", c->where, k, s->op);
    if (s->n_outputs == 0 || (uint32_t)s->n_inputs + s->n_outputs > KILN_CPU_MAX_STEP_TENSORS)
        return REJECT(c, "%s: step %u has %u inputs and %u outputs", c->where, k, s->n_inputs, s->n_outputs);
    if (s->workspace_size > g->scratch_size - g->workspace_offset)
        return REJECT(c, "%s: step %u needs more workspace than the graph reserves", c->where, k);
    step_io io;
    memset(&io, 0, sizeof io);
    KILN_TRY(gather_inputs(c, k, s, &io));
    KILN_TRY(gather_outputs(c, k, s, &io));
    kiln_status st = kiln_cpu_step_validate(s->op, s->params, io.in, s->n_inputs, io.in_sizes, io.out, s->n_outputs,
                                            io.out_sizes, r->gemm_mr, r->gemm_nr);
    if (st != KILN_OK)
        return REJECT(c, "%s: step %u (%s): parameters do not match its tensors", c->where, k, kiln_ctxbin_op_name(s->op));
    for (uint32_t j = 0; j < s->n_outputs; j++) c->written[s->tensors[s->n_inputs + j]] = 1;
    return KILN_OK;
}

kiln_status kiln_ctxbin_check_steps(const kiln_ctxbin *b, const kiln_ctx_record *r, const kiln_ctx_graph *g,
                                    const kiln_allocator *allocator, char *message, size_t message_size)
{
    char where[160];
    snprintf(where, sizeof where, "record '%s' graph '%s'", kiln_ctxbin_string(b, r->target), kiln_ctxbin_string(b, g->name));
    step_check c = {g, kiln_ctxbin_tensors(b, g), NULL, where, message, message_size};
    c.written = kiln_alloc_zero(allocator, g->n_tensors ? g->n_tensors : 1, 1);
    KILN_CHECK(c.written, KILN_ERROR_OUT_OF_MEMORY);
    for (uint32_t i = 0; i < g->n_tensors; i++)
        c.written[i] = c.tensors[i].kind == KILN_CTX_TENSOR_INPUT || c.tensors[i].kind == KILN_CTX_TENSOR_WEIGHT;
    const kiln_ctx_step *steps = kiln_ctxbin_steps(b, g);
    kiln_status st = KILN_OK;
    for (uint32_t k = 0; k < g->n_steps && st == KILN_OK; k++) st = check_step(&c, r, k, &steps[k]);
    for (uint32_t j = 0; j < g->n_outputs && st == KILN_OK; j++)
        if (!c.written[g->n_inputs + j]) st = REJECT(&c, "%s: output %u is never written", where, j);
    kiln_free(allocator, c.written);
    return st;
}
