/* test_cpu_scratch.c — scratch groups (DESIGN.md §4 rule 5), black-box through the stats.
 *
 * Layer: tests (backends/cpu/rt through include/kiln/kiln.h). Runs under ThreadSanitizer in
 * `make test` (label tsan). Checks:
 *  - default groups are keyed by (allocator, scratch size): contexts of one module with equal
 *    sizes share one buffer, different sizes and different modules do not;
 *  - the owner (first) context outlives its members: unloading the owner's method keeps it alive
 *    while a member lives; the last release frees the group and a fresh one forms later;
 *  - N modules given one explicit group reserve one buffer, not N, sized to the largest member;
 *    the group outlives the user's release while modules use it, holds no buffer while it has
 *    no member, and is gone once released and unused;
 *  - executions in a group never overlap: threads run modules (explicit group) or methods
 *    (default group) that share one buffer, each with its own input, and every output must be
 *    exact — an overlapping run would overwrite another's intermediates in the shared buffer
 *    (and ThreadSanitizer would see the unsynchronised writes).
 */
#include <pthread.h>

#include "test_cpu_support.h"

static uint64_t scratch_of(int64_t n) { return kiln_align_up((size_t)n * 4, 64); }

static kiln_module *module_in(kiln_program *p, kiln_scratch_group *g) { return cpu_module_create(p, NULL, g, NULL); }

/* Methods: "a" and "b" with equal scratch (different weights), "c" with a larger one. Large
   enough that a run takes a while, so overlapping runs would really collide. */
#define SMALL 40000
#define LARGE 65536
typedef struct fixture {
    tb_spec sa, sb, sc;
    tb_binary a, b, c;
    tp_program prog;
    kiln_program *p;
} fixture;

static void fixture_init(fixture *f)
{
    f->sa = (tb_spec){.n = SMALL};
    f->sb = (tb_spec){.n = SMALL, .weight_scale = -1.0f};
    f->sc = (tb_spec){.n = LARGE};
    f->a = tb_build(&f->sa);
    f->b = tb_build(&f->sb);
    f->c = tb_build(&f->sc);
    tp_method methods[3] = {{"a", SMALL, {&f->a}, 1}, {"b", SMALL, {&f->b}, 1}, {"c", LARGE, {&f->c}, 1}};
    f->prog = tp_build(methods, 3);
    f->p = tp_open(&f->prog);
}

static void fixture_deinit(fixture *f)
{
    kiln_program_close(f->p);
    tp_free(&f->prog);
    free(f->a.data);
    free(f->b.data);
    free(f->c.data);
}

static void test_default_key(fixture *f)
{
    kiln_runtime_stats s0 = stats_now();
    kiln_module *m1 = module_in(f->p, NULL), *m2 = module_in(f->p, NULL);
    kiln_method *a1 = cpu_method_load(m1, "a"), *b1 = cpu_method_load(m1, "b");
    kiln_runtime_stats s1 = stats_now();
    EXPECT(context_id(a1, 0) != context_id(b1, 0));
    EXPECT(s1.live_contexts == s0.live_contexts + 2);
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 1); /* same (allocator, size) */
    EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(SMALL));
    kiln_method *c1 = cpu_method_load(m1, "c"); /* another size: another group */
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_scratch_groups == s1.live_scratch_groups + 1);
    EXPECT(s2.scratch_bytes_reserved == s1.scratch_bytes_reserved + scratch_of(LARGE));
    kiln_method *a2 = cpu_method_load(m2, "a"); /* another module: another group, even with the same size */
    kiln_runtime_stats s3 = stats_now();
    EXPECT(s3.live_scratch_groups == s2.live_scratch_groups + 1);
    EXPECT(s3.scratch_bytes_reserved == s2.scratch_bytes_reserved + scratch_of(SMALL));
    EXPECT(tp_run1(a1, &f->sa, KILN_CPU_ACT_RELU, 1.0f) && tp_run1(b1, &f->sb, KILN_CPU_ACT_RELU, 1.0f));
    EXPECT(tp_run1(c1, &f->sc, KILN_CPU_ACT_RELU, 1.0f) && tp_run1(a2, &f->sa, KILN_CPU_ACT_RELU, 1.0f));
    kiln_module_destroy(m1);
    kiln_module_destroy(m2);
    kiln_runtime_stats s4 = stats_now();
    EXPECT(s4.live_scratch_groups == s0.live_scratch_groups && s4.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    EXPECT(s4.live_contexts == s0.live_contexts);
}

