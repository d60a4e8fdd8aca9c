/* aot_plan_slc.c — the `--slc` scratch planner: a cache-sized region at the start of scratch
 * where short-lived intermediates reuse the most recently freed block first.
 *
 * Layer: backends/cpu/aot (internal, see aot_plan.h). The graph's steps are replayed in order.
 * Before a buffer is first written, every region buffer whose last read is behind us is freed;
 * a freed block merges with its free neighbours and goes on top of a stack. The new buffer takes
 * the topmost block that holds it (its head; the rest stays in place), so it lands on bytes a
 * step has just read, which are the likeliest to still be cached: the write then hits instead
 * of pulling cold lines in from memory. A block that reaches the region's high-water mark may
 * grow into the never-used space above it; failing that the buffer takes never-used space, and
 * when the region is full it goes to the rest, as does every long-lived or empty buffer:
 *
 *   0                          region_size             intermediates_size       scratch_size
 *   | region (<= budget):         | rest: long-lived,       | workspace            |
 *   | short-lived buffers, LIFO   | large or left over;     | (aot_record.c,       |
 *   | reuse of freed blocks       | best fit (aot_plan.c)   |  per target)         |
 *
 * Region buffers and rest buffers never share bytes, so the rest is placed on its own. Buffers
 * alive at the same step never overlap in either part; lifetimes are closed step ranges, so a
 * step's output never shares bytes with its inputs (a block is freed only after its last read).
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>

#include "backends/cpu/aot/aot_plan.h"
#include "backends/cpu/targets.h"
#include "core/check.h"

typedef struct free_block {
    uint64_t offset, size;
} free_block;

/* The region's allocator state. Free blocks are disjoint and never adjacent to each other. */
typedef struct region {
    free_block *stack;      /* (n_free) stack[n_free - 1] is the most recently freed */
    size_t n_free;
    uint64_t top;           /* [top, limit) has never been handed out */
    uint64_t limit;         /* the budget */
} region;

uint64_t aot_slc_budget(const char *const *targets, size_t n_targets)
{
    uint64_t smallest = UINT64_MAX;
    for (size_t i = 0; i < n_targets; i++) {
        const kiln_cpu_target *t = kiln_cpu_target_find(targets[i]);
        if (t && t->l3_size < smallest) smallest = t->l3_size;
    }
    if (smallest == UINT64_MAX) return 0;
    return (smallest / 2) & ~(uint64_t)63;
}

static void remove_block(region *r, size_t i)
{
    for (size_t k = i + 1; k < r->n_free; k++) r->stack[k - 1] = r->stack[k];
    r->n_free--;
}

/* An offset for need bytes (64-aligned, > 0): the topmost free block that holds them, else
   never-used space; false when the region cannot hold them. */
static bool region_take(region *r, uint64_t need, uint64_t *offset)
{
    for (size_t i = r->n_free; i-- > 0;) {
        free_block *f = &r->stack[i];
        bool at_top = f->offset + f->size == r->top;
        uint64_t room = f->size + (at_top ? r->limit - r->top : 0);
        if (room < need) continue;
        *offset = f->offset;
        if (need < f->size) {
            f->offset += need;
            f->size -= need;
        } else {
            if (need > f->size) r->top = f->offset + need; /* grew into never-used space */
            remove_block(r, i);
        }
        return true;
    }
    if (need > r->limit - r->top) return false;
    *offset = r->top;
    r->top += need;
    return true;
}

/* Free [offset, offset + size): merged with its free neighbours, pushed on top. */
static void region_give_back(region *r, uint64_t offset, uint64_t size)
{
    free_block merged = {offset, size};
    for (size_t i = r->n_free; i-- > 0;) {
        const free_block *f = &r->stack[i];
        if (f->offset + f->size == merged.offset) {
            merged.offset = f->offset;
            merged.size += f->size;
            remove_block(r, i);
        } else if (merged.offset + merged.size == f->offset) {
            merged.size += f->size;
            remove_block(r, i);
        }
    }
    r->stack[r->n_free++] = merged;
}

