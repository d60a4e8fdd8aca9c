/* test_cpu_faults.c — failure at every initialisation stage (DESIGN.md §4 rule 4).
 *
 * Layer: tests (backends/cpu/rt through include/kiln/kiln.h). An allocator fails exactly its
 * N-th allocation, for N = 1, 2, ... until a whole scenario runs without reaching N. For each N
 * the scenario (create a module, load methods, execute) must either succeed or fail with a clear
 * status; after a failure the failing call is retried with the allocator healed and must then
 * succeed; and once everything is torn down the allocator must have no block outstanding and
 * the process-wide counters must be back where they were (no context, group or scratch byte
 * left behind). Under AddressSanitizer, LeakSanitizer checks the rest. Scenarios: one module
 * with two methods sharing a context plus a second binary in the same default group; a module
 * in an explicit group; two modules on one allocator (the cache-hit path); a forced target.
 */
#include "test_cpu_support.h"

typedef struct scenario {
    const char *name;
    int n_modules;                  /* modules created on the one fault allocator */
    bool explicit_group;
    const char *target;
} scenario;

static bool clear_failure(kiln_status st)
{
    return st == KILN_ERROR_OUT_OF_MEMORY || st == KILN_ERROR_THREAD;
}

/* Retry a failed call once with the allocator healed; the retry must succeed. */
#define STEP(call, fa, failed)                                                                   \
    do {                                                                                         \
        kiln_status st_ = (call);                                                                \
        if (st_ != KILN_OK) {                                                                    \
            EXPECT(clear_failure(st_));                                                          \
            (failed) = true;                                                                     \
            (fa)->fail_at = 0;                                                                   \
            EXPECT_OK(call);                                                                     \
        }                                                                                        \
    } while (0)

typedef struct program_set {
    tb_spec sa, sb;
    tb_binary a, b;
    tp_program prog;
    kiln_program *p;
} program_set;

static void programs_init(program_set *s)
{
    s->sa = (tb_spec){.n = 96};
    s->sb = (tb_spec){.n = 96, .weight_scale = 2.0f};
    s->a = tb_build(&s->sa);
    s->b = tb_build(&s->sb);
    tp_method methods[3] = {{"a", 96, {&s->a}, 1}, {"a2", 96, {&s->a}, 1}, {"b", 96, {&s->b, &s->a}, 2}};
    s->prog = tp_build(methods, 3);
    s->p = tp_open(&s->prog);
}

static void programs_deinit(program_set *s)
{
    kiln_program_close(s->p);
    tp_free(&s->prog);
    free(s->a.data);
    free(s->b.data);
}

/* One run of the scenario with the N-th allocation failing. Returns whether the failure was hit. */
static bool run_scenario(const scenario *sc, program_set *s, long fail_at)
{
    fault_alloc fa;
    fault_alloc_init(&fa, fail_at);
    kiln_runtime_stats before = stats_now();
    kiln_scratch_group *group = NULL;
    if (sc->explicit_group) EXPECT_OK(kiln_scratch_group_create(&group));
    bool failed = false;
    kiln_module *mods[2] = {NULL, NULL};
    kiln_method *ms[2][3] = {{NULL}};
    const char *names[3] = {"a", "a2", "b"};
    for (int i = 0; i < sc->n_modules; i++) {
        kiln_module_options o = {sizeof o, &fa.base, group, 1, sc->target};
        STEP(kiln_module_create(s->p, &o, &mods[i]), &fa, failed);
        for (int k = 0; k < 3 && mods[i]; k++) STEP(kiln_method_load(mods[i], names[k], &ms[i][k]), &fa, failed);
    }
    if (group) kiln_scratch_group_release(group);
    const tb_spec *chain_b[2] = {&s->sb, &s->sa};
    const uint32_t relu2[2] = {KILN_CPU_ACT_RELU, KILN_CPU_ACT_RELU};
    for (int i = 0; i < sc->n_modules; i++) {
        if (!ms[i][0] || !ms[i][1] || !ms[i][2]) continue;
        EXPECT(context_id(ms[i][0], 0) == context_id(ms[i][1], 0));
        EXPECT(context_id(ms[i][0], 0) == context_id(ms[i][2], 1));
        EXPECT(tp_run1(ms[i][0], &s->sa, KILN_CPU_ACT_RELU, 1.0f));
        EXPECT(tp_run1(ms[i][1], &s->sa, KILN_CPU_ACT_RELU, -1.0f));
        EXPECT(tp_run(ms[i][2], 96, chain_b, relu2, 2, 0.5f));
    }
    if (sc->n_modules == 2 && ms[0][0] && ms[1][0]) EXPECT(context_id(ms[0][0], 0) == context_id(ms[1][0], 0));
    for (int i = 0; i < sc->n_modules; i++) kiln_module_destroy(mods[i]);
    kiln_runtime_stats after = stats_now();
    EXPECT(atomic_load(&fa.live) == 0);
    EXPECT(after.live_contexts == before.live_contexts);
    EXPECT(after.live_scratch_groups == before.live_scratch_groups);
    EXPECT(after.scratch_bytes_reserved == before.scratch_bytes_reserved);
    EXPECT(after.contexts_created - before.contexts_created == after.contexts_destroyed - before.contexts_destroyed);
    if (failed) EXPECT(fail_at <= atomic_load(&fa.count));
    return fail_at > 0 && fail_at <= atomic_load(&fa.count);
}

static void test_scenario(const scenario *sc, program_set *s)
{
    int before = test_failures;
    long n = 1;
    while (run_scenario(sc, s, n) && n < 10000) n++;
    printf("%s: failed each of %ld allocations in turn%s\n", sc->name, n - 1, test_failures > before ? " (with errors)" : "");
    EXPECT(n > 10); /* the scenario does allocate: the loop really walked the stages */
}

int main(void)
{
    program_set s;
    programs_init(&s);
    static const scenario scenarios[] = {
        {"one module, shared context and default group", 1, false, NULL},
        {"explicit scratch group", 1, true, NULL},
        {"two modules on one allocator", 2, false, NULL},
        {"forced generic target", 1, false, "generic"},
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) test_scenario(&scenarios[i], &s);
    programs_deinit(&s);
    return test_report("test_cpu_faults");
}
