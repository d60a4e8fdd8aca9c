/* writer_support.h — models and helpers shared by the tests of what kiln writes
 * (test_file_write.c, test_cli_outputs.c, test_scratch_size.c, test_compile_spec.c).
 *
 * Layer: tests. Header-only (static functions), like unit_expect.h. Provides:
 *  - two_partition_model: an MLP whose two cpu partitions are cut apart by Softsign, an op the
 *    cpu backend does not take (it stays on the portable kernels), the first partition on wide
 *    rows and the second on narrow ones, so their scratch needs differ;
 *  - writer_tool: the path of the `kiln` tool of the build this test belongs to;
 *  - writer_file_is / writer_file_mode / writer_write_text / writer_dir_entries /
 *    writer_remove_dir: small file-system probes.
 */
#ifndef KILN_TESTS_UNIT_WRITER_SUPPORT_H
#define KILN_TESTS_UNIT_WRITER_SUPPORT_H

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx_builder.h"
#include "unit_expect.h"

#ifndef EXPECT_OK
#define EXPECT_OK(expr) EXPECT_STATUS(expr, KILN_OK)
#endif

static inline void writer_fill(float *w, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        w[i] = 0.25f * ((float)(seed >> 8) / 16777216.0f - 0.5f);
    }
}

/* x[rows,256] -> MatMul 256x256 -> Relu -> MatMul 256x64 -> Softsign -> MatMul 64x16 -> Relu ->
   MatMul 16x16 -> y[rows,16]: partition one keeps a [rows,256] intermediate, partition two a
   [rows,16] one. */
static inline void two_partition_model(int64_t rows, uint8_t **data, size_t *size)
{
    static float w1[256 * 256], w2[256 * 64], w3[64 * 16], w4[16 * 16];
    writer_fill(w1, 256 * 256, 1);
    writer_fill(w2, 256 * 64, 2);
    writer_fill(w3, 64 * 16, 3);
    writer_fill(w4, 16 * 16, 4);
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[2] = {rows, 256}, s1[2] = {256, 256}, s2[2] = {256, 64}, s3[2] = {64, 16}, s4[2] = {16, 16};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, xs);
    onnx_builder_initializer(b, "w1", ONNX_BUILDER_FLOAT, 2, s1, w1, sizeof w1);
    onnx_builder_initializer(b, "w2", ONNX_BUILDER_FLOAT, 2, s2, w2, sizeof w2);
    onnx_builder_initializer(b, "w3", ONNX_BUILDER_FLOAT, 2, s3, w3, sizeof w3);
    onnx_builder_initializer(b, "w4", ONNX_BUILDER_FLOAT, 2, s4, w4, sizeof w4);
    onnx_builder_node(b, "MatMul", "x,w1", "a1");
    onnx_builder_node(b, "Relu", "a1", "a2");
    onnx_builder_node(b, "MatMul", "a2,w2", "a3");
    onnx_builder_node(b, "Softsign", "a3", "a4");
    onnx_builder_node(b, "MatMul", "a4,w3", "a5");
    onnx_builder_node(b, "Relu", "a5", "a6");
    onnx_builder_node(b, "MatMul", "a6,w4", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

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
