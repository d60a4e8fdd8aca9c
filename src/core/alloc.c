/* alloc.c — the default allocator and allocation helpers.
 * Layer: core. Depends on libc only. */
#include "core/alloc.h"

#include <stdlib.h>

static void *default_alloc(void *ctx, size_t size, size_t alignment)
{
    (void)ctx;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    return p;
}

static void default_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/* Immutable after compile time: the one allocator-related object at file scope. */
static const kiln_allocator default_allocator = {NULL, default_alloc, default_free};

const kiln_allocator *kiln_allocator_default(void) { return &default_allocator; }

void *kiln_alloc(const kiln_allocator *a, size_t size, size_t alignment)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) return NULL;
    return a->alloc(a->ctx, size ? size : 1, alignment);
}

void *kiln_alloc_zero(const kiln_allocator *a, size_t size, size_t alignment)
{
    void *p = kiln_alloc(a, size, alignment);
    if (p) memset(p, 0, size);
    return p;
}

void kiln_free(const kiln_allocator *a, void *ptr)
{
    if (ptr) a->free(a->ctx, ptr);
}

char *kiln_strdup(const kiln_allocator *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = kiln_alloc(a, n, 1);
    if (p) memcpy(p, s, n);
    return p;
}
