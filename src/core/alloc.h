/* alloc.h — allocator helpers over the public kiln_allocator interface.
 *
 * Layer: core (internal). Every kiln object takes its allocator from its creator; nothing
 * replaces allocation process-wide. kiln_allocator_default() is a stateless malloc-backed
 * allocator (its ctx is NULL), so sharing the one returned object is safe.
 */
#ifndef KILN_CORE_ALLOC_H
#define KILN_CORE_ALLOC_H

#include <stddef.h>
#include <string.h>

#include "kiln/kiln.h"

/* A malloc-backed allocator honouring any power-of-two alignment. Static, never NULL. */
const kiln_allocator *kiln_allocator_default(void);

/* size 0 allocates 1 byte so that success is never confused with failure. */
void *kiln_alloc(const kiln_allocator *a, size_t size, size_t alignment);
void *kiln_alloc_zero(const kiln_allocator *a, size_t size, size_t alignment);
void kiln_free(const kiln_allocator *a, void *ptr);
/* A NUL-terminated copy of s from a, or NULL. */
char *kiln_strdup(const kiln_allocator *a, const char *s);

#define KILN_NEW(a, type) ((type *)kiln_alloc_zero((a), sizeof(type), _Alignof(type)))

#endif /* KILN_CORE_ALLOC_H */
