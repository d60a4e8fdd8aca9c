/* backend_registry.c — the process-wide backend registry (DESIGN.md §4 rule 6).
 *
 * Layer: runtime. This fixed table and its mutex are the runtime's only mutable file-scope
 * state: registration appends, nothing is ever removed, so a pointer returned by
 * kiln_backend_find stays valid for the life of the process and needs no reference count.
 */
#include <pthread.h>
#include <string.h>

#include "kiln/backend.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static const kiln_backend *registry[KILN_BACKEND_REGISTRY_SIZE];
static size_t registry_count;

kiln_status kiln_backend_register(const kiln_backend *b)
{
    if (!b || !b->name || !b->is_available || !b->init || !b->execute || !b->destroy) return KILN_ERROR_INVALID_ARGUMENT;
    size_t len = strnlen(b->name, KILN_BACKEND_NAME_MAX);
    if (len == 0 || len >= KILN_BACKEND_NAME_MAX) return KILN_ERROR_INVALID_ARGUMENT;
    if (b->abi_version != KILN_BACKEND_ABI_VERSION || b->struct_size != sizeof(kiln_backend))
        return KILN_ERROR_BACKEND_ABI;
    kiln_status st = KILN_OK;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count; i++)
        if (strcmp(registry[i]->name, b->name) == 0) st = KILN_ERROR_BACKEND_DUPLICATE;
    if (st == KILN_OK && registry_count == KILN_BACKEND_REGISTRY_SIZE) st = KILN_ERROR_BACKEND_REGISTRY_FULL;
    if (st == KILN_OK) registry[registry_count++] = b;
    pthread_mutex_unlock(&registry_lock);
    return st;
}

const kiln_backend *kiln_backend_find(const char *name)
{
    const kiln_backend *found = NULL;
    if (!name) return NULL;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count && !found; i++)
        if (strcmp(registry[i]->name, name) == 0) found = registry[i];
    pthread_mutex_unlock(&registry_lock);
    return found;
}

size_t kiln_backend_count(void)
{
    pthread_mutex_lock(&registry_lock);
    size_t n = registry_count;
    pthread_mutex_unlock(&registry_lock);
    return n;
}

const kiln_backend *kiln_backend_at(size_t i)
{
    pthread_mutex_lock(&registry_lock);
    const kiln_backend *b = i < registry_count ? registry[i] : NULL;
    pthread_mutex_unlock(&registry_lock);
    return b;
}
