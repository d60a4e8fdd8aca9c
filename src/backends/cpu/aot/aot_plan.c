/* aot_plan.c — placing a lowered graph's intermediates in its scratch buffer (the default
 * planner; aot_plan_slc.c is the `--slc` one, see aot_plan.h).
 *
 * Layer: backends/cpu/aot (internal). Buffers are placed largest first (ties: earlier first
 * write) at the lowest 64-aligned offset that overlaps no placed buffer alive at the same time;
 * lifetimes are the closed step ranges [first write, last read], so a step's output never shares
 * bytes with its own inputs. The per-step workspace comes after all of them (aot_record.c):
 *
 *   0                              intermediates_size        workspace_offset + workspace
 *   | t0 | t2 (reuses t0's bytes later) | t1 ... |  workspace (max over steps, per target) |
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>

#include "backends/cpu/aot/aot_plan.h"
#include "core/check.h"

typedef struct placed {
    uint64_t offset, size;
    int32_t first, last;
} placed;

static int by_size_desc(const void *pa, const void *pb, void *ctx)
{
    const aot_buffer *buffers = ctx;
    int32_t ia = *(const int32_t *)pa, ib = *(const int32_t *)pb;
    const aot_buffer *a = &buffers[ia], *b = &buffers[ib];
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return ia - ib;
}

/* Lowest offset >= base for b among done[] (kept sorted by offset). */
static bool place(const placed *done, size_t n_done, uint64_t base, const aot_buffer *b, uint64_t *offset)
{
    uint64_t at = base;
    for (size_t i = 0; i < n_done; i++) {
        const placed *p = &done[i];
        if (p->last < b->first || b->last < p->first) continue;
        uint64_t end;
        if (!kiln_add_u64(at, b->size, &end)) return false;
        if (p->offset + p->size <= at || end <= p->offset) continue;
        at = p->offset + p->size;
        if (at > UINT64_MAX - 64) return false;
        at = kiln_align_up_u64(at, 64);
    }
    *offset = at;
    return true;
}

kiln_status aot_plan_best_fit(aot_graph *g, const int32_t *which, size_t n, uint64_t base, kiln_arena *arena,
                              uint64_t *end)
{
    *end = base;
    if (n == 0) return KILN_OK;
    KILN_CHECK(base % 64 == 0, KILN_ERROR_INVALID_ARGUMENT);
    int32_t *order = KILN_ARENA_ARRAY(arena, int32_t, n);
    placed *done = KILN_ARENA_ARRAY(arena, placed, n);
    KILN_CHECK(order && done, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n; i++) order[i] = which[i];
    qsort_r(order, n, sizeof *order, by_size_desc, g->buffers);
    uint64_t total = base;
    for (size_t i = 0; i < n; i++) {
        aot_buffer *b = &g->buffers[order[i]];
        KILN_CHECK(place(done, i, base, b, &b->offset), KILN_ERROR_LIMIT);
        uint64_t b_end;
        KILN_CHECK(kiln_add_u64(b->offset, b->size, &b_end), KILN_ERROR_LIMIT);
        if (b_end > total) total = b_end;
        placed p = {b->offset, b->size, b->first, b->last};
        size_t at = i;
        while (at > 0 && done[at - 1].offset > p.offset) {
            done[at] = done[at - 1];
            at--;
        }
        done[at] = p;
    }
    *end = total;
    return KILN_OK;
}

kiln_status aot_plan_scratch(aot_graph *g, kiln_arena *arena)
{
    size_t n = g->n_buffers;
    g->intermediates_size = 0;
    if (n == 0) return KILN_OK;
    int32_t *all = KILN_ARENA_ARRAY(arena, int32_t, n);
    KILN_CHECK(all, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n; i++) all[i] = (int32_t)i;
    uint64_t total;
    KILN_TRY(aot_plan_best_fit(g, all, n, 0, arena, &total));
    KILN_CHECK(total <= UINT64_MAX - 64, KILN_ERROR_LIMIT);
    g->intermediates_size = kiln_align_up_u64(total, 64);
    return KILN_OK;
}
