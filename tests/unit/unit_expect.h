/* unit_expect.h — check macros, a fault-injecting counting allocator and test-data helpers for
 * the unit tests in tests/unit/ (each a plain C program returning non-zero on failure).
 *
 * Layer: tests. Header-only (static functions) so each test stays one program with no extra
 * target. The check counters are file-scope state of each test program: tests are
 * single-threaded, and a counter threaded through every helper would only add noise.
 */
#ifndef KILN_TESTS_UNIT_EXPECT_H
#define KILN_TESTS_UNIT_EXPECT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/compiler.h"
#include "kiln/kiln.h"

#define UNIT_TESTDATA "/usr/share/libonnx-testdata/data"

static int unit_checks;
static int unit_failures;

#define EXPECT(cond)                                                                             \
    do {                                                                                         \
        unit_checks++;                                                                           \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                 \
            unit_failures++;                                                                     \
        }                                                                                        \
    } while (0)

#define EXPECT_STATUS(expr, want)                                                                \
    do {                                                                                         \
        kiln_status unit_got_ = (expr);                                                          \
        unit_checks++;                                                                           \
        if (unit_got_ != (want)) {                                                               \
            fprintf(stderr, "%s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__, #expr,      \
                    kiln_status_name(unit_got_), kiln_status_name(want));                        \
            unit_failures++;                                                                     \
        }                                                                                        \
    } while (0)

/* Stops the test: for setup steps without which the rest means nothing. */
#define REQUIRE(cond)                                                                            \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: required %s\n", __FILE__, __LINE__, #cond);                 \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static inline void unit_section(const char *what) { printf("checking %s\n", what); }

static inline int unit_finish(const char *test)
{
    printf("%s: %d checks, %d failed\n", test, unit_checks, unit_failures);
    return unit_failures ? 1 : 0;
}

/* ---- a counting allocator that can fail on purpose -----------------------------------------
 * Fails allocation number fail_at (1-based; 0 = never), and with `persistent` every one after
 * it too (SQLite's two OOM modes: a transient failure must be survivable, a persistent one must
 * unwind cleanly). Counts live blocks so a test can assert that nothing leaked; max_size caps
 * single requests. */
typedef struct unit_alloc {
    size_t n_allocs;        /* attempts so far, failed ones included */
    size_t n_failed;
    size_t live_blocks;
    size_t fail_at;
    bool persistent;
    size_t max_size;        /* nonzero: larger requests fail (a damaged program may ask for
                               terabytes, which ASan reports instead of returning NULL) */
} unit_alloc;

typedef struct unit_block_header {
    size_t offset;          /* from the malloc'd start to the user pointer */
    uint64_t canary;
} unit_block_header;

#define UNIT_CANARY 0x4B494C4E414C4C43ull

static void *unit_alloc_fn(void *ctx, size_t size, size_t alignment)
{
    unit_alloc *u = ctx;
    u->n_allocs++;
    if (u->fail_at && (u->n_allocs == u->fail_at || (u->persistent && u->n_allocs > u->fail_at))) {
        u->n_failed++;
        return NULL;
    }
    if (u->max_size && size > u->max_size) return NULL;
    if (alignment < sizeof(unit_block_header)) alignment = sizeof(unit_block_header);
    void *raw = NULL;
    if (size > SIZE_MAX - alignment || posix_memalign(&raw, alignment, alignment + size) != 0) return NULL;
    uint8_t *user = (uint8_t *)raw + alignment;
    unit_block_header *h = (unit_block_header *)(void *)(user - sizeof *h);
    h->offset = alignment;
    h->canary = UNIT_CANARY;
    u->live_blocks++;
    return user;
}

static void unit_free_fn(void *ctx, void *ptr)
{
    unit_alloc *u = ctx;
    if (!ptr) return;
    unit_block_header *h = (unit_block_header *)(void *)((uint8_t *)ptr - sizeof *h);
    if (h->canary != UNIT_CANARY) {
        fprintf(stderr, "unit allocator: free of a block it did not allocate (or a double free)\n");
        abort();
    }
    h->canary = 0;
    u->live_blocks--;
    free((uint8_t *)ptr - h->offset);
}

static inline kiln_allocator unit_alloc_make(unit_alloc *u)
{
    memset(u, 0, sizeof *u);
    kiln_allocator a = {u, unit_alloc_fn, unit_free_fn};
    return a;
}

/* ---- test data ------------------------------------------------------------------------------ */

/* The whole file at path (malloc'd, free()), or NULL. */
static inline uint8_t *unit_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *data = NULL;
    long n;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc((size_t)n + 1);
        if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *size = (size_t)n;
    }
    fclose(f);
    return data;
}

/* Compiles the ONNX test model `node_case` (e.g. "node/test_relu") into a program, with the
   default allocator; *size set. The bytes must be freed with free() (the default allocator is
   malloc-backed). Exits the test when the model is missing or does not compile. */
static inline void *unit_compile_case(const char *node_case, int no_delegate, size_t *size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/model.onnx", UNIT_TESTDATA, node_case);
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = no_delegate};
    kiln_compile_method m = {.name = "forward", .model_path = path};
    void *data = NULL;
    char message[256];
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &data, size, message, sizeof message);
    if (st != KILN_OK) {
        fprintf(stderr, "cannot compile %s: %s\n", path, message);
        exit(1);
    }
    return data;
}

#endif /* KILN_TESTS_UNIT_EXPECT_H */
