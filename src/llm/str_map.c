/* str_map.c — see str_map.h. Layer: llm (tokenizer core). */
#include "llm/str_map.h"

#include <string.h>

#include "core/hash.h"

kiln_status kiln_str_map_init(kiln_str_map *map, kiln_arena *arena, size_t capacity)
{
    size_t n = 16;
    while (n < 2 * capacity) {
        if (n > SIZE_MAX / 4) return KILN_ERROR_LIMIT;
        n *= 2;
    }
    map->slots = KILN_ARENA_ARRAY(arena, kiln_str_map_slot, n);
    if (!map->slots) return KILN_ERROR_OUT_OF_MEMORY;
    map->mask = n - 1;
    return KILN_OK;
}

static size_t find_slot(const kiln_str_map *map, const char *key, size_t key_size)
{
    size_t i = (size_t)kiln_hash64(key, key_size, 0x746f6b656e73ull) & map->mask;
    for (;; i = (i + 1) & map->mask) {
        const kiln_str_map_slot *s = &map->slots[i];
        if (!s->key || (s->key_size == key_size && memcmp(s->key, key, key_size) == 0)) return i;
    }
}

void kiln_str_map_put(kiln_str_map *map, const char *key, uint32_t key_size, int32_t value)
{
    kiln_str_map_slot *s = &map->slots[find_slot(map, key, key_size)];
    s->key = key;
    s->key_size = key_size;
    s->value = value;
}

int32_t kiln_str_map_get(const kiln_str_map *map, const char *key, size_t key_size)
{
    const kiln_str_map_slot *s = &map->slots[find_slot(map, key, key_size)];
    return s->key ? s->value : -1;
}
