/* gguf_reader.c — parsing and validating a GGUF file into a kiln_gguf view (gguf_reader.h).
 *
 * Layer: format (src/format/gguf). Depends on core. Every read goes through a cursor that
 * checks the bytes are there; counts read from the file are compared with the bytes left (each
 * element takes at least a known number of bytes) before anything is allocated for them, so a
 * file claiming 2^60 keys is refused, not allocated for. All the view's memory is one arena.
 * Keys and tensor names are kept in a second, sorted index for duplicate checks and lookups.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/gguf/gguf_internal.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/diag.h"
#include "core/text_escape.h"

#define GGUF_MAGIC "GGUF"

typedef struct cursor {
    const uint8_t *base;
    uint64_t size;
    uint64_t pos;
    char *message;
    size_t message_size;
} cursor;

static kiln_status fail_at(cursor *c, uint64_t offset, const char *what)
{
    return kiln_reject(KILN_ERROR_MODEL, c->message, c->message_size, "GGUF: %s at byte %llu", what,
                       (unsigned long long)offset);
}

static uint64_t left(const cursor *c) { return c->size - c->pos; }

static kiln_status need(cursor *c, uint64_t n, const char *what)
{
    if (n <= left(c)) return KILN_OK;
    char line[160];
    snprintf(line, sizeof line, "file ends inside %s (needs %llu bytes, %llu left)", what, (unsigned long long)n,
             (unsigned long long)left(c));
    return fail_at(c, c->pos, line);
}

static kiln_status read_u32(cursor *c, uint32_t *out, const char *what)
{
    KILN_TRY(need(c, 4, what));
    *out = (uint32_t)kiln_gguf_load_le(c->base + c->pos, 4);
    c->pos += 4;
    return KILN_OK;
}

static kiln_status read_u64(cursor *c, uint64_t *out, const char *what)
{
    KILN_TRY(need(c, 8, what));
    *out = kiln_gguf_load_le(c->base + c->pos, 8);
    c->pos += 8;
    return KILN_OK;
}

/* A string: u64 length then the bytes. `max` caps the length (0: only the file's size). */
static kiln_status read_string(cursor *c, const char **data, uint64_t *len, uint64_t max, const char *what)
{
    uint64_t start = c->pos;
    KILN_TRY(read_u64(c, len, what));
    if (max && *len > max) {
        char line[160];
        snprintf(line, sizeof line, "%s is %llu bytes long, more than the limit of %llu", what,
                 (unsigned long long)*len, (unsigned long long)max);
        return fail_at(c, start, line);
    }
    KILN_TRY(need(c, *len, what));
    *data = (const char *)(c->base + c->pos);
    c->pos += *len;
    return KILN_OK;
}

/* The fewest bytes one element of `type` can take in a file: caps counts before allocation. */
static uint64_t min_encoded_size(uint32_t type)
{
    if (type == KILN_GGUF_TYPE_STRING) return 8;                  /* u64 length */
    if (type == KILN_GGUF_TYPE_ARRAY) return 12;                  /* u32 type + u64 count */
    return kiln_gguf_type_size(type);
}

static kiln_status read_value(kiln_gguf *g, cursor *c, uint32_t type, unsigned depth, kiln_gguf_value *out);

