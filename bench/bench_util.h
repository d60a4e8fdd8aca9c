/* bench_util.h — small pieces shared by the benchmark programs: clock, aligned buffers,
 * deterministic data, and a thread team that times one parallel region.
 *
 * Layer: bench (host programs, not part of libkiln). Depends on libc and pthreads only.
 */
#ifndef KILN_BENCH_BENCH_UTIL_H
#define KILN_BENCH_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic clock in seconds. */
double bench_now(void);

/* 64-byte aligned, size rounded up to 64; NULL on failure. Free with free(). */
void *bench_alloc(size_t size);

/* n floats uniform in [-1, 1) from a seed; the same seed gives the same floats. */
void bench_fill_random(float *x, size_t n, uint64_t seed);

/* Runs body(arg, thread_index, n_threads) on n_threads threads (the caller is thread 0, at most
 * 64) started together behind a spinning gate, and returns the seconds from the common start
 * until the last one finished — thread creation, wake-up and join are not part of the figure.
 * Returns a negative value when a thread cannot be created. */
typedef void (*bench_body_fn)(void *arg, int thread_index, int n_threads);
double bench_run_team(int n_threads, bench_body_fn body, void *arg);

#endif
