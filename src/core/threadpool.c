/* threadpool.c — persistent workers claiming the indices of one job at a time.
 *
 * Layer: core. A job is published as one atomic word, generation (32 bits) | next index (16) |
 * count (16): a thread claims index i of job g only by moving that word from (g, i, n) to
 * (g, i + 1, n) with i < n, so the index, the bound and the job are checked in one step. A worker
 * that wakes late — after its job was finished by the others, or even after the next job was
 * posted — therefore never runs an index twice, past the end, or with another job's function:
 * it reads fn/ctx before its claim, and a claim that succeeds proves the job was still current
 * with that index unclaimed, so those fields could not have been replaced yet (the caller writes
 * the next job only after every index of this one has run). Hence the caller returns as soon as
 * every index has *run* (the `finished` count), without waiting for workers that never got to the
 * job (a worker descheduled by other load on the machine costs nothing). Jobs of more than
 * MAX_JOB indices are posted as several jobs.
 *
 * Waiting: a worker that ran out of indices spins for a short, bounded time (SPIN_NS) watching
 * the word — back-to-back parallel regions of one inference then cost no system call — and then
 * sleeps on `wake` until the next job; an idle pool therefore burns no CPU beyond that first
 * moment. The caller, once it has no index left, waits the same way for the indices still
 * running on workers. The job fields are atomics because a late worker may read them while the
 * caller posts the next job (it then fails its claim and never uses them).
 */
#include "core/threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check.h"

/* Long enough to bridge the serial gap between two parallel steps of a model (a few tens of
   microseconds), short enough that a pool left idle gives its cores back at once. */
#define SPIN_NS 50000
#define SPINS_PER_CLOCK 64      /* pause instructions between two looks at the clock */
#define MAX_JOB 0xFFFFu         /* indices of one posted job (16 bits of the claim word) */

struct kiln_threadpool {
    const kiln_allocator *allocator;
    int n_threads;                  /* including the caller */
    int n_started;                  /* workers actually running */
    pthread_t *workers;             /* (n_threads - 1) */
    pthread_mutex_t call_lock;      /* one parallel_for at a time */
    pthread_mutex_t lock;           /* guards sleeping: `sleepers` and the condition variables */
    pthread_cond_t wake, done;
    int sleepers;                   /* workers blocked on `wake` */
    atomic_bool shutdown;
    atomic_uint_fast64_t claim;     /* generation << 32 | next index << 16 | count */
    _Atomic(kiln_parallel_fn) fn;   /* the current job */
    _Atomic(void *) ctx;
    atomic_size_t finished;         /* indices of the current job that have returned */
};

static uint32_t claim_generation(uint64_t word) { return (uint32_t)(word >> 32); }
static uint32_t claim_next(uint64_t word) { return (uint32_t)(word >> 16) & MAX_JOB; }
static uint32_t claim_count(uint64_t word) { return (uint32_t)word & MAX_JOB; }

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spin until done(p, arg) holds or SPIN_NS passed; whether it holds. */
static bool spin_until(kiln_threadpool *p, bool (*done)(kiln_threadpool *p, uint64_t arg), uint64_t arg)
{
    uint64_t deadline = 0;
    for (;;) {
        for (int i = 0; i < SPINS_PER_CLOCK; i++) {
            if (done(p, arg)) return true;
            cpu_relax();
        }
        uint64_t t = now_ns();
        if (deadline == 0) deadline = t + SPIN_NS;
        else if (t >= deadline) return done(p, arg);
    }
}

