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
/* GGUF value types, numbered as the file stores them. */
enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY, T_U64, T_I64, T_F64 };

/* A valid file of the given version (2 or 3): one key of every type, arrays of scalars, of
   strings and of arrays of arrays, then tensors of every supported type and one ggml type kiln
   does not support (Q5_K); general.alignment when alignment is nonzero (else the default 32). */
static inline void gb_build_every_type(gguf_builder *b, uint32_t version, uint32_t alignment)
{
    const uint64_t n_kv = 17 + (alignment ? 1 : 0);
    gb_header(b, version, 8, n_kv);
    gb_key(b, "k.u8", T_U8), gb_u8(b, 200);
    gb_key(b, "k.i8", T_I8), gb_u8(b, (uint8_t)-100);
    gb_key(b, "k.u16", T_U16), gb_u16(b, 60000);
    gb_key(b, "k.i16", T_I16), gb_u16(b, (uint16_t)-30000);
    gb_key(b, "k.u32", T_U32), gb_u32(b, 4000000000u);
    gb_key(b, "k.i32", T_I32), gb_u32(b, (uint32_t)-2000000000);
    gb_key(b, "k.f32", T_F32), gb_f32(b, 1.5f);
    gb_key(b, "k.bool", T_BOOL), gb_u8(b, 1);
    gb_key(b, "k.string", T_STRING), gb_str(b, "h\xc3\xa9llo");
    gb_key(b, "k.u64", T_U64), gb_u64(b, UINT64_MAX);
    gb_key(b, "k.i64", T_I64), gb_u64(b, (uint64_t)INT64_MIN);
    gb_key(b, "k.f64", T_F64), gb_f64(b, -2.25);
    gb_key(b, "k.empty_string", T_STRING), gb_str(b, "");
    gb_key(b, "k.arr_i16", T_ARRAY), gb_u32(b, T_I16), gb_u64(b, 3);
    gb_u16(b, 1), gb_u16(b, (uint16_t)-2), gb_u16(b, 3);
    gb_key(b, "k.arr_str", T_ARRAY), gb_u32(b, T_STRING), gb_u64(b, 2);
    gb_str(b, "a"), gb_str(b, "bc");
    /* [[[7], []], [[8, 9]]] : arrays of arrays of arrays of u32. */
    gb_key(b, "k.nested", T_ARRAY), gb_u32(b, T_ARRAY), gb_u64(b, 2);
    gb_u32(b, T_ARRAY), gb_u64(b, 2);
    gb_u32(b, T_U32), gb_u64(b, 1), gb_u32(b, 7);
    gb_u32(b, T_U32), gb_u64(b, 0);
    gb_u32(b, T_ARRAY), gb_u64(b, 1);
    gb_u32(b, T_U32), gb_u64(b, 2), gb_u32(b, 8), gb_u32(b, 9);
    gb_key(b, "k.arr_empty", T_ARRAY), gb_u32(b, T_F64), gb_u64(b, 0);
    if (alignment) gb_key(b, "general.alignment", T_U32), gb_u32(b, alignment);
    const uint64_t a = alignment ? alignment : 32;
    const uint64_t d_f32[2] = {3, 2}, d_q8[2] = {32, 2}, d_k[1] = {256}, d_q4[3] = {64, 1, 2}, d_h[4] = {2, 1, 1, 2};
    /* Sizes: 24, 68, 144, 210, 72, 8, 8, 176 bytes, each padded to the alignment. */
    uint64_t off = 0;
    const uint64_t sizes[8] = {24, 68, 144, 210, 72, 8, 8, 176};
    uint64_t offs[8];
    for (int i = 0; i < 8; i++) offs[i] = off, off += (sizes[i] + a - 1) / a * a;
    gb_tensor(b, "t.f32", 2, d_f32, 0, offs[0]);
    gb_tensor(b, "t.q8_0", 2, d_q8, 8, offs[1]);
    gb_tensor(b, "t.q4_k", 1, d_k, 12, offs[2]);
    gb_tensor(b, "t.q6_k", 1, d_k, 14, offs[3]);
    gb_tensor(b, "t.q4_0", 3, d_q4, 2, offs[4]);
    gb_tensor(b, "t.f16", 4, d_h, 1, offs[5]);
    gb_tensor(b, "t.bf16", 4, d_h, 30, offs[6]);
    gb_tensor(b, "t.q5_k", 1, d_k, 13, offs[7]);
    gb_pad(b, a);
    for (int i = 0; i < 8; i++) {
        for (uint64_t j = 0; j < sizes[i]; j++) gb_u8(b, (uint8_t)(i * 16 + j));
        gb_pad(b, a);
    }
}

static inline void gb_free(gguf_builder *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

#endif
