/* kiln_gemm.c — kiln's GEMM step prepared and called as the runtime would (see kiln_gemm.h).
 * Layer: bench. */
#include "kiln_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "core/alloc.h"

static int has_gemm(const kiln_cpu_target *t)
{
    return t && t->kernels && t->kernels->ops[KILN_CPU_OP_GEMM] != NULL;
}

const kiln_cpu_target *bench_kiln_pick_target(const char *forced, char *note, size_t note_size)
{
    note[0] = '\0';
    if (forced) {
        const kiln_cpu_target *t = kiln_cpu_target_find(forced);
        if (!t || !kiln_cpu_target_runnable(t)) {
            snprintf(note, note_size, "target '%s' is %s", forced, t ? "not runnable on this CPU" : "unknown");
            return NULL;
        }
        if (!has_gemm(t)) snprintf(note, note_size, "target '%s' has no GEMM step yet", forced);
        return has_gemm(t) ? t : NULL;
    }
    const kiln_cpu_target *best = kiln_cpu_target_best(), *pick = NULL;
    if (has_gemm(best)) return best;
    for (size_t i = 0; i < kiln_cpu_target_count(); i++) {
        const kiln_cpu_target *t = kiln_cpu_target_at(i);
        if (kiln_cpu_target_runnable(t) && has_gemm(t) && (!pick || t->rank > pick->rank)) pick = t;
    }
    if (pick)
        snprintf(note, note_size, "the best target here, %s, has no GEMM step yet: measuring %s instead", best->name,
                 pick->name);
    else
        snprintf(note, note_size, "no runnable target has a GEMM step yet (best target: %s)", best->name);
    return pick;
}

int bench_kiln_threads_used(int requested) { return requested < 1 ? 1 : requested; }

static void set_shape(kiln_tensor *t, int64_t d0, int64_t d1)
{
    memset(t, 0, sizeof *t);
    t->dtype = KILN_DTYPE_F32;
    t->rank = d1 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
}

kiln_status bench_kiln_gemm_prepare(bench_kiln_gemm *g, const kiln_cpu_target *target, int64_t M, int64_t N,
                                    int64_t K, const float *A, const float *B, float *Y, int b_copies, bench_b_form form)
{
    memset(g, 0, sizeof *g);
    if (b_copies < 1 || b_copies > BENCH_MAX_B_COPIES) return KILN_ERROR_INVALID_ARGUMENT;
    g->target = target;
    const kiln_cpu_kernels *k = target->kernels;
    kiln_cpu_gemm_params *p = &g->params;
    const bool bf16 = form == BENCH_B_BF16;
    const bool strassen = form == BENCH_B_COMPILED && kiln_cpu_gemm_strassen_pays(M, N, K);
    *p = (kiln_cpu_gemm_params){.M = M, .N = N, .K = K, .batch = 1, .lda = K, .ldb = N, .ldy = N, .alpha = 1.0f,
                                .beta = 0.0f, .b_packed = bf16 ? KILN_CPU_PACKED_BF16 : strassen ? KILN_CPU_PACKED_STRASSEN : 1,
                                .bias_kind = KILN_CPU_BIAS_NONE, .act = {.kind = KILN_CPU_ACT_NONE}};
    size_t packed_size = bf16       ? kiln_cpu_pack_b_bf16_size(K, N, k->gemm_nr)
                         : strassen ? kiln_cpu_pack_b_strassen_size(K, N, k->gemm_nr)
                                    : kiln_cpu_pack_b_size(K, N, k->gemm_nr);
    for (g->n_b_copies = 0; g->n_b_copies < b_copies; g->n_b_copies++) {
        float *copy = bench_alloc(packed_size);
        if (!copy) {
            bench_kiln_gemm_release(g);
            return KILN_ERROR_OUT_OF_MEMORY;
        }
        if (bf16)
            kiln_cpu_pack_b_bf16(B, K, N, 0, k->gemm_nr, (uint32_t *)(void *)copy);
        else if (strassen)
            kiln_cpu_pack_b_strassen(B, K, N, 0, k->gemm_nr, copy);
        else
            kiln_cpu_pack_b(B, K, N, 0, k->gemm_nr, copy);
        g->b_packed[g->n_b_copies] = copy;
    }
    /* Sized from the target's cache table, as the lowering plans scratch for a binary. */
    g->workspace_size = kiln_cpu_workspace_size(k, KILN_CPU_OP_GEMM, p, target->l1_size, target->l2_size);
    if (g->workspace_size) {
        g->workspace = bench_alloc(g->workspace_size);
        if (!g->workspace) {
            bench_kiln_gemm_release(g);
            return KILN_ERROR_OUT_OF_MEMORY;
        }
    }
    g->exec = (kiln_cpu_exec){.workspace = g->workspace, .workspace_size = g->workspace_size};
    set_shape(&g->a, M, K);
    g->a.data = (void *)A;
    set_shape(&g->b, (int64_t)(packed_size / sizeof(float)), 0);
    if (bf16) {
        g->b.dtype = KILN_DTYPE_BF16;
        g->b.shape[0] = (int64_t)(packed_size / 2);
    }
    g->b.data = g->b_packed[0];
    set_shape(&g->y, M, N);
    g->y.data = Y;
    /* The load-time check the runtime runs on every step: params that a table would reject are
       reported, never timed. */
    const kiln_tensor *in[2] = {&g->a, &g->b};
    kiln_tensor *out[1] = {&g->y};
    kiln_status st = kiln_cpu_step_validate(KILN_CPU_OP_GEMM, p, in, 2, NULL, out, 1, NULL, k->gemm_mr, k->gemm_nr);
    if (st != KILN_OK) bench_kiln_gemm_release(g);
    return st;
}

