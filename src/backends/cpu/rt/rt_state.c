/* rt_state.c — the `cpu` runtime's process-wide state and kiln_runtime_stats_get.
 *
 * Layer: backends/cpu/rt. The single `rt` object below is the one mutable global of kiln
 * besides the backend registry (see rt_state.h): statically initialised, never destroyed.
 */
#include "backends/cpu/rt/rt_state.h"

#include <assert.h>

#include "backends/cpu/rt/context.h"
#include "backends/cpu/rt/scratch_group.h"
#include "core/check.h"

static kiln_cpu_rt rt = {.lock = PTHREAD_MUTEX_INITIALIZER};

kiln_cpu_rt *kiln_cpu_rt_lock(void)
{
    pthread_mutex_lock(&rt.lock);
    return &rt;
}

void kiln_cpu_rt_unlock(kiln_cpu_rt *state)
{
    assert(kiln_cpu_rt_check(state));
    pthread_mutex_unlock(&state->lock);
}

uint64_t kiln_cpu_rt_next_context_id(void) { return atomic_fetch_add(&rt.next_context_id, 1) + 1; }

int kiln_cpu_rt_check(const kiln_cpu_rt *state)
{
#ifdef KILN_DEBUG
    for (const kiln_cpu_context *c = state->contexts; c; c = c->next)
        if (c->refs <= 0 || !c->published || c->magic != KILN_CPU_CONTEXT_MAGIC) return 0;
    uint64_t groups = 0, bytes = 0;
    for (const kiln_cpu_group *g = state->groups; g; g = g->next) {
        groups++;
        bytes += g->size;
        if (!kiln_cpu_group_check(g)) return 0;
    }
    return groups == state->live_groups && bytes == state->scratch_bytes &&
           state->live_contexts == state->contexts_created - state->contexts_destroyed;
#else
    (void)state;
    return 1;
#endif
}

kiln_status kiln_runtime_stats_get(kiln_runtime_stats *out)
{
    KILN_CHECK(out && out->struct_size >= sizeof *out, KILN_ERROR_INVALID_ARGUMENT);
    kiln_cpu_rt *state = kiln_cpu_rt_lock();
    out->live_contexts = state->live_contexts;
    out->contexts_created = state->contexts_created;
    out->contexts_destroyed = state->contexts_destroyed;
    out->live_scratch_groups = state->live_groups;
    out->scratch_bytes_reserved = state->scratch_bytes;
    kiln_cpu_rt_unlock(state);
    return KILN_OK;
}
