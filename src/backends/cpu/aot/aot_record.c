/* aot_record.c — the weight pool and building one target's record of lowered graphs.
 *
 * Layer: backends/cpu/aot (internal, see aot_record.h). Weights are materialised per target:
 * RAW bytes are referenced where they already live (the model's constants or the lowering
 * arena); packed forms are laid out with the target kernel table's MR/NR into fresh buffers the
 * pool owns. Targets whose tiles coincide produce identical packed bytes, which the pool then
 * stores once, so a multi-target binary pays for distinct layouts only.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cpu/aot/aot_record.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/hash.h"

void aot_pool_init(aot_pool *pool, const kiln_allocator *allocator)
{
    memset(pool, 0, sizeof *pool);
    pool->allocator = allocator;
}

void aot_pool_deinit(aot_pool *pool)
{
    for (size_t i = 0; i < pool->n_blocks; i++)
        if (pool->blocks[i].owned) kiln_free(pool->allocator, (void *)pool->blocks[i].data);
    kiln_free(pool->allocator, pool->blocks);
    memset(pool, 0, sizeof *pool);
}

static bool pool_grow(aot_pool *pool)
{
    if (pool->n_blocks < pool->cap_blocks) return true;
    size_t cap = pool->cap_blocks ? pool->cap_blocks * 2 : 64, bytes;
    if (!kiln_mul_size(cap, sizeof(aot_block), &bytes)) return false;
    aot_block *blocks = kiln_alloc(pool->allocator, bytes, 16);
    if (!blocks) return false;
    if (pool->n_blocks) memcpy(blocks, pool->blocks, pool->n_blocks * sizeof *blocks);
    kiln_free(pool->allocator, pool->blocks);
    pool->blocks = blocks;
    pool->cap_blocks = cap;
    return true;
}

kiln_status aot_pool_add(aot_pool *pool, const void *data, size_t size, bool owned, uint32_t *index)
{
    uint64_t hash = kiln_hash64(data, size, 0);
    for (size_t i = 0; i < pool->n_blocks; i++) {
        const aot_block *b = &pool->blocks[i];
        if (b->hash == hash && b->size == size && memcmp(b->data, data, size) == 0) {
            if (owned) kiln_free(pool->allocator, (void *)data);
            *index = (uint32_t)i;
            return KILN_OK;
        }
    }
    kiln_status st = KILN_OK;
    if (pool->n_blocks >= UINT32_MAX) st = KILN_ERROR_LIMIT;
    else if (!pool_grow(pool)) st = KILN_ERROR_OUT_OF_MEMORY;
    if (st != KILN_OK) {
        if (owned) kiln_free(pool->allocator, (void *)data);
        return st;
    }
    pool->blocks[pool->n_blocks] = (aot_block){data, size, hash, owned};
    pool->total_size += size;
    *index = (uint32_t)pool->n_blocks++;
    return KILN_OK;
}

/* ---- weights ---------------------------------------------------------------------------------- */

static size_t packed_size(const aot_operand *w, const kiln_cpu_kernels *k)
{
    if (w->form == AOT_FORM_PACK_B) return kiln_cpu_pack_b_size(w->k, w->n, k->gemm_nr);
    if (w->form == AOT_FORM_PACK_B_BF16) return kiln_cpu_pack_b_bf16_size(w->k, w->n, k->gemm_nr);
    if (w->form == AOT_FORM_PACK_B_STRASSEN) return kiln_cpu_pack_b_strassen_size(w->k, w->n, k->gemm_nr);
    if (w->form == AOT_FORM_WINOGRAD) return kiln_cpu_pack_winograd_size(w->rows, w->k, k->gemm_mr);
    if (w->form == AOT_FORM_WINOGRAD_B) return kiln_cpu_pack_winograd_size(w->rows, w->k, k->gemm_nr);
    if (w->form == AOT_FORM_WINOGRAD_B_BF16 || w->form == AOT_FORM_WINOGRAD_BF16) {
        size_t one = kiln_cpu_pack_b_bf16_size(w->k, w->rows, w->form == AOT_FORM_WINOGRAD_BF16 ? k->gemm_mr : k->gemm_nr);
        return one == SIZE_MAX || one > SIZE_MAX / 16 ? SIZE_MAX : 16 * one;
    }
    if (w->form == AOT_FORM_PACK_A_BF16) {
        size_t one = kiln_cpu_pack_b_bf16_size(w->k, w->rows, k->gemm_mr);
        return one == SIZE_MAX || one > SIZE_MAX / (size_t)w->groups ? SIZE_MAX : (size_t)w->groups * one;
    }
    return (size_t)w->groups * kiln_cpu_pack_a_size(w->rows, w->k, k->gemm_mr);
}

