/* scratch_group.c — the runtime's scratch groups and counters: the public kiln_scratch_group
 * API, kiln_runtime_stats_get and the services table backends reach them through
 * (kiln_runtime_services in include/kiln/backend.h, which states the rules).
 *
 * Layer: runtime. The one `state` below is shared by every backend and module of the process,
 * as DESIGN.md §4 rule 5 requires (groups span modules): statically initialised, never torn
 * down, so a process may exit with modules loaded and nothing disappears behind them. Its lock
 * is a leaf: held only to search and edit the registry and counters, never while allocating or
 * calling out. A group's buffer changes under the group's `exec` lock, taken before the state
 * lock when both are needed (growth updates the reserved-bytes counter). Explicit handles are
 * not addresses but the group's id (never reused) with a tag, so a released handle is
 * recognised as stale without reading freed memory and never aliases a newer group.
 */
#include <pthread.h>

#include "core/alloc.h"
#include "core/check.h"
#include "runtime/runtime.h"

#define HANDLE_TAG 0xAu
#define HANDLE_TAG_BITS 4

struct kiln_backend_group {
    uint64_t id;                    /* registry id, never reused */
    bool is_explicit;
    bool registered;                /* on the registry list */
    const kiln_allocator *allocator;/* of this struct and its buffer */
    const void *cls;                /* default: the key's backend class */
    uint64_t key_size;              /* default: the key's scratch size */
    void *owner;                    /* default: the backend's owner cookie */
    int refs;                       /* explicit: user + modules + members (state lock) */
    int n_members;                  /* explicit: member contexts (state lock) */
    bool user_held;                 /* explicit: not yet kiln_scratch_group_release'd (state lock) */
    pthread_mutex_t exec;           /* serialises executions and buffer growth */
    void *buffer;                   /* (size bytes, 64-byte aligned); changed under exec and the state lock */
    uint64_t size;                  /* changed with buffer */
    kiln_backend_group *next;       /* registry list (state lock) */
};

typedef struct scratch_state {
    pthread_mutex_t lock;
    kiln_backend_group *groups;     /* registered groups; the list holds no reference */
    uint64_t next_group_id;         /* last id handed to a group */
    uint64_t live_contexts, contexts_created, contexts_destroyed;
    uint64_t live_groups;
    uint64_t scratch_bytes;         /* sum of the sizes of the registered groups' buffers */
} scratch_state;

static scratch_state state = {.lock = PTHREAD_MUTEX_INITIALIZER};

#ifdef KILN_DEBUG
/* One group's invariants and the counters against the list, checked as a contract on every
   unlock of debug builds (the lock held); release builds have neither function. */
static bool group_ok(const kiln_backend_group *g)
{
    if (g->id == 0 || g->id > UINT64_MAX >> HANDLE_TAG_BITS) return false;
    if (g->is_explicit) return g->refs > 0 && g->n_members >= 0 && !g->owner && (g->n_members > 0 || !g->buffer);
    return g->refs == 0 && g->size == g->key_size && g->buffer;
}

static bool state_ok(const scratch_state *s)
{
    uint64_t groups = 0, bytes = 0;
    for (const kiln_backend_group *g = s->groups; g; g = g->next) {
        groups++;
        bytes += g->size;
        if (!group_ok(g)) return false;
    }
    return groups == s->live_groups && bytes == s->scratch_bytes &&
           s->live_contexts == s->contexts_created - s->contexts_destroyed;
}
#endif

static scratch_state *lock_state(void)
{
    pthread_mutex_lock(&state.lock);
    return &state;
}

static void unlock_state(scratch_state *s)
{
    KILN_CONTRACT(state_ok(s));
    pthread_mutex_unlock(&s->lock);
}

static kiln_scratch_group *handle_of(uint64_t id)
{
    return (kiln_scratch_group *)(uintptr_t)(id << HANDLE_TAG_BITS | HANDLE_TAG);
}

static uint64_t handle_id(const kiln_scratch_group *h)
{
    uintptr_t v = (uintptr_t)h;
    return (v & ((1u << HANDLE_TAG_BITS) - 1)) == HANDLE_TAG ? (uint64_t)(v >> HANDLE_TAG_BITS) : 0;
}

