/* fault_io.h — file operations that fail on purpose, for every user of the atomic writer
 * (core/file_write.h): the compile path, `kiln scratch-size --write` and the .npy writer.
 *
 * Layer: tests. Header-only (static functions), like unit_expect.h. fault_io_each_op runs a
 * write once cleanly to count its file operations (create, chmod, each write, flush, close,
 * rename), then again failing operation m for every m — a failing write first writes part of its
 * bytes, as a full disk does — and checks each time: KILN_ERROR_IO, a one-line message naming
 * the destination, the destination keeps its previous content (or stays absent), no temporary
 * file is left in the directory. With the removal of the temporary file failing too, the
 * original error must still lead the message and "; also: could not remove temporary file X"
 * follow it. Both with and without a previous file (the writer then also keeps its mode: one
 * more operation).
 */
#ifndef KILN_TESTS_UNIT_FAULT_IO_H
#define KILN_TESTS_UNIT_FAULT_IO_H

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "core/file_write.h"
#include "writer_support.h"

typedef struct fault_io {
    size_t n_ops;                   /* create, chmod, write, flush, close, rename calls so far */
    size_t fail_at;                 /* 1-based; 0 = never */
    bool fail_remove;               /* every removal of the temporary file fails */
    size_t n_failed;
    char temp[1024];                /* the temporary file created, if any */
} fault_io;

static bool fault_next_fails(fault_io *f)
{
    f->n_ops++;
    if (f->fail_at && f->n_ops == f->fail_at) {
        f->n_failed++;
        return true;
    }
    return false;
}

static int fault_create(void *ctx, const char *path, mode_t mode)
{
    fault_io *f = ctx;
    if (fault_next_fails(f)) {
        errno = EACCES;
        return -1;
    }
    int fd = kiln_file_io_posix()->create(NULL, path, mode);
    if (fd >= 0) snprintf(f->temp, sizeof f->temp, "%s", path);
    return fd;
}

static int fault_chmod(void *ctx, int fd, mode_t mode)
{
    fault_io *f = ctx;
    if (fault_next_fails(f)) {
        errno = EPERM;
        return -1;
    }
    return kiln_file_io_posix()->chmod(NULL, fd, mode);
}

static ssize_t fault_write(void *ctx, int fd, const void *data, size_t size)
{
    fault_io *f = ctx;
    if (fault_next_fails(f)) {
        /* A full disk: part of the bytes land, then the write fails. */
        if (size > 1) (void)!write(fd, data, size / 2);
        errno = ENOSPC;
        return -1;
    }
    /* Short writes on purpose, so the resume loop is on the path: at most 4 KiB a call. */
    return kiln_file_io_posix()->write(NULL, fd, data, size > 4096 ? 4096 : size);
}

static int fault_flush(void *ctx, int fd)
{
    fault_io *f = ctx;
    if (fault_next_fails(f)) {
        errno = EIO;
        return -1;
    }
    return kiln_file_io_posix()->flush(NULL, fd);
}

static int fault_close(void *ctx, int fd)
{
    fault_io *f = ctx;
    int rc = kiln_file_io_posix()->close(NULL, fd); /* the descriptor goes either way, as close(2) says */
    if (fault_next_fails(f)) {
        errno = EIO;
        return -1;
    }
    return rc;
}

static int fault_rename(void *ctx, const char *from, const char *to)
{
    fault_io *f = ctx;
    if (fault_next_fails(f)) {
        errno = EXDEV;
        return -1;
    }
    return kiln_file_io_posix()->rename(NULL, from, to);
}

static int fault_remove(void *ctx, const char *path)
{
    fault_io *f = ctx;
    if (f->fail_remove) {
        errno = EBUSY;
        return -1;
    }
    return kiln_file_io_posix()->remove(NULL, path);
}

static kiln_file_io fault_io_make(fault_io *f)
{
    memset(f, 0, sizeof *f);
    return (kiln_file_io){f, fault_create, fault_chmod, fault_write, fault_flush, fault_close, fault_rename,
                          fault_remove};
}

