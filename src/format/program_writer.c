/* program_writer.c — serialization of program files.
 * Layer: format. Tables grow in kiln_buf arrays; finish() lays them out 64-byte aligned behind
 * the header and section table, then the segment bytes. */
#include "format/program_writer.h"

#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/hash.h"

typedef struct segment_ref {
    const void *data;
    uint64_t size;
    uint64_t hash;
} segment_ref;

struct kiln_program_builder {
    const kiln_allocator *allocator;
    kiln_buf strings, i64, i32, segments, methods, values, instrs, attrs;
    kiln_buf metadata; /* kiln_fmt_metadata records, kept sorted by key */
    /* string dedup: open addressing over offsets into `strings` (UINT32_MAX = empty) */
    uint32_t *string_slots;
    size_t n_string_slots, n_strings;
};

kiln_status kiln_program_builder_create(const kiln_allocator *allocator, kiln_program_builder **out)
{
    *out = NULL;
    kiln_program_builder *b = KILN_NEW(allocator, kiln_program_builder);
    KILN_CHECK(b, KILN_ERROR_OUT_OF_MEMORY);
    b->allocator = allocator;
    kiln_buf *bufs[] = {&b->strings, &b->i64, &b->i32, &b->segments, &b->methods, &b->values, &b->instrs, &b->attrs,
                        &b->metadata};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) kiln_buf_init(bufs[i], allocator);
    /* offset 0 is the empty string, so a zeroed reference is always valid */
    uint32_t empty;
    kiln_status st = kiln_program_builder_string(b, "", 0, &empty);
    if (st != KILN_OK) {
        kiln_program_builder_destroy(b);
        return st;
    }
    *out = b;
    return KILN_OK;
}

void kiln_program_builder_destroy(kiln_program_builder *b)
{
    if (!b) return;
    kiln_buf *bufs[] = {&b->strings, &b->i64, &b->i32, &b->segments, &b->methods, &b->values, &b->instrs, &b->attrs,
                        &b->metadata};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) kiln_buf_deinit(bufs[i]);
    kiln_free(b->allocator, b->string_slots);
    kiln_free(b->allocator, b);
}

static kiln_status append_record(kiln_buf *buf, const void *rec, size_t size, uint32_t *out)
{
    size_t index = buf->size / size;
    KILN_CHECK(index < INT32_MAX, KILN_ERROR_LIMIT);
    KILN_CHECK(kiln_buf_append(buf, rec, size), KILN_ERROR_OUT_OF_MEMORY);
    if (out) *out = (uint32_t)index;
    return KILN_OK;
}

static bool string_equal(const kiln_program_builder *b, uint32_t off, const char *s, size_t len)
{
    const char *have = (const char *)b->strings.data + off;
    return strlen(have) == len && memcmp(have, s, len) == 0;
}

static bool grow_string_slots(kiln_program_builder *b)
{
    size_t n = b->n_string_slots ? b->n_string_slots * 2 : 256;
    uint32_t *slots = kiln_alloc(b->allocator, n * sizeof *slots, 8);
    if (!slots) return false;
    memset(slots, 0xFF, n * sizeof *slots);
    for (size_t i = 0; i < b->n_string_slots; i++) {
        uint32_t off = b->string_slots[i];
        if (off == UINT32_MAX) continue;
        const char *s = (const char *)b->strings.data + off;
        size_t h = (size_t)kiln_hash64(s, strlen(s), 0) & (n - 1);
        while (slots[h] != UINT32_MAX) h = (h + 1) & (n - 1);
        slots[h] = off;
    }
    kiln_free(b->allocator, b->string_slots);
    b->string_slots = slots;
    b->n_string_slots = n;
    return true;
}

kiln_status kiln_program_builder_string(kiln_program_builder *b, const char *s, size_t len, uint32_t *out)
{
    /* Strings with embedded NULs (ONNX STRING attributes may hold bytes) are stored without
       deduplication; the reader takes their length from the attribute. */
    bool plain = memchr(s, '\0', len) == NULL;
    if (plain) {
        if (2 * (b->n_strings + 1) > b->n_string_slots) KILN_CHECK(grow_string_slots(b), KILN_ERROR_OUT_OF_MEMORY);
        size_t mask = b->n_string_slots - 1, h = (size_t)kiln_hash64(s, len, 0) & mask;
        for (; b->string_slots[h] != UINT32_MAX; h = (h + 1) & mask) {
            if (string_equal(b, b->string_slots[h], s, len)) {
                *out = b->string_slots[h];
                return KILN_OK;
            }
        }
        KILN_CHECK(b->strings.size + len + 1 < UINT32_MAX, KILN_ERROR_LIMIT);
        b->string_slots[h] = (uint32_t)b->strings.size;
        b->n_strings++;
    }
    KILN_CHECK(b->strings.size + len + 1 < UINT32_MAX, KILN_ERROR_LIMIT);
    *out = (uint32_t)b->strings.size;
    static const char nul = '\0';
    KILN_CHECK(kiln_buf_append(&b->strings, s, len) && kiln_buf_append(&b->strings, &nul, 1),
               KILN_ERROR_OUT_OF_MEMORY);
    return KILN_OK;
}

