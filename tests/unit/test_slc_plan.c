/* test_slc_plan.c — the `--slc` scratch planner (src/backends/cpu/aot/aot_plan_slc.c) on
 * lifetimes built by hand.
 *
 * Layer: tests (white-box: the aot planners' internal API, aot_plan.h). Checks:
 *  - the region policy: a new buffer takes the most recently freed block (LIFO), not the lowest
 *    free offset best fit would pick; freed neighbours merge; a block at the high-water mark
 *    grows into never-used space; long-lived buffers and buffers the full region cannot hold
 *    go after the region;
 *  - the budget: half the smallest L3 among the targets;
 *  - on random lifetimes, both planners: 64-aligned, inside intermediates_size, no two buffers
 *    alive at the same step share a byte, region and rest disjoint; budget 0 is the default plan.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cpu/aot/aot_plan.h"
#include "core/alloc.h"
#include "core/arena.h"
#include "unit_expect.h"

#define KB 1024u
#define EXPECT_OK(expr) EXPECT_STATUS(expr, KILN_OK)

typedef struct lifetime {
    uint64_t size;
    int32_t first, last;
} lifetime;

static void make_graph(aot_graph *g, aot_buffer *buffers, const lifetime *l, size_t n)
{
    memset(g, 0, sizeof *g);
    for (size_t i = 0; i < n; i++) buffers[i] = (aot_buffer){l[i].size, l[i].first, l[i].last, 0};
    g->buffers = buffers;
    g->n_buffers = n;
}

static kiln_status plan_slc(aot_graph *g, uint64_t budget, aot_slc_stats *stats)
{
    kiln_arena arena;
    kiln_arena_init(&arena, kiln_allocator_default(), 4096);
    kiln_status st = aot_plan_scratch_slc(g, budget, &arena, stats);
    kiln_arena_deinit(&arena);
    return st;
}

static kiln_status plan_default(aot_graph *g)
{
    kiln_arena arena;
    kiln_arena_init(&arena, kiln_allocator_default(), 4096);
    kiln_status st = aot_plan_scratch(g, &arena);
    kiln_arena_deinit(&arena);
    return st;
}

/* Every invariant a plan must keep for the kernels to read what they expect. */
static bool plan_valid(const aot_graph *g)
{
    for (size_t i = 0; i < g->n_buffers; i++) {
        const aot_buffer *a = &g->buffers[i];
        if (a->offset % 64 != 0 || a->offset + a->size > g->intermediates_size) return false;
        for (size_t j = 0; j < i; j++) {
            const aot_buffer *b = &g->buffers[j];
            bool same_time = !(a->last < b->first || b->last < a->first);
            bool same_bytes = a->size && b->size && a->offset < b->offset + b->size && b->offset < a->offset + a->size;
            if (same_time && same_bytes) {
                fprintf(stderr, "buffers %zu and %zu overlap in time and bytes\n", j, i);
                return false;
            }
        }
    }
    return g->intermediates_size % 64 == 0;
}

/* A(0..1) | L(0..9) | B(0..2): A is freed before step 2, B before step 3, and they are not
   neighbours, so C (first written at step 3) must land on B, the more recently freed block,
   where best fit takes the lowest free offset, A's. */
static void test_lifo_reuse(void)
{
    const lifetime l[] = {{KB, 0, 1}, {KB, 0, 4}, {KB, 0, 2}, {KB, 3, 4}};
    aot_buffer buffers[4];
    aot_graph g;
    aot_slc_stats stats;
    make_graph(&g, buffers, l, 4);
    EXPECT_OK(plan_slc(&g, 64 * KB, &stats));
    EXPECT(plan_valid(&g));
    EXPECT(buffers[0].offset == 0 && buffers[1].offset == KB && buffers[2].offset == 2 * KB);
    EXPECT(buffers[3].offset == buffers[2].offset);
    EXPECT(stats.n_region == 4 && stats.n_rest == 0 && stats.region_size == 3 * KB);
    EXPECT(g.intermediates_size == 3 * KB);

    make_graph(&g, buffers, l, 4);
    EXPECT_OK(plan_default(&g));
    EXPECT(plan_valid(&g));
    EXPECT(buffers[3].offset != buffers[2].offset); /* the policies really differ here */
}

/* Two neighbours freed together merge into one block that holds their sum. */
static void test_merge(void)
{
    const lifetime l[] = {{KB, 0, 1}, {KB, 0, 1}, {2 * KB, 2, 3}};
    aot_buffer buffers[3];
    aot_graph g;
    aot_slc_stats stats;
    make_graph(&g, buffers, l, 3);
    EXPECT_OK(plan_slc(&g, 64 * KB, &stats));
    EXPECT(plan_valid(&g));
    EXPECT(buffers[2].offset == 0 && stats.region_size == 2 * KB);
}