/* Filters in bf16 (precision bf16): their f32 panels — the Winograd transform's 16 positions,
   or a convolution's groups of A panels — packed as usual, then each set of panels of `width`
   through kiln_cpu_panels_to_bf16 (the arithmetic is the f32 one, rounded once at the end). */
static kiln_status pack_filters_bf16(const aot_operand *w, bool winograd, uint32_t width, const kiln_allocator *a,
                                     uint32_t *dst)
{
    int64_t sets = winograd ? 16 : w->groups;
    size_t bytes = winograd ? kiln_cpu_pack_winograd_size(w->rows, w->k, width)
                            : (size_t)sets * kiln_cpu_pack_a_size(w->rows, w->k, width);
    KILN_CHECK(bytes != SIZE_MAX && bytes > 0, KILN_ERROR_LIMIT);
    float *f32 = kiln_alloc(a, bytes, 64);
    KILN_CHECK(f32, KILN_ERROR_OUT_OF_MEMORY);
    size_t f32_set = bytes / (size_t)sets / sizeof(float);
    if (winograd) kiln_cpu_pack_winograd(w->t.data, w->rows, w->k, width, f32);
    for (int64_t g = 0; !winograd && g < sets; g++)
        kiln_cpu_pack_a((const float *)w->t.data + g * w->rows * w->k, w->rows, w->k, 0, width, f32 + (size_t)g * f32_set);
    size_t bf16_set = kiln_cpu_pack_b_bf16_size(w->k, w->rows, width) / sizeof(uint32_t);
    int64_t panels = (w->rows + width - 1) / width;
    for (int64_t s = 0; s < sets; s++)
        kiln_cpu_panels_to_bf16(f32 + (size_t)s * f32_set, w->k, panels, width, dst + (size_t)s * bf16_set);
    kiln_free(a, f32);
    return KILN_OK;
}

static kiln_status pack(const aot_operand *w, const kiln_cpu_kernels *k, const kiln_allocator *a, float *dst)
{
    const float *src = w->t.data;
    if (w->form == AOT_FORM_WINOGRAD_B_BF16) return pack_filters_bf16(w, true, k->gemm_nr, a, (uint32_t *)(void *)dst);
    if (w->form == AOT_FORM_WINOGRAD_BF16) return pack_filters_bf16(w, true, k->gemm_mr, a, (uint32_t *)(void *)dst);
    if (w->form == AOT_FORM_PACK_A_BF16) return pack_filters_bf16(w, false, k->gemm_mr, a, (uint32_t *)(void *)dst);
    if (w->form == AOT_FORM_PACK_B) {
        kiln_cpu_pack_b(src, w->k, w->n, w->trans, k->gemm_nr, dst);
        return KILN_OK;
    }
    if (w->form == AOT_FORM_PACK_B_STRASSEN) {
        kiln_cpu_pack_b_strassen(src, w->k, w->n, w->trans, k->gemm_nr, dst);
        return KILN_OK;
    }
    if (w->form == AOT_FORM_PACK_B_BF16) {
        kiln_cpu_pack_b_bf16(src, w->k, w->n, w->trans, k->gemm_nr, (uint32_t *)(void *)dst);
        return KILN_OK;
    }
    if (w->form == AOT_FORM_WINOGRAD || w->form == AOT_FORM_WINOGRAD_B) {
        kiln_cpu_pack_winograd(src, w->rows, w->k, w->form == AOT_FORM_WINOGRAD ? k->gemm_mr : k->gemm_nr, dst);
        return KILN_OK;
    }
    size_t group_floats = kiln_cpu_pack_a_size(w->rows, w->k, k->gemm_mr) / sizeof(float);
    for (int64_t g = 0; g < w->groups; g++)
        kiln_cpu_pack_a(src + g * w->rows * w->k, w->rows, w->k, 0, k->gemm_mr, dst + (size_t)g * group_floats);
    return KILN_OK;
}

