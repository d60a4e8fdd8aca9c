/* context.c — building and destroying contexts, stage by stage (see context.h).
 *
 * Layer: backends/cpu/rt. Each stage either completes or leaves the context in a state that
 * kiln_cpu_context_destroy undoes exactly: pointers are NULL until their allocation succeeded,
 * and group membership is recorded only once it is held.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "backends/cpu/rt/context.h"
#include "backends/cpu/targets.h"
#include "core/alloc.h"
#include "core/check.h"

kiln_status kiln_cpu_context_new(const kiln_cpu_key *key, kiln_cpu_context **out)
{
    *out = NULL;
    kiln_cpu_context *c = KILN_NEW(key->allocator, kiln_cpu_context);
    KILN_CHECK(c, KILN_ERROR_OUT_OF_MEMORY);
    c->magic = KILN_CPU_CONTEXT_MAGIC;
    c->id = kiln_cpu_rt_next_context_id();
    c->signature = key->signature;
    c->allocator = key->allocator;
    c->payload = key->payload;
    c->payload_size = key->payload_size;
    c->explicit_group = key->group;
    c->rt = key->rt;
    c->rt->context_created();
    if (key->target) {
        c->target = kiln_strdup(key->allocator, key->target);
        if (!c->target) {
            kiln_cpu_context_destroy(c);
            return KILN_ERROR_OUT_OF_MEMORY;
        }
    }
    *out = c;
    return KILN_OK;
}

#define REJECT(...) kiln_ctxbin_reject(message, message_size, __VA_ARGS__)

/* A step's params, copied to where the parameter struct's alignment holds (the step's own bytes
   sit in the binary at no particular alignment). */
typedef union aligned_params {
    max_align_t align;
    unsigned char bytes[KILN_CPU_PARAMS_SIZE];
} aligned_params;

static const void *params_copy(const kiln_ctx_step *step, const kiln_cpu_op_descriptor *info, aligned_params *copy)
{
    memcpy(copy->bytes, step->params, info->params_size);
    return copy->bytes;
}

/* Whether a step reads a weight packed for the record's register tile (kiln_cpu_op_info). */
static bool step_reads_packed_weight(const kiln_ctx_step *step)
{
    const kiln_cpu_op_descriptor *info = kiln_cpu_op_find(step->op);
    aligned_params copy;
    return info && info->reads_packed && info->reads_packed(params_copy(step, info, &copy));
}

/* Whether a step holds its weights as bf16 pairs (precision bf16). */
static bool step_reads_bf16_weight(const kiln_ctx_step *step)
{
    const kiln_cpu_op_descriptor *info = kiln_cpu_op_find(step->op);
    aligned_params copy;
    return info && info->reads_bf16 && info->reads_bf16(params_copy(step, info, &copy));
}

static bool record_has_packed_weights(const kiln_ctxbin *bin, const kiln_ctx_record *r)
{
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(bin, r);
    for (uint32_t i = 0; i < r->n_graphs; i++) {
        const kiln_ctx_step *steps = kiln_ctxbin_steps(bin, &graphs[i]);
        for (uint32_t s = 0; s < graphs[i].n_steps; s++)
            if (step_reads_packed_weight(&steps[s])) return true;
    }
    return false;
}

/* The selected record's steps against this build's kernel table for its target. The tile the
   record was packed for must be the table's only when some weight is packed: a record without
   packed weights (written, say, when the generic tile was 4x8) runs on any tile. */
static kiln_status check_kernels(const kiln_cpu_context *c, char *message, size_t message_size)
{
    const kiln_ctx_record *r = c->record;
    const kiln_cpu_kernels *k = c->kernels;
    const char *target = kiln_ctxbin_string(&c->bin, r->target);
    if ((r->gemm_mr != k->gemm_mr || r->gemm_nr != k->gemm_nr) && record_has_packed_weights(&c->bin, r))
        return REJECT("record '%s' was packed for a %ux%u register tile; this build's %s kernels use %ux%u", target,
                      r->gemm_mr, r->gemm_nr, k->isa, k->gemm_mr, k->gemm_nr);
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(&c->bin, r);
    for (uint32_t i = 0; i < r->n_graphs; i++) {
        const kiln_ctx_step *steps = kiln_ctxbin_steps(&c->bin, &graphs[i]);
        for (uint32_t s = 0; s < graphs[i].n_steps; s++) {
            const kiln_ctx_step *step = &steps[s];
            if (!k->ops[step->op])
                return REJECT("record '%s': this build's %s kernels have no %s", target, k->isa,
                              kiln_ctxbin_op_name(step->op));
            if (step_reads_bf16_weight(step) && !k->bf16)
                return REJECT("record '%s' holds bf16 weights; this build's %s kernels run f32 only", target, k->isa);
            size_t need = kiln_cpu_workspace_size(k, step->op, step->params, (size_t)r->l1_size, (size_t)r->l2_size);
            if (need > step->workspace_size)
                return REJECT("record '%s' graph '%s': step %u needs %zu bytes of workspace, the binary reserves %llu",
                              target, kiln_ctxbin_string(&c->bin, graphs[i].name), s, need,
                              (unsigned long long)step->workspace_size);
        }
    }
    return KILN_OK;
}