/* A freed block at the high-water mark grows into the never-used space above it. */
static void test_grow_at_top(void)
{
    const lifetime l[] = {{KB, 0, 1}, {4 * KB, 2, 3}};
    aot_buffer buffers[2];
    aot_graph g;
    aot_slc_stats stats;
    make_graph(&g, buffers, l, 2);
    EXPECT_OK(plan_slc(&g, 64 * KB, &stats));
    EXPECT(plan_valid(&g));
    EXPECT(buffers[1].offset == 0 && stats.region_size == 4 * KB);
}

/* Long-lived, empty, too large, or left over when the region is full: after the region. */
static void test_rest(void)
{
    const lifetime l[] = {
        {4 * KB, 0, 3},                     /* fills the 4 KiB region */
        {KB, 1, 2},                         /* short-lived, but the region is full */
        {KB, 0, AOT_SLC_SHORT_SPAN + 1},     /* long-lived */
        {8 * KB, 2, 3},                     /* larger than the budget */
        {0, 1, 1},                          /* empty */
    };
    aot_buffer buffers[5];
    aot_graph g;
    aot_slc_stats stats;
    make_graph(&g, buffers, l, 5);
    EXPECT_OK(plan_slc(&g, 4 * KB, &stats));
    EXPECT(plan_valid(&g));
    EXPECT(buffers[0].offset == 0 && stats.n_region == 1 && stats.n_rest == 4 && stats.region_size == 4 * KB);
    EXPECT(stats.region_bytes == 4 * KB);
    for (size_t i = 1; i < 5; i++) EXPECT(buffers[i].offset >= 4 * KB);
}

static void test_budget(void)
{
    const char *generic[] = {"generic"}, *v3v4[] = {"x86-64-v4", "x86-64-v3"}, *v4[] = {"x86-64-v4"};
    const char *all[] = {"generic", "x86-64-v3", "x86-64-v4"};
    EXPECT(aot_slc_budget(generic, 1) == (4u << 20) / 2);
    EXPECT(aot_slc_budget(v3v4, 2) == (8u << 20) / 2);
    EXPECT(aot_slc_budget(v4, 1) == (16u << 20) / 2);
    EXPECT(aot_slc_budget(all, 3) == (4u << 20) / 2);
    EXPECT(aot_slc_budget(NULL, 0) == 0);
}

/* xorshift64*: reproducible lifetimes. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static void random_lifetimes(uint64_t *seed, lifetime *l, size_t n, int32_t n_steps)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_random(seed);
        int32_t first = (int32_t)(r % (uint64_t)n_steps), span;
        switch ((r >> 16) % 10) {
        case 0: span = (int32_t)((r >> 24) % 40); break;
        case 1: case 2: span = 2 + (int32_t)((r >> 24) % 3); break;
        default: span = 1; break;
        }
        uint64_t size = (r >> 32) % 8 == 0 ? 0 : 1 + (next_random(seed) % (3u << 20)) / (1 + (r >> 40) % 64);
        l[i] = (lifetime){size, first, first + span};
    }
}

static void test_random(void)
{
    enum { MAX_N = 300 };
    static lifetime l[MAX_N];
    static aot_buffer slc[MAX_N], plain[MAX_N];
    const uint64_t budgets[] = {0, 64 * KB, 1u << 20, 8u << 20};
    uint64_t seed = 0x736c63u;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + next_random(&seed) % MAX_N;
        random_lifetimes(&seed, l, n, 1 + (int32_t)(next_random(&seed) % 120));
        for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
            aot_graph gs, gp;
            aot_slc_stats stats;
            make_graph(&gs, slc, l, n);
            make_graph(&gp, plain, l, n);
            EXPECT_OK(plan_slc(&gs, budgets[k], &stats));
            EXPECT_OK(plan_default(&gp));
            EXPECT(plan_valid(&gs) && plan_valid(&gp));
            EXPECT(stats.region_size <= budgets[k] && stats.n_region + stats.n_rest == n);
            size_t in_region = 0;
            for (size_t i = 0; i < n; i++) {
                bool below = slc[i].offset < stats.region_size;
                if (below && slc[i].size) in_region++;
                EXPECT(!below || slc[i].offset + slc[i].size <= stats.region_size);
            }
            EXPECT(in_region == stats.n_region);
            if (budgets[k] == 0) {
                EXPECT(gs.intermediates_size == gp.intermediates_size);
                for (size_t i = 0; i < n; i++) EXPECT(slc[i].offset == plain[i].offset);
            }
        }
    }
}

int main(void)
{
    test_lifo_reuse();
    test_merge();
    test_grow_at_top();
    test_rest();
    test_budget();
    test_random();
    return unit_finish("test_slc_plan");
}
