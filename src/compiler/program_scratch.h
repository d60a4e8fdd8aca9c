/* program_scratch.h — scratch sizing across compiled programs: the largest scratch need of a
 * program's `cpu` context binaries, recording a scratch-group size in all of them, and the
 * atomic file write both `kiln scratch-size --write` and `kiln compile --shards` use.
 *
 * Layer: compiler (internal; also used by tools/). A program's context binaries are the
 * payload segments of its DELEGATE instructions naming the `cpu` backend. Setting the group
 * size changes 8 bytes of each binary's header (outside its signature) and so the segment's
 * content hash, which is recomputed: the program stays valid and every other byte is unchanged.
 * When several programs carry the same group size, their contexts join one scratch group of
 * that size at load (a default group keyed by allocator and size, or an explicit one).
 */
#ifndef KILN_COMPILER_PROGRAM_SCRATCH_H
#define KILN_COMPILER_PROGRAM_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

typedef struct kiln_program_scratch {
    size_t n_binaries;      /* distinct cpu context-binary segments */
    uint64_t need;          /* largest graph scratch need over them (0: none needs scratch) */
    uint64_t group;         /* their group size (0: unset); the largest one when they differ */
    bool groups_differ;     /* the binaries record different group sizes */
} kiln_program_scratch;

/* Scratch facts of the program at data (8-byte aligned). KILN_ERROR_FORMAT / KILN_ERROR_VERSION
 * (not a valid program), KILN_ERROR_INCOMPATIBLE (a cpu payload is not a context binary). */
kiln_status kiln_program_scratch_query(const void *data, size_t size, kiln_program_scratch *out);

/* Record group_size (0 clears it) in every cpu context binary of the program at data and
 * update their segment hashes. Nothing is changed unless every binary accepts the size:
 * KILN_ERROR_INVALID_ARGUMENT when 0 < group_size < a binary's need, plus the query's errors. */
kiln_status kiln_program_scratch_set_group(void *data, size_t size, uint64_t group_size);

/* Write size bytes to path atomically: a temporary file next to it (mode 0644) renamed into
 * place, removed on any failure. KILN_ERROR_IO, KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_write_file_atomic(const char *path, const void *data, size_t size);

#endif
