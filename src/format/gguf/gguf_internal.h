/* gguf_internal.h — the kiln_gguf view's layout, shared by the reader's files only.
 *
 * Layer: format (src/format/gguf). Everything lives in `arena`; kvs and tensors are in file
 * order, the two indexes hold the same entries sorted by name (memcmp order, shorter first on a
 * common prefix) for duplicate checks and binary-search lookups.
 */
#ifndef KILN_FORMAT_GGUF_INTERNAL_H
#define KILN_FORMAT_GGUF_INTERNAL_H

#include "format/gguf/gguf_reader.h"
#include "core/arena.h"

#include <string.h>

#define KILN_GGUF_STR_(x) #x
#define KILN_GGUF_STR(x) KILN_GGUF_STR_(x)

struct kiln_gguf {
    const kiln_allocator *allocator;
    kiln_arena arena;
    uint32_t version;
    uint64_t alignment;
    uint64_t data_offset;
    size_t n_kv;
    kiln_gguf_kv *kvs;                       /* (n_kv) */
    const kiln_gguf_kv **kv_index;           /* (n_kv) sorted by key */
    size_t n_tensors;
    kiln_gguf_tensor *tensors;               /* (n_tensors) */
    const kiln_gguf_tensor **tensor_index;   /* (n_tensors) sorted by name */
};

/* Names are (bytes, size) pairs pointing into the file without a NUL: memcmp order, the
   shorter first on a common prefix. */
static inline int kiln_gguf_name_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, an < bn ? an : bn);
    return r ? r : (an > bn) - (an < bn);
}

/* A little-endian unsigned integer of n <= 8 bytes at p (the file does not align values). */
static inline uint64_t kiln_gguf_load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#endif
