/* backend.h — the delegate ABI: how a backend plugs into the kiln runtime.
 *
 * A backend executes the DELEGATE instructions of a program that name it. It is described by
 * a versioned vtable and registered once in the process-wide registry, a fixed-size table
 * that lives for the whole process (nothing in it is ever torn down, so no module can lose its
 * backend behind its back). Registration is thread-safe.
 */
#ifndef KILN_BACKEND_H
#define KILN_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_BACKEND_ABI_VERSION 3u   /* 2: find_target; 3: init_args.runtime (runtime services) */
#define KILN_BACKEND_REGISTRY_SIZE 16
#define KILN_BACKEND_NAME_MAX 32

/* ---- Runtime services: what the runtime shares between backends ---------------------------
 *
 * Scratch groups and the counters behind kiln_runtime_stats_get belong to the runtime
 * (src/runtime/scratch_group.c); a backend reaches them only through this table, which init()
 * receives in kiln_backend_init_args.runtime. The table and every group it hands out live for
 * the whole process or until released as stated, so a backend may keep the table's address in
 * state that outlives the handle (a shared context). All functions are thread-safe.
 *
 * A scratch group is one buffer shared by its members, which therefore execute one at a time
 * (DESIGN.md §4 rule 5): lock() waits for the group and returns its buffer, unlock() lets the
 * next member in. Two kinds:
 *
 *   explicit  the module's kiln_scratch_group (init_args.scratch_group). join_explicit takes a
 *             member reference and grows the buffer (default allocator) to at least `size`;
 *             leave_explicit drops it. The last member takes the buffer with it (a later member
 *             grows a new one); the group itself lives while the user, a module or a member holds
 *             it. The handle's value is a tagged id never reused, so it may serve as a key.
 *   default   keyed by (class, allocator, size): `class` is any address unique to the backend
 *             (its vtable), so backends never share a default group by accident. The backend
 *             decides membership: default_new forms an unregistered group with its buffer (from
 *             `allocator`), default_register makes it findable with `owner` (the backend's
 *             cookie of the member that owns it), default_find returns the registered group of a
 *             key and its owner, default_unregister takes it out of the registry (the next
 *             default_find of the key misses, so a fresh group forms), default_free frees an
 *             unregistered group. The registry is weak: it holds no reference and never frees.
 *             A backend that keeps owners alive while members live (the cpu backend does) calls
 *             find and register under a lock of its own, so a find never sees a dying owner.
 *
 * Lock order: lock(), join_explicit and leave_explicit take the group's lock, so call them with
 * none of the backend's own locks held; default_find/register/unregister and the counters take
 * only the runtime's leaf lock and may be called with a backend lock held. Between lock() and
 * unlock() a backend may call the other functions of the table, except lock(), join_explicit
 * and leave_explicit on the same group.
 *
 * Ownership: groups from default_new belong to the caller until default_register (then the
 * backend that registered it frees it, after default_unregister, with default_free); explicit
 * groups belong to the runtime, a member holds one reference from join_explicit until
 * leave_explicit. A group's buffer belongs to the group: valid between lock() and unlock() only
 * (an explicit group's grows, and moves, when a larger member joins). */
typedef struct kiln_backend_group kiln_backend_group;

typedef struct kiln_runtime_services {
    size_t struct_size;                 /* sizeof(kiln_runtime_services) of the runtime */
    /* Explicit groups. join_explicit: KILN_OK and *out, or KILN_ERROR_STALE_HANDLE (group released
       or never created; *out NULL), KILN_ERROR_OUT_OF_MEMORY or KILN_ERROR_LIMIT (size; nothing
       held then). */
    kiln_status (*join_explicit)(kiln_scratch_group *group, uint64_t size, kiln_backend_group **out);
    void (*leave_explicit)(kiln_backend_group *g);
    /* Default groups. default_new: KILN_OK and *out, KILN_ERROR_LIMIT (size 0 or too large),
       KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_THREAD; nothing allocated on failure. default_find:
       the registered group or NULL (then *owner is NULL). */
    kiln_status (*default_new)(const kiln_allocator *allocator, uint64_t size, kiln_backend_group **out);
    kiln_backend_group *(*default_find)(const void *cls, const kiln_allocator *allocator, uint64_t size, void **owner);
    void (*default_register)(kiln_backend_group *g, const void *cls, void *owner);
    void (*default_unregister)(kiln_backend_group *g);
    void (*default_free)(kiln_backend_group *g);   /* NULL is a no-op; never a registered group */
    /* Execution: wait for the group, then its buffer (at least every member's size). */
    void *(*lock)(kiln_backend_group *g);
    void (*unlock)(kiln_backend_group *g);
    /* Stats (kiln_runtime_stats): a backend context was created / destroyed. */
    void (*context_created)(void);
    void (*context_destroyed)(void);
} kiln_runtime_services;