/* ---- the destination and its directory ------------------------------------------------------ */

typedef struct fault_target {
    const char *dir;                /* a directory holding only the destination */
    const char *path;               /* dir/name */
    const char *name;
} fault_target;

static const char fault_previous[] = "the previous complete file";

static void fault_set_previous(const fault_target *t, bool exists)
{
    remove(t->path);
    if (!exists) return;
    FILE *f = fopen(t->path, "wb");
    REQUIRE(f && fwrite(fault_previous, 1, sizeof fault_previous, f) == sizeof fault_previous && fclose(f) == 0);
}

/* Files in the directory other than the destination (temporary files left behind). */
static size_t fault_stray_files(const fault_target *t)
{
    DIR *d = opendir(t->dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, t->name)) n++;
    closedir(d);
    return n;
}

/* ---- the loop ------------------------------------------------------------------------------- */

/* One write of the destination through io; message gets the error line. */
typedef kiln_status (*fault_write_fn)(void *arg, const kiln_file_io *io, char *message, size_t message_size);

static void fault_report(const char *what, size_t m, const char *fmt, const char *detail)
{
    fprintf(stderr, "%s, file operation %zu: ", what, m);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    unit_failures++;
}

/* The clean write's operation count (the destination as `existed` says beforehand). */
static size_t fault_count_ops(const fault_target *t, bool existed, fault_write_fn fn, void *arg)
{
    fault_io f;
    kiln_file_io io = fault_io_make(&f);
    char message[1024] = "";
    fault_set_previous(t, existed);
    kiln_status st = fn(arg, &io, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "clean write of %s failed: %s\n", t->path, message);
    REQUIRE(st == KILN_OK && f.n_ops > 0);
    return f.n_ops;
}

static void fault_each_op_once(const char *what, const fault_target *t, bool existed, bool fail_remove,
                               fault_write_fn fn, void *arg)
{
    size_t clean_ops = fault_count_ops(t, existed, fn, arg);
    for (size_t m = 1; m <= clean_ops; m++) {
        fault_io f;
        kiln_file_io io = fault_io_make(&f);
        f.fail_at = m;
        f.fail_remove = fail_remove;
        char message[1024] = "";
        fault_set_previous(t, existed);
        kiln_status st = fn(arg, &io, message, sizeof message);
        unit_checks++;
        if (st != KILN_ERROR_IO || f.n_failed != 1) fault_report(what, m, "gave another status than IO: '%s'", message);
        if (!strstr(message, t->path) || strchr(message, '\n'))
            fault_report(what, m, "message does not name the destination on one line: '%s'", message);
        if (fail_remove && f.temp[0]) {
            /* The original error leads; the cleanup error follows it. */
            const char *also = strstr(message, "; also: could not remove temporary file ");
            if (!also || strncmp(message, "cannot write '", 14) != 0 || !strstr(also, f.temp))
                fault_report(what, m, "cleanup failure not appended to the original error: '%s'", message);
            remove(f.temp);
        }
        if (!writer_file_is(t->path, existed ? fault_previous : NULL, sizeof fault_previous))
            fault_report(what, m, "the destination changed%s", "");
        if (fault_stray_files(t)) fault_report(what, m, "a temporary file was left behind%s", "");
    }
    printf("%s: each of %zu file operations failed in turn (%s destination%s)\n", what, clean_ops,
           existed ? "existing" : "absent", fail_remove ? ", cleanup failing too" : "");
}

/* Every file operation of fn's write failed in turn, with and without a previous file, with and
   without the cleanup failing. */
static void fault_io_each_op(const char *what, const fault_target *t, fault_write_fn fn, void *arg)
{
    for (int existed = 0; existed < 2; existed++)
        for (int fail_remove = 0; fail_remove < 2; fail_remove++)
            fault_each_op_once(what, t, existed != 0, fail_remove != 0, fn, arg);
}

#endif
