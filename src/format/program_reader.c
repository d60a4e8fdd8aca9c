/* program_reader.c — validation of program files (see program_format.h, docs/format.md).
 *
 * Layer: format. Every check that can fail returns KILN_ERROR_FORMAT; the fuzz target
 * fuzz/fuzz_program.c drives this file with arbitrary bytes. The order matters: header, then
 * section table, then each section's bounds, then the references between records, so that no
 * check reads a byte it has not proven to be inside the file.
 */
#include "format/program_reader.h"

#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/hash.h"

#define FMT_CHECK(cond) KILN_CHECK(cond, KILN_ERROR_FORMAT)

static const uint32_t elem_sizes[KILN_SECTION_KIND_MAX + 1] = {
    [KILN_SECTION_STRINGS] = 1,
    [KILN_SECTION_I64] = sizeof(int64_t),
    [KILN_SECTION_I32] = sizeof(int32_t),
    [KILN_SECTION_SEGMENTS] = sizeof(kiln_fmt_segment),
    [KILN_SECTION_METHODS] = sizeof(kiln_fmt_method),
    [KILN_SECTION_VALUES] = sizeof(kiln_fmt_value),
    [KILN_SECTION_INSTRS] = sizeof(kiln_fmt_instr),
    [KILN_SECTION_ATTRS] = sizeof(kiln_fmt_attr),
    [KILN_SECTION_METADATA] = sizeof(kiln_fmt_metadata),
};

static kiln_status read_sections(kiln_program_view *v, const kiln_fmt_header *h)
{
    uint64_t table_size;
    FMT_CHECK(kiln_mul_u64(h->n_sections, sizeof(kiln_fmt_section), &table_size));
    FMT_CHECK(h->sections_offset % 8 == 0 && kiln_range_ok(h->sections_offset, table_size, v->tables_size));
    FMT_CHECK(h->n_sections <= 64);
    const kiln_fmt_section *sections = (const kiln_fmt_section *)(v->tables + h->sections_offset);
    unsigned seen = 0;
    for (uint32_t i = 0; i < h->n_sections; i++) {
        const kiln_fmt_section *s = &sections[i];
        /* Version 1 knew kinds 1-8 only. */
        uint32_t max_kind = h->version == 1 ? KILN_SECTION_ATTRS : KILN_SECTION_KIND_MAX;
        FMT_CHECK(s->kind >= 1 && s->kind <= max_kind && !(seen & (1u << s->kind)));
        seen |= 1u << s->kind;
        FMT_CHECK(s->elem_size == elem_sizes[s->kind]);
        uint64_t bytes;
        FMT_CHECK(kiln_mul_u64(s->count, s->elem_size, &bytes));
        FMT_CHECK(s->offset % KILN_FORMAT_ALIGN == 0 && kiln_range_ok(s->offset, bytes, v->tables_size));
        const void *p = v->tables + s->offset;
        switch (s->kind) {
        case KILN_SECTION_STRINGS: v->strings = p; v->n_strings = s->count; break;
        case KILN_SECTION_I64: v->i64 = p; v->n_i64 = s->count; break;
        case KILN_SECTION_I32: v->i32 = p; v->n_i32 = s->count; break;
        case KILN_SECTION_SEGMENTS: v->segments = p; v->n_segments = s->count; break;
        case KILN_SECTION_METHODS: v->methods = p; v->n_methods = s->count; break;
        case KILN_SECTION_VALUES: v->values = p; v->n_values = s->count; break;
        case KILN_SECTION_INSTRS: v->instrs = p; v->n_instrs = s->count; break;
        case KILN_SECTION_ATTRS: v->attrs = p; v->n_attrs = s->count; break;
        case KILN_SECTION_METADATA: v->metadata = p; v->n_metadata = s->count; break;
        }
    }
    /* Every table but METADATA must be present (possibly empty), and strings must end with a
       NUL so that any in-range offset names a terminated string. */
    FMT_CHECK((seen & ~(1u << KILN_SECTION_METADATA)) == 0x1FEu);
    FMT_CHECK(v->n_strings > 0 && v->strings[v->n_strings - 1] == '\0');
    FMT_CHECK(v->n_values < INT32_MAX && v->n_instrs < UINT32_MAX && v->n_attrs < UINT32_MAX);
    return KILN_OK;
}