kiln_status kiln_program_builder_i64(kiln_program_builder *b, const int64_t *vals, size_t n, uint32_t *out)
{
    KILN_CHECK(b->i64.size / 8 + n < INT32_MAX, KILN_ERROR_LIMIT);
    *out = (uint32_t)(b->i64.size / 8);
    KILN_CHECK(kiln_buf_append(&b->i64, vals, n * sizeof *vals), KILN_ERROR_OUT_OF_MEMORY);
    return KILN_OK;
}

kiln_status kiln_program_builder_i32(kiln_program_builder *b, const int32_t *vals, size_t n, uint32_t *out)
{
    KILN_CHECK(b->i32.size / 4 + n < INT32_MAX, KILN_ERROR_LIMIT);
    *out = (uint32_t)(b->i32.size / 4);
    KILN_CHECK(kiln_buf_append(&b->i32, vals, n * sizeof *vals), KILN_ERROR_OUT_OF_MEMORY);
    return KILN_OK;
}

kiln_status kiln_program_builder_segment(kiln_program_builder *b, const void *data, size_t size, uint32_t *out)
{
    uint64_t hash = kiln_hash64(data, size, 0);
    const segment_ref *refs = (const segment_ref *)b->segments.data;
    size_t n = b->segments.size / sizeof *refs;
    for (size_t i = 0; i < n; i++) {
        if (refs[i].hash == hash && refs[i].size == size && (size == 0 || memcmp(refs[i].data, data, size) == 0)) {
            *out = (uint32_t)i;
            return KILN_OK;
        }
    }
    segment_ref r = {data, size, hash};
    return append_record(&b->segments, &r, sizeof r, out);
}

kiln_status kiln_program_builder_value(kiln_program_builder *b, const kiln_fmt_value *v, uint32_t *out)
{
    return append_record(&b->values, v, sizeof *v, out);
}

kiln_status kiln_program_builder_attr(kiln_program_builder *b, const kiln_fmt_attr *a, uint32_t *out)
{
    return append_record(&b->attrs, a, sizeof *a, out);
}

kiln_status kiln_program_builder_instr(kiln_program_builder *b, const kiln_fmt_instr *in, uint32_t *out)
{
    return append_record(&b->instrs, in, sizeof *in, out);
}

kiln_status kiln_program_builder_method(kiln_program_builder *b, const kiln_fmt_method *m, uint32_t *out)
{
    return append_record(&b->methods, m, sizeof *m, out);
}

kiln_status kiln_program_builder_add_metadata(kiln_program_builder *b, const char *key, const void *data, size_t size)
{
    KILN_CHECK(key && key[0] && (data || size == 0), KILN_ERROR_INVALID_ARGUMENT);
    /* Insertion keeps the records in the order the reader requires (a program holds a handful
       of keys, so the quadratic worst case does not matter). */
    kiln_fmt_metadata *recs = (kiln_fmt_metadata *)b->metadata.data;
    size_t n = b->metadata.size / sizeof *recs, at = 0;
    for (; at < n; at++) {
        int order = strcmp(key, (const char *)b->strings.data + recs[at].key);
        KILN_CHECK(order != 0, KILN_ERROR_INVALID_ARGUMENT);
        if (order < 0) break;
    }
    kiln_fmt_metadata rec;
    KILN_TRY(kiln_program_builder_string(b, key, strlen(key), &rec.key));
    KILN_TRY(kiln_program_builder_segment(b, data, size, &rec.segment));
    KILN_TRY(append_record(&b->metadata, &rec, sizeof rec, NULL));
    recs = (kiln_fmt_metadata *)b->metadata.data;
    memmove(&recs[at + 1], &recs[at], (n - at) * sizeof *recs);
    recs[at] = rec;
    return KILN_OK;
}