static kiln_status read_array(kiln_gguf *g, cursor *c, unsigned depth, kiln_gguf_value *out)
{
    uint64_t start = c->pos;
    uint32_t elem_type;
    KILN_TRY(read_u32(c, &elem_type, "an array's element type"));
    if (elem_type >= KILN_GGUF_TYPE_COUNT) {
        char line[96];
        snprintf(line, sizeof line, "array element type %u is not a GGUF value type (0..12)", (unsigned)elem_type);
        return fail_at(c, start, line);
    }
    if (elem_type == KILN_GGUF_TYPE_ARRAY && depth + 1 >= KILN_GGUF_MAX_ARRAY_DEPTH)
        return fail_at(c, start, "arrays nested more than " KILN_GGUF_STR(KILN_GGUF_MAX_ARRAY_DEPTH) " deep");
    uint64_t n;
    KILN_TRY(read_u64(c, &n, "an array's element count"));
    uint64_t min_size = min_encoded_size(elem_type);
    if (n > left(c) / min_size) {
        char line[160];
        snprintf(line, sizeof line, "array of %llu %s elements cannot fit in the %llu bytes left",
                 (unsigned long long)n, kiln_gguf_type_name(elem_type), (unsigned long long)left(c));
        return fail_at(c, start + 4, line);
    }
    out->elem_type = (kiln_gguf_type)elem_type;
    out->n = n;
    out->data = c->base + c->pos;
    if (elem_type != KILN_GGUF_TYPE_STRING && elem_type != KILN_GGUF_TYPE_ARRAY) {
        c->pos += n * min_size;           /* n * min_size <= left(c) was checked above */
        return KILN_OK;
    }
    kiln_gguf_value *elems = KILN_ARENA_ARRAY(&g->arena, kiln_gguf_value, (size_t)n);
    if (!elems && n) return kiln_reject(KILN_ERROR_OUT_OF_MEMORY, c->message, c->message_size, "out of memory");
    for (uint64_t i = 0; i < n; i++) KILN_TRY(read_value(g, c, elem_type, depth + 1, &elems[i]));
    out->elems = elems;
    return KILN_OK;
}

static kiln_status read_value(kiln_gguf *g, cursor *c, uint32_t type, unsigned depth, kiln_gguf_value *out)
{
    memset(out, 0, sizeof *out);
    out->type = (kiln_gguf_type)type;
    out->offset = c->pos;
    if (type == KILN_GGUF_TYPE_ARRAY) return read_array(g, c, depth, out);
    if (type == KILN_GGUF_TYPE_STRING) {
        const char *s;
        KILN_TRY(read_string(c, &s, &out->n, 0, "a string value"));
        out->data = (const uint8_t *)s;
        return KILN_OK;
    }
    size_t size = kiln_gguf_type_size(type);
    KILN_TRY(need(c, size, "a metadata value"));
    if (type == KILN_GGUF_TYPE_BOOL && c->base[c->pos] > 1) return fail_at(c, c->pos, "a bool value is neither 0 nor 1");
    out->data = c->base + c->pos;
    c->pos += size;
    return KILN_OK;
}

/* Names are compared as (bytes, size) pairs: they point into the file without a NUL. */
static int kv_cmp(const void *x, const void *y)
{
    const kiln_gguf_kv *a = *(const kiln_gguf_kv *const *)x, *b = *(const kiln_gguf_kv *const *)y;
    return kiln_gguf_name_cmp(a->key, a->key_size, b->key, b->key_size);
}

static int tensor_cmp(const void *x, const void *y)
{
    const kiln_gguf_tensor *a = *(const kiln_gguf_tensor *const *)x, *b = *(const kiln_gguf_tensor *const *)y;
    return kiln_gguf_name_cmp(a->name, a->name_size, b->name, b->name_size);
}

/* "key 'general.name'" with the name escaped, for messages. */
static const char *quoted(char *buf, size_t size, const char *what, const char *name, size_t n)
{
    char esc[96];
    snprintf(buf, size, "%s '%s'", what, kiln_text_escape(esc, sizeof esc, name, n));
    return buf;
}

static kiln_status read_name(cursor *c, const char **name, size_t *size, uint64_t max, const char *what)
{
    uint64_t start = c->pos, len;
    KILN_TRY(read_string(c, name, &len, max, what));
    if (len == 0) {
        char line[64];
        snprintf(line, sizeof line, "%s is empty", what);
        return fail_at(c, start, line);
    }
    if (memchr(*name, 0, (size_t)len)) {
        char line[64];
        snprintf(line, sizeof line, "%s contains a NUL byte", what);
        return fail_at(c, start, line);
    }
    *size = (size_t)len;
    return KILN_OK;
}