static bool range_ok(uint64_t first, uint64_t n, uint64_t limit) { return kiln_range_ok(first, n, limit); }

static kiln_status check_segments(const kiln_program_view *v)
{
    for (uint64_t i = 0; i < v->n_segments; i++) {
        const kiln_fmt_segment *s = &v->segments[i];
        FMT_CHECK(s->offset % KILN_FORMAT_ALIGN == 0 && kiln_range_ok(s->offset, s->size, v->size));
    }
    return KILN_OK;
}

/* Keys name non-empty strings in strictly ascending order (so each is unique); values are whole
   segments, which check_segments proved to lie in the file. */
static kiln_status check_metadata(const kiln_program_view *v)
{
    FMT_CHECK(v->n_metadata < UINT32_MAX);
    for (uint64_t i = 0; i < v->n_metadata; i++) {
        const kiln_fmt_metadata *m = &v->metadata[i];
        FMT_CHECK(m->key < v->n_strings && v->strings[m->key] != '\0' && m->segment < v->n_segments);
        if (i > 0) FMT_CHECK(strcmp(v->strings + v->metadata[i - 1].key, v->strings + m->key) < 0);
    }
    return KILN_OK;
}

static kiln_status check_value(const kiln_program_view *v, const kiln_fmt_value *val, uint64_t arena_size)
{
    FMT_CHECK(val->name < v->n_strings);
    FMT_CHECK(val->dtype < KILN_DTYPE_COUNT && val->rank <= KILN_MAX_RANK);
    FMT_CHECK(val->storage >= KILN_STORAGE_CONST && val->storage <= KILN_STORAGE_DYNAMIC);
    if (val->storage == KILN_STORAGE_DYNAMIC) return KILN_OK;
    FMT_CHECK(range_ok(val->shape, val->rank, v->n_i64));
    /* Dense bytes of the shape: numel x element size, or whole blocks per row for a
       block-quantized type (a row that is no whole number of blocks has no size). */
    kiln_tensor t = {.dtype = (kiln_dtype)val->dtype, .rank = val->rank};
    for (uint32_t d = 0; d < val->rank; d++) t.shape[d] = v->i64[val->shape + d];
    size_t bytes;
    FMT_CHECK(kiln_tensor_size(&t, &bytes) == KILN_OK && bytes == val->size);
    if (val->storage == KILN_STORAGE_CONST) {
        FMT_CHECK(val->segment < v->n_segments);
        /* Kernels read constants as arrays of their dtype (an I64 shape operand, say): an
           offset off the alignment would make those reads misaligned. */
        FMT_CHECK(val->offset % KILN_FORMAT_ALIGN == 0 && kiln_range_ok(val->offset, val->size, v->segments[val->segment].size));
    } else {
        FMT_CHECK(val->offset % KILN_FORMAT_ALIGN == 0 && kiln_range_ok(val->offset, val->size, arena_size));
    }
    return KILN_OK;
}