uint32_t kiln_program_builder_n_values(const kiln_program_builder *b) { return (uint32_t)(b->values.size / sizeof(kiln_fmt_value)); }
uint32_t kiln_program_builder_n_instrs(const kiln_program_builder *b) { return (uint32_t)(b->instrs.size / sizeof(kiln_fmt_instr)); }
uint32_t kiln_program_builder_n_attrs(const kiln_program_builder *b) { return (uint32_t)(b->attrs.size / sizeof(kiln_fmt_attr)); }

kiln_status kiln_program_builder_finish(kiln_program_builder *b, void **out_data, size_t *out_size)
{
    *out_data = NULL;
    *out_size = 0;
    struct { kiln_buf *buf; uint32_t kind, elem; } tables[] = {
        {&b->strings, KILN_SECTION_STRINGS, 1},
        {&b->i64, KILN_SECTION_I64, 8},
        {&b->i32, KILN_SECTION_I32, 4},
        {NULL, KILN_SECTION_SEGMENTS, sizeof(kiln_fmt_segment)},
        {&b->methods, KILN_SECTION_METHODS, sizeof(kiln_fmt_method)},
        {&b->values, KILN_SECTION_VALUES, sizeof(kiln_fmt_value)},
        {&b->instrs, KILN_SECTION_INSTRS, sizeof(kiln_fmt_instr)},
        {&b->attrs, KILN_SECTION_ATTRS, sizeof(kiln_fmt_attr)},
        {&b->metadata, KILN_SECTION_METADATA, sizeof(kiln_fmt_metadata)},
    };
    enum { N_TABLES = sizeof tables / sizeof tables[0] };
    /* METADATA is optional: a program without any is laid out exactly as version 1 laid it out. */
    size_t n_tables = b->metadata.size ? N_TABLES : N_TABLES - 1;
    const segment_ref *refs = (const segment_ref *)b->segments.data;
    size_t n_segments = b->segments.size / sizeof *refs;

    kiln_buf out;
    kiln_buf_init(&out, b->allocator);
    kiln_fmt_header header = {.version = KILN_FORMAT_VERSION, .n_sections = (uint32_t)n_tables};
    memcpy(header.magic, KILN_FORMAT_MAGIC, 8);
    header.sections_offset = sizeof header;
    kiln_fmt_section sections[N_TABLES] = {0};
    KILN_CHECK_GOTO(kiln_buf_append(&out, &header, sizeof header) &&
                        kiln_buf_append(&out, sections, n_tables * sizeof sections[0]), *out_size, 0);
    /* Lay out the tables; the segment descriptor table is written after the data offsets are known. */
    size_t seg_table_offset = 0;
    for (size_t t = 0; t < n_tables; t++) {
        KILN_CHECK_GOTO(kiln_buf_pad(&out, KILN_FORMAT_ALIGN), *out_size, 0);
        sections[t].kind = tables[t].kind;
        sections[t].elem_size = tables[t].elem;
        sections[t].offset = out.size;
        if (tables[t].buf) {
            sections[t].count = tables[t].buf->size / tables[t].elem;
            KILN_CHECK_GOTO(kiln_buf_append(&out, tables[t].buf->data, tables[t].buf->size), *out_size, 0);
        } else {
            sections[t].count = n_segments;
            seg_table_offset = out.size;
            KILN_CHECK_GOTO(kiln_buf_reserve(&out, n_segments * sizeof(kiln_fmt_segment)), *out_size, 0);
            memset(out.data + out.size, 0, n_segments * sizeof(kiln_fmt_segment));
            out.size += n_segments * sizeof(kiln_fmt_segment);
        }
    }
    for (size_t i = 0; i < n_segments; i++) {
        KILN_CHECK_GOTO(kiln_buf_pad(&out, KILN_FORMAT_ALIGN), *out_size, 0);
        kiln_fmt_segment seg = {out.size, refs[i].size, refs[i].hash};
        memcpy(out.data + seg_table_offset + i * sizeof seg, &seg, sizeof seg);
        KILN_CHECK_GOTO(kiln_buf_append(&out, refs[i].data, refs[i].size), *out_size, 0);
    }
    KILN_CHECK_GOTO(kiln_buf_pad(&out, KILN_FORMAT_ALIGN), *out_size, 0);
    header.file_size = out.size;
    memcpy(out.data, &header, sizeof header);
    memcpy(out.data + sizeof header, sections, n_tables * sizeof sections[0]);
    *out_data = kiln_buf_release(&out, out_size);
    return KILN_OK;
fail:
    kiln_buf_deinit(&out);
    *out_size = 0;
    return KILN_ERROR_OUT_OF_MEMORY;
}
