/* arena.c — bump allocation in chunks from a kiln_allocator. Layer: core. */
#include "core/arena.h"

#include <string.h>

#include "core/alloc.h"
#include "core/check.h"

struct kiln_arena_chunk {
    kiln_arena_chunk *next;
    size_t size;    /* payload bytes */
    size_t used;
    _Alignas(64) unsigned char data[];
};

void kiln_arena_init(kiln_arena *arena, const kiln_allocator *allocator, size_t chunk_size)
{
    arena->allocator = allocator;
    arena->head = NULL;
    arena->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    arena->bytes_reserved = 0;
}

void kiln_arena_deinit(kiln_arena *arena)
{
    kiln_arena_chunk *c = arena->head;
    while (c) {
        kiln_arena_chunk *next = c->next;
        kiln_free(arena->allocator, c);
        c = next;
    }
    arena->head = NULL;
    arena->bytes_reserved = 0;
}

static kiln_arena_chunk *new_chunk(kiln_arena *arena, size_t payload)
{
    size_t total;
    if (!kiln_add_size(sizeof(kiln_arena_chunk), payload, &total)) return NULL;
    kiln_arena_chunk *c = kiln_alloc(arena->allocator, total, 64);
    if (!c) return NULL;
    c->size = payload;
    c->used = 0;
    arena->bytes_reserved += payload;
    return c;
}

void *kiln_arena_alloc(kiln_arena *arena, size_t size, size_t alignment)
{
    if (alignment == 0 || alignment > 64 || (alignment & (alignment - 1))) return NULL;
    if (size == 0) size = 1;
    kiln_arena_chunk *c = arena->head;
    if (c) {
        size_t start = kiln_align_up(c->used, alignment), end;
        if (kiln_add_size(start, size, &end) && end <= c->size) {
            c->used = end;
            memset(c->data + start, 0, size);
            return c->data + start;
        }
    }
    if (size > arena->chunk_size / 4) {
        /* A private chunk, linked behind the head so the head keeps its free tail. */
        kiln_arena_chunk *big = new_chunk(arena, size);
        if (!big) return NULL;
        big->used = size;
        if (arena->head) {
            big->next = arena->head->next;
            arena->head->next = big;
        } else {
            big->next = NULL;
            arena->head = big;
        }
        memset(big->data, 0, size);
        return big->data;
    }
    c = new_chunk(arena, arena->chunk_size);
    if (!c) return NULL;
    c->next = arena->head;
    arena->head = c;
    c->used = size;
    memset(c->data, 0, size);
    return c->data;
}

void *kiln_arena_alloc_array(kiln_arena *arena, size_t n, size_t size, size_t alignment)
{
    size_t total;
    if (!kiln_mul_size(n, size, &total)) return NULL;
    return kiln_arena_alloc(arena, total, alignment);
}

char *kiln_arena_strdup(kiln_arena *arena, const char *s)
{
    return kiln_arena_memdup(arena, s, strlen(s) + 1, 1);
}

void *kiln_arena_memdup(kiln_arena *arena, const void *p, size_t size, size_t alignment)
{
    void *q = kiln_arena_alloc(arena, size, alignment);
    if (q && size) memcpy(q, p, size);
    return q;
}

static void *arena_alloc_fn(void *ctx, size_t size, size_t alignment)
{
    return kiln_arena_alloc(ctx, size, alignment > 64 ? 64 : alignment);
}

static void arena_free_fn(void *ctx, void *ptr) { (void)ctx, (void)ptr; }

kiln_allocator kiln_arena_as_allocator(kiln_arena *arena)
{
    kiln_allocator a = {arena, arena_alloc_fn, arena_free_fn};
    return a;
}