static kiln_status check_attr(const kiln_program_view *v, const kiln_fmt_attr *a)
{
    FMT_CHECK(a->name < v->n_strings);
    switch (a->type) {
    case 0 /* INT */: case 1 /* FLOAT */: return KILN_OK;
    case 2 /* INTS */: FMT_CHECK(range_ok(a->ref, a->count, v->n_i64)); return KILN_OK;
    case 3 /* FLOATS */: FMT_CHECK(range_ok(a->ref, a->count, v->n_i32)); return KILN_OK;
    case 4 /* STRING */: FMT_CHECK(a->ref < v->n_strings && range_ok(a->ref, a->count, v->n_strings - 1)); return KILN_OK;
    case 6 /* STRINGS */: {
        /* count NUL-terminated strings back to back, all inside the blob */
        uint64_t off = a->ref;
        FMT_CHECK(a->count <= v->n_strings);
        for (uint64_t k = 0; k < a->count; k++) {
            FMT_CHECK(off < v->n_strings);
            off += strlen(v->strings + off) + 1;
        }
        return KILN_OK;
    }
    case 5 /* TENSOR */: {
        uint64_t dtype = (uint64_t)a->i & 0xFF, rank = ((uint64_t)a->i >> 8) & 0xFF;
        /* Attribute tensors are ONNX's (ConstantOfShape's value ...): never block-quantized. */
        FMT_CHECK(((uint64_t)a->i >> 16) == 0 && dtype < KILN_DTYPE_COUNT && rank <= KILN_MAX_RANK &&
                  !kiln_dtype_is_quantized((kiln_dtype)dtype));
        FMT_CHECK(a->ref < v->n_segments && range_ok(a->count, rank, v->n_i64));
        uint64_t bytes = kiln_dtype_size((kiln_dtype)dtype);
        for (uint64_t d = 0; d < rank; d++) {
            int64_t dim = v->i64[a->count + d];
            FMT_CHECK(dim >= 0 && kiln_mul_u64(bytes, (uint64_t)dim, &bytes));
        }
        FMT_CHECK(bytes <= v->segments[a->ref].size);
        return KILN_OK;
    }
    default: return KILN_ERROR_FORMAT;
    }
}

static kiln_status check_instr(const kiln_program_view *v, const kiln_fmt_instr *in, uint32_t n_values)
{
    FMT_CHECK(in->kind == KILN_INSTR_KERNEL || in->kind == KILN_INSTR_DELEGATE);
    FMT_CHECK(in->op < v->n_strings && in->name < v->n_strings);
    FMT_CHECK(range_ok(in->first_attr, in->n_attrs, v->n_attrs));
    FMT_CHECK(range_ok(in->args, (uint64_t)in->n_inputs + in->n_outputs, v->n_i32));
    for (uint32_t k = 0; k < (uint32_t)in->n_inputs + in->n_outputs; k++) {
        int32_t a = v->i32[in->args + k];
        FMT_CHECK(a >= -1 && a < (int32_t)n_values);
    }
    if (in->kind == KILN_INSTR_DELEGATE) FMT_CHECK(in->segment < v->n_segments);
    else FMT_CHECK(in->segment == KILN_FMT_NONE);
    return KILN_OK;
}

static kiln_status check_method(const kiln_program_view *v, const kiln_fmt_method *m)
{
    FMT_CHECK(m->name < v->n_strings);
    FMT_CHECK(range_ok(m->first_value, m->n_values, v->n_values));
    FMT_CHECK(range_ok(m->first_instr, m->n_instrs, v->n_instrs));
    FMT_CHECK(range_ok(m->inputs, m->n_inputs, v->n_i32) && range_ok(m->outputs, m->n_outputs, v->n_i32));
    for (uint32_t i = 0; i < m->n_values; i++)
        KILN_TRY(check_value(v, &v->values[m->first_value + i], m->arena_size));
    for (uint32_t i = 0; i < m->n_inputs + (uint64_t)m->n_outputs; i++) {
        int32_t idx = v->i32[(i < m->n_inputs ? m->inputs + i : m->outputs + (i - m->n_inputs))];
        FMT_CHECK(idx >= 0 && (uint32_t)idx < m->n_values);
    }
    for (uint32_t i = 0; i < m->n_instrs; i++) KILN_TRY(check_instr(v, &v->instrs[m->first_instr + i], m->n_values));
    return KILN_OK;
}

