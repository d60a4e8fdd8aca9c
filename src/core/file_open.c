/* file_open.c — opening user-named files for reading, regular files only. Layer: core.
 * See file_open.h for why O_NONBLOCK comes first and the type check follows on the descriptor. */
#include "core/file_open.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *kiln_file_kind_name(mode_t mode)
{
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "a special file";
}

/* The phrase for a file that exists but is not regular, one per kind so it can be static. */
static const char *not_regular_phrase(mode_t mode)
{
    if (S_ISDIR(mode)) return "is a directory, not a regular file";
    if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
    if (S_ISCHR(mode)) return "is a character device, not a regular file";
    if (S_ISBLK(mode)) return "is a block device, not a regular file";
    if (S_ISSOCK(mode)) return "is a socket, not a regular file";
    return "is not a regular file";
}

kiln_status kiln_file_open_read(const char *path, int *fd_out, struct stat *st_out, const char **why_out)
{
    if (fd_out) *fd_out = -1;
    if (why_out) *why_out = "invalid argument";
    if (!path || !fd_out) return KILN_ERROR_INVALID_ARGUMENT;
    /* O_NOCTTY: a terminal named by mistake must not become the controlling one. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (why_out) *why_out = strerror(errno);
        return KILN_ERROR_IO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        if (why_out) *why_out = strerror(errno);
        close(fd);
        return KILN_ERROR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        if (why_out) *why_out = not_regular_phrase(st.st_mode);
        close(fd);
        return KILN_ERROR_IO;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        if (why_out) *why_out = strerror(errno);
        close(fd);
        return KILN_ERROR_IO;
    }
    if (st_out) *st_out = st;
    if (why_out) *why_out = "";
    *fd_out = fd;
    return KILN_OK;
}
