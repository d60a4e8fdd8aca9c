/* rt_state.c — the `cpu` runtime's process-wide state: the delegate cache list and context ids.
 *
 * Layer: backends/cpu/rt. The single `rt` object below is shared by every module, as
 * DESIGN.md §4 requires (see rt_state.h): statically initialised, never destroyed.
 */
#include "backends/cpu/rt/rt_state.h"

#include <assert.h>

#include "backends/cpu/rt/context.h"

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
    return 1;
#else
    (void)state;
    return 1;
#endif
}
