/* rt_state.h — the process-wide state of the `cpu` backend's runtime half.
 *
 * Layer: backends/cpu/rt. This is the one mutable global of kiln besides the backend registry
 * (DESIGN.md §4): the delegate cache (the published contexts), the weak registry of live
 * scratch groups and the counters behind kiln_runtime_stats_get, all guarded by one lock.
 * It is never torn down, so a process may exit with modules still loaded and nothing global
 * disappears behind them.
 *
 * Lock order: a scratch group's execution lock may be held while taking the runtime lock, never
 * the other way round. The runtime lock is a leaf: it is held only to search and edit the lists
 * and counters — never while allocating, validating a binary or running a kernel.
 */
#ifndef KILN_BACKENDS_CPU_RT_RT_STATE_H
#define KILN_BACKENDS_CPU_RT_RT_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct kiln_cpu_context kiln_cpu_context;
typedef struct kiln_cpu_group kiln_cpu_group;

typedef struct kiln_cpu_rt {
    pthread_mutex_t lock;
    kiln_cpu_context *contexts;     /* published contexts: each has refs > 0 */
    kiln_cpu_group *groups;         /* live scratch groups; the list holds no reference */
    uint64_t next_group_id;         /* last id handed to a group; ids are never reused */
    uint64_t live_contexts, contexts_created, contexts_destroyed;
    uint64_t live_groups;
    uint64_t scratch_bytes;         /* sum of the sizes of the live groups' buffers */
    atomic_uint_fast64_t next_context_id; /* taken without the lock */
} kiln_cpu_rt;

/* Lock the runtime state and return it; the pointer may be used until kiln_cpu_rt_unlock. */
kiln_cpu_rt *kiln_cpu_rt_lock(void);
void kiln_cpu_rt_unlock(kiln_cpu_rt *rt);

/* A fresh context id (1, 2, ...), never reused within the process. */
uint64_t kiln_cpu_rt_next_context_id(void);

/* Consistency of the lists and counters (for asserts, with the lock held): every published
 * context has references, every counter matches what the lists hold. */
int kiln_cpu_rt_check(const kiln_cpu_rt *rt);

#endif