static kiln_status read_kvs(kiln_gguf *g, cursor *c)
{
    for (uint64_t i = 0; i < g->n_kv; i++) {
        kiln_gguf_kv *kv = &g->kvs[i];
        KILN_TRY(read_name(c, &kv->key, &kv->key_size, KILN_GGUF_MAX_KEY_SIZE, "a metadata key"));
        uint64_t type_offset = c->pos;
        uint32_t type;
        KILN_TRY(read_u32(c, &type, "a metadata value type"));
        if (type >= KILN_GGUF_TYPE_COUNT) {
            char who[128], line[192];
            snprintf(line, sizeof line, "%s has value type %u, which is not a GGUF value type (0..12)",
                     quoted(who, sizeof who, "key", kv->key, kv->key_size), (unsigned)type);
            return fail_at(c, type_offset, line);
        }
        KILN_TRY(read_value(g, c, type, 0, &kv->value));
    }
    return KILN_OK;
}

/* Sorts the index and refuses the first name that occurs twice. */
static kiln_status check_unique(cursor *c, const void **index, size_t n, int (*cmp)(const void *, const void *),
                                bool tensors)
{
    qsort(index, n, sizeof *index, cmp);
    for (size_t i = 1; i < n; i++) {
        if (cmp(&index[i - 1], &index[i]) != 0) continue;
        char who[128], line[192];
        if (tensors) {
            const kiln_gguf_tensor *t = index[i];
            snprintf(line, sizeof line, "%s appears twice", quoted(who, sizeof who, "tensor name", t->name, t->name_size));
            return fail_at(c, t->info_offset, line);
        }
        const kiln_gguf_kv *kv = index[i];
        snprintf(line, sizeof line, "%s appears twice", quoted(who, sizeof who, "key", kv->key, kv->key_size));
        return fail_at(c, kv->value.offset, line);
    }
    return KILN_OK;
}

static kiln_status read_alignment(kiln_gguf *g, cursor *c)
{
    g->alignment = KILN_GGUF_DEFAULT_ALIGNMENT;
    const kiln_gguf_value *v = kiln_gguf_find_key(g, "general.alignment");
    if (!v) return KILN_OK;
    if (v->type != KILN_GGUF_TYPE_U32) {
        char line[96];
        snprintf(line, sizeof line, "general.alignment is %s, expected u32", kiln_gguf_type_name(v->type));
        return fail_at(c, v->offset, line);
    }
    uint32_t a = (uint32_t)kiln_gguf_load_le(v->data, 4);
    if (a == 0 || (a & (a - 1)) != 0) {
        char line[96];
        snprintf(line, sizeof line, "general.alignment %u is not a power of two", (unsigned)a);
        return fail_at(c, v->offset, line);
    }
    g->alignment = a;
    return KILN_OK;
}

static kiln_status read_tensor_info(cursor *c, kiln_gguf_tensor *t)
{
    char who[128], line[256];
    t->info_offset = c->pos;
    KILN_TRY(read_name(c, &t->name, &t->name_size, KILN_GGUF_MAX_NAME_SIZE, "a tensor name"));
    quoted(who, sizeof who, "tensor", t->name, t->name_size);
    uint64_t at = c->pos;
    KILN_TRY(read_u32(c, &t->n_dims, "a tensor's dimension count"));
    if (t->n_dims == 0 || t->n_dims > KILN_GGUF_MAX_DIMS) {
        snprintf(line, sizeof line, "%s has %u dimensions (1..%d allowed)", who, (unsigned)t->n_dims,
                 KILN_GGUF_MAX_DIMS);
        return fail_at(c, at, line);
    }
    t->n_elements = 1;
    for (uint32_t d = 0; d < KILN_GGUF_MAX_DIMS; d++) t->dims[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        at = c->pos;
        KILN_TRY(read_u64(c, &t->dims[d], "a tensor dimension"));
        /* ggml stores dims as int64: anything above INT64_MAX is a negative size there. */
        if (t->dims[d] == 0 || t->dims[d] > (uint64_t)INT64_MAX) {
            snprintf(line, sizeof line, "%s has dimension %u of size %llu", who, (unsigned)d,
                     (unsigned long long)t->dims[d]);
            return fail_at(c, at, line);
        }
        if (!kiln_mul_u64(t->n_elements, t->dims[d], &t->n_elements) || t->n_elements > (uint64_t)INT64_MAX) {
            snprintf(line, sizeof line, "%s has more elements than fit in 63 bits", who);
            return fail_at(c, at, line);
        }
    }
    at = c->pos;
    KILN_TRY(read_u32(c, &t->ggml_type, "a tensor's type"));
    if (!kiln_ggml_type_name(t->ggml_type)) {
        snprintf(line, sizeof line, "%s has type %u, which is not a ggml tensor type", who, (unsigned)t->ggml_type);
        return fail_at(c, at, line);
    }
    return read_u64(c, &t->offset, "a tensor's data offset");
}

