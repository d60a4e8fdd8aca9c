/* scratch_group.h — scratch groups: contexts that share one scratch buffer and therefore
 * execute one at a time (DESIGN.md §4 rule 5).
 *
 * Layer: backends/cpu/rt. Two kinds:
 *
 *   default   keyed by (runtime allocator, scratch size). The first context that needs the key
 *             creates the group and becomes its owner; the group is the owner's, freed with it.
 *             Later contexts with the key become members: each holds a reference on the owner,
 *             so the owner outlives every member and members are always destroyed first. The
 *             registry only finds groups (weak): when the owner starts to die its group leaves
 *             the registry, and the next context with the key forms a fresh group.
 *   explicit  kiln_scratch_group_create: shared across modules (the shards of one LLM). It is
 *             reference-counted (the user's reference, one per module created with it, one per
 *             member context), lives until released by the user and its last member is gone, and
 *             its buffer — from the default allocator, since members may come from modules with
 *             different allocators — grows to the largest member's need and is freed when the
 *             group has no member left (a later member grows a new one).
 *
 * The buffer is only touched under the group's `exec` lock: executions hold it for their whole
 * run, growth replaces the buffer under it. Explicit handles are not addresses but the group's
 * id (never reused) with a tag, so a released handle is recognised as stale without reading
 * freed memory and can never alias a newer group. Lock order: exec before the runtime lock.
 */
#ifndef KILN_BACKENDS_CPU_RT_SCRATCH_GROUP_H
#define KILN_BACKENDS_CPU_RT_SCRATCH_GROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backends/cpu/rt/rt_state.h"
#include "kiln/kiln.h"

struct kiln_cpu_group {
    uint64_t id;                    /* registry id, never reused */
    bool is_explicit;
    const kiln_allocator *allocator;/* of this struct and its buffer */
    uint64_t key_size;              /* default: the key's scratch size */
    kiln_cpu_context *owner;        /* default: the first context, which frees the group */
    int refs;                       /* explicit: user + modules + member contexts (runtime lock) */
    int n_members;                  /* explicit: member contexts (runtime lock) */
    bool user_held;                 /* explicit: not yet kiln_scratch_group_release'd (runtime lock) */
    pthread_mutex_t exec;           /* serialises executions and buffer growth */
    void *buffer;                   /* (size bytes, 64-byte aligned); changed under exec and the runtime lock */
    uint64_t size;                  /* changed with buffer */
    kiln_cpu_group *next;           /* registry list (runtime lock) */
};

/* ---- default groups ---- */
/* A group with its buffer, not yet registered (created outside the runtime lock).
 * KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_THREAD. */
kiln_status kiln_cpu_group_create_default(const kiln_allocator *allocator, uint64_t size, kiln_cpu_group **out);
/* The live default group for (allocator, size), or NULL. Runtime lock held. */
kiln_cpu_group *kiln_cpu_group_find_default(kiln_cpu_rt *rt, const kiln_allocator *allocator, uint64_t size);
/* Add to / remove from the registry, keeping the counters. Runtime lock held. */
void kiln_cpu_group_register(kiln_cpu_rt *rt, kiln_cpu_group *g);
void kiln_cpu_group_unregister(kiln_cpu_rt *rt, kiln_cpu_group *g);
/* Free an unregistered group and its buffer. */
void kiln_cpu_group_free(kiln_cpu_group *g);

/* ---- explicit groups ---- */
/* The id inside an explicit handle, 0 if h is not one (NULL included). */
uint64_t kiln_cpu_group_handle_id(const kiln_scratch_group *h);
/* Take a member reference on explicit group `id` and grow its buffer to `size`.
 * KILN_ERROR_STALE_HANDLE (no such live group), KILN_ERROR_OUT_OF_MEMORY (nothing held then). */
kiln_status kiln_cpu_group_join_explicit(uint64_t id, uint64_t size, kiln_cpu_group **out);
/* Drop a member reference taken by kiln_cpu_group_join_explicit. */
void kiln_cpu_group_leave_explicit(kiln_cpu_group *g);

/* ---- module references (also declared in runtime/runtime.h, the runtime's view of them) ---- */
/* A module created with an explicit group holds one reference on it for its whole life, so its
 * later method loads still find the group after the user released it.
 * KILN_ERROR_STALE_HANDLE for a handle released or never created. */
kiln_status kiln_scratch_group_retain(kiln_scratch_group *group);
void kiln_scratch_group_unref(kiln_scratch_group *group);

/* ---- execution ---- */
/* Wait for the group, then return its buffer (at least every member's size). */
void *kiln_cpu_group_lock(kiln_cpu_group *g);
void kiln_cpu_group_unlock(kiln_cpu_group *g);

/* Invariants of a registered group (runtime lock held), for asserts. */
bool kiln_cpu_group_check(const kiln_cpu_group *g);

#endif
