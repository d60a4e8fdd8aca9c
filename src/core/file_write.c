/* file_write.c — atomic file replacement through a table of file operations (see file_write.h).
 *
 * Layer: core. Three steps: resolve the destination (follow links, refuse what is not a regular
 * file, before anything is created), then one function walks create -> chmod -> write -> flush ->
 * close -> rename. The first failure is remembered (status and message, with strerror of its
 * errno) and the cleanup that follows (close if still open, remove the temporary file) can only
 * add to the message, never replace it.
 */
#include "core/file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "core/file_open.h"
#include "core/hash.h"
#include "core/text_escape.h"

#define MAX_LINK_HOPS 40        /* Linux's limit for one path lookup (ELOOP after it) */
#define TEMP_SUFFIX ".tmp-XXXXXX"
#define TEMP_ATTEMPTS 100       /* names tried before giving up on EEXIST */

/* ---- the real operations ------------------------------------------------------------------------ */

static int posix_create(void *ctx, const char *path, mode_t mode)
{
    (void)ctx;
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, mode);
}

static int posix_chmod(void *ctx, int fd, mode_t mode)
{
    (void)ctx;
    return fchmod(fd, mode);
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

static const kiln_file_io posix_io = {NULL, posix_create, posix_chmod, posix_write, posix_flush, posix_close,
                                      posix_rename, posix_remove};

const kiln_file_io *kiln_file_io_posix(void) { return &posix_io; }

/* ---- messages ------------------------------------------------------------------------------------- */

/* The first error's line; later calls do nothing (first error wins). */
static void first_error(char *message, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void first_error(char *message, size_t size, const char *fmt, ...)
{
    kiln_diag d = kiln_diag_over(message, size);
    va_list ap;
    va_start(ap, fmt);
    kiln_diag_vfail_escaping(&d, KILN_OK, fmt, ap); /* paths may hold newlines or escapes */
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
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    kiln_text_escape(message + used + (size_t)n, size - used - (size_t)n, line, (size_t)-1);
}

/* ---- resolving the destination ------------------------------------------------------------------- */

typedef struct destination {
    char *path;                 /* the file the links lead to (allocated) */
    bool exists;
    struct stat st;             /* when it exists: its lstat (so never a link) */
} destination;

/* The target of the link at `link`: absolute as it is, relative from the link's directory. */
static char *link_target(const kiln_allocator *a, const char *link, const char *target, size_t target_size)
{
    const char *slash = strrchr(link, '/');
    size_t dir = target[0] == '/' || !slash ? 0 : (size_t)(slash - link) + 1;
    char *joined = kiln_alloc(a, dir + target_size + 1, 1);
    if (!joined) return NULL;
    memcpy(joined, link, dir);
    memcpy(joined + dir, target, target_size);
    joined[dir + target_size] = '\0';
    return joined;
}

/* Follows links from path to the file they name (absent is fine). Directories along the way are
   the kernel's to resolve; only the last component can be a link we must follow ourselves,
   since rename() replaces a link instead of following it. */
static kiln_status resolve(const kiln_allocator *a, const char *path, destination *d, char *message, size_t size)
{
    d->path = kiln_strdup(a, path);
    if (!d->path) {
        first_error(message, size, "cannot write '%s': out of memory", path);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    for (int hops = 0;; hops++) {
        if (lstat(d->path, &d->st) != 0) {
            if (errno == ENOENT) {
                d->exists = false;
                return KILN_OK;
            }
            first_error(message, size, "cannot write '%s': %s", path, strerror(errno));
            return KILN_ERROR_IO;
        }
        if (!S_ISLNK(d->st.st_mode)) {
            d->exists = true;
            return KILN_OK;
        }
        if (hops == MAX_LINK_HOPS) {
            first_error(message, size, "cannot write '%s': %s", path, strerror(ELOOP));
            return KILN_ERROR_IO;
        }
        char target[4096];
        ssize_t n = readlink(d->path, target, sizeof target);
        if (n < 0 || (size_t)n >= sizeof target) {
            first_error(message, size, "cannot write '%s': cannot read symbolic link '%s': %s", path, d->path,
                        strerror(n < 0 ? errno : ENAMETOOLONG));
            return KILN_ERROR_IO;
        }
        char *next = link_target(a, d->path, target, (size_t)n);
        if (!next) {
            first_error(message, size, "cannot write '%s': out of memory", path);
            return KILN_ERROR_OUT_OF_MEMORY;
        }
        kiln_free(a, d->path);
        d->path = next;
    }
}

/* ---- the temporary file ------------------------------------------------------------------------ */

/* Creates "<dest>.tmp-XXXXXX" exclusively under a fresh name (tmp holds dest plus the suffix).
   The name's randomness only has to avoid collisions, so time, pid and an address hashed do. */
static int create_temp(const kiln_file_io *io, char *tmp, size_t dest_len)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed[4] = {(uint64_t)now.tv_nsec, (uint64_t)now.tv_sec, (uint64_t)getpid(), (uint64_t)(uintptr_t)tmp};
    uint64_t state = kiln_hash64(seed, sizeof seed, 0);
    char *x = tmp + dest_len + sizeof ".tmp-" - 1;
    for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        uint64_t bits = state >> 16;
        for (size_t i = 0; i < 6; i++, bits /= 62) x[i] = letters[bits % 62];
        int fd = io->create(io->ctx, tmp, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1; /* errno is EEXIST */
}

/* The existing destination's owner (best effort: only a privileged process may give a file away,
   so a failure is expected and ignored) and mode (must work: otherwise a private file would be
   replaced by a readable one). chown first: it may clear set-user-ID bits that chmod restores. */
static int keep_owner_and_mode(const kiln_file_io *io, int fd, const struct stat *old)
{
    struct stat now;
    if (fstat(fd, &now) == 0 && (now.st_uid != old->st_uid || now.st_gid != old->st_gid))
        (void)!fchown(fd, old->st_uid, old->st_gid);
    return io->chmod(io->ctx, fd, old->st_mode & 07777);
}

/* All of data to fd, resuming after short writes and EINTR. */
static bool write_all(const kiln_file_io *io, int fd, const void *data, size_t size)
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

/* Steps after the temporary file exists; returns the failed step's name (errno in *err) or NULL. */
static const char *fill_and_rename(const kiln_file_io *io, int fd, const destination *d, const char *tmp,
                                   const kiln_file_piece *pieces, size_t n_pieces, int *err, int *close_err)
{
    const char *failed = NULL;
    if (d->exists && keep_owner_and_mode(io, fd, &d->st) != 0) failed = "chmod";
    for (size_t i = 0; !failed && i < n_pieces; i++)
        if (!write_all(io, fd, pieces[i].data, pieces[i].size)) failed = "write";
    if (!failed && io->flush(io->ctx, fd) != 0) failed = "flush";
    if (failed) *err = errno;
    /* close even after a failure: the descriptor must not leak */
    if (io->close(io->ctx, fd) != 0) {
        if (failed) {
            *close_err = errno;
        } else {
            failed = "close";
            *err = errno;
        }
    }
    if (!failed && io->rename(io->ctx, tmp, d->path) != 0) {
        failed = "rename";
        *err = errno;
    }
    return failed;
}

/* ---- the write ------------------------------------------------------------------------------------ */

kiln_status kiln_file_write_atomic(const kiln_file_io *io, const kiln_allocator *a, const char *path,
                                   const kiln_file_piece *pieces, size_t n_pieces, char *message,
                                   size_t message_size)
{
    if (!path || !path[0] || (n_pieces && !pieces)) {
        first_error(message, message_size, "cannot write a file: no path given");
        return KILN_ERROR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < n_pieces; i++) {
        if (!pieces[i].data && pieces[i].size) {
            first_error(message, message_size, "cannot write '%s': no data for %zu bytes", path, pieces[i].size);
            return KILN_ERROR_INVALID_ARGUMENT;
        }
    }
    if (!io) io = kiln_file_io_posix();
    if (!a) a = kiln_allocator_default();

    destination d = {0};
    kiln_status st = resolve(a, path, &d, message, message_size);
    if (st == KILN_OK && d.exists && !S_ISREG(d.st.st_mode)) {
        first_error(message, message_size, "cannot write '%s': it is %s, not a regular file; nothing was written",
                    path, kiln_file_kind_name(d.st.st_mode));
        st = KILN_ERROR_IO;
    }
    if (st != KILN_OK) {
        kiln_free(a, d.path);
        return st;
    }
    size_t dest_len = strlen(d.path);
    char *tmp = kiln_alloc(a, dest_len + sizeof TEMP_SUFFIX, 1);
    if (!tmp) {
        first_error(message, message_size, "cannot write '%s': out of memory", path);
        kiln_free(a, d.path);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    memcpy(tmp, d.path, dest_len);
    memcpy(tmp + dest_len, TEMP_SUFFIX, sizeof TEMP_SUFFIX);
    int fd = create_temp(io, tmp, dest_len);
    if (fd < 0) {
        first_error(message, message_size, "cannot create a temporary file next to '%s': %s", path, strerror(errno));
        st = KILN_ERROR_IO;
    } else {
        int err = 0, close_err = 0;
        const char *failed = fill_and_rename(io, fd, &d, tmp, pieces, n_pieces, &err, &close_err);
        if (failed) {
            st = KILN_ERROR_IO;
            if (strcmp(failed, "rename") == 0)
                first_error(message, message_size, "cannot write '%s': rename from '%s' failed: %s", path, tmp,
                            strerror(err));
            else
                first_error(message, message_size, "cannot write '%s': %s of '%s' failed: %s", path, failed, tmp,
                            strerror(err));
            if (close_err)
                also(message, message_size, "could not close temporary file %s: %s", tmp, strerror(close_err));
            if (io->remove(io->ctx, tmp) != 0)
                also(message, message_size, "could not remove temporary file %s: %s", tmp, strerror(errno));
        }
    }
    kiln_free(a, tmp);
    kiln_free(a, d.path);
    return st;
}

bool kiln_file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
