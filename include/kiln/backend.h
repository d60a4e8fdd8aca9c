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

#define KILN_BACKEND_ABI_VERSION 2u   /* 2: find_target */
#define KILN_BACKEND_REGISTRY_SIZE 16
#define KILN_BACKEND_NAME_MAX 32

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
