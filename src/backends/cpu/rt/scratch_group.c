/* scratch_group.c — default and explicit scratch groups, the public kiln_scratch_group API and
 * the module references on explicit groups (see scratch_group.h for the rules).
 *
 * Layer: backends/cpu/rt. Registry and reference counts change under the runtime lock
 * (rt_state.h); buffers change under the group's exec lock, which is taken before the runtime
 * lock when both are needed (growth updates the reserved-bytes counter).
 */
#include "backends/cpu/rt/scratch_group.h"

#include "core/alloc.h"
#include "core/check.h"

#define HANDLE_TAG 0xAu
#define HANDLE_TAG_BITS 4

static kiln_scratch_group *handle_of(uint64_t id)
{
    return (kiln_scratch_group *)(uintptr_t)(id << HANDLE_TAG_BITS | HANDLE_TAG);
}

uint64_t kiln_cpu_group_handle_id(const kiln_scratch_group *h)
{
    uintptr_t v = (uintptr_t)h;
    return (v & ((1u << HANDLE_TAG_BITS) - 1)) == HANDLE_TAG ? (uint64_t)(v >> HANDLE_TAG_BITS) : 0;
}

static kiln_status group_alloc(const kiln_allocator *a, kiln_cpu_group **out)
{
    kiln_cpu_group *g = KILN_NEW(a, kiln_cpu_group);
    KILN_CHECK(g, KILN_ERROR_OUT_OF_MEMORY);
    if (pthread_mutex_init(&g->exec, NULL) != 0) {
        kiln_free(a, g);
        return KILN_ERROR_THREAD;
    }
    g->allocator = a;
    *out = g;
    return KILN_OK;
}

void kiln_cpu_group_free(kiln_cpu_group *g)
{
    if (!g) return;
    const kiln_allocator *a = g->allocator;
    pthread_mutex_destroy(&g->exec);
    kiln_free(a, g->buffer);
    kiln_free(a, g);
}

