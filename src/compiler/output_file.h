/* output_file.h — writing a compiled file atomically, through replaceable file operations.
 *
 * Layer: compiler (internal; not installed). Every file the compile path writes goes through
 * kiln_output_file_write: the bytes go to a temporary file next to the destination, which is
 * flushed to disk, closed and renamed over the destination; on any failure the temporary file is
 * removed, so the destination either keeps its previous complete content (or stays absent) or
 * holds the new complete content — never a part.
 *
 * The file operations are a table (kiln_output_io) so that tests can fail each one in turn
 * (tests/unit/test_compile_faults.c); kiln_output_io_posix() is the real one. If cleanup fails
 * too (the temporary file cannot be removed), the original error stays the status and the first
 * part of the message, and the cleanup error is appended: "...; also: could not remove temporary
 * file X: reason".
 */
#ifndef KILN_COMPILER_OUTPUT_FILE_H
#define KILN_COMPILER_OUTPUT_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "kiln/compiler.h"

/* POSIX-shaped operations: each returns -1 (write: -1) and sets errno on failure. */
typedef struct kiln_output_io {
    void *ctx;
    int (*open_temp)(void *ctx, char *path_template);   /* mkstemp: fills the XXXXXX, returns an fd */
    ssize_t (*write)(void *ctx, int fd, const void *data, size_t size); /* may write less than size */
    int (*flush)(void *ctx, int fd);                    /* fsync */
    int (*close)(void *ctx, int fd);
    int (*rename)(void *ctx, const char *from, const char *to);
    int (*remove)(void *ctx, const char *path);
} kiln_output_io;

/* The real operations (mkstemp, write, fsync, close, rename, unlink). */
const kiln_output_io *kiln_output_io_posix(void);

/* Write size bytes at path atomically (see above). The temporary path is allocated from a.
 * KILN_OK, KILN_ERROR_IO (message names the file, the operation and strerror),
 * KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_output_file_write(const kiln_output_io *io, const kiln_allocator *a, const char *path,
                                   const void *data, size_t size, char *message, size_t message_size);

/* kiln_compile_file with the file operations given (tests inject failures through it). */
kiln_status kiln_compile_file_io(const kiln_compile_options *options, const kiln_compile_method *methods,
                                 size_t n_methods, const char *out_path, const kiln_output_io *io, char *message,
                                 size_t message_size);

#endif