/* Offsets are relative to the data section, a multiple of the alignment; a supported tensor's
   bytes must be whole blocks per row and lie inside the file. */
static kiln_status place_tensor(kiln_gguf *g, cursor *c, kiln_gguf_tensor *t)
{
    char who[128], line[256];
    quoted(who, sizeof who, "tensor", t->name, t->name_size);
    uint64_t offset_at = t->info_offset + 8 + t->name_size + 4 + 8 * (uint64_t)t->n_dims + 4;
    if (t->offset % g->alignment != 0) {
        snprintf(line, sizeof line, "%s has data offset %llu, not a multiple of the alignment %llu", who,
                 (unsigned long long)t->offset, (unsigned long long)g->alignment);
        return fail_at(c, offset_at, line);
    }
    uint64_t data_size = c->size - g->data_offset;
    if (t->offset > data_size) {
        snprintf(line, sizeof line, "%s has data offset %llu past the end of the data section (%llu bytes)", who,
                 (unsigned long long)t->offset, (unsigned long long)data_size);
        return fail_at(c, offset_at, line);
    }
    uint32_t block_size = 1, block_bytes = 0;
    if (kiln_ggml_type_layout(t->ggml_type, &block_size, &block_bytes, NULL, 0) != KILN_OK)
        return KILN_OK; /* parses; kiln_gguf_tensor_size names the type when a caller asks */
    if (t->dims[0] % block_size != 0) {
        snprintf(line, sizeof line, "%s of type %s has rows of %llu elements, not a multiple of its block of %u", who,
                 kiln_ggml_type_name(t->ggml_type), (unsigned long long)t->dims[0], (unsigned)block_size);
        return fail_at(c, t->info_offset + 8 + t->name_size + 4, line);
    }
    uint64_t size;
    if (!kiln_mul_u64(t->n_elements / block_size, block_bytes, &size) || !kiln_range_ok(t->offset, size, data_size)) {
        snprintf(line, sizeof line, "%s needs %llu bytes at data offset %llu, past the end of the file", who,
                 (unsigned long long)(t->n_elements / block_size) * block_bytes, (unsigned long long)t->offset);
        return fail_at(c, offset_at, line);
    }
    t->data = c->base + g->data_offset + t->offset;
    t->data_size = size;
    return KILN_OK;
}

static kiln_status read_header(kiln_gguf *g, cursor *c)
{
    KILN_TRY(need(c, 4, "the magic \"GGUF\""));
    if (memcmp(c->base, GGUF_MAGIC, 4) != 0) return fail_at(c, 0, "not a GGUF file (the magic \"GGUF\" is missing)");
    c->pos = 4;
    KILN_TRY(read_u32(c, &g->version, "the version"));
    if (g->version == 1)
        return fail_at(c, 4, "version 1 is not supported (it stores counts as u32; convert the file to version 3)");
    if (g->version == 0x02000000u || g->version == 0x03000000u)
        return fail_at(c, 4, "a big-endian GGUF file is not supported (kiln reads little-endian files)");
    if (g->version != 2 && g->version != 3) {
        char line[96];
        snprintf(line, sizeof line, "version %u is not supported (kiln reads versions 2 and 3)", (unsigned)g->version);
        return fail_at(c, 4, line);
    }
    uint64_t n_tensors, n_kv;
    KILN_TRY(read_u64(c, &n_tensors, "the tensor count"));
    KILN_TRY(read_u64(c, &n_kv, "the metadata count"));
    /* Smallest key-value: 8-byte length, 1-byte key, 4-byte type, 1-byte value. Smallest tensor
       info: 8-byte length, 1-byte name, u32 n_dims, one u64 dim, u32 type, u64 offset. */
    if (n_kv > left(c) / 14) return fail_at(c, 16, "the metadata count is larger than the file can hold");
    if (n_tensors > left(c) / 33) return fail_at(c, 8, "the tensor count is larger than the file can hold");
    g->n_kv = (size_t)n_kv;
    g->n_tensors = (size_t)n_tensors;
    return KILN_OK;
}