static void test_owner_outlives_members(fixture *f)
{
    kiln_runtime_stats s0 = stats_now();
    kiln_module *m = module_in(f->p, NULL);
    kiln_method *owner = cpu_method_load(m, "a"), *member = cpu_method_load(m, "b");
    EXPECT(stats_now().live_contexts == s0.live_contexts + 2);
    kiln_method_unload(owner); /* the member holds the owner: both stay */
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_contexts == s0.live_contexts + 2);
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 1);
    EXPECT(tp_run1(member, &f->sb, KILN_CPU_ACT_RELU, 2.0f));
    kiln_method *again = cpu_method_load(m, "a"); /* a new context joins the old owner's live group */
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_contexts == s0.live_contexts + 3 && s2.live_scratch_groups == s1.live_scratch_groups);
    EXPECT(tp_run1(again, &f->sa, KILN_CPU_ACT_RELU, -2.0f));
    kiln_method_unload(again);
    EXPECT(stats_now().live_contexts == s0.live_contexts + 2);
    kiln_method_unload(member); /* last member gone: it, then its owner, then the group */
    kiln_runtime_stats s3 = stats_now();
    EXPECT(s3.live_contexts == s0.live_contexts);
    EXPECT(s3.contexts_destroyed == s0.contexts_destroyed + 3);
    EXPECT(s3.live_scratch_groups == s0.live_scratch_groups && s3.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    kiln_method *fresh = cpu_method_load(m, "b"); /* a fresh group forms, with b's new context as owner */
    kiln_runtime_stats s4 = stats_now();
    EXPECT(s4.live_scratch_groups == s0.live_scratch_groups + 1);
    EXPECT(s4.scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(SMALL));
    EXPECT(tp_run1(fresh, &f->sb, KILN_CPU_ACT_RELU, 1.0f));
    kiln_module_destroy(m);
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups);
}

#define N_MODULES 4

static void test_explicit_group(fixture *f)
{
    kiln_runtime_stats s0 = stats_now();
    kiln_scratch_group *g = NULL;
    EXPECT_OK(kiln_scratch_group_create(&g));
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups + 1);
    kiln_module *mods[N_MODULES];
    kiln_method *as[N_MODULES];
    for (int i = 0; i < N_MODULES; i++) {
        mods[i] = module_in(f->p, g);
        as[i] = cpu_method_load(mods[i], "a");
    }
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_contexts == s0.live_contexts + N_MODULES); /* one context per module ... */
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 1); /* ... one group, one buffer */
    EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(SMALL));
    kiln_scratch_group_release(g); /* the modules keep it alive, and later loads still find it */
    kiln_method *c0 = cpu_method_load(mods[0], "c"); /* the buffer grows to the largest member */
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_scratch_groups == s1.live_scratch_groups);
    EXPECT(s2.scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(LARGE));
    for (int i = 0; i < N_MODULES; i++) EXPECT(tp_run1(as[i], &f->sa, KILN_CPU_ACT_RELU, (float)i));
    EXPECT(tp_run1(c0, &f->sc, KILN_CPU_ACT_RELU, 1.0f));
    for (int i = 0; i < N_MODULES; i++) kiln_module_destroy(mods[i]);
    kiln_runtime_stats s3 = stats_now();
    EXPECT(s3.live_scratch_groups == s0.live_scratch_groups && s3.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    EXPECT(s3.live_contexts == s0.live_contexts);

    /* Without the group: N buffers. */
    for (int i = 0; i < N_MODULES; i++) {
        mods[i] = module_in(f->p, NULL);
        as[i] = cpu_method_load(mods[i], "a");
    }
    kiln_runtime_stats s4 = stats_now();
    EXPECT(s4.live_scratch_groups == s0.live_scratch_groups + N_MODULES);
    EXPECT(s4.scratch_bytes_reserved == s0.scratch_bytes_reserved + N_MODULES * scratch_of(SMALL));
    for (int i = 0; i < N_MODULES; i++) kiln_module_destroy(mods[i]);

    /* A group without members holds no buffer; the next member grows a new one. */
    EXPECT_OK(kiln_scratch_group_create(&g));
    kiln_module *solo = module_in(f->p, g);
    kiln_scratch_group_release(g);
    kiln_method *a = cpu_method_load(solo, "a");
    EXPECT(stats_now().scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(SMALL));
    kiln_method_unload(a);
    kiln_runtime_stats s5 = stats_now();
    EXPECT(s5.live_scratch_groups == s0.live_scratch_groups + 1 && s5.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    a = cpu_method_load(solo, "a");
    EXPECT(tp_run1(a, &f->sa, KILN_CPU_ACT_RELU, 1.0f));
    EXPECT(stats_now().scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(SMALL));
    kiln_module_destroy(solo);
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups);

    /* A group released while unused goes at once; its handle is stale afterwards. */
    kiln_scratch_group *h = NULL;
    EXPECT_OK(kiln_scratch_group_create(&h));
    kiln_scratch_group_release(h);
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups);
    kiln_module_options o = {sizeof o, NULL, h, 1, NULL};
    kiln_module *stale = NULL;
    EXPECT_STATUS(kiln_module_create(f->p, &o, &stale), KILN_ERROR_STALE_HANDLE);
}

