/* handle_table.c — slot + generation handles for programs, modules and methods (handle_table.h).
 *
 * Layer: runtime. The `table` below is one of kiln's documented mutable globals (docs/layers.md):
 * statically initialised, guarded by table.lock, never torn down. Handle layout (64 bits):
 *
 *   63                         24 23                 4 3    0
 *   [ generation (40 bits)      | slot index (20)     | tag  ]     tag = kind << 1 | 1
 *
 * The tag's low bit is 1, so no handle is ever an aligned address, and a pointer or small integer
 * passed as a handle fails the tag or the generation check. Slots live in chunks that are
 * allocated on demand and never freed or moved, so a slot index, once in range, always names
 * valid memory. A slot whose generation reaches the maximum is retired for good instead of
 * wrapping, so no handle value is ever issued twice.
 */
#include "runtime/handle_table.h"

#include <pthread.h>
#include <stdbool.h>

#include "core/alloc.h"
#include "core/check.h"

_Static_assert(sizeof(uintptr_t) >= 8, "handles pack a 40-bit generation and a 20-bit slot into a pointer");

#define TAG_BITS 4
#define SLOT_BITS 20
#define GENERATION_MAX (((uint64_t)1 << 40) - 1)
#define CHUNK_SLOTS 1024u
#define MAX_CHUNKS (((uint32_t)1 << SLOT_BITS) / CHUNK_SLOTS)

typedef struct slot {
    void *object;           /* NULL when the slot is free */
    uint64_t generation;    /* of the handle naming the object; the next handle's when free */
    uint32_t pins;          /* calls in flight on the object */
    uint32_t next_free;     /* free-list link: slot index + 1, 0 = end */
    uint8_t kind;           /* kiln_handle_kind */
    bool retiring;          /* stale for new pins; the retirer waits for pins to reach 0 */
} slot;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t unpinned;    /* broadcast when a retiring slot's last pin goes */
    slot *chunks[MAX_CHUNKS];
    uint32_t n_chunks;
    uint32_t n_slots;           /* slots ever used: [0, n_slots) */
    uint32_t free_head;         /* slot index + 1, 0 = none */
} table = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static uintptr_t tag_of(kiln_handle_kind kind) { return (uintptr_t)kind << 1 | 1u; }

static uintptr_t encode(kiln_handle_kind kind, uint32_t index, uint64_t generation)
{
    return (uintptr_t)generation << (SLOT_BITS + TAG_BITS) | (uintptr_t)index << TAG_BITS | tag_of(kind);
}

/* The slot a handle value names (live or not), or NULL if the value cannot be a handle of kind.
   Lock held. */
static slot *slot_of(uintptr_t handle, kiln_handle_kind kind)
{
    if ((handle & ((1u << TAG_BITS) - 1)) != tag_of(kind)) return NULL;
    uint32_t index = (uint32_t)(handle >> TAG_BITS) & ((1u << SLOT_BITS) - 1);
    if (index >= table.n_slots) return NULL;
    slot *s = &table.chunks[index / CHUNK_SLOTS][index % CHUNK_SLOTS];
    uint64_t generation = (uint64_t)handle >> (SLOT_BITS + TAG_BITS);
    if (s->generation != generation || s->kind != (uint8_t)kind || !s->object) return NULL;
    return s;
}

/* The slot of a live handle (not retiring), or NULL. Lock held. */
static slot *live_slot(uintptr_t handle, kiln_handle_kind kind)
{
    slot *s = slot_of(handle, kind);
    return s && !s->retiring ? s : NULL;
}

kiln_status kiln_handle_add(kiln_handle_kind kind, void *object, uintptr_t *out)
{
    *out = 0;
    KILN_CHECK(object, KILN_ERROR_INVALID_ARGUMENT);
    kiln_status st = KILN_OK;
    pthread_mutex_lock(&table.lock);
    uint32_t index;
    if (table.free_head) {
        index = table.free_head - 1;
        table.free_head = table.chunks[index / CHUNK_SLOTS][index % CHUNK_SLOTS].next_free;
    } else if (table.n_slots < table.n_chunks * CHUNK_SLOTS) {
        index = table.n_slots++;
    } else if (table.n_chunks == MAX_CHUNKS) {
        st = KILN_ERROR_LIMIT;
    } else {
        /* Rare (once per 1024 live handles at most) and small, so done under the lock. */
        slot *chunk = kiln_alloc_zero(kiln_allocator_default(), CHUNK_SLOTS * sizeof(slot), _Alignof(slot));
        if (chunk) {
            for (uint32_t i = 0; i < CHUNK_SLOTS; i++) chunk[i].generation = 1;
            table.chunks[table.n_chunks++] = chunk;
            index = table.n_slots++;
        } else {
            st = KILN_ERROR_OUT_OF_MEMORY;
        }
    }
    if (st == KILN_OK) {
        slot *s = &table.chunks[index / CHUNK_SLOTS][index % CHUNK_SLOTS];
        s->object = object;
        s->kind = (uint8_t)kind;
        s->pins = 0;
        s->next_free = 0;
        s->retiring = false;
        *out = encode(kind, index, s->generation);
    }
    pthread_mutex_unlock(&table.lock);
    return st;
}

void *kiln_handle_pin(uintptr_t handle, kiln_handle_kind kind)
{
    void *object = NULL;
    pthread_mutex_lock(&table.lock);
    slot *s = live_slot(handle, kind);
    if (s) {
        s->pins++;
        object = s->object;
    }
    pthread_mutex_unlock(&table.lock);
    return object;
}

void kiln_handle_unpin(uintptr_t handle)
{
    pthread_mutex_lock(&table.lock);
    kiln_handle_kind kind = (kiln_handle_kind)((handle & ((1u << TAG_BITS) - 1)) >> 1);
    slot *s = slot_of(handle, kind);
    if (!KILN_NEVER(!s || s->pins == 0)) {
        s->pins--;
        if (s->pins == 0 && s->retiring) pthread_cond_broadcast(&table.unpinned);
    }
    pthread_mutex_unlock(&table.lock);
}

void *kiln_handle_retire(uintptr_t handle, kiln_handle_kind kind)
{
    pthread_mutex_lock(&table.lock);
    slot *s = live_slot(handle, kind);
    void *object = NULL;
    if (s) {
        s->retiring = true;
        while (s->pins > 0) pthread_cond_wait(&table.unpinned, &table.lock);
        object = s->object;
        uint32_t index = (uint32_t)(handle >> TAG_BITS) & ((1u << SLOT_BITS) - 1);
        s->object = NULL;
        s->retiring = false;
        s->generation++;
        if (s->generation < GENERATION_MAX) {
            s->next_free = table.free_head;
            table.free_head = index + 1;
        }
    }
    pthread_mutex_unlock(&table.lock);
    return object;
}
