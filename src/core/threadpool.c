/* threadpool.c — persistent workers with a shared index counter.
 *
 * Layer: core. One job at a time: the caller publishes (fn, ctx, n), bumps the generation and
 * broadcasts; every thread (workers and caller) claims indices with an atomic fetch-add until
 * they run out; the last thread to finish signals the caller. Workers wait on `wake` between
 * jobs — no spinning between calls.
 */
#include "core/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check.h"

struct kiln_threadpool {
    const kiln_allocator *allocator;
    int n_threads;                  /* including the caller */
    int n_started;                  /* workers actually running */
    pthread_t *workers;             /* (n_threads - 1) */
    pthread_mutex_t call_lock;      /* one parallel_for at a time */
    pthread_mutex_t lock;           /* guards the job fields and the condition variables */
    pthread_cond_t wake, done;
    uint64_t generation;            /* bumped per job */
    bool shutdown;
    kiln_parallel_fn fn;
    void *ctx;
    size_t n;
    atomic_size_t next;             /* next index to claim */
    int active;                     /* workers still inside the current job */
};

static void run_indices(kiln_threadpool *p, kiln_parallel_fn fn, void *ctx, size_t n)
{
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (i >= n) return;
        fn(ctx, i);
    }
}

static void *worker_main(void *arg)
{
    kiln_threadpool *p = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->shutdown && p->generation == seen) pthread_cond_wait(&p->wake, &p->lock);
        if (p->shutdown) break;
        seen = p->generation;
        kiln_parallel_fn fn = p->fn;
        void *ctx = p->ctx;
        size_t n = p->n;
        pthread_mutex_unlock(&p->lock);
        run_indices(p, fn, ctx, n);
        pthread_mutex_lock(&p->lock);
        if (--p->active == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int kiln_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

kiln_status kiln_threadpool_create(const kiln_allocator *a, int n_threads, kiln_threadpool **out)
{
    *out = NULL;
    KILN_CHECK(n_threads >= 1 && n_threads <= 1024, KILN_ERROR_INVALID_ARGUMENT);
    kiln_threadpool *p = KILN_NEW(a, kiln_threadpool);
    KILN_CHECK(p, KILN_ERROR_OUT_OF_MEMORY);
    p->allocator = a;
    p->n_threads = n_threads;
    if (n_threads > 1) {
        p->workers = kiln_alloc(a, sizeof(pthread_t) * (size_t)(n_threads - 1), _Alignof(pthread_t));
        if (!p->workers) {
            kiln_free(a, p);
            return KILN_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_init(&p->call_lock, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    for (int i = 0; i < n_threads - 1; i++) {
        if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0) {
            kiln_threadpool_destroy(p);
            return KILN_ERROR_THREAD;
        }
        p->n_started++;
    }
    *out = p;
    return KILN_OK;
}

void kiln_threadpool_destroy(kiln_threadpool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->shutdown = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_started; i++) pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->call_lock);
    kiln_free(p->allocator, p->workers);
    kiln_free(p->allocator, p);
}

int kiln_threadpool_size(const kiln_threadpool *p) { return p ? p->n_threads : 1; }

void kiln_threadpool_parallel_for(void *pool, size_t n, kiln_parallel_fn fn, void *ctx)
{
    kiln_threadpool *p = pool;
    if (n == 0) return;
    if (!p || p->n_started == 0 || n == 1) {
        for (size_t i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&p->call_lock);
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->active = p->n_started;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_indices(p, fn, ctx, n);
    pthread_mutex_lock(&p->lock);
    while (p->active > 0) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->call_lock);
}
