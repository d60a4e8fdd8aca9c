/* output_file.c — atomic file writes through a table of file operations (see output_file.h).
 *
 * Layer: compiler (internal). One function walks the steps create -> write -> flush -> close ->
 * rename; the first failure is remembered (status and message, with strerror of its errno) and
 * the cleanup that follows (close if still open, remove the temporary file) can only add to the
 * message, never replace it.
 */
#include "compiler/output_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"

/* ---- the real operations ------------------------------------------------------------------------ */

static int posix_open_temp(void *ctx, char *path_template)
{
    (void)ctx;
    int fd = mkstemp(path_template);
    if (fd >= 0) (void)fchmod(fd, 0644); /* mkstemp creates 0600; a program file is meant to be shared */
    return fd;
}

static ssize_t posix_write(void *ctx, int fd, const void *data, size_t size)
{
    (void)ctx;
    return write(fd, data, size);
}

static int posix_flush(void *ctx, int fd)
{
    (void)ctx;
    return fsync(fd);
}

static int posix_close(void *ctx, int fd)
{
    (void)ctx;
    return close(fd);
}

static int posix_rename(void *ctx, const char *from, const char *to)
{
    (void)ctx;
    return rename(from, to);
}

static int posix_remove(void *ctx, const char *path)
{
    (void)ctx;
    return unlink(path);
}

static const kiln_output_io posix_io = {NULL, posix_open_temp, posix_write, posix_flush, posix_close, posix_rename,
                                        posix_remove};

const kiln_output_io *kiln_output_io_posix(void) { return &posix_io; }

/* ---- the write ------------------------------------------------------------------------------------ */

/* The first error's line; later calls do nothing (first error wins). */
static void first_error(char *message, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void first_error(char *message, size_t size, const char *fmt, ...)
{
    if (!message || !size || message[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, size, fmt, ap);
    va_end(ap);
}

/* A cleanup error, appended to whatever the message holds. */
static void also(char *message, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void also(char *message, size_t size, const char *fmt, ...)
{
    if (!message || !size) return;
    size_t used = strlen(message);
    if (used + 1 >= size) return;
    int n = snprintf(message + used, size - used, "%s", used ? "; also: " : "");
    if (n < 0 || (size_t)n >= size - used) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + used + (size_t)n, size - used - (size_t)n, fmt, ap);
    va_end(ap);
}

/* All of data to fd, resuming after short writes and EINTR. */
static bool write_all(const kiln_output_io *io, int fd, const void *data, size_t size)
{
    const unsigned char *p = data;
    while (size > 0) {
        ssize_t n = io->write(io->ctx, fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO; /* no progress and no error: do not spin */
            return false;
        }
        p += n;
        size -= (size_t)n;
    }
    return true;
}

kiln_status kiln_output_file_write(const kiln_output_io *io, const kiln_allocator *a, const char *path,
                                   const void *data, size_t size, char *message, size_t message_size)
{
    size_t n = strlen(path) + sizeof ".tmp-XXXXXX";
    char *tmp = kiln_alloc(a, n, 1);
    if (!tmp) {
        first_error(message, message_size, "cannot write '%s': out of memory", path);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    snprintf(tmp, n, "%s.tmp-XXXXXX", path);
    int fd = io->open_temp(io->ctx, tmp);
    if (fd < 0) {
        first_error(message, message_size, "cannot create a temporary file next to '%s': %s", path, strerror(errno));
        kiln_free(a, tmp);
        return KILN_ERROR_IO;
    }
    const char *failed = NULL; /* the step that failed, and its errno (close may change errno) */
    int err = 0;
    if (!write_all(io, fd, data, size)) failed = "write";
    else if (io->flush(io->ctx, fd) != 0) failed = "flush";
    if (failed) err = errno;
    int closed = io->close(io->ctx, fd); /* close even after a failure: the descriptor must not leak */
    int close_err = closed != 0 ? errno : 0;
    if (!failed && closed != 0) {
        failed = "close";
        err = close_err;
        closed = 0; /* reported as the failure itself, not as a cleanup error */
    }
    if (!failed && io->rename(io->ctx, tmp, path) != 0) {
        failed = "rename";
        err = errno;
    }
    if (!failed) {
        kiln_free(a, tmp);
        return KILN_OK;
    }
    if (strcmp(failed, "rename") == 0)
        first_error(message, message_size, "cannot write '%s': rename from '%s' failed: %s", path, tmp, strerror(err));
    else
        first_error(message, message_size, "cannot write '%s': %s of '%s' failed: %s", path, failed, tmp, strerror(err));
    if (closed != 0) also(message, message_size, "could not close temporary file %s: %s", tmp, strerror(close_err));
    if (io->remove(io->ctx, tmp) != 0)
        also(message, message_size, "could not remove temporary file %s: %s", tmp, strerror(errno));
    kiln_free(a, tmp);
    return KILN_ERROR_IO;
}
