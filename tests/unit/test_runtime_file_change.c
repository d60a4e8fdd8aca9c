/* test_runtime_file_change.c — program files that are not regular, or that change after
 * kiln_program_open (issue 12, items 5 and 6; the contract is in kiln.h, "Program files
 * changed after open").
 *
 * Layer: tests (runtime, public API only). Everything happens in a private mkdtemp folder.
 *  - a FIFO, a directory and (as root) a device node are refused with KILN_ERROR_IO, and
 *    never waited on: an alarm ends the test if open() blocks;
 *  - node/test_add, portable and delegated, opened from a file with a method loaded, then the
 *    file rewritten in place (what `cp new.kiln prog.kiln` does) with another valid program of
 *    a different shape, with garbage of the same size (with a new modification time, and with
 *    the old one put back so that kiln cannot notice), with a truncated copy and with nothing.
 *    Every load, set_input and execute afterwards returns an error or computes x + y correctly:
 *    no crash, no SIGBUS, no sanitizer report (the test runs clean under ASan+UBSan);
 *  - a program replaced by rename keeps working on the file it opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unit_expect.h"

#define N 60 /* elements of [3,4,5] */

static char dir[] = "/tmp/kiln_test_file_change_XXXXXX";

static void path_in_dir(char *out, size_t size, const char *name) { snprintf(out, size, "%s/%s", dir, name); }

/* Rewrites the file at path in place: same inode, truncated first, as cp does. */
static void rewrite(const char *path, const void *bytes, size_t size)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    REQUIRE(fd >= 0);
    REQUIRE(size == 0 || write(fd, bytes, size) == (ssize_t)size);
    REQUIRE(close(fd) == 0);
}

/* A new file written beside path and renamed over it, as kiln's writers do. */
static void replace_by_rename(const char *path, const void *bytes, size_t size)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0 && write(fd, bytes, size) == (ssize_t)size && close(fd) == 0);
    REQUIRE(rename(tmp, path) == 0);
}

static void set_mtime(const char *path, struct timespec when)
{
    struct timespec times[2] = {{0, UTIME_OMIT}, when};
    REQUIRE(utimensat(AT_FDCWD, path, times, 0) == 0);
}

static struct timespec mtime_of(const char *path)
{
    struct stat st;
    REQUIRE(stat(path, &st) == 0);
    return st.st_mtim;
}

/* x + y through h: KILN_OK only with the right sums; any error status is passed on. */
static kiln_status add_once(kiln_method *h, float seed)
{
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = seed + (float)i, y[i] = (float)(i % 5);
    kiln_tensor tx = {KILN_DTYPE_F32, 3, {3, 4, 5}, x}, ty = {KILN_DTYPE_F32, 3, {3, 4, 5}, y}, out;
    kiln_status st = kiln_method_set_input(h, 0, &tx);
    if (st == KILN_OK) st = kiln_method_set_input(h, 1, &ty);
    if (st == KILN_OK) st = kiln_method_execute(h);
    if (st == KILN_OK) st = kiln_method_get_output(h, 0, &out);
    if (st == KILN_OK && (out.dtype != KILN_DTYPE_F32 || out.rank != 3 || out.shape[2] != 5)) return KILN_ERROR_BACKEND;
    for (int i = 0; st == KILN_OK && i < N; i++)
        if (((const float *)out.data)[i] != x[i] + y[i]) return KILN_ERROR_BACKEND;
    return st;
}

static void test_not_regular(void)
{
    unit_section("FIFOs, directories and devices are refused without blocking");
    char path[512];
    kiln_program *p = (kiln_program *)(uintptr_t)1;
    path_in_dir(path, sizeof path, "fifo.kiln");
    REQUIRE(mkfifo(path, 0600) == 0);
    alarm(10); /* a regression blocks in open(): SIGALRM ends the test as a failure */
    EXPECT_STATUS(kiln_program_open(path, &p), KILN_ERROR_IO);
    alarm(0);
    EXPECT(p == NULL);
    unlink(path);
    EXPECT_STATUS(kiln_program_open(dir, &p), KILN_ERROR_IO);
    path_in_dir(path, sizeof path, "null.kiln");
    if (mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0) { /* a private /dev/null, root only */
        alarm(10);
        EXPECT_STATUS(kiln_program_open(path, &p), KILN_ERROR_IO);
        alarm(0);
        unlink(path);
    } else {
        printf("NOTE: no device node check (mknod: %s; needs root)\n", strerror(errno));
    }
}

typedef enum change {
    OTHER_PROGRAM,      /* a valid program of another shape and size */
    GARBAGE_NEW_TIME,   /* same size, new modification time */
    GARBAGE_OLD_TIME,   /* same size, the modification time of open put back: undetectable */
    TRUNCATED,          /* the first half */
    EMPTY,              /* zero bytes */
} change;

static const char *const change_names[] = {"another valid program", "garbage of the same size (new mtime)",
                                           "garbage of the same size (old mtime put back)", "a truncated copy",
                                           "a zero-length file"};

static void apply(change c, const char *path, const uint8_t *bytes, size_t size, const void *other, size_t other_size)
{
    struct timespec before = mtime_of(path);
    uint8_t *garbage = malloc(size);
    REQUIRE(garbage);
    for (size_t i = 0; i < size; i++) garbage[i] = (uint8_t)(i * 131u + 7u);
    switch (c) {
    case OTHER_PROGRAM: rewrite(path, other, other_size); break;
    case GARBAGE_NEW_TIME:
        rewrite(path, garbage, size);
        before.tv_sec += 2; /* as if the rewrite came a moment later: the clock tick may not have moved */
        set_mtime(path, before);
        break;
    case GARBAGE_OLD_TIME:
        rewrite(path, garbage, size);
        set_mtime(path, before);
        break;
    case TRUNCATED: rewrite(path, bytes, size / 2); break;
    case EMPTY: rewrite(path, bytes, 0); break;
    }
    free(garbage);
}