static void drop_threads(bench_kiln_gemm *g)
{
    kiln_threadpool_destroy(g->pool);
    free(g->extra_workspace);
    g->pool = NULL;
    g->extra_workspace = NULL;
    g->exec = (kiln_cpu_exec){.workspace = g->workspace, .workspace_size = g->workspace_size};
}

kiln_status bench_kiln_gemm_set_threads(bench_kiln_gemm *g, int n_threads)
{
    drop_threads(g);
    if (n_threads <= 1) return KILN_OK;
    size_t slot = (g->workspace_size + 63) / 64 * 64;
    if (slot) {
        g->extra_workspace = bench_alloc(slot * (size_t)(n_threads - 1));
        if (!g->extra_workspace) return KILN_ERROR_OUT_OF_MEMORY;
    }
    kiln_status st = kiln_threadpool_create(kiln_allocator_default(), n_threads, &g->pool);
    if (st != KILN_OK) {
        drop_threads(g);
        return st;
    }
    g->exec.parallel_for = kiln_threadpool_parallel_for;
    g->exec.pool = g->pool;
    g->exec.n_threads = (uint32_t)n_threads;
    g->exec.thread_workspace = g->extra_workspace;
    g->exec.thread_workspace_stride = slot;
    return KILN_OK;
}

kiln_status bench_kiln_gemm_run(bench_kiln_gemm *g)
{
    const kiln_tensor *in[3] = {&g->a, &g->b, NULL};
    kiln_tensor *out[1] = {&g->y};
    kiln_cpu_exec exec = g->exec;
    g->b.data = g->b_packed[g->next_b];
    g->next_b = (g->next_b + 1) % g->n_b_copies;
    return g->target->kernels->ops[KILN_CPU_OP_GEMM](&g->params, in, out, &exec);
}

void bench_kiln_gemm_release(bench_kiln_gemm *g)
{
    drop_threads(g);
    for (int i = 0; i < g->n_b_copies; i++) free(g->b_packed[i]);
    free(g->workspace);
    memset(g->b_packed, 0, sizeof g->b_packed);
    g->n_b_copies = 0;
    g->workspace = NULL;
}
