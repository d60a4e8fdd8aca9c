/* program_writer.h — builds a program file in memory (see program_format.h).
 *
 * Layer: format. Depends on core. The builder owns copies of everything handed to it except
 * segment bytes, which are referenced until kiln_program_builder_finish returns (the compiler's
 * constants outlive the builder). Identical strings and identical segments are stored once.
 */
#ifndef KILN_FORMAT_PROGRAM_WRITER_H
#define KILN_FORMAT_PROGRAM_WRITER_H

#include <stddef.h>

#include "format/program_format.h"
#include "kiln/kiln.h"

typedef struct kiln_program_builder kiln_program_builder;

kiln_status kiln_program_builder_create(const kiln_allocator *allocator, kiln_program_builder **out);
void kiln_program_builder_destroy(kiln_program_builder *b);

/* Each adds to a table and returns the record's index (or the string's offset) through *out.
 * All return KILN_OK, KILN_ERROR_OUT_OF_MEMORY or KILN_ERROR_LIMIT (a table passed 2^31). */
kiln_status kiln_program_builder_string(kiln_program_builder *b, const char *s, size_t len, uint32_t *out);
kiln_status kiln_program_builder_i64(kiln_program_builder *b, const int64_t *vals, size_t n, uint32_t *out);
kiln_status kiln_program_builder_i32(kiln_program_builder *b, const int32_t *vals, size_t n, uint32_t *out);
kiln_status kiln_program_builder_segment(kiln_program_builder *b, const void *data, size_t size, uint32_t *out);
kiln_status kiln_program_builder_value(kiln_program_builder *b, const kiln_fmt_value *v, uint32_t *out);
kiln_status kiln_program_builder_attr(kiln_program_builder *b, const kiln_fmt_attr *a, uint32_t *out);
kiln_status kiln_program_builder_instr(kiln_program_builder *b, const kiln_fmt_instr *in, uint32_t *out);
kiln_status kiln_program_builder_method(kiln_program_builder *b, const kiln_fmt_method *m, uint32_t *out);
/* Program metadata (format version 2): the value of key is the size bytes at data, stored as a
 * segment (64-byte aligned, shared with any equal segment) and, like any segment's bytes,
 * referenced until kiln_program_builder_finish returns. The file lists keys sorted, whatever
 * the order of the calls. KILN_ERROR_INVALID_ARGUMENT: NULL or empty key, NULL data with a
 * nonzero size, or a key already added (the caller decides what two values for one key mean);
 * also KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT. */
kiln_status kiln_program_builder_add_metadata(kiln_program_builder *b, const char *key, const void *data, size_t size);
/* Current record counts, for method ranges. */
uint32_t kiln_program_builder_n_values(const kiln_program_builder *b);
uint32_t kiln_program_builder_n_instrs(const kiln_program_builder *b);
uint32_t kiln_program_builder_n_attrs(const kiln_program_builder *b);

/* Serialize. *out_data comes from the builder's allocator (64-byte aligned). */
kiln_status kiln_program_builder_finish(kiln_program_builder *b, void **out_data, size_t *out_size);

#endif
