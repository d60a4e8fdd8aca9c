/* file_open.h — opening a file kiln is about to read, refusing anything but a regular file.
 *
 * Layer: core (internal). Depends on kiln.h and POSIX.
 * Why: open() on a FIFO without a writer blocks forever, and a device or socket named as a model,
 * program or tensor file is never what the user meant. Every reader of a user-named path (ONNX
 * models and their external data, program files, .npy/.pb tensors, shard manifests and their
 * shards) opens through kiln_file_open_read, which opens with O_NONBLOCK (so a FIFO cannot block),
 * checks the descriptor's type with fstat (no race with a rename between check and open), and
 * only then clears O_NONBLOCK again.
 */
#ifndef KILN_CORE_FILE_OPEN_H
#define KILN_CORE_FILE_OPEN_H

#include <sys/stat.h>

#include "kiln/kiln.h"

/* Opens path read-only (O_CLOEXEC) and returns the descriptor in *fd_out, the file's status in
 * *st_out (may be NULL). KILN_OK; KILN_ERROR_INVALID_ARGUMENT (NULL path or fd_out);
 * KILN_ERROR_IO when the file cannot be opened or is not a regular file. On failure *fd_out is -1
 * and *why_out (may be NULL) points to a static phrase for the message, such as
 * "No such file or directory" or "is a FIFO, not a regular file". */
kiln_status kiln_file_open_read(const char *path, int *fd_out, struct stat *st_out, const char **why_out);

/* "a FIFO", "a directory", "a character device", "a block device", "a socket", "a symbolic link",
 * "a regular file" or "a special file": the kind of file st_mode describes. Static. */
const char *kiln_file_kind_name(mode_t mode);

#endif