/* ---- executions never overlap ---------------------------------------------------------------- */

#define RUN_THREADS 4
#define RUNS 200

typedef struct runner {
    kiln_method *method;
    const tb_spec *spec;
    float seed;
    int failures;
} runner;

static void *run_many(void *arg)
{
    runner *r = arg;
    for (int i = 0; i < RUNS; i++)
        if (!tp_run1(r->method, r->spec, KILN_CPU_ACT_RELU, r->seed + (float)(i % 3))) r->failures++;
    return NULL;
}

static void run_threads(runner *r, int n)
{
    pthread_t t[RUN_THREADS];
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, run_many, &r[i]);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < n; i++) EXPECT(r[i].failures == 0);
}

static void test_no_overlap(fixture *f)
{
    kiln_scratch_group *g = NULL;
    EXPECT_OK(kiln_scratch_group_create(&g));
    kiln_module *mods[RUN_THREADS];
    runner r[RUN_THREADS];
    for (int i = 0; i < RUN_THREADS; i++) {
        mods[i] = module_in(f->p, g);
        r[i] = (runner){cpu_method_load(mods[i], i % 2 ? "c" : "a"), i % 2 ? &f->sc : &f->sa, (float)(i + 1), 0};
    }
    kiln_scratch_group_release(g);
    run_threads(r, RUN_THREADS); /* four modules, one explicit group */
    for (int i = 0; i < RUN_THREADS; i++) kiln_module_destroy(mods[i]);

    kiln_module *m = module_in(f->p, NULL);
    runner d[2] = {{cpu_method_load(m, "a"), &f->sa, 1.0f, 0}, {cpu_method_load(m, "b"), &f->sb, -3.0f, 0}};
    run_threads(d, 2); /* two methods of one module in one default group */
    kiln_module_destroy(m);
}

int main(void)
{
    fixture f;
    fixture_init(&f);
    kiln_runtime_stats start = stats_now();
    test_default_key(&f);
    test_owner_outlives_members(&f);
    test_explicit_group(&f);
    test_no_overlap(&f);
    kiln_runtime_stats end = stats_now();
    EXPECT(end.live_contexts == start.live_contexts && end.live_scratch_groups == start.live_scratch_groups);
    EXPECT(end.scratch_bytes_reserved == start.scratch_bytes_reserved);
    fixture_deinit(&f);
    return test_report("test_cpu_scratch");
}
