/* test_thread_support.h — the kiln thread pool behind a parallel_for that remembers the largest
 * task count it was given, so the thread tests (test_cpu_threads.c, test_portable_threads.c)
 * can prove a kernel really split its work.
 *
 * Layer: tests. Header-only (static): each test program has its own pool and counter. The test
 * creates `pool` in main() and resets `most_tasks` to 1 before each threaded run.
 */
#ifndef KILN_TESTS_UNIT_TEST_THREAD_SUPPORT_H
#define KILN_TESTS_UNIT_TEST_THREAD_SUPPORT_H

#include <stdatomic.h>
#include <stddef.h>

#include "core/threadpool.h"

static kiln_threadpool *pool;
static atomic_size_t most_tasks;

/* kiln_threadpool_parallel_for, after raising most_tasks to n (a compare-and-swap loop, so the
   counter stays race-free under ThreadSanitizer whichever thread calls). */
static inline void counting_parallel_for(void *p, size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    size_t seen = atomic_load(&most_tasks);
    while (n > seen && !atomic_compare_exchange_weak(&most_tasks, &seen, n)) {
    }
    kiln_threadpool_parallel_for(p, n, fn, arg);
}

#endif /* KILN_TESTS_UNIT_TEST_THREAD_SUPPORT_H */
