/* test_cpu_publish.c — concurrent publication in the delegate cache (DESIGN.md §4 rule 3).
 *
 * Layer: tests (backends/cpu/rt through include/kiln/kiln.h). Runs under ThreadSanitizer in
 * `make test` (label tsan). Many threads load methods of one module at once — every method uses
 * the same context binary — released together by a barrier, over many rounds. The module's
 * allocator sleeps briefly in every allocation, which stretches candidate construction so that
 * threads really do race to publish. After each round:
 *  - every method reports the same context id (one context);
 *  - contexts created in the round = 1 + contexts destroyed in it (every losing candidate was
 *    destroyed) and live contexts is up by exactly one;
 *  - every method executes correctly; then all threads unload at once and the context is gone.
 * Loads into separate modules at the same time must instead give one context per module. The
 * allocator counts outstanding blocks: nothing may be left once the modules are destroyed.
 */
#include <pthread.h>
#include <time.h>

#include "test_cpu_support.h"

#define THREADS 8
#define ROUNDS 12

static const tb_spec spec = {.n = 256};

/* A counting allocator that pauses 50 us per allocation (ctx is the fault_alloc). */
static void *slow_alloc_fn(void *ctx, size_t size, size_t alignment)
{
    struct timespec pause = {0, 50 * 1000};
    nanosleep(&pause, NULL);
    return fault_alloc_fn(ctx, size, alignment);
}

typedef struct worker {
    pthread_barrier_t *barrier;
    kiln_module *module;
    char name[16];
    kiln_method *method;
    kiln_status load_status;
    bool ran_ok;
} worker;

static void *load_and_run(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->barrier);
    w->load_status = kiln_method_load(w->module, w->name, &w->method);
    pthread_barrier_wait(w->barrier);
    w->ran_ok = w->load_status == KILN_OK && tp_run1(w->method, &spec, KILN_CPU_ACT_RELU, 1.0f + (float)(w->name[1] - '0'));
    pthread_barrier_wait(w->barrier);
    kiln_method_unload(w->method);
    return NULL;
}

static tp_program build_program(tb_binary *bin)
{
    tp_method methods[THREADS];
    static char names[THREADS][8];
    for (int i = 0; i < THREADS; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        methods[i] = (tp_method){names[i], spec.n, {bin}, 1};
    }
    return tp_build(methods, THREADS);
}

/* Run one round: THREADS workers over the given modules (modules[i % n_modules]). */
static void run_round(kiln_module **modules, int n_modules, worker *w)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){&barrier, modules[i % n_modules], "", NULL, KILN_OK, false};
        snprintf(w[i].name, sizeof w[i].name, "m%d", i);
        pthread_create(&threads[i], NULL, load_and_run, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&barrier);
}

/* Rounds of load / run / unload by all threads at once in one module. */
static void test_one_module(kiln_program *p, fault_alloc *sa)
{
    kiln_module_options o = {sizeof o, &sa->base, NULL, 1, NULL};
    kiln_module *mod = NULL;
    EXPECT_OK(kiln_module_create(p, &o, &mod));
    uint64_t losers = 0;
    for (int round = 0; round < ROUNDS; round++) {
        kiln_runtime_stats before = stats_now();
        worker w[THREADS];
        run_round(&mod, 1, w);
        kiln_runtime_stats after = stats_now();
        for (int i = 0; i < THREADS; i++) {
            EXPECT_OK(w[i].load_status);
            EXPECT(w[i].ran_ok);
        }
        uint64_t created = after.contexts_created - before.contexts_created;
        uint64_t destroyed = after.contexts_destroyed - before.contexts_destroyed;
        /* all unloaded at the end of the round: the winner is gone too */
        EXPECT(created >= 1 && created == destroyed);
        EXPECT(after.live_contexts == before.live_contexts);
        losers += created - 1;
    }
    printf("one module: %llu losing candidates destroyed over %d rounds\n", (unsigned long long)losers, ROUNDS);
    EXPECT(losers > 0); /* the race really happened at least once */
    kiln_module_destroy(mod);
}

typedef struct id_worker {
    pthread_barrier_t *barrier;
    kiln_module *module;
    const char *name;
    kiln_method *method;
} id_worker;

static void *load_only(void *arg)
{
    id_worker *w = arg;
    pthread_barrier_wait(w->barrier);
    if (kiln_method_load(w->module, w->name, &w->method) != KILN_OK) w->method = NULL;
    return NULL;
}

/* Concurrent loads, then a look at the ids while everything is still loaded. */
static void test_ids_while_loaded(kiln_program *p, fault_alloc *sa, int n_modules)
{
    kiln_module *modules[THREADS];
    for (int i = 0; i < n_modules; i++) {
        kiln_module_options o = {sizeof o, i == 0 ? &sa->base : NULL, NULL, 1, NULL};
        EXPECT_OK(kiln_module_create(p, &o, &modules[i]));
    }
    kiln_runtime_stats before = stats_now();
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, THREADS);
    static const char *names[THREADS] = {"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"};
    id_worker w[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (id_worker){&barrier, modules[i % n_modules], names[i], NULL};
        pthread_create(&threads[i], NULL, load_only, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&barrier);
    kiln_runtime_stats loaded = stats_now();
    EXPECT(loaded.live_contexts == before.live_contexts + (uint64_t)n_modules);
    EXPECT(loaded.contexts_created - before.contexts_created ==
           loaded.contexts_destroyed - before.contexts_destroyed + (uint64_t)n_modules);
    for (int i = 0; i < THREADS; i++) {
        EXPECT(w[i].method != NULL);
        for (int j = 0; j < THREADS; j++) {
            bool same_module = i % n_modules == j % n_modules;
            EXPECT((context_id(w[i].method, 0) == context_id(w[j].method, 0)) == same_module);
        }
    }
    for (int i = 0; i < n_modules; i++) kiln_module_destroy(modules[i]);
    EXPECT(stats_now().live_contexts == before.live_contexts);
}

int main(void)
{
    tb_binary bin = tb_build(&spec);
    tp_program prog = build_program(&bin);
    kiln_program *p = tp_open(&prog);
    fault_alloc sa;
    fault_alloc_init(&sa, 0);
    sa.base.alloc = slow_alloc_fn;
    kiln_runtime_stats start = stats_now();
    test_one_module(p, &sa);
    test_ids_while_loaded(p, &sa, 1);
    test_ids_while_loaded(p, &sa, 4);
    EXPECT(atomic_load(&sa.live) == 0);
    kiln_runtime_stats end = stats_now();
    EXPECT(end.live_contexts == start.live_contexts && end.live_scratch_groups == start.live_scratch_groups);
    EXPECT(end.scratch_bytes_reserved == start.scratch_bytes_reserved);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin.data);
    return test_report("test_cpu_publish");
}