kiln_status kiln_gguf_open(const void *bytes, size_t size, const kiln_allocator *allocator, kiln_gguf **out,
                           char *message, size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    if (out) *out = NULL;
    if (!out || (!bytes && size))
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, message_size, "GGUF: no bytes or no output given");
    if (!allocator) allocator = kiln_allocator_default();
    kiln_gguf *g = KILN_NEW(allocator, kiln_gguf);
    if (!g) return kiln_reject(KILN_ERROR_OUT_OF_MEMORY, message, message_size, "out of memory");
    g->allocator = allocator;
    kiln_arena_init(&g->arena, allocator, 64 * 1024);
    cursor c = {bytes, size, 0, message, message_size};
    kiln_status st;
    KILN_TRY_GOTO(st, read_header(g, &c));
    g->kvs = KILN_ARENA_ARRAY(&g->arena, kiln_gguf_kv, g->n_kv);
    g->kv_index = KILN_ARENA_ARRAY(&g->arena, const kiln_gguf_kv *, g->n_kv);
    KILN_CHECK_GOTO((g->kvs && g->kv_index) || !g->n_kv, st, KILN_ERROR_OUT_OF_MEMORY);
    KILN_TRY_GOTO(st, read_kvs(g, &c));
    for (size_t i = 0; i < g->n_kv; i++) g->kv_index[i] = &g->kvs[i];
    KILN_TRY_GOTO(st, check_unique(&c, (const void **)g->kv_index, g->n_kv, kv_cmp, false));
    KILN_TRY_GOTO(st, read_alignment(g, &c));

    /* The tensor count was capped by the bytes left after the header; the metadata has used
       some of them, so cap it again before allocating. */
    if (g->n_tensors > left(&c) / 33) {
        st = fail_at(&c, 8, "the tensor count is larger than the bytes after the metadata can hold");
        goto fail;
    }
    g->tensors = KILN_ARENA_ARRAY(&g->arena, kiln_gguf_tensor, g->n_tensors);
    g->tensor_index = KILN_ARENA_ARRAY(&g->arena, const kiln_gguf_tensor *, g->n_tensors);
    KILN_CHECK_GOTO((g->tensors && g->tensor_index) || !g->n_tensors, st, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < g->n_tensors; i++) KILN_TRY_GOTO(st, read_tensor_info(&c, &g->tensors[i]));
    for (size_t i = 0; i < g->n_tensors; i++) g->tensor_index[i] = &g->tensors[i];
    KILN_TRY_GOTO(st, check_unique(&c, (const void **)g->tensor_index, g->n_tensors, tensor_cmp, true));

    /* c.pos <= size < 2^64 - alignment, so rounding up cannot wrap. */
    g->data_offset = (c.pos + g->alignment - 1) / g->alignment * g->alignment;
    if (g->n_tensors && g->data_offset > c.size) {
        st = fail_at(&c, c.pos, "the file ends before its (aligned) data section starts");
        goto fail;
    }
    for (size_t i = 0; i < g->n_tensors; i++) KILN_TRY_GOTO(st, place_tensor(g, &c, &g->tensors[i]));
    *out = g;
    return KILN_OK;
fail:
    if (st == KILN_ERROR_OUT_OF_MEMORY) kiln_reject(st, message, message_size, "out of memory");
    kiln_gguf_destroy(g);
    return st;
}

void kiln_gguf_destroy(kiln_gguf *g)
{
    if (!g) return;
    kiln_arena_deinit(&g->arena);
    kiln_free(g->allocator, g);
}