static int by_first(const void *pa, const void *pb, void *ctx)
{
    const aot_buffer *buffers = ctx;
    int32_t ia = *(const int32_t *)pa, ib = *(const int32_t *)pb;
    if (buffers[ia].first != buffers[ib].first) return buffers[ia].first < buffers[ib].first ? -1 : 1;
    return ia - ib;
}

static int by_last(const void *pa, const void *pb, void *ctx)
{
    const aot_buffer *buffers = ctx;
    int32_t ia = *(const int32_t *)pa, ib = *(const int32_t *)pb;
    if (buffers[ia].last != buffers[ib].last) return buffers[ia].last < buffers[ib].last ? -1 : 1;
    return ia - ib;
}

static bool short_lived(const aot_buffer *b, uint64_t budget)
{
    return b->size > 0 && b->size <= budget && (int64_t)b->last - b->first <= AOT_SLC_SHORT_SPAN;
}

/* Replay the steps over the candidates (sorted by first write): in_region[i] says whether buffer
   i got a region offset. Returns the region's high-water mark. */
static uint64_t fill_region(aot_graph *g, const int32_t *by_write, const int32_t *by_read, size_t n, uint64_t budget,
                            free_block *stack, bool *in_region)
{
    region r = {stack, 0, 0, budget};
    size_t next_free = 0;
    for (size_t k = 0; k < n; k++) {
        aot_buffer *b = &g->buffers[by_write[k]];
        for (; next_free < n && g->buffers[by_read[next_free]].last < b->first; next_free++) {
            int32_t done = by_read[next_free];
            if (in_region[done])
                region_give_back(&r, g->buffers[done].offset, kiln_align_up_u64(g->buffers[done].size, 64));
        }
        in_region[by_write[k]] = region_take(&r, kiln_align_up_u64(b->size, 64), &b->offset);
    }
    return r.top;
}

kiln_status aot_plan_scratch_slc(aot_graph *g, uint64_t budget, kiln_arena *arena, aot_slc_stats *stats)
{
    size_t n = g->n_buffers;
    budget &= ~(uint64_t)63;
    g->intermediates_size = 0;
    if (stats) *stats = (aot_slc_stats){0};
    if (n == 0) return KILN_OK;
    int32_t *by_write = KILN_ARENA_ARRAY(arena, int32_t, n);
    int32_t *by_read = KILN_ARENA_ARRAY(arena, int32_t, n);
    int32_t *rest = KILN_ARENA_ARRAY(arena, int32_t, n);
    free_block *stack = KILN_ARENA_ARRAY(arena, free_block, n + 1);
    bool *in_region = KILN_ARENA_ARRAY(arena, bool, n);
    KILN_CHECK(by_write && by_read && rest && stack && in_region, KILN_ERROR_OUT_OF_MEMORY);
    size_t n_hot = 0, n_rest = 0;
    for (size_t i = 0; i < n; i++) {
        in_region[i] = false;
        if (short_lived(&g->buffers[i], budget)) by_write[n_hot++] = (int32_t)i;
        else rest[n_rest++] = (int32_t)i;
    }
    for (size_t i = 0; i < n_hot; i++) by_read[i] = by_write[i];
    qsort_r(by_write, n_hot, sizeof *by_write, by_first, g->buffers);
    qsort_r(by_read, n_hot, sizeof *by_read, by_last, g->buffers);
    uint64_t region_size = fill_region(g, by_write, by_read, n_hot, budget, stack, in_region);
    uint64_t region_bytes = 0;
    for (size_t k = 0; k < n_hot; k++) {
        if (in_region[by_write[k]]) region_bytes += g->buffers[by_write[k]].size;
        else rest[n_rest++] = by_write[k];
    }
    uint64_t end;
    KILN_TRY(aot_plan_best_fit(g, rest, n_rest, region_size, arena, &end));
    KILN_CHECK(end <= UINT64_MAX - 64, KILN_ERROR_LIMIT);
    g->intermediates_size = kiln_align_up_u64(end, 64);
    if (stats) *stats = (aot_slc_stats){region_size, n - n_rest, n_rest, region_bytes};
    return KILN_OK;
}
