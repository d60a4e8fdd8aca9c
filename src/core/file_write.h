/* file_write.h — replacing a file atomically: the one writer of every file kiln produces
 * (compiled programs, shard programs and manifests, `kiln scratch-size --write`, .npy outputs).
 *
 * Layer: core (internal; the compiler and tools use it). Depends on kiln.h, core/alloc.h, POSIX.
 *
 * What kiln_file_write_atomic does with PATH:
 *  - resolves it: a symbolic link is followed, link after link (at most 40, as the kernel
 *    allows), to the file it finally names — which need not exist yet (a dangling link creates
 *    the file it names). Replacing the file and not the link is what `cp` and `cc -o` do;
 *  - refuses, with one line and before anything is created, a destination that exists and is
 *    not a regular file (a device, FIFO, socket or directory): renaming over it would put a
 *    regular file in place of /dev/null, or never reach the reader of a FIFO;
 *  - creates "<resolved>.tmp-XXXXXX" next to the resolved file (same directory, so the rename
 *    stays on one file system) with open(O_CREAT | O_EXCL, 0666) under a fresh random name: the
 *    kernel applies the umask, as for any new file, without a call to umask() (process-wide and
 *    racy). When the destination exists, the temporary file gets its mode (fchmod, after a
 *    best-effort fchown to its owner and group, which only privileged processes can do), so a
 *    private 0600 file stays private;
 *  - writes the pieces in order, flushes them to disk (fsync), closes and renames the temporary
 *    file over the resolved path. On any failure the temporary file is removed: the destination
 *    keeps its previous complete content (or stays absent) or holds the new complete content,
 *    never a part. A hard-linked destination is replaced, not written through (its other names
 *    keep the old content), as with any rename.
 *
 * The file operations are a table (kiln_file_io) so that tests fail each one in turn
 * (tests/unit/test_compile_faults.c, tests/unit/test_file_write.c); kiln_file_io_posix() is the
 * real one. If cleanup fails too (the temporary file cannot be removed), the original error stays
 * the status and the first part of the message, and the cleanup error is appended:
 * "...; also: could not remove temporary file X: reason".
 */
#ifndef KILN_CORE_FILE_WRITE_H
#define KILN_CORE_FILE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "kiln/kiln.h"

/* POSIX-shaped operations: each returns -1 and sets errno on failure. */
typedef struct kiln_file_io {
    void *ctx;
    /* open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode): a descriptor; EEXIST makes the
       writer try another name */
    int (*create)(void *ctx, const char *path, mode_t mode);
    int (*chmod)(void *ctx, int fd, mode_t mode);                       /* fchmod */
    ssize_t (*write)(void *ctx, int fd, const void *data, size_t size); /* may write less than size */
    int (*flush)(void *ctx, int fd);                                    /* fsync */
    int (*close)(void *ctx, int fd);
    int (*rename)(void *ctx, const char *from, const char *to);
    int (*remove)(void *ctx, const char *path);                         /* unlink */
} kiln_file_io;

/* The real operations. Static, never NULL. */
const kiln_file_io *kiln_file_io_posix(void);

/* One contiguous part of the bytes to write. */
typedef struct kiln_file_piece {
    const void *data;           /* (size) bytes; may be NULL when size is 0 */
    size_t size;
} kiln_file_piece;

/* Replace the file at path with the n_pieces pieces, concatenated, as described above. io NULL:
 * kiln_file_io_posix(); a NULL: the default allocator (paths are allocated from it and freed
 * before return). message (may be NULL) receives one line naming path on failure, unless it
 * already holds one (the first error wins). Returns KILN_OK;
 *   KILN_ERROR_INVALID_ARGUMENT  path NULL or empty, a piece with data NULL and size > 0;
 *   KILN_ERROR_IO                the destination is not a regular file, a link cannot be
 *                                followed, or a file operation failed (strerror in the message);
 *   KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_file_write_atomic(const kiln_file_io *io, const kiln_allocator *a, const char *path,
                                   const kiln_file_piece *pieces, size_t n_pieces, char *message,
                                   size_t message_size);

/* Whether paths a and b name one existing file: stat() of both (so after every symbolic link)
 * succeeds with the same st_dev and st_ino. false when either does not exist or cannot be
 * examined. Callers use it to refuse an output that would replace one of their inputs. */
bool kiln_file_same(const char *a, const char *b);

#endif
