/* test_cpu_kernels_setup.c — a kernel table's set-up hooks (kiln_cpu_kernels.process_setup,
 * thread_setup; kernels/setup.c), which AMX-like ISAs need before their first step.
 *
 * Layer: tests (backends/cpu/kernels). A test table whose hooks record where they ran: through a
 * real kiln_threadpool of 1, 2 and 4 threads, process_setup runs once and thread_setup exactly
 * once on each of the pool's threads, so every task of later parallel_for calls finds its
 * thread set up; a failing process_setup is returned and no thread is set up; today's tables
 * have no hooks.
 * Exit status: 0 when everything passed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "unit_expect.h"

#define MAX_THREADS 8

static _Thread_local int thread_was_set_up;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t seen[MAX_THREADS * 2];
static size_t n_seen;
static int process_calls;
static kiln_status process_result;

static kiln_status record_process(void)
{
    process_calls++;
    return process_result;
}

static void record_thread(void)
{
    thread_was_set_up++;
    pthread_mutex_lock(&seen_lock);
    if (n_seen < sizeof seen / sizeof seen[0]) seen[n_seen] = pthread_self();
    n_seen++;
    pthread_mutex_unlock(&seen_lock);
}

static void reset(kiln_status result)
{
    n_seen = 0;
    process_calls = 0;
    process_result = result;
}

static size_t distinct_threads(void)
{
    size_t d = 0;
    for (size_t i = 0; i < n_seen && i < sizeof seen / sizeof seen[0]; i++) {
        size_t j = 0;
        while (j < i && !pthread_equal(seen[j], seen[i])) j++;
        if (j == i) d++;
    }
    return d;
}

static atomic_int tasks_not_set_up, tasks_set_up_twice;

static void check_task(void *arg, size_t i)
{
    (void)arg;
    (void)i;
    if (thread_was_set_up == 0) tasks_not_set_up++;
    if (thread_was_set_up > 1) tasks_set_up_twice++;
}

static const kiln_cpu_kernels hooked = {
    .isa = "test-hooks", .gemm_mr = 6, .gemm_nr = 16, .process_setup = record_process, .thread_setup = record_thread};

static void pool_of(int n)
{
    kiln_threadpool *pool = NULL;
    REQUIRE(kiln_threadpool_create(kiln_allocator_default(), n, &pool) == KILN_OK);
    kiln_cpu_exec exec = {.parallel_for = kiln_threadpool_parallel_for, .pool = pool, .n_threads = (uint32_t)n};
    reset(KILN_OK);
    EXPECT_STATUS(kiln_cpu_kernels_setup(&hooked, &exec), KILN_OK);
    EXPECT(process_calls == 1);
    EXPECT(n_seen == (size_t)n);
    EXPECT(distinct_threads() == (size_t)n);
    /* Later work: whichever thread takes a task, it was set up once. */
    tasks_not_set_up = tasks_set_up_twice = 0;
    for (int job = 0; job < 50; job++) kiln_threadpool_parallel_for(pool, (size_t)n * 3, check_task, NULL);
    EXPECT(tasks_not_set_up == 0);
    EXPECT(tasks_set_up_twice == 0);
    kiln_threadpool_destroy(pool);
}

static void *fresh_thread(void *arg)
{
    (void)arg;
    /* One thread, no pool: the caller alone is set up; a failing process_setup stops it. */
    reset(KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT_STATUS(kiln_cpu_kernels_setup(&hooked, NULL), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(process_calls == 1 && n_seen == 0 && thread_was_set_up == 0);
    reset(KILN_OK);
    EXPECT_STATUS(kiln_cpu_kernels_setup(&hooked, NULL), KILN_OK);
    EXPECT(n_seen == 1 && thread_was_set_up == 1);
    return NULL;
}

static void *pool_thread(void *arg)
{
    pool_of(*(const int *)arg);
    return NULL;
}

/* Each case on a fresh calling thread, so the caller's set-up count starts at 0. */
static void on_fresh_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, fn, arg) == 0);
    pthread_join(t, NULL);
}

int main(void)
{
    unit_section("process_setup once, thread_setup once on every pool thread");
    static const int sizes[] = {1, 2, 4};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) on_fresh_thread(pool_thread, (void *)&sizes[i]);
    unit_section("no pool; a failing process_setup");
    on_fresh_thread(fresh_thread, NULL);
    unit_section("today's tables have no hooks");
    const kiln_cpu_kernels *builtin[] = {&kiln_cpu_kernels_generic, &kiln_cpu_kernels_avx2, &kiln_cpu_kernels_avx512,
                                         &kiln_cpu_kernels_avx512bf16};
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
        EXPECT(!builtin[i]->process_setup && !builtin[i]->thread_setup);
        EXPECT_STATUS(kiln_cpu_kernels_setup(builtin[i], NULL), KILN_OK);
    }
    return unit_finish("test_cpu_kernels_setup");
}