/* The view over tables (the file's first tables_size bytes, or a copy) and data (the file). */
static kiln_status view_init(kiln_program_view *v, const void *tables, size_t tables_size, const void *data, size_t size)
{
    memset(v, 0, sizeof *v);
    KILN_CHECK(data && ((uintptr_t)data % 8) == 0 && tables && ((uintptr_t)tables % 8) == 0, KILN_ERROR_INVALID_ARGUMENT);
    v->base = data;
    v->size = size;
    v->tables = tables;
    v->tables_size = tables_size;
    FMT_CHECK(tables_size >= sizeof(kiln_fmt_header) && tables_size <= size);
    const kiln_fmt_header *h = tables;
    FMT_CHECK(memcmp(h->magic, KILN_FORMAT_MAGIC, 8) == 0);
    KILN_CHECK(h->version >= KILN_FORMAT_VERSION_MIN && h->version <= KILN_FORMAT_VERSION, KILN_ERROR_VERSION);
    FMT_CHECK(h->flags == 0 && h->file_size == size);
    v->version = h->version;
    KILN_TRY(read_sections(v, h));
    KILN_TRY(check_segments(v));
    KILN_TRY(check_metadata(v));
    for (uint64_t i = 0; i < v->n_attrs; i++) KILN_TRY(check_attr(v, &v->attrs[i]));
    for (uint64_t i = 0; i < v->n_methods; i++) KILN_TRY(check_method(v, &v->methods[i]));
    return KILN_OK;
}

kiln_status kiln_program_view_init(kiln_program_view *v, const void *data, size_t size)
{
    return view_init(v, data, size, data, size);
}

/* Where the tables end: the furthest byte of the header, the section table and any section,
   read from data (bounds-checked, nothing retained). Out-of-range entries are left to the
   validation of the copy, which rejects them. */
static kiln_status tables_extent(const uint8_t *data, size_t size, size_t *out)
{
    FMT_CHECK(size >= sizeof(kiln_fmt_header));
    kiln_fmt_header h;
    memcpy(&h, data, sizeof h);
    FMT_CHECK(memcmp(h.magic, KILN_FORMAT_MAGIC, 8) == 0);
    /* the header and section table below are laid out alike in versions 1 and 2 */
    KILN_CHECK(h.version >= KILN_FORMAT_VERSION_MIN && h.version <= KILN_FORMAT_VERSION, KILN_ERROR_VERSION);
    uint64_t end = sizeof h, table_size;
    FMT_CHECK(h.n_sections <= 64 && kiln_mul_u64(h.n_sections, sizeof(kiln_fmt_section), &table_size) &&
              kiln_range_ok(h.sections_offset, table_size, size));
    if (h.sections_offset + table_size > end) end = h.sections_offset + table_size;
    for (uint32_t i = 0; i < h.n_sections; i++) {
        kiln_fmt_section s;
        memcpy(&s, data + h.sections_offset + i * sizeof s, sizeof s);
        uint64_t bytes, last;
        if (kiln_mul_u64(s.count, s.elem_size, &bytes) && kiln_add_u64(s.offset, bytes, &last) && last <= size &&
            last > end)
            end = last;
    }
    *out = (size_t)end;
    return KILN_OK;
}

kiln_status kiln_program_view_init_copy(kiln_program_view *v, const void *data, size_t size,
                                        const kiln_allocator *allocator, void **tables_out)
{
    *tables_out = NULL;
    memset(v, 0, sizeof *v);
    KILN_CHECK(data && ((uintptr_t)data % 8) == 0 && allocator, KILN_ERROR_INVALID_ARGUMENT);
    size_t extent;
    KILN_TRY(tables_extent(data, size, &extent));
    void *tables = kiln_alloc(allocator, extent, 64);
    KILN_CHECK(tables, KILN_ERROR_OUT_OF_MEMORY);
    memcpy(tables, data, extent);
    kiln_status st = view_init(v, tables, extent, data, size);
    if (st != KILN_OK) {
        kiln_free(allocator, tables);
        memset(v, 0, sizeof *v);
        return st;
    }
    *tables_out = tables;
    return KILN_OK;
}

int64_t kiln_view_metadata_find(const kiln_program_view *v, const char *key)
{
    uint64_t lo = 0, hi = v->n_metadata;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int order = strcmp(key, v->strings + v->metadata[mid].key);
        if (order == 0) return (int64_t)mid;
        if (order < 0) hi = mid;
        else lo = mid + 1;
    }
    return -1;
}
