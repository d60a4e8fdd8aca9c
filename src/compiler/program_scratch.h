/* program_scratch.h — scratch sizing across compiled programs: the largest scratch need of a
 * program's `cpu` context binaries, recording a scratch-group size in all of them (what
 * `kiln compile` does within one program, `kiln compile --shards` across its shards and
 * `kiln scratch-size --write` across any programs), and writing a program so changed.
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

#include "core/file_write.h"
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

/* Validate every payload that takes part (those whose backend has scratch hooks) through its
 * backend's check, as loading would, before trusting the query. KILN_OK, the format reader's
 * errors, or the first refused payload's status with *segment and message (one line, without
 * the segment) saying why. */
kiln_status kiln_program_scratch_check(const void *data, size_t size, uint32_t *segment, char *message,
                                       size_t message_size);

/* Record group_size (0 clears it) in every cpu context binary of the program at data and
 * update their segment hashes. Nothing is changed unless every binary accepts the size:
 * KILN_ERROR_INVALID_ARGUMENT when 0 < group_size < a binary's need, plus the query's errors. */
kiln_status kiln_program_scratch_set_group(void *data, size_t size, uint64_t group_size);

/* `kiln scratch-size --write` for one program: kiln_program_scratch_set_group on data (changed in
 * place), then data written to path with kiln_file_write_atomic through io (NULL: the real file
 * operations; tests inject failures through it). Its statuses, and the set_group ones; message
 * (may be NULL) gets one line naming path. */
kiln_status kiln_program_scratch_write(const kiln_file_io *io, const char *path, void *data, size_t size,
                                       uint64_t group_size, char *message, size_t message_size);

#endif
