/* gguf_builder.h — writing small GGUF files byte by byte, for tests of the GGUF reader.
 *
 * Layer: tests. Header-only. Deliberately dumb: it writes exactly the fields it is told, in
 * order, so a test can write broken files as easily as valid ones (wrong counts, bad types,
 * misaligned offsets). Growth failures exit the test: they are not what is being tested.
 */
#ifndef KILN_TESTS_GGUF_BUILDER_H
#define KILN_TESTS_GGUF_BUILDER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gguf_builder {
    uint8_t *data;
    size_t size, capacity;
} gguf_builder;

static inline void gb_bytes(gguf_builder *b, const void *p, size_t n)
{
    if (b->size + n > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 256;
        while (cap < b->size + n) cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) {
            fprintf(stderr, "gguf_builder: out of memory\n");
            exit(1);
        }
        b->data = d;
        b->capacity = cap;
    }
    if (n) memcpy(b->data + b->size, p, n);
    b->size += n;
}

static inline void gb_le(gguf_builder *b, uint64_t v, unsigned n)
{
    uint8_t bytes[8];
    for (unsigned i = 0; i < n; i++) bytes[i] = (uint8_t)(v >> (8 * i));
    gb_bytes(b, bytes, n);
}

static inline void gb_u8(gguf_builder *b, uint8_t v) { gb_le(b, v, 1); }
static inline void gb_u16(gguf_builder *b, uint16_t v) { gb_le(b, v, 2); }
static inline void gb_u32(gguf_builder *b, uint32_t v) { gb_le(b, v, 4); }
static inline void gb_u64(gguf_builder *b, uint64_t v) { gb_le(b, v, 8); }
static inline void gb_f32(gguf_builder *b, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    gb_u32(b, bits);
}
static inline void gb_f64(gguf_builder *b, double f)
{
    uint64_t bits;
    memcpy(&bits, &f, 8);
    gb_u64(b, bits);
}
static inline void gb_str(gguf_builder *b, const char *s)
{
    gb_u64(b, strlen(s));
    gb_bytes(b, s, strlen(s));
}
static inline void gb_header(gguf_builder *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    gb_bytes(b, "GGUF", 4);
    gb_u32(b, version);
    gb_u64(b, n_tensors);
    gb_u64(b, n_kv);
}
/* A key and its value type; the caller writes the value. */
static inline void gb_key(gguf_builder *b, const char *key, uint32_t type)
{
    gb_str(b, key);
    gb_u32(b, type);
}
/* A tensor info of up to 4 dims. */
static inline void gb_tensor(gguf_builder *b, const char *name, uint32_t n_dims, const uint64_t *dims,
                             uint32_t ggml_type, uint64_t offset)
{
    gb_str(b, name);
    gb_u32(b, n_dims);
    for (uint32_t i = 0; i < n_dims; i++) gb_u64(b, dims[i]);
    gb_u32(b, ggml_type);
    gb_u64(b, offset);
}
static inline void gb_pad(gguf_builder *b, size_t alignment)
{
    while (b->size % alignment) gb_u8(b, 0);
}
static inline void gb_free(gguf_builder *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

#endif
