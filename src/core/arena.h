/* arena.h — a bump allocator over a kiln_allocator, freed all at once.
 *
 * Layer: core (internal). Used for load-time structures and compiler IR, whose pieces all die
 * together. Memory map of one arena:
 *
 *   chunk list: [hdr|used ......... free] -> [hdr|used .... free] -> ... -> NULL
 *               ^ newest chunk first; requests larger than a quarter chunk get a chunk of
 *                 their own, so big tensors never waste the tail of a shared chunk.
 */
#ifndef KILN_CORE_ARENA_H
#define KILN_CORE_ARENA_H

#include <stddef.h>

#include "kiln/kiln.h"

typedef struct kiln_arena_chunk kiln_arena_chunk;

typedef struct kiln_arena {
    const kiln_allocator *allocator;
    kiln_arena_chunk *head;
    size_t chunk_size;      /* default chunk payload size */
    size_t bytes_reserved;  /* sum of chunk payloads, for statistics */
} kiln_arena;

void kiln_arena_init(kiln_arena *arena, const kiln_allocator *allocator, size_t chunk_size);
void kiln_arena_deinit(kiln_arena *arena);
/* NULL on failure; alignment must be a power of two <= 64. Memory is zeroed. */
void *kiln_arena_alloc(kiln_arena *arena, size_t size, size_t alignment);
char *kiln_arena_strdup(kiln_arena *arena, const char *s);
void *kiln_arena_memdup(kiln_arena *arena, const void *p, size_t size, size_t alignment);

#define KILN_ARENA_NEW(arena, type) ((type *)kiln_arena_alloc((arena), sizeof(type), _Alignof(type)))
#define KILN_ARENA_ARRAY(arena, type, n)                                                         \
    ((type *)kiln_arena_alloc_array((arena), (n), sizeof(type), _Alignof(type)))
/* Overflow-checked n * size allocation. */
void *kiln_arena_alloc_array(kiln_arena *arena, size_t n, size_t size, size_t alignment);



/* A kiln_allocator view of the arena (free is a no-op; memory goes with the arena), for code
   that takes an allocator but whose results should live exactly as long as the arena. */
kiln_allocator kiln_arena_as_allocator(kiln_arena *arena);
#endif