/* Claim and run indices of job `generation` until none is left; the caller runs this too. */
static void run_job(kiln_threadpool *p, uint32_t generation)
{
    for (;;) {
        uint64_t word = atomic_load_explicit(&p->claim, memory_order_acquire);
        if (claim_generation(word) != generation || claim_next(word) >= claim_count(word)) return;
        kiln_parallel_fn fn = atomic_load_explicit(&p->fn, memory_order_relaxed);
        void *ctx = atomic_load_explicit(&p->ctx, memory_order_relaxed);
        /* Success proves the job was still current with this index free, so fn/ctx were its own. */
        if (!atomic_compare_exchange_weak_explicit(&p->claim, &word, word + ((uint64_t)1 << 16), memory_order_acq_rel,
                                                   memory_order_relaxed))
            continue;
        fn(ctx, claim_next(word));
        if (atomic_fetch_add_explicit(&p->finished, 1, memory_order_acq_rel) + 1 == claim_count(word)) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

static bool job_posted(kiln_threadpool *p, uint64_t seen)
{
    return atomic_load_explicit(&p->shutdown, memory_order_relaxed) ||
           claim_generation(atomic_load_explicit(&p->claim, memory_order_acquire)) != (uint32_t)seen;
}

static void *worker_main(void *arg)
{
    kiln_threadpool *p = arg;
    uint32_t seen = 0;
    for (;;) {
        if (!spin_until(p, job_posted, seen)) {
            pthread_mutex_lock(&p->lock);
            p->sleepers++;
            while (!job_posted(p, seen)) pthread_cond_wait(&p->wake, &p->lock);
            p->sleepers--;
            pthread_mutex_unlock(&p->lock);
        }
        if (atomic_load_explicit(&p->shutdown, memory_order_relaxed)) break;
        seen = claim_generation(atomic_load_explicit(&p->claim, memory_order_acquire));
        run_job(p, seen);
    }
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
    atomic_init(&p->shutdown, false);
    atomic_init(&p->claim, 0);
    atomic_init(&p->fn, NULL);
    atomic_init(&p->ctx, NULL);
    atomic_init(&p->finished, 0);
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
    atomic_store_explicit(&p->shutdown, true, memory_order_relaxed);
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

static bool job_finished(kiln_threadpool *p, uint64_t n)
{
    return atomic_load_explicit(&p->finished, memory_order_acquire) == n;
}

/* A job's calls: index i of the posted job is the caller's base + i. */
typedef struct chunk {
    kiln_parallel_fn fn;
    void *ctx;
    size_t base;
} chunk;

static void run_chunk_index(void *arg, size_t i)
{
    const chunk *c = arg;
    c->fn(c->ctx, c->base + i);
}

/* Post fn(ctx, 0 .. n-1), n <= MAX_JOB, and take part until every index has run. */
static void post_job(kiln_threadpool *p, size_t n, kiln_parallel_fn fn, void *ctx)
{
    /* Every index of the previous job has run, so no thread uses these fields any more; a worker
       that reads them late fails its claim on the old word. */
    atomic_store_explicit(&p->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&p->ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&p->finished, 0, memory_order_relaxed);
    uint32_t generation = claim_generation(atomic_load_explicit(&p->claim, memory_order_relaxed)) + 1;
    atomic_store_explicit(&p->claim, (uint64_t)generation << 32 | (uint64_t)n, memory_order_release);
    pthread_mutex_lock(&p->lock);
    if (p->sleepers > 0) pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_job(p, generation);
    if (!spin_until(p, job_finished, n)) {
        pthread_mutex_lock(&p->lock);
        while (!job_finished(p, n)) pthread_cond_wait(&p->done, &p->lock);
        pthread_mutex_unlock(&p->lock);
    }
}

void kiln_threadpool_parallel_for(void *pool, size_t n, kiln_parallel_fn fn, void *ctx)
{
    kiln_threadpool *p = pool;
    if (n == 0) return;
    if (!p || p->n_started == 0 || n == 1) {
        for (size_t i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&p->call_lock);
    if (n <= MAX_JOB) {
        post_job(p, n, fn, ctx);
    } else {
        for (size_t base = 0; base < n; base += MAX_JOB) {
            chunk c = {fn, ctx, base};
            post_job(p, n - base < MAX_JOB ? n - base : MAX_JOB, run_chunk_index, &c);
        }
    }
    pthread_mutex_unlock(&p->call_lock);
}
