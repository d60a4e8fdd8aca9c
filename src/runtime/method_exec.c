/* method_exec.c — the executor: runs a loaded method's instructions in program order.
 *
 * Layer: runtime. Static instructions run straight on the planned arena. Dynamic ones
 * (values whose shape is only known at run time) first call the kernel's infer() on the real
 * inputs; their DYNAMIC outputs get buffers from the module allocator that live until the next
 * execute (outputs are views valid until then), and planned outputs must match their plan.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "runtime/runtime.h"

#define MAX_ARGS 256

void kiln_method_state_free_dynamic(kiln_module_obj *module, kiln_method_state *s)
{
    for (size_t i = 0; i < s->n_values; i++) {
        kiln_exec_value *x = &s->values[i];
        if (!x->owned_dynamic) continue;
        kiln_free(module->allocator, x->t.data);
        x->t.data = NULL;
        x->owned_dynamic = false;
    }
}

static bool same_shape(const kiln_tensor *a, const kiln_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

/* infer() on real inputs, then give DYNAMIC outputs memory and check planned ones. */
static kiln_status prepare_dynamic(kiln_module_obj *module, kiln_method_state *s, kiln_exec_instr *in,
                                   const kiln_tensor *const *ins, kiln_tensor *const *outs, size_t *scratch)
{
    size_t n_in = in->node.n_inputs;
    kiln_tensor shapes[MAX_ARGS];
    kiln_tensor *shape_outs[MAX_ARGS] = {0};
    for (size_t j = 0; j < in->node.n_outputs; j++) {
        if (!outs[j]) continue;
        memset(&shapes[j], 0, sizeof shapes[j]);
        shape_outs[j] = &shapes[j];
    }
    KILN_TRY(in->kernel->infer(&in->node, ins, shape_outs, scratch));
    for (size_t j = 0; j < in->node.n_outputs; j++) {
        if (!outs[j]) continue;
        kiln_exec_value *x = &s->values[in->args[n_in + j]];
        KILN_CHECK(kiln_tensor_numel(&shapes[j]) >= 0, KILN_ERROR_LIMIT);
        if (x->storage == KILN_STORAGE_ARENA) {
            KILN_CHECK(same_shape(&shapes[j], &x->declared), KILN_ERROR_SHAPE_MISMATCH);
            continue;
        }
        if (x->owned_dynamic) kiln_free(module->allocator, x->t.data);
        x->owned_dynamic = false;
        x->t = shapes[j];
        x->t.data = kiln_alloc(module->allocator, kiln_tensor_bytes(&shapes[j]), 64);
        KILN_CHECK(x->t.data, KILN_ERROR_OUT_OF_MEMORY);
        x->owned_dynamic = true;
    }
    return KILN_OK;
}

static kiln_status run_instr(kiln_module_obj *module, kiln_method_state *s, kiln_exec_instr *in)
{
    const kiln_tensor *ins[MAX_ARGS] = {0};
    kiln_tensor *outs[MAX_ARGS] = {0};
    size_t n_in = in->node.n_inputs, n_out = in->node.n_outputs;
    for (size_t i = 0; i < n_in; i++)
        if (in->args[i] >= 0) ins[i] = &s->values[in->args[i]].t;
    for (size_t j = 0; j < n_out; j++)
        if (in->args[n_in + j] >= 0) outs[j] = &s->values[in->args[n_in + j]].t;
    if (in->backend) return in->backend->execute(in->backend->user, in->delegate, ins, n_in, outs, n_out);

    kiln_kernel_ctx ctx = {s->scratch, (size_t)s->fmt->scratch_size, kiln_threadpool_parallel_for, module->pool,
                           module->num_threads};
    void *extra = NULL;
    if (in->dynamic) {
        size_t scratch = 0;
        KILN_TRY(prepare_dynamic(module, s, in, ins, outs, &scratch));
        if (scratch > ctx.scratch_size) {
            extra = kiln_alloc(module->allocator, scratch, 64);
            KILN_CHECK(extra, KILN_ERROR_OUT_OF_MEMORY);
            ctx.scratch = extra;
            ctx.scratch_size = scratch;
        }
    }
    kiln_status st = in->kernel->run(&in->node, ins, outs, &ctx);
    kiln_free(module->allocator, extra);
    return st;
}

kiln_status kiln_method_state_execute(kiln_module_obj *module, kiln_method_state *s)
{
    kiln_method_state_free_dynamic(module, s);
    for (size_t k = 0; k < s->n_instrs; k++) KILN_TRY(run_instr(module, s, &s->instrs[k]));
    return KILN_OK;
}