/* Writes bytes to the test's program.kiln (path returned), opens it and loads "forward". */
static void open_loaded(char *path, size_t path_size, const uint8_t *bytes, size_t size, kiln_program **p, kiln_module **m,
                        kiln_method **h)
{
    path_in_dir(path, path_size, "program.kiln");
    replace_by_rename(path, bytes, size);
    REQUIRE(kiln_program_open(path, p) == KILN_OK);
    REQUIRE(kiln_module_create(*p, NULL, m) == KILN_OK);
    REQUIRE(kiln_method_load(*m, "forward", h) == KILN_OK);
}

static void test_change(const char *what, change c, const uint8_t *bytes, size_t size, const void *other, size_t other_size)
{
    char line[160];
    snprintf(line, sizeof line, "%s: rewritten in place with %s", what, change_names[c]);
    unit_section(line);
    char path[512];
    kiln_program *p;
    kiln_module *m;
    kiln_method *h;
    open_loaded(path, sizeof path, bytes, size, &p, &m, &h);
    EXPECT_STATUS(add_once(h, 1.0f), KILN_OK);

    apply(c, path, bytes, size, other, other_size);
    bool detectable = c != GARBAGE_OLD_TIME;

    /* A new load: refused with the reason, or (undetectable) working from kiln's copies. */
    char message[512];
    kiln_method *h2 = NULL;
    kiln_status st = kiln_method_load_with_message(m, "forward", &h2, message, sizeof message);
    if (detectable) {
        EXPECT_STATUS(st, KILN_ERROR_IO);
        EXPECT(strstr(message, "program file ") && strstr(message, "changed since it was opened; reopen it"));
        EXPECT(strstr(message, path) != NULL);
    } else if (st == KILN_OK) {
        EXPECT_STATUS(add_once(h2, 2.0f), KILN_OK);
    } else {
        printf("  new load refused: %s\n", message);
    }
    /* The loaded method: inputs still go into kiln's memory; execute is refused or correct. */
    st = add_once(h, 3.0f);
    EXPECT_STATUS(st, detectable ? KILN_ERROR_IO : KILN_OK);
    float x[N] = {0};
    kiln_tensor t = {KILN_DTYPE_F32, 3, {3, 4, 5}, x};
    EXPECT_STATUS(kiln_method_set_input(h, 1, &t), KILN_OK);
    kiln_tensor info;
    EXPECT_STATUS(kiln_method_input_info(h, 0, &info), KILN_OK);
    EXPECT(info.rank == 3 && info.shape[0] == 3 && info.shape[1] == 4 && info.shape[2] == 5);
    /* A module forcing a target reads the context binaries, so the file is checked first. */
    kiln_module_options o = {.struct_size = sizeof o, .num_threads = 1, .target = "generic"};
    kiln_module *m2 = NULL;
    st = kiln_module_create_with_message(p, &o, &m2, message, sizeof message);
    if (detectable) EXPECT_STATUS(st, KILN_ERROR_IO);
    kiln_module_destroy(m2);
    kiln_method_unload(h2);
    kiln_module_destroy(m);
    kiln_program_close(p);
}

static void test_rename(const char *what, const uint8_t *bytes, size_t size, const void *other, size_t other_size)
{
    char line[160];
    snprintf(line, sizeof line, "%s: replaced by rename, the opened program keeps working", what);
    unit_section(line);
    char path[512];
    kiln_program *p;
    kiln_module *m;
    kiln_method *h;
    open_loaded(path, sizeof path, bytes, size, &p, &m, &h);
    replace_by_rename(path, other, other_size);
    EXPECT_STATUS(add_once(h, 4.0f), KILN_OK);
    kiln_method *h2 = NULL;
    EXPECT_STATUS(kiln_method_load(m, "forward", &h2), KILN_OK);
    if (h2) EXPECT_STATUS(add_once(h2, 5.0f), KILN_OK);
    unlink(path); /* removing the name changes nothing either */
    if (h2) EXPECT_STATUS(add_once(h2, 6.0f), KILN_OK);
    kiln_module_destroy(m);
    kiln_program_close(p);
}

static void test_program(const char *what, int no_delegate)
{
    size_t size, other_size;
    uint8_t *bytes = unit_compile_case("node/test_add", no_delegate, &size);
    void *other = unit_compile_case("node/test_gemm_default_no_bias", no_delegate, &other_size);
    REQUIRE(other_size != size);
    for (int c = OTHER_PROGRAM; c <= EMPTY; c++) test_change(what, (change)c, bytes, size, other, other_size);
    test_rename(what, bytes, size, other, other_size);
    free(bytes);
    free(other);
}

int main(void)
{
    REQUIRE(mkdtemp(dir) != NULL);
    alarm(600); /* nothing here may hang */
    test_not_regular();
    test_program("portable", 1);
    test_program("delegated", 0);
    char path[512];
    path_in_dir(path, sizeof path, "program.kiln");
    unlink(path);
    rmdir(dir);
    return unit_finish("test_runtime_file_change");
}