/* Store weight tensor w for kernel table k; its block index and stored size out. */
static kiln_status add_weight(aot_pool *pool, const aot_operand *w, const kiln_cpu_kernels *k, uint32_t *block,
                              uint64_t *size)
{
    if (w->form == AOT_FORM_RAW) {
        *size = kiln_tensor_bytes(&w->t);
        return aot_pool_add(pool, w->t.data, (size_t)*size, false, block);
    }
    KILN_CHECK(k->gemm_mr > 0 && k->gemm_nr > 0, KILN_ERROR_INVALID_ARGUMENT);
    *size = packed_size(w, k);
    KILN_CHECK(*size != SIZE_MAX, KILN_ERROR_LIMIT);
    float *dst = kiln_alloc(pool->allocator, (size_t)*size, 64);
    KILN_CHECK(dst, KILN_ERROR_OUT_OF_MEMORY);
    kiln_status st = pack(w, k, pool->allocator, dst);
    if (st != KILN_OK) {
        kiln_free(pool->allocator, dst);
        return st;
    }
    return aot_pool_add(pool, dst, (size_t)*size, true, block);
}

/* ---- one graph, one target ------------------------------------------------------------------- */

/* Every step needs a kernel in the target's table; a binary naming an op its record cannot
   run would only fail later, at load. */
static kiln_status check_kernels(const kiln_cpu_target *target, const aot_graph *g, char *message, size_t message_size)
{
    for (size_t s = 0; s < g->n_steps; s++) {
        uint32_t op = g->steps[s].op;
        if (op < KILN_CPU_OP_COUNT && target->kernels->ops[op]) continue;
        if (message && message_size && !message[0])
            snprintf(message, message_size, "target '%s' has no kernel for lowered op %u of graph '%s'", target->name,
                     op, g->name);
        return KILN_ERROR_NOT_SUPPORTED;
    }
    return KILN_OK;
}

static kiln_status build_graph(aot_record_graph *rg, const kiln_cpu_target *target, const aot_graph *g, aot_pool *pool,
                               kiln_arena *arena)
{
    size_t nt = g->n_tensors ? g->n_tensors : 1, ns = g->n_steps ? g->n_steps : 1;
    rg->graph = g;
    rg->tensor_block = KILN_ARENA_ARRAY(arena, uint32_t, nt);
    rg->tensor_size = KILN_ARENA_ARRAY(arena, uint64_t, nt);
    rg->step_workspace = KILN_ARENA_ARRAY(arena, uint64_t, ns);
    KILN_CHECK(rg->tensor_block && rg->tensor_size && rg->step_workspace, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < g->n_tensors; i++) {
        const aot_tensor *t = &g->tensors[i];
        if (t->kind == KILN_CTX_TENSOR_WEIGHT)
            KILN_TRY(add_weight(pool, &t->weight, target->kernels, &rg->tensor_block[i], &rg->tensor_size[i]));
        else
            rg->tensor_size[i] = kiln_tensor_bytes(&t->t);
    }
    uint64_t workspace = 0;
    for (size_t s = 0; s < g->n_steps; s++) {
        const aot_step *step = &g->steps[s];
        size_t need = kiln_cpu_workspace_size(target->kernels, step->op, &step->params, target->l1_size, target->l2_size);
        rg->step_workspace[s] = need;
        if (need > workspace) workspace = need;
    }
    KILN_CHECK(workspace <= UINT64_MAX / 2 && g->intermediates_size <= UINT64_MAX / 2, KILN_ERROR_LIMIT);
    rg->workspace_offset = g->intermediates_size;
    rg->scratch_size = rg->workspace_offset + kiln_align_up_u64(workspace, 64);
    return KILN_OK;
}

kiln_status aot_record_build(aot_record *r, const kiln_cpu_target *target, const aot_graph *graphs, size_t n_graphs,
                             aot_pool *pool, kiln_arena *arena, char *message, size_t message_size)
{
    for (size_t i = 0; i < n_graphs; i++) KILN_TRY(check_kernels(target, &graphs[i], message, message_size));
    r->target = target;
    r->n_graphs = n_graphs;
    r->graphs = KILN_ARENA_ARRAY(arena, aot_record_graph, n_graphs ? n_graphs : 1);
    KILN_CHECK(r->graphs, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n_graphs; i++) KILN_TRY(build_graph(&r->graphs[i], target, &graphs[i], pool, arena));
    return KILN_OK;
}
