/* str_map.h — a fixed-capacity hash map from byte strings to int32 values.
 *
 * Layer: llm (tokenizer core). Depends on core. The keys are not copied: they must outlive the
 * map (the vocabulary keeps them in its own arena). Open addressing with linear probing over a
 * power-of-two table at most half full, built once and then only read, so lookups from several
 * threads at once are safe.
 */
#ifndef KILN_LLM_STR_MAP_H
#define KILN_LLM_STR_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "kiln/kiln.h"

typedef struct kiln_str_map_slot {
    const char *key;            /* NULL: empty slot */
    uint32_t key_size;
    int32_t value;
} kiln_str_map_slot;

typedef struct kiln_str_map {
    kiln_str_map_slot *slots;   /* (mask + 1) */
    size_t mask;
} kiln_str_map;

/* Room for `capacity` keys, from the arena. KILN_ERROR_OUT_OF_MEMORY or KILN_ERROR_LIMIT. */
kiln_status kiln_str_map_init(kiln_str_map *map, kiln_arena *arena, size_t capacity);
/* Sets key -> value; an existing key gets the new value (the last duplicate wins). The map must
   have been initialised with room for every key put. */
void kiln_str_map_put(kiln_str_map *map, const char *key, uint32_t key_size, int32_t value);
/* The value of key, or -1. */
int32_t kiln_str_map_get(const kiln_str_map *map, const char *key, size_t key_size);

#endif