/* What init() gets: the delegate payload and the loading module's environment. */
typedef struct kiln_backend_init_args {
    size_t struct_size;
    const void *payload;                /* the context binary; valid while the method is loaded */
    size_t payload_size;
    const kiln_allocator *allocator;    /* the module's runtime allocator (its identity too) */
    kiln_scratch_group *scratch_group;  /* the module's explicit group, or NULL */
    const char *target;                 /* forced record name, or NULL */
    int num_threads;
    const char *method_name;            /* the method being loaded */
    char *message;                      /* on failure, init() may write one line here saying why */
    size_t message_size;
    /* The loading module's worker threads: parallel_for(pool, n, fn, arg) runs fn(arg, i) for
       every i < n and returns when all are done. Valid while the handle init() returns lives
       (handles belong to one method of one module), so keep them per handle, not per shared
       context. Never NULL. */
    void (*parallel_for)(void *pool, size_t n, void (*fn)(void *arg, size_t i), void *arg);
    void *pool;
    /* The runtime's services (scratch groups, stats), never NULL; valid for the whole process.
       New in ABI version 3. */
    const kiln_runtime_services *runtime;
    /* The delegate instruction's name (the compiler names them `<backend>_partition_<i>`), or
       NULL: a payload serving several delegate calls of one method (their partitions share a
       weight) tells its graphs apart by it. A backend reads it only when struct_size covers it. */
    const char *delegate_name;
} kiln_backend_init_args;

typedef struct kiln_backend {
    uint32_t abi_version;               /* KILN_BACKEND_ABI_VERSION */
    uint32_t struct_size;               /* sizeof(kiln_backend) */
    const char *name;                   /* unique, < KILN_BACKEND_NAME_MAX bytes; must be static */
    void *user;                         /* passed back to every call */
    /* Can this backend run on this machine at all? */
    bool (*is_available)(void *user);
    /* Create the state a delegate call needs; *handle_out on success. Any failure must leave
       nothing allocated. */
    kiln_status (*init)(void *user, const kiln_backend_init_args *args, void **handle_out);
    /* Run one delegate call. inputs/outputs are dense tensors whose shapes the program fixed;
       outputs are preallocated. */
    kiln_status (*execute)(void *user, void *handle, const kiln_tensor *const *inputs, size_t n_inputs,
                           kiln_tensor *const *outputs, size_t n_outputs);
    /* Release what init() created. */
    void (*destroy)(void *user, void *handle);
    /* Optional: the identity of the shared state behind handle (0 if none). */
    uint64_t (*context_id)(void *user, void *handle);
    /* Optional (NULL: any forced target is left to init()), asked by kiln_module_create when
       kiln_module_options.target forces a record. payload NULL: KILN_OK when target is a name this
       backend knows. Else: KILN_OK when the payload has a record of that name. Otherwise
       KILN_ERROR_NOT_FOUND with names (names_size > 0) set to the names that exist — every name
       the backend knows, or the payload's records — as "a, b, c". KILN_ERROR_INCOMPATIBLE when
       the payload cannot be read (init() reports why at load). New in ABI version 2. */
    kiln_status (*find_target)(void *user, const void *payload, size_t payload_size, const char *target, char *names,
                               size_t names_size);
} kiln_backend;

/* Add a backend to the registry. The vtable must outlive the process (static storage).
 * KILN_ERROR_INVALID_ARGUMENT (NULL, missing functions, bad name), KILN_ERROR_BACKEND_ABI
 * (abi_version or struct_size mismatch), KILN_ERROR_BACKEND_DUPLICATE (name taken),
 * KILN_ERROR_BACKEND_REGISTRY_FULL. */
KILN_API kiln_status kiln_backend_register(const kiln_backend *backend);
/* The registered backend of that name, or NULL. */
KILN_API const kiln_backend *kiln_backend_find(const char *name);
/* Number of registered backends and the i-th (registration order), for listings. */
KILN_API size_t kiln_backend_count(void);
KILN_API const kiln_backend *kiln_backend_at(size_t i);

#ifdef __cplusplus
}
#endif
#endif
