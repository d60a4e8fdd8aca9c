/* rt_state.h — the process-wide state of the `cpu` backend's runtime half.
 *
 * Layer: backends/cpu/rt. The delegate cache (the published contexts) and the context ids,
 * guarded by one lock (DESIGN.md §4). Scratch groups and the counters behind
 * kiln_runtime_stats_get are the runtime's (kiln_runtime_services in kiln/backend.h). The state
 * is never torn down, so a process may exit with modules still loaded and nothing global
 * disappears behind them.
 *
 * Lock order: cache lock before the runtime's (default-group find/register/unregister are
 * called with it held, so a find never sees a dying owner); a scratch group's execution lock is
 * never taken with the cache lock held. The cache lock is held only to search and edit the list
 * — never while allocating, validating a binary or running a kernel.
 */
#ifndef KILN_BACKENDS_CPU_RT_RT_STATE_H
#define KILN_BACKENDS_CPU_RT_RT_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct kiln_cpu_context kiln_cpu_context;

typedef struct kiln_cpu_rt {
    pthread_mutex_t lock;
    kiln_cpu_context *contexts;     /* published contexts: each has refs > 0 */
    atomic_uint_fast64_t next_context_id; /* taken without the lock */
} kiln_cpu_rt;

/* Lock the runtime state and return it; the pointer may be used until kiln_cpu_rt_unlock. */
kiln_cpu_rt *kiln_cpu_rt_lock(void);
void kiln_cpu_rt_unlock(kiln_cpu_rt *rt);

/* A fresh context id (1, 2, ...), never reused within the process. */
uint64_t kiln_cpu_rt_next_context_id(void);

/* Consistency of the list (for asserts, with the lock held): every published context has
 * references. */
int kiln_cpu_rt_check(const kiln_cpu_rt *rt);

#endif
