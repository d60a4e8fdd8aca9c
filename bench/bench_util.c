/* bench_util.c — clock, buffers, data and the timed thread team (see bench_util.h).
 * Layer: bench. */
#include "bench_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_MAX_TEAM 64

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *bench_alloc(size_t size)
{
    size_t rounded = (size + 63) / 64 * 64;
    return aligned_alloc(64, rounded ? rounded : 64);
}

void bench_fill_random(float *x, size_t n, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = 0; i < n; i++) {
        /* splitmix64, top 24 bits: exact floats, no bias. */
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x[i] = (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
    }
}

/* The start gate is a spin on an atomic flag, not a condition variable: a woken thread can take
   tens of microseconds to run, which would count against millisecond-long measurements. Workers
   spin only between their creation and the start (the caller opens the gate as soon as every
   worker has checked in), and each records when it finished, so the figure is the span from the
   common start to the last finish, without thread creation or join latency. `state` is 0 while
   closed, 1 go, 2 abandoned (a later thread could not be created). */
typedef struct team {
    atomic_int state;
    atomic_int ready;
    bench_body_fn body;
    void *arg;
    int n_threads;
    double finished[BENCH_MAX_TEAM];
} team;

typedef struct member {
    team *team;
    int index;
} member;

/* One step of a spin-wait: tells the core a spin is in progress (x86 `pause`). */
static void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *member_main(void *p)
{
    member *m = p;
    team *t = m->team;
    atomic_fetch_add(&t->ready, 1);
    int state;
    while ((state = atomic_load_explicit(&t->state, memory_order_acquire)) == 0) spin_pause();
    if (state == 1) {
        t->body(t->arg, m->index, t->n_threads);
        t->finished[m->index] = bench_now();
    }
    return NULL;
}

double bench_run_team(int n_threads, bench_body_fn body, void *arg)
{
    if (n_threads < 1 || n_threads > BENCH_MAX_TEAM) return -1.0;
    team t = {.body = body, .arg = arg, .n_threads = n_threads};
    atomic_init(&t.state, 0);
    atomic_init(&t.ready, 0);
    pthread_t threads[BENCH_MAX_TEAM];
    member members[BENCH_MAX_TEAM];
    int created = 1;
    for (; created < n_threads; created++) {
        members[created] = (member){&t, created};
        if (pthread_create(&threads[created], NULL, member_main, &members[created]) != 0) break;
    }
    bool complete = created == n_threads;
    while (complete && atomic_load(&t.ready) < n_threads - 1) spin_pause();
    double t0 = bench_now();
    atomic_store_explicit(&t.state, complete ? 1 : 2, memory_order_release);
    if (complete) {
        body(arg, 0, n_threads);
        t.finished[0] = bench_now();
    }
    for (int i = 1; i < created; i++) pthread_join(threads[i], NULL);
    if (!complete) return -1.0;
    double last = t0;
    for (int i = 0; i < n_threads; i++) last = t.finished[i] > last ? t.finished[i] : last;
    return last - t0;
}