kiln_status kiln_cpu_group_create_default(const kiln_allocator *a, uint64_t size, kiln_cpu_group **out)
{
    *out = NULL;
    KILN_CHECK(size > 0 && size <= SIZE_MAX, KILN_ERROR_LIMIT);
    kiln_cpu_group *g;
    KILN_TRY(group_alloc(a, &g));
    g->buffer = kiln_alloc(a, (size_t)size, 64);
    if (!g->buffer) {
        kiln_cpu_group_free(g);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    g->key_size = size;
    g->size = size;
    *out = g;
    return KILN_OK;
}

kiln_cpu_group *kiln_cpu_group_find_default(kiln_cpu_rt *rt, const kiln_allocator *a, uint64_t size)
{
    for (kiln_cpu_group *g = rt->groups; g; g = g->next)
        if (!g->is_explicit && g->allocator == a && g->key_size == size) return g;
    return NULL;
}

void kiln_cpu_group_register(kiln_cpu_rt *rt, kiln_cpu_group *g)
{
    g->id = ++rt->next_group_id;
    g->next = rt->groups;
    rt->groups = g;
    rt->live_groups++;
    rt->scratch_bytes += g->size;
}

void kiln_cpu_group_unregister(kiln_cpu_rt *rt, kiln_cpu_group *g)
{
    kiln_cpu_group **p = &rt->groups;
    while (*p && *p != g) p = &(*p)->next;
    if (KILN_NEVER(!*p)) return;
    *p = g->next;
    g->next = NULL;
    rt->live_groups--;
    rt->scratch_bytes -= g->size;
}

static kiln_cpu_group *find_explicit(kiln_cpu_rt *rt, uint64_t id)
{
    for (kiln_cpu_group *g = rt->groups; id && g; g = g->next)
        if (g->is_explicit && g->id == id) return g;
    return NULL;
}

/* Drop one reference of an explicit group; true when it was the last (the group has left the
   registry and the caller frees it after unlocking). */
static bool drop_explicit_ref(kiln_cpu_rt *rt, kiln_cpu_group *g)
{
    if (--g->refs > 0) return false;
    kiln_cpu_group_unregister(rt, g);
    return true;
}

kiln_status kiln_scratch_group_create(kiln_scratch_group **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    kiln_cpu_group *g;
    KILN_TRY(group_alloc(kiln_allocator_default(), &g));
    g->is_explicit = true;
    g->refs = 1;
    g->user_held = true;
    kiln_cpu_rt *rt = kiln_cpu_rt_lock();
    kiln_cpu_group_register(rt, g);
    uint64_t id = g->id;
    kiln_cpu_rt_unlock(rt);
    *out = handle_of(id);
    return KILN_OK;
}

void kiln_scratch_group_release(kiln_scratch_group *h)
{
    kiln_cpu_rt *rt = kiln_cpu_rt_lock();
    kiln_cpu_group *g = find_explicit(rt, kiln_cpu_group_handle_id(h));
    bool dead = false;
    if (g && g->user_held) { /* a second release of the same handle is stale: ignored */
        g->user_held = false;
        dead = drop_explicit_ref(rt, g);
    }
    kiln_cpu_rt_unlock(rt);
    if (dead) kiln_cpu_group_free(g);
}

kiln_status kiln_scratch_group_retain(kiln_scratch_group *h)
{
    kiln_cpu_rt *rt = kiln_cpu_rt_lock();
    kiln_cpu_group *g = find_explicit(rt, kiln_cpu_group_handle_id(h));
    kiln_status st = g && g->user_held ? KILN_OK : KILN_ERROR_STALE_HANDLE;
    if (st == KILN_OK) g->refs++;
    kiln_cpu_rt_unlock(rt);
    return st;
}

void kiln_scratch_group_unref(kiln_scratch_group *h)
{
    kiln_cpu_rt *rt = kiln_cpu_rt_lock();
    kiln_cpu_group *g = find_explicit(rt, kiln_cpu_group_handle_id(h));
    bool dead = g && drop_explicit_ref(rt, g);
    kiln_cpu_rt_unlock(rt);
    if (dead) kiln_cpu_group_free(g);
}

/* Grow the buffer to size. Under the exec lock no execution can be using the old buffer; buffer
   and size change under the runtime lock too, so the counters and kiln_cpu_group_check agree. */
static kiln_status grow(kiln_cpu_group *g, uint64_t size)
{
    KILN_CHECK(size <= SIZE_MAX, KILN_ERROR_LIMIT);
    kiln_status st = KILN_OK;
    pthread_mutex_lock(&g->exec);
    if (g->size < size) {
        void *buffer = kiln_alloc(g->allocator, (size_t)size, 64), *old = g->buffer;
        if (buffer) {
            kiln_cpu_rt *rt = kiln_cpu_rt_lock();
            rt->scratch_bytes += size - g->size;
            g->buffer = buffer;
            g->size = size;
            kiln_cpu_rt_unlock(rt);
            kiln_free(g->allocator, old);
        } else {
            st = KILN_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&g->exec);
    return st;
}

kiln_status kiln_cpu_group_join_explicit(uint64_t id, uint64_t size, kiln_cpu_group **out)
{
    *out = NULL;
    kiln_cpu_rt *rt = kiln_cpu_rt_lock();
    kiln_cpu_group *g = find_explicit(rt, id);
    if (g) {
        g->refs++;
        g->n_members++;
    }
    kiln_cpu_rt_unlock(rt);
    KILN_CHECK(g, KILN_ERROR_STALE_HANDLE);
    kiln_status st = grow(g, size);
    if (st != KILN_OK) {
        kiln_cpu_group_leave_explicit(g);
        return st;
    }
    *out = g;
    return KILN_OK;
}

/* A member leaves. The last member takes the buffer with it (a group nobody executes in holds no
   memory; the next member grows a new one); the last reference takes the group. */
void kiln_cpu_group_leave_explicit(kiln_cpu_group *g)
{
    void *buffer = NULL;
    pthread_mutex_lock(&g->exec);
    kiln_cpu_rt *rt = kiln_cpu_rt_lock();
    if (--g->n_members == 0) {
        buffer = g->buffer;
        rt->scratch_bytes -= g->size;
        g->buffer = NULL;
        g->size = 0;
    }
    bool dead = drop_explicit_ref(rt, g);
    kiln_cpu_rt_unlock(rt);
    pthread_mutex_unlock(&g->exec);
    kiln_free(g->allocator, buffer);
    if (dead) kiln_cpu_group_free(g); /* unregistered and memberless: nobody can reach it */
}

void *kiln_cpu_group_lock(kiln_cpu_group *g)
{
    pthread_mutex_lock(&g->exec);
    return g->buffer;
}

void kiln_cpu_group_unlock(kiln_cpu_group *g) { pthread_mutex_unlock(&g->exec); }

bool kiln_cpu_group_check(const kiln_cpu_group *g)
{
    if (g->id == 0 || g->id > UINT64_MAX >> HANDLE_TAG_BITS) return false;
    if (g->is_explicit) return g->refs > 0 && g->n_members >= 0 && !g->owner && (g->n_members > 0 || !g->buffer);
    return g->owner && g->refs == 0 && g->size == g->key_size && g->buffer;
}