static kiln_status group_alloc(const kiln_allocator *a, kiln_backend_group **out)
{
    kiln_backend_group *g = KILN_NEW(a, kiln_backend_group);
    KILN_CHECK(g, KILN_ERROR_OUT_OF_MEMORY);
    if (pthread_mutex_init(&g->exec, NULL) != 0) {
        kiln_free(a, g);
        return KILN_ERROR_THREAD;
    }
    g->allocator = a;
    *out = g;
    return KILN_OK;
}

static void group_free(kiln_backend_group *g)
{
    if (!g || KILN_NEVER(g->registered)) return;
    const kiln_allocator *a = g->allocator;
    pthread_mutex_destroy(&g->exec);
    kiln_free(a, g->buffer);
    kiln_free(a, g);
}

static void register_locked(scratch_state *s, kiln_backend_group *g)
{
    g->id = ++s->next_group_id;
    g->next = s->groups;
    g->registered = true;
    s->groups = g;
    s->live_groups++;
    s->scratch_bytes += g->size;
}

static void unregister_locked(scratch_state *s, kiln_backend_group *g)
{
    kiln_backend_group **p = &s->groups;
    while (*p && *p != g) p = &(*p)->next;
    if (KILN_NEVER(!*p)) return;
    *p = g->next;
    g->next = NULL;
    g->registered = false;
    s->live_groups--;
    s->scratch_bytes -= g->size;
}

/* ---- default groups ---- */

