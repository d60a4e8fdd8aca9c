/* strmap.h — string -> int32 map (open addressing, arena-backed) for value names.
 * Layer: compiler. Keys are not copied: they must outlive the map (they live in the IR arena). */
#ifndef KILN_COMPILER_STRMAP_H
#define KILN_COMPILER_STRMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"

typedef struct kiln_strmap {
    kiln_arena *arena;
    const char **keys;  /* (cap) NULL = empty slot */
    int32_t *vals;      /* (cap) */
    size_t n, cap;
} kiln_strmap;

void kiln_strmap_init(kiln_strmap *m, kiln_arena *arena);
/* Insert or overwrite; false on allocation failure. */
bool kiln_strmap_put(kiln_strmap *m, const char *key, int32_t val);
/* Value for key, or -1. */
int32_t kiln_strmap_get(const kiln_strmap *m, const char *key);

#endif
