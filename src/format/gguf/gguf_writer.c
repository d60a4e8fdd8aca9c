/* gguf_writer.c — kiln_gguf_metadata_blob (gguf_writer.h).
 *
 * Layer: format (src/format/gguf). Depends on core. Two passes over the same encoder: the first
 * only counts the bytes, the second writes them into one allocation of exactly that size. The
 * values were bounds-checked when the file was opened, so the encoder copies their bytes as they
 * are (scalars little-endian as the file stores them; arrays of scalars as one run of bytes).
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "format/gguf/gguf_internal.h"
#include "format/gguf/gguf_writer.h"

/* Where the encoder writes: nowhere (dst NULL, counting) or dst, which has room for all. */
typedef struct sink {
    uint8_t *dst;
    uint64_t size;
    bool overflow;
} sink;

static void put(sink *s, const void *p, uint64_t n)
{
    if (s->dst && n) memcpy(s->dst + s->size, p, (size_t)n);
    if (!kiln_add_u64(s->size, n, &s->size)) s->overflow = true;
}

static void put_le(sink *s, uint64_t v, unsigned n)
{
    uint8_t bytes[8];
    for (unsigned i = 0; i < n; i++) bytes[i] = (uint8_t)(v >> (8 * i));
    put(s, bytes, n);
}

static void put_value(sink *s, const kiln_gguf_value *v)
{
    if (v->type == KILN_GGUF_TYPE_STRING) {
        put_le(s, v->n, 8);
        put(s, v->data, v->n);
    } else if (v->type == KILN_GGUF_TYPE_ARRAY) {
        put_le(s, v->elem_type, 4);
        put_le(s, v->n, 8);
        if (v->elems) {
            for (uint64_t i = 0; i < v->n; i++) put_value(s, &v->elems[i]);
        } else {
            /* n * element size <= the file's size: the reader checked it fits */
            put(s, v->data, v->n * kiln_gguf_type_size(v->elem_type));
        }
    } else {
        put(s, v->data, kiln_gguf_type_size(v->type));
    }
}

static void put_file(sink *s, const kiln_gguf *g)
{
    put(s, "GGUF", 4);
    put_le(s, 3, 4);
    put_le(s, 0, 8); /* tensor count */
    put_le(s, g->n_kv, 8);
    for (size_t i = 0; i < g->n_kv; i++) {
        const kiln_gguf_kv *kv = &g->kvs[i];
        put_le(s, kv->key_size, 8);
        put(s, kv->key, kv->key_size);
        put_le(s, kv->value.type, 4);
        put_value(s, &kv->value);
    }
}

kiln_status kiln_gguf_metadata_blob(const kiln_gguf *gguf, const kiln_allocator *a, void **out, size_t *out_size)
{
    if (out) *out = NULL;
    if (out_size) *out_size = 0;
    KILN_CHECK(gguf && out && out_size, KILN_ERROR_INVALID_ARGUMENT);
    if (!a) a = kiln_allocator_default();
    sink count = {0};
    put_file(&count, gguf);
    KILN_CHECK(!count.overflow && count.size <= SIZE_MAX, KILN_ERROR_OUT_OF_MEMORY);
    sink write = {kiln_alloc(a, (size_t)count.size, 64), 0, false};
    KILN_CHECK(write.dst, KILN_ERROR_OUT_OF_MEMORY);
    put_file(&write, gguf);
    *out = write.dst;
    *out_size = (size_t)write.size;
    return KILN_OK;
}