static kiln_status default_new(const kiln_allocator *a, uint64_t size, kiln_backend_group **out)
{
    *out = NULL;
    KILN_CHECK(a && size > 0 && size <= SIZE_MAX, KILN_ERROR_LIMIT);
    kiln_backend_group *g;
    KILN_TRY(group_alloc(a, &g));
    g->buffer = kiln_alloc(a, (size_t)size, 64);
    if (!g->buffer) {
        group_free(g);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    g->key_size = size;
    g->size = size;
    *out = g;
    return KILN_OK;
}

static kiln_backend_group *default_find(const void *cls, const kiln_allocator *a, uint64_t size, void **owner)
{
    scratch_state *s = lock_state();
    kiln_backend_group *g = s->groups;
    while (g && (g->is_explicit || g->cls != cls || g->allocator != a || g->key_size != size)) g = g->next;
    *owner = g ? g->owner : NULL;
    unlock_state(s);
    return g;
}

static void default_register(kiln_backend_group *g, const void *cls, void *owner)
{
    g->cls = cls;
    g->owner = owner;
    scratch_state *s = lock_state();
    register_locked(s, g);
    unlock_state(s);
}

static void default_unregister(kiln_backend_group *g)
{
    scratch_state *s = lock_state();
    unregister_locked(s, g);
    unlock_state(s);
}

/* ---- explicit groups ---- */

static kiln_backend_group *find_explicit(scratch_state *s, uint64_t id)
{
    for (kiln_backend_group *g = s->groups; id && g; g = g->next)
        if (g->is_explicit && g->id == id) return g;
    return NULL;
}

/* Drop one reference of an explicit group; true when it was the last (the group has left the
   registry and the caller frees it after unlocking). */
static bool drop_explicit_ref(scratch_state *s, kiln_backend_group *g)
{
    if (--g->refs > 0) return false;
    unregister_locked(s, g);
    return true;
}

kiln_status kiln_scratch_group_create(kiln_scratch_group **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    kiln_backend_group *g;
    KILN_TRY(group_alloc(kiln_allocator_default(), &g));
    g->is_explicit = true;
    g->refs = 1;
    g->user_held = true;
    scratch_state *s = lock_state();
    register_locked(s, g);
    uint64_t id = g->id;
    unlock_state(s);
    *out = handle_of(id);
    return KILN_OK;
}

void kiln_scratch_group_release(kiln_scratch_group *h)
{
    scratch_state *s = lock_state();
    kiln_backend_group *g = find_explicit(s, handle_id(h));
    bool dead = false;
    if (g && g->user_held) { /* a second release of the same handle is stale: ignored */
        g->user_held = false;
        dead = drop_explicit_ref(s, g);
    }
    unlock_state(s);
    if (dead) group_free(g);
}

kiln_status kiln_scratch_group_retain(kiln_scratch_group *h)
{
    scratch_state *s = lock_state();
    kiln_backend_group *g = find_explicit(s, handle_id(h));
    kiln_status st = g && g->user_held ? KILN_OK : KILN_ERROR_STALE_HANDLE;
    if (st == KILN_OK) g->refs++;
    unlock_state(s);
    return st;
}

void kiln_scratch_group_unref(kiln_scratch_group *h)
{
    scratch_state *s = lock_state();
    kiln_backend_group *g = find_explicit(s, handle_id(h));
    bool dead = g && drop_explicit_ref(s, g);
    unlock_state(s);
    if (dead) group_free(g);
}

/* Grow the buffer to size. Under the exec lock no execution can be using the old buffer; buffer
   and size change under the state lock too, so the counters and the debug checks agree. */
static kiln_status grow(kiln_backend_group *g, uint64_t size)
{
    KILN_CHECK(size <= SIZE_MAX, KILN_ERROR_LIMIT);
    kiln_status st = KILN_OK;
    pthread_mutex_lock(&g->exec);
    if (g->size < size) {
        void *buffer = kiln_alloc(g->allocator, (size_t)size, 64), *old = g->buffer;
        if (buffer) {
            scratch_state *s = lock_state();
            s->scratch_bytes += size - g->size;
            g->buffer = buffer;
            g->size = size;
            unlock_state(s);
            kiln_free(g->allocator, old);
        } else {
            st = KILN_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&g->exec);
    return st;
}

/* A member leaves. The last member takes the buffer with it (a group nobody executes in holds no
   memory; the next member grows a new one); the last reference takes the group. */
static void leave_explicit(kiln_backend_group *g)
{
    void *buffer = NULL;
    pthread_mutex_lock(&g->exec);
    scratch_state *s = lock_state();
    if (--g->n_members == 0) {
        buffer = g->buffer;
        s->scratch_bytes -= g->size;
        g->buffer = NULL;
        g->size = 0;
    }
    bool dead = drop_explicit_ref(s, g);
    unlock_state(s);
    pthread_mutex_unlock(&g->exec);
    kiln_free(g->allocator, buffer);
    if (dead) group_free(g); /* unregistered and memberless: nobody can reach it */
}

static kiln_status join_explicit(kiln_scratch_group *h, uint64_t size, kiln_backend_group **out)
{
    *out = NULL;
    scratch_state *s = lock_state();
    kiln_backend_group *g = find_explicit(s, handle_id(h));
    if (g) {
        g->refs++;
        g->n_members++;
    }
    unlock_state(s);
    KILN_CHECK(g, KILN_ERROR_STALE_HANDLE);
    kiln_status st = grow(g, size);
    if (st != KILN_OK) {
        leave_explicit(g);
        return st;
    }
    *out = g;
    return KILN_OK;
}

/* ---- execution and counters ---- */

static void *group_lock(kiln_backend_group *g)
{
    pthread_mutex_lock(&g->exec);
    return g->buffer;
}

static void group_unlock(kiln_backend_group *g) { pthread_mutex_unlock(&g->exec); }

static void context_created(void)
{
    scratch_state *s = lock_state();
    s->contexts_created++;
    s->live_contexts++;
    unlock_state(s);
}

static void context_destroyed(void)
{
    scratch_state *s = lock_state();
    s->contexts_destroyed++;
    s->live_contexts--;
    unlock_state(s);
}

static const kiln_runtime_services services = {
    .struct_size = sizeof(kiln_runtime_services),
    .join_explicit = join_explicit,
    .leave_explicit = leave_explicit,
    .default_new = default_new,
    .default_find = default_find,
    .default_register = default_register,
    .default_unregister = default_unregister,
    .default_free = group_free,
    .lock = group_lock,
    .unlock = group_unlock,
    .context_created = context_created,
    .context_destroyed = context_destroyed,
};

const kiln_runtime_services *kiln_runtime_services_get(void) { return &services; }

kiln_status kiln_runtime_stats_get(kiln_runtime_stats *out)
{
    KILN_CHECK(out && out->struct_size >= sizeof *out, KILN_ERROR_INVALID_ARGUMENT);
    scratch_state *s = lock_state();
    out->live_contexts = s->live_contexts;
    out->contexts_created = s->contexts_created;
    out->contexts_destroyed = s->contexts_destroyed;
    out->live_scratch_groups = s->live_groups;
    out->scratch_bytes_reserved = s->scratch_bytes;
    unlock_state(s);
    return KILN_OK;
}
