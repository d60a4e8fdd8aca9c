/* test_threadpool.c — the module thread pool (src/core/threadpool.h) under stress.
 *
 * Layer: tests (core). Checks that every index of every parallel_for runs exactly once and
 * before the call returns, for job sizes around the thread count, with jobs back to back (workers
 * still spinning), jobs after a pause long enough for workers to fall asleep, jobs whose tasks
 * take very different times (a worker may wake after the others finished its job — it must
 * never run an index of a later job with an earlier job's function), several threads calling
 * one pool at once (calls are serialised), a NULL pool (inline) and pools created and destroyed
 * in a loop. Labelled `tsan`: ThreadSanitizer checks the pool's synchronisation.
 * Exit status: 0 when everything passed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/threadpool.h"

#define MAX_N 64

static atomic_int failures, checks;

static void fail(const char *what, long job, size_t i)
{
    fprintf(stderr, "FAIL: %s (job %ld, index %zu)\n", what, job, i);
    failures++;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* One job: counts per index, and the job's own id, which every call checks. */
typedef struct job {
    long id;
    atomic_long expected_id;    /* the job the pool should be running */
    atomic_int hits[MAX_N];
    int slow;                   /* index 0 sleeps this long (us) */
} job;

static void count_index(void *arg, size_t i)
{
    job *j = arg;
    if (atomic_load(&j->expected_id) != j->id) fail("index ran for a job that is not current", j->id, i);
    if (i == 0 && j->slow) pause_us(j->slow);
    atomic_fetch_add(&j->hits[i], 1);
}

static void run_job(kiln_threadpool *pool, long id, size_t n, int slow)
{
    job j = {.id = id, .slow = slow};
    atomic_init(&j.expected_id, id);
    for (size_t i = 0; i < MAX_N; i++) atomic_init(&j.hits[i], 0);
    kiln_threadpool_parallel_for(pool, n, count_index, &j);
    atomic_store(&j.expected_id, -1); /* any later call on this job is a bug */
    checks++;
    for (size_t i = 0; i < MAX_N; i++) {
        int want = i < n ? 1 : 0;
        if (atomic_load(&j.hits[i]) != want) fail("index did not run exactly once before the call returned", id, i);
    }
}

static void back_to_back(kiln_threadpool *pool)
{
    for (long id = 0; id < 20000; id++) run_job(pool, id, (size_t)(id % 9), 0);
}

static void with_pauses(kiln_threadpool *pool)
{
    for (long id = 0; id < 40; id++) {
        run_job(pool, id, 1 + (size_t)(id % 5), id % 3 == 0 ? 200 : 0);
        pause_us(id % 2 ? 120 : 5); /* past the spin window half of the time */
    }
}

typedef struct caller_arg {
    kiln_threadpool *pool;
    long base;
} caller_arg;

static void *caller_main(void *arg)
{
    caller_arg *c = arg;
    for (long id = 0; id < 3000; id++) run_job(c->pool, c->base + id, 1 + (size_t)(id % 7), 0);
    return NULL;
}

static void concurrent_callers(kiln_threadpool *pool)
{
    pthread_t t[3];
    caller_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (caller_arg){pool, (long)(i + 1) * 1000000};
        if (pthread_create(&t[i], NULL, caller_main, &args[i]) != 0) fail("pthread_create", i, 0);
    }
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
}

int main(void)
{
    for (int threads = 1; threads <= 4; threads++) {
        kiln_threadpool *pool;
        if (kiln_threadpool_create(kiln_allocator_default(), threads, &pool) != KILN_OK) {
            fprintf(stderr, "FAIL: create a pool of %d threads\n", threads);
            return 1;
        }
        checks++;
        if (kiln_threadpool_size(pool) != threads) fail("pool size", threads, 0);
        back_to_back(pool);
        with_pauses(pool);
        concurrent_callers(pool);
        kiln_threadpool_destroy(pool);
    }
    back_to_back(NULL); /* inline */
    for (int i = 0; i < 50; i++) {
        kiln_threadpool *pool;
        if (kiln_threadpool_create(kiln_allocator_default(), 3, &pool) != KILN_OK) {
            fail("create", i, 0);
            break;
        }
        if (i % 2) run_job(pool, i, 5, 0);
        kiln_threadpool_destroy(pool);
    }
    checks++;
    kiln_threadpool *bad = (kiln_threadpool *)1;
    if (kiln_threadpool_create(kiln_allocator_default(), 0, &bad) != KILN_ERROR_INVALID_ARGUMENT || bad != NULL)
        fail("0 threads must be refused", 0, 0);
    printf("test_threadpool: %d checks, %d failures\n", atomic_load(&checks), atomic_load(&failures));
    return failures ? 1 : 0;
}
