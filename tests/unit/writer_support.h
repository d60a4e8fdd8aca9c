/* writer_support.h — models and helpers shared by the tests of what kiln writes
 * (test_file_write.c, test_cli_outputs.c, test_scratch_size.c, test_compile_spec.c).
 *
 * Layer: tests. Header-only (static functions), like unit_expect.h. Provides:
 *  - two_partition_model (two_partition_model.h);
 *  - writer_tool: the path of the `kiln` tool of the build this test belongs to;
 *  - writer_file_is / writer_file_mode / writer_write_text / writer_dir_entries /
 *    writer_remove_dir: small file-system probes.
 */
#ifndef KILN_TESTS_UNIT_WRITER_SUPPORT_H
#define KILN_TESTS_UNIT_WRITER_SUPPORT_H

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "two_partition_model.h"
#include "unit_expect.h"

#ifndef EXPECT_OK
#define EXPECT_OK(expr) EXPECT_STATUS(expr, KILN_OK)
#endif

/* The build's `kiln` tool: BUILD/kiln, next to the tests directory this test runs from. false
   (after saying so) when there is none. */
static inline bool writer_tool(char *tool, size_t size)
{
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = '\0';
    snprintf(tool, size, "%s/../kiln", self);
    if (access(tool, X_OK) == 0) return true;
    printf("SKIPPED: no kiln tool at %s\n", tool);
    return false;
}

/* Permission bits of path (after links), or -1. */
static inline int writer_file_mode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static inline void writer_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static inline void writer_write_bytes(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f && fwrite(data, 1, size, f) == size && fclose(f) == 0);
}

/* The file at path holds exactly `want` (want NULL: it does not exist). */
static inline bool writer_file_is(const char *path, const void *want, size_t want_size)
{
    size_t size = 0;
    uint8_t *got = unit_read_file(path, &size);
    bool same = want ? got && size == want_size && memcmp(got, want, size) == 0 : got == NULL;
    free(got);
    return same;
}

/* Entries of dir other than "." and "..". */
static inline size_t writer_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Removes dir and everything under it (files, links, special files, subdirectories). */
static inline void writer_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0) {
            writer_remove_dir(path);
            rmdir(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

#endif
