/* read_file.h — reading a whole user-named file into memory, for the tool's readers (program
 * files for inspect and verify, .pb tensors, shard manifests).
 *
 * Layer: tools. Depends on kiln.h and src/core (file_open.h, alloc.h).
 * Why not kiln_read_file (compiler/onnx): the tool must refuse a FIFO, device or directory before
 * reading it — open() on a FIFO blocks forever — and say which of them it was; the file is opened
 * through kiln_file_open_read and read by size from its fstat.
 */
#ifndef KILN_TOOLS_READ_FILE_H
#define KILN_TOOLS_READ_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

/* Reads the regular file at path into a buffer from a (64-byte aligned, followed by one NUL byte
 * that size does not count, so text can be parsed in place); the caller frees *data with
 * kiln_free(a, *data). Returns KILN_OK or
 *   KILN_ERROR_IO             the file cannot be opened, is not a regular file, or a read failed;
 *   KILN_ERROR_LIMIT          it is larger than max_size bytes;
 *   KILN_ERROR_OUT_OF_MEMORY.
 * On failure *data is NULL and, when why is not NULL, why (why_size bytes) holds one line without
 * the path ("is a FIFO, not a regular file", "No such file or directory"). */
kiln_status cli_read_file(const char *path, const kiln_allocator *a, uint64_t max_size, uint8_t **data, size_t *size,
                          char *why, size_t why_size);

#endif
