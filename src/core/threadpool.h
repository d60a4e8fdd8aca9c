/* threadpool.h — a module's worker threads and a parallel-for over them.
 *
 * Layer: core. Threads are created once (kiln_threadpool_create). After a parallel_for a worker
 * watches for the next one for at most about 50 microseconds (so the parallel steps of one
 * inference follow each other without system calls), then sleeps on a condition variable: an
 * idle pool costs nothing and never steals a core from the caller between calls. The calling
 * thread takes part in every parallel_for, so a pool of n threads runs n-1 workers, and at most
 * n calls of fn run at once. Calls are serialised per pool (one parallel region at a time).
 */
#ifndef KILN_CORE_THREADPOOL_H
#define KILN_CORE_THREADPOOL_H

#include <stddef.h>

#include "kiln/kiln.h"

typedef struct kiln_threadpool kiln_threadpool;
typedef void (*kiln_parallel_fn)(void *ctx, size_t index);

/* n_threads >= 1 counts the caller; 1 creates no worker. KILN_ERROR_OUT_OF_MEMORY,
 * KILN_ERROR_THREAD (on failure every thread already started is joined). */
kiln_status kiln_threadpool_create(const kiln_allocator *allocator, int n_threads, kiln_threadpool **out);
void kiln_threadpool_destroy(kiln_threadpool *pool);
int kiln_threadpool_size(const kiln_threadpool *pool);
/* Run fn(ctx, i) for every i < n, spread over the pool; returns when all calls have returned.
 * pool may be NULL (runs inline). Signature matches kiln_backend_init_args.parallel_for. */
void kiln_threadpool_parallel_for(void *pool, size_t n, kiln_parallel_fn fn, void *ctx);
/* Number of online CPUs (at least 1). */
int kiln_cpu_count(void);

#endif
