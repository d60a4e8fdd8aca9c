/* program_reader.h — validating view of a program file.
 *
 * Layer: format. Depends on core. kiln_program_view_init checks every count, offset, size and
 * reference in the file with overflow-safe arithmetic before returning; afterwards the runtime
 * may follow any reference without further checks. The view points into the caller's bytes,
 * which must stay mapped and unchanged while the view is used.
 *
 * kiln_program_view_init_copy is the variant for bytes that may change under the reader (a
 * mapped file someone rewrites in place): it copies the file's tables — header, section table
 * and every section, everything a reader interprets — into memory of its own and validates the
 * copy, so only segment data (weights, constants, delegate payloads) is read from the bytes
 * afterwards. A change to the file then changes at worst the numbers in those segments, never
 * where a reference points. Files kiln writes keep every table before the segment data, so the
 * copy is the file's metadata only.
 */
#ifndef KILN_FORMAT_PROGRAM_READER_H
#define KILN_FORMAT_PROGRAM_READER_H

#include <stddef.h>

#include "format/program_format.h"
#include "kiln/kiln.h"

typedef struct kiln_program_view {
    uint32_t version;                 /* the file's format version (KILN_FORMAT_VERSION_MIN..KILN_FORMAT_VERSION) */
    const uint8_t *base;              /* the file: segment data is read from here */
    uint64_t size;
    const uint8_t *tables;            /* the file's first tables_size bytes, or a copy of them */
    uint64_t tables_size;
    const char *strings;              /* (n_strings bytes), last byte NUL */
    uint64_t n_strings;
    const int64_t *i64;               /* (n_i64) */
    uint64_t n_i64;
    const int32_t *i32;               /* (n_i32) */
    uint64_t n_i32;
    const kiln_fmt_segment *segments; /* (n_segments) */
    uint64_t n_segments;
    const kiln_fmt_method *methods;   /* (n_methods) */
    uint64_t n_methods;
    const kiln_fmt_value *values;     /* (n_values) */
    uint64_t n_values;
    const kiln_fmt_instr *instrs;     /* (n_instrs) */
    uint64_t n_instrs;
    const kiln_fmt_attr *attrs;       /* (n_attrs) */
    uint64_t n_attrs;
    const kiln_fmt_metadata *metadata; /* (n_metadata) sorted by key; none in a version 1 file */
    uint64_t n_metadata;
} kiln_program_view;

/* KILN_ERROR_FORMAT (truncated, corrupt, foreign), KILN_ERROR_VERSION (a format version outside
 * KILN_FORMAT_VERSION_MIN..KILN_FORMAT_VERSION),
 * KILN_ERROR_INVALID_ARGUMENT (NULL or misaligned data: it must be 8-byte aligned). */
kiln_status kiln_program_view_init(kiln_program_view *view, const void *data, size_t size);

/* As kiln_program_view_init, over a copy of the file's tables: *tables_out receives that copy
 * (from allocator, 64-byte aligned), which the view points into and which the caller frees with
 * kiln_free(allocator, ...) after the view's last use. On failure nothing is left allocated.
 * Also KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_program_view_init_copy(kiln_program_view *view, const void *data, size_t size,
                                        const kiln_allocator *allocator, void **tables_out);

/* Accessors for references that init() validated. */
static inline const char *kiln_view_string(const kiln_program_view *v, uint32_t offset) { return v->strings + offset; }
static inline const void *kiln_view_segment_data(const kiln_program_view *v, uint32_t segment)
{
    return v->base + v->segments[segment].offset;
}

/* The index of the metadata record whose key is key, or -1 (binary search over the sorted keys). */
int64_t kiln_view_metadata_find(const kiln_program_view *v, const char *key);

#endif