kiln_status kiln_cpu_context_load(kiln_cpu_context *c, char *message, size_t message_size)
{
    KILN_TRY(kiln_ctxbin_open(&c->bin, c->payload, c->payload_size, c->allocator, message, message_size));
    KILN_TRY(kiln_cpu_select_record(&c->bin, c->target, &c->record, message, message_size));
    const kiln_cpu_target *t = kiln_cpu_target_find(kiln_ctxbin_string(&c->bin, c->record->target));
    if (KILN_NEVER(!t)) return KILN_ERROR_INTERNAL; /* selection returned a record */
    c->kernels = t->kernels;
    KILN_TRY(check_kernels(c, message, message_size));
    uint64_t need = 0;
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(&c->bin, c->record);
    for (uint32_t i = 0; i < c->record->n_graphs; i++)
        if (graphs[i].scratch_size > need) need = graphs[i].scratch_size;
    uint64_t group = c->bin.header->group_scratch_size;
    if (group && group < need)
        return REJECT("scratch group size %llu is smaller than the graphs' need of %llu bytes", (unsigned long long)group,
                      (unsigned long long)need);
    c->group_size = need == 0 ? 0 : group ? group : need;
    return KILN_OK;
}

kiln_status kiln_cpu_context_bind(kiln_cpu_context *c)
{
    uint32_t n = c->record->n_graphs;
    c->graphs = kiln_alloc_zero(c->allocator, n * sizeof *c->graphs, _Alignof(kiln_cpu_graph));
    KILN_CHECK(c->graphs, KILN_ERROR_OUT_OF_MEMORY);
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(&c->bin, c->record);
    for (uint32_t i = 0; i < n; i++) {
        kiln_cpu_graph *g = &c->graphs[i];
        g->fmt = &graphs[i];
        g->steps = kiln_ctxbin_steps(&c->bin, g->fmt);
        uint32_t n_tensors = g->fmt->n_tensors;
        g->tensors = kiln_alloc_zero(c->allocator, (n_tensors ? n_tensors : 1) * sizeof(kiln_tensor), _Alignof(kiln_tensor));
        KILN_CHECK(g->tensors, KILN_ERROR_OUT_OF_MEMORY);
        const kiln_ctx_tensor *fmt = kiln_ctxbin_tensors(&c->bin, g->fmt);
        for (uint32_t t = 0; t < n_tensors; t++) {
            kiln_ctxbin_tensor_view(&fmt[t], &g->tensors[t]);
            if (fmt[t].kind == KILN_CTX_TENSOR_WEIGHT) /* read in place (numbers only): the payload is mapped read-only */
                g->tensors[t].data = (void *)(kiln_ctxbin_block_data(&c->bin, fmt[t].block) + fmt[t].offset);
        }
    }
    return KILN_OK;
}

kiln_status kiln_cpu_context_join_explicit(kiln_cpu_context *c)
{
    if (!c->explicit_group || !c->group_size) return KILN_OK;
    return c->rt->join_explicit(c->explicit_group, c->group_size, &c->group);
}

void kiln_cpu_context_destroy(kiln_cpu_context *c)
{
    if (!c) return;
    const kiln_allocator *a = c->allocator;
    const kiln_runtime_services *rt = c->rt;
    if (c->group && c->explicit_group) rt->leave_explicit(c->group);
    else if (c->group && !c->owner) rt->default_free(c->group); /* the owner's group, already unregistered */
    for (uint32_t i = 0; c->graphs && i < c->record->n_graphs; i++) kiln_free(a, c->graphs[i].tensors);
    kiln_free(a, c->graphs);
    kiln_ctxbin_close(&c->bin); /* after the graphs: c->record points into the copy */
    kiln_free(a, c->target);
    c->magic = 0;
    kiln_free(a, c);
    rt->context_destroyed();
}

bool kiln_cpu_context_matches(const kiln_cpu_context *c, const kiln_cpu_key *key)
{
    bool same_target = c->target ? key->target && strcmp(c->target, key->target) == 0 : !key->target;
    return c->signature == key->signature && c->allocator == key->allocator && c->payload == key->payload &&
           c->payload_size == key->payload_size && c->explicit_group == key->group && same_target;
}
