/* strmap.c — open-addressing string map; grows at 50% load. Layer: compiler. */
#include "compiler/strmap.h"

#include <string.h>

#include "core/hash.h"

void kiln_strmap_init(kiln_strmap *m, kiln_arena *arena)
{
    memset(m, 0, sizeof *m);
    m->arena = arena;
}

static size_t slot_of(const kiln_strmap *m, const char *key)
{
    size_t mask = m->cap - 1, i = (size_t)kiln_hash64(key, strlen(key), 0) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
    return i;
}

static bool rehash(kiln_strmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    const char **old_keys = m->keys;
    int32_t *old_vals = m->vals;
    size_t old_cap = m->cap;
    m->keys = KILN_ARENA_ARRAY(m->arena, const char *, cap);
    m->vals = KILN_ARENA_ARRAY(m->arena, int32_t, cap);
    if (!m->keys || !m->vals) return false;
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old_keys[i]) continue;
        size_t s = slot_of(m, old_keys[i]);
        m->keys[s] = old_keys[i];
        m->vals[s] = old_vals[i];
    }
    return true;
}

bool kiln_strmap_put(kiln_strmap *m, const char *key, int32_t val)
{
    if (2 * (m->n + 1) > m->cap && !rehash(m)) return false;
    size_t s = slot_of(m, key);
    if (!m->keys[s]) {
        m->keys[s] = key;
        m->n++;
    }
    m->vals[s] = val;
    return true;
}

int32_t kiln_strmap_get(const kiln_strmap *m, const char *key)
{
    if (!m->cap) return -1;
    size_t s = slot_of(m, key);
    return m->keys[s] ? m->vals[s] : -1;
}
