/* context_exec.c — running one graph of a context with its record's kernel table.
 *
 * Layer: backends/cpu/rt. The binary was validated at load, so each step's tensors, parameters
 * and workspace are known to fit; what remains per call is to check the caller's tensors against
 * the graph's inputs and outputs and to resolve where each step tensor lives:
 *
 *   INPUT / OUTPUT   the caller's buffers, bound per call
 *   WEIGHT           bound once at load, in place in the payload
 *   SCRATCH          group buffer + offset       group buffer:  [ intermediates | workspace ]
 *                                                                0    workspace_offset    scratch_size
 *
 * The scratch buffer belongs to the context's scratch group, whose lock is held for the whole
 * graph: executions that share a buffer never overlap. Steps may spread over the calling
 * handle's threads (kiln_cpu_exec): task 0 works in the group buffer's workspace, tasks 1..n-1
 * in the handle's own workspace slots (cpu_backend.c), which the group lock serialises as well.
 */
#include <string.h>

#include "backends/cpu/rt/context.h"
#include "core/check.h"

static kiln_status check_io(const kiln_tensor *t, const kiln_tensor *spec)
{
    KILN_CHECK(t, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(t->dtype == spec->dtype, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(t->rank == spec->rank, KILN_ERROR_SHAPE_MISMATCH);
    for (uint32_t d = 0; d < t->rank; d++) KILN_CHECK(t->shape[d] == spec->shape[d], KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(t->data || kiln_tensor_numel(t) == 0, KILN_ERROR_INVALID_ARGUMENT);
    return KILN_OK;
}

typedef struct graph_call {
    const kiln_cpu_graph *graph;
    const kiln_ctx_tensor *fmt;     /* the graph's tensor table in the binary */
    const kiln_tensor *const *in;
    kiln_tensor *const *out;
    uint8_t *scratch;               /* NULL when the context needs none */
    const kiln_cpu_exec *threads;   /* the handle's threads and extra workspace slots */
} graph_call;

/* Step tensor `index` with its data resolved for this call. */
static void resolve(const graph_call *call, int32_t index, kiln_tensor *view)
{
    const kiln_ctx_tensor *f = &call->fmt[index];
    *view = call->graph->tensors[index];
    switch (f->kind) {
    case KILN_CTX_TENSOR_INPUT: view->data = call->in[f->offset]->data; break;
    case KILN_CTX_TENSOR_OUTPUT: view->data = call->out[f->offset]->data; break;
    case KILN_CTX_TENSOR_SCRATCH: view->data = call->scratch ? call->scratch + f->offset : NULL; break;
    default: break; /* WEIGHT: bound at load */
    }
}

static kiln_status run_step(const kiln_cpu_kernels *k, const graph_call *call, const kiln_ctx_step *s)
{
    kiln_tensor views[KILN_CPU_MAX_STEP_TENSORS];
    const kiln_tensor *ins[KILN_CPU_MAX_STEP_TENSORS] = {0};
    kiln_tensor *outs[KILN_CPU_MAX_STEP_TENSORS] = {0};
    for (uint32_t i = 0; i < s->n_inputs; i++) {
        if (s->tensors[i] < 0) continue;
        resolve(call, s->tensors[i], &views[i]);
        ins[i] = &views[i];
    }
    bool writes = false;
    for (uint32_t j = 0; j < s->n_outputs; j++) {
        resolve(call, s->tensors[s->n_inputs + j], &views[s->n_inputs + j]);
        outs[j] = &views[s->n_inputs + j];
        writes |= kiln_tensor_numel(outs[j]) != 0;
    }
    /* Nothing to write: the step is skipped. Validation made each step's params describe its
       output exactly, so an empty output means some zero dimension, and the kernel's other loop
       bounds, no longer tied to any tensor, are never walked. */
    if (!writes) return KILN_OK;
    const kiln_ctx_graph *g = call->graph->fmt;
    /* Slot 0 is the step's workspace in the group buffer; the other slots are the handle's. */
    kiln_cpu_exec exec = *call->threads;
    exec.workspace = call->scratch ? call->scratch + g->workspace_offset : NULL;
    exec.workspace_size = (size_t)s->workspace_size;
    return k->ops[s->op](s->params, ins, outs, &exec);
}

kiln_status kiln_cpu_context_execute(kiln_cpu_context *c, uint32_t graph, const kiln_tensor *const *in, size_t n_in,
                                     kiln_tensor *const *out, size_t n_out, const kiln_cpu_exec *threads)
{
    static const kiln_cpu_exec one_thread = {0};
    KILN_CHECK(c && c->magic == KILN_CPU_CONTEXT_MAGIC && graph < c->record->n_graphs, KILN_ERROR_STALE_HANDLE);
    const kiln_cpu_graph *gr = &c->graphs[graph];
    const kiln_ctx_graph *g = gr->fmt;
    KILN_CHECK(n_in == g->n_inputs && n_out == g->n_outputs, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(n_in == 0 || in, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < n_in; i++) KILN_TRY(check_io(in[i], &gr->tensors[i]));
    for (size_t j = 0; j < n_out; j++) KILN_TRY(check_io(out[j], &gr->tensors[n_in + j]));
    graph_call call = {gr, kiln_ctxbin_tensors(&c->bin, g), in, out, NULL, threads ? threads : &one_thread};
    if (c->group) call.scratch = c->rt->lock(c->group);
    kiln_status st = KILN_OK;
    for (uint32_t k = 0; k < g->n_steps && st == KILN_OK; k++) st = run_step(c->kernels, &call, &gr->steps[k]);
    if (c->group) c->rt->unlock(c->group);
    return st;
}

uint64_t kiln_cpu_context_step_workspace(const kiln_cpu_context *c, uint32_t graph)
{
    const kiln_cpu_graph *gr = &c->graphs[graph];
    uint64_t most = 0;
    for (uint32_t k = 0; k < gr->fmt->n_steps; k++)
        if (gr->steps[k].workspace_size > most) most = gr->steps[k].workspace_size;
    return most;
}
