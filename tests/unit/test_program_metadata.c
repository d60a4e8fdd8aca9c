/* test_program_metadata.c — program metadata (format version 2, docs/format.md METADATA): the
 * builder's kiln_program_builder_add_metadata, the reader's checks of the section, the public
 * kiln_program_metadata_count / _key / _get, version 1 files (which have none) still opening,
 * and the compiler's side (kiln_ir_graph_add_metadata and the union over methods that compile.c
 * writes, kiln_compile_metadata_union).
 *
 * Layer: tests (format, runtime, compiler). Damaged copies are patched in place at the fields
 * the test names, so each refusal is the one rule it is about; every truncation and flipped byte
 * must give a status, never a crash (run under ASan/UBSan).
 */
#include <dirent.h>
#include <libgen.h>
#include <string.h>

#include "compiler/compile_metadata.h"
#include "core/alloc.h"
#include "format/program_reader.h"
#include "format/program_writer.h"
#include "kiln/compiler.h"
#include "unit_expect.h"

typedef struct entry {
    const char *key;
    const void *data;
    size_t size;
} entry;

static const char gguf_bytes[] = "GGUF\3\0\0\0 pretend";
static const uint8_t zeros[100];

/* Added out of order; "alpha" and "alpha.copy" hold equal bytes (one segment), "empty" none. */
static const entry entries[] = {
    {"zeta", "last key", 8},
    {"llm.gguf", gguf_bytes, sizeof gguf_bytes},
    {"alpha", zeros, sizeof zeros},
    {"empty", "", 0},
    {"alpha.copy", zeros, sizeof zeros},
};
enum { N_ENTRIES = sizeof entries / sizeof entries[0] };
static const char *const sorted[N_ENTRIES] = {"alpha", "alpha.copy", "empty", "llm.gguf", "zeta"};

static void *build(const kiln_allocator *a, size_t n, size_t *size, kiln_status *status)
{
    kiln_program_builder *b;
    void *data = NULL;
    *size = 0;
    kiln_status st = kiln_program_builder_create(a, &b);
    for (size_t i = 0; i < n && st == KILN_OK; i++)
        st = kiln_program_builder_add_metadata(b, entries[i].key, entries[i].data, entries[i].size);
    if (st == KILN_OK) st = kiln_program_builder_finish(b, &data, size);
    kiln_program_builder_destroy(b);
    *status = st;
    return data;
}

static const kiln_fmt_section *find_section(const uint8_t *file, uint32_t kind)
{
    const kiln_fmt_header *h = (const kiln_fmt_header *)file;
    const kiln_fmt_section *s = (const kiln_fmt_section *)(file + h->sections_offset);
    for (uint32_t i = 0; i < h->n_sections; i++)
        if (s[i].kind == kind) return &s[i];
    return NULL;
}

static kiln_status open_status(const void *data, size_t size)
{
    void *copy;
    REQUIRE(posix_memalign(&copy, 64, size ? size : 1) == 0);
    memcpy(copy, data, size);
    kiln_program *p = NULL;
    kiln_status st = kiln_program_open_memory(copy, size, &p);
    if (st == KILN_OK) {
        /* whatever opened must answer every query within what it said */
        for (size_t i = 0; i < kiln_program_metadata_count(p); i++) {
            const void *v;
            size_t n;
            const char *key = kiln_program_metadata_key(p, i);
            EXPECT(key && key[0] && kiln_program_metadata_get(p, key, &v, &n) == KILN_OK);
        }
        kiln_program_close(p);
    } else {
        EXPECT(p == NULL);
    }
    free(copy);
    return st;
}

static void test_round_trip(void)
{
    unit_section("builder -> reader -> public API: sorted keys, shared segments, copies at open");
    size_t size;
    kiln_status st;
    uint8_t *data = build(kiln_allocator_default(), N_ENTRIES, &size, &st);
    REQUIRE(st == KILN_OK);
    kiln_program_view v;
    EXPECT_STATUS(kiln_program_view_init(&v, data, size), KILN_OK);
    EXPECT(v.version == 2 && v.n_metadata == N_ENTRIES);
    EXPECT(v.n_segments == 4); /* the two equal values share one */
    for (size_t i = 0; i < v.n_metadata && i < N_ENTRIES; i++) {
        EXPECT(strcmp(kiln_view_string(&v, v.metadata[i].key), sorted[i]) == 0);
        EXPECT(v.segments[v.metadata[i].segment].offset % 64 == 0);
        EXPECT(kiln_view_metadata_find(&v, sorted[i]) == (int64_t)i);
    }
    EXPECT(kiln_view_metadata_find(&v, "alph") == -1 && kiln_view_metadata_find(&v, "zz") == -1);

    kiln_program *p;
    REQUIRE(kiln_program_open_memory(data, size, &p) == KILN_OK);
    EXPECT(kiln_program_metadata_count(p) == N_ENTRIES);
    for (size_t i = 0; i < N_ENTRIES; i++) {
        const char *key = kiln_program_metadata_key(p, i);
        EXPECT(key && strcmp(key, sorted[i]) == 0);
    }
    EXPECT(kiln_program_metadata_key(p, N_ENTRIES) == NULL);
    for (size_t i = 0; i < N_ENTRIES; i++) {
        const void *value = NULL;
        size_t n = 99;
        EXPECT_STATUS(kiln_program_metadata_get(p, entries[i].key, &value, &n), KILN_OK);
        EXPECT(value && (uintptr_t)value % 64 == 0 && n == entries[i].size &&
               memcmp(value, entries[i].data, n) == 0);
    }
    /* The values are kiln's copies: rewriting the bytes the program was opened from (a file
       changed in place) does not change what a caller parsed. */
    const void *gguf;
    size_t gguf_size;
    REQUIRE(kiln_program_metadata_get(p, "llm.gguf", &gguf, &gguf_size) == KILN_OK);
    const kiln_fmt_segment *seg = &v.segments[v.metadata[3].segment];
    EXPECT(gguf != data + seg->offset);
    memset(data + seg->offset, 'X', (size_t)seg->size);
    EXPECT(memcmp(gguf, gguf_bytes, sizeof gguf_bytes) == 0);

    const void *value = (const void *)1;
    size_t n = 5;
    EXPECT_STATUS(kiln_program_metadata_get(p, "missing", &value, &n), KILN_ERROR_NOT_FOUND);
    EXPECT(value == NULL && n == 0);
    EXPECT_STATUS(kiln_program_metadata_get(p, "", &value, &n), KILN_ERROR_NOT_FOUND);
    EXPECT_STATUS(kiln_program_metadata_get(p, NULL, &value, &n), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_metadata_get(p, "zeta", NULL, &n), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_metadata_get(p, "zeta", &value, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_metadata_get(NULL, "zeta", &value, &n), KILN_ERROR_INVALID_ARGUMENT);
    kiln_program_close(p);
    /* a closed program's handle is stale */
    EXPECT(kiln_program_metadata_count(p) == 0 && kiln_program_metadata_key(p, 0) == NULL);
    EXPECT_STATUS(kiln_program_metadata_get(p, "zeta", &value, &n), KILN_ERROR_STALE_HANDLE);
    kiln_free(kiln_allocator_default(), data);

    unit_section("builder refusals");
    kiln_program_builder *b;
    REQUIRE(kiln_program_builder_create(kiln_allocator_default(), &b) == KILN_OK);
    EXPECT_STATUS(kiln_program_builder_add_metadata(b, "k", "v", 1), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_add_metadata(b, "k", "v", 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_builder_add_metadata(b, "k", "w", 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_builder_add_metadata(b, "", "v", 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_builder_add_metadata(b, NULL, "v", 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_builder_add_metadata(b, "n", NULL, 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_builder_add_metadata(b, "n", NULL, 0), KILN_OK);
    kiln_program_builder_destroy(b);

    unit_section("builder allocation failures");
    for (size_t k = 1; k < 40; k++) {
        unit_alloc u;
        kiln_allocator a = unit_alloc_make(&u);
        u.fail_at = k;
        void *out = build(&a, N_ENTRIES, &size, &st);
        EXPECT(st == KILN_OK || st == KILN_ERROR_OUT_OF_MEMORY);
        if (st == KILN_OK) {
            EXPECT(open_status(out, size) == KILN_OK);
            kiln_free(&a, out);
        }
        EXPECT(u.live_blocks == 0);
    }
}

/* A program without metadata is written as version 2 with the eight version 1 sections, so it
   is a version 1 file but for the version number: set back to 1, it still opens. */
static void test_without_metadata(void)
{
    unit_section("no metadata: eight sections, version 2; the same bytes as version 1 open too");
    size_t size;
    kiln_status st;
    uint8_t *data = build(kiln_allocator_default(), 0, &size, &st);
    REQUIRE(st == KILN_OK);
    kiln_fmt_header *h = (kiln_fmt_header *)data;
    EXPECT(h->version == 2 && h->n_sections == 8 && find_section(data, KILN_SECTION_METADATA) == NULL);
    EXPECT_STATUS(open_status(data, size), KILN_OK);
    h->version = 1;
    EXPECT_STATUS(open_status(data, size), KILN_OK);
    h->version = 3;
    EXPECT_STATUS(open_status(data, size), KILN_ERROR_VERSION);
    kiln_free(kiln_allocator_default(), data);

    unit_section("a compiled ONNX model: version 2, no metadata");
    data = unit_compile_case("node/test_add", 1, &size);
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(data, size, &p) == KILN_OK);
    EXPECT(((kiln_fmt_header *)data)->version == 2 && kiln_program_metadata_count(p) == 0);
    EXPECT(kiln_program_metadata_key(p, 0) == NULL);
    const void *value;
    size_t n;
    EXPECT_STATUS(kiln_program_metadata_get(p, "llm.gguf", &value, &n), KILN_ERROR_NOT_FOUND);
    kiln_program_close(p);
    free(data);
}

/* Every committed version 1 program (the _v1 files of tests/golden and the program fuzz corpus's .kiln
   seeds, all written by version 1 builds) opens, as version 1, with no metadata. */
static void test_version1_files(void)
{
    unit_section("committed version 1 program files open, without metadata");
    char here[1024];
    snprintf(here, sizeof here, "%s", __FILE__);
    const char *root = dirname(here);
    const char *dirs[] = {"../golden", "../../fuzz/corpus/program"};
    size_t opened = 0;
    for (size_t d = 0; d < 2; d++) {
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/%s", root, dirs[d]);
        DIR *dp = opendir(dir);
        EXPECT(dp != NULL);
        if (!dp) continue;
        for (struct dirent *e; (e = readdir(dp));) {
            size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 5, ".kiln") != 0) continue;
            char path[1500];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            size_t size = 0;
            uint8_t *bytes = unit_read_file(path, &size);
            if (!bytes || size < sizeof(kiln_fmt_header) || ((kiln_fmt_header *)bytes)->version != 1) {
                free(bytes);
                continue;
            }
            kiln_program *p = NULL;
            kiln_status st = kiln_program_open(path, &p);
            if (st != KILN_OK) fprintf(stderr, "  %s: %s\n", path, kiln_status_name(st));
            EXPECT(st == KILN_OK);
            EXPECT(st != KILN_OK || kiln_program_metadata_count(p) == 0);
            opened += st == KILN_OK;
            kiln_program_close(p);
            free(bytes);
        }
        closedir(dp);
    }
    printf("  %zu version 1 files opened\n", opened);
    EXPECT(opened >= 10);
}

static void patch_open(const uint8_t *data, size_t size, const char *what, void (*patch)(uint8_t *file, void *arg),
                       void *arg, kiln_status want)
{
    uint8_t *copy = malloc(size);
    REQUIRE(copy);
    memcpy(copy, data, size);
    patch(copy, arg);
    kiln_status st = open_status(copy, size);
    if (st != want) fprintf(stderr, "  %s: %s, expected %s\n", what, kiln_status_name(st), kiln_status_name(want));
    EXPECT(st == want);
    free(copy);
}

static kiln_fmt_metadata *records(uint8_t *file)
{
    return (kiln_fmt_metadata *)(file + find_section(file, KILN_SECTION_METADATA)->offset);
}
static kiln_fmt_section *metadata_section(uint8_t *file)
{
    return (kiln_fmt_section *)find_section(file, KILN_SECTION_METADATA);
}
static void set_version(uint8_t *f, void *arg) { ((kiln_fmt_header *)f)->version = *(uint32_t *)arg; }
static void duplicate_key(uint8_t *f, void *arg) { records(f)[1].key = records(f)[0].key; }
static void swap_keys(uint8_t *f, void *arg)
{
    kiln_fmt_metadata t = records(f)[0];
    records(f)[0] = records(f)[1];
    records(f)[1] = t;
}
static void set_key(uint8_t *f, void *arg) { records(f)[2].key = *(uint32_t *)arg; }
static void set_segment(uint8_t *f, void *arg) { records(f)[0].segment = *(uint32_t *)arg; }
static void set_elem_size(uint8_t *f, void *arg) { metadata_section(f)->elem_size = *(uint32_t *)arg; }
static void set_count(uint8_t *f, void *arg) { metadata_section(f)->count = *(uint64_t *)arg; }
static void set_kind(uint8_t *f, void *arg) { metadata_section(f)->kind = *(uint32_t *)arg; }
static void value_past_end(uint8_t *f, void *arg)
{
    const kiln_fmt_section *s = find_section(f, KILN_SECTION_SEGMENTS);
    kiln_fmt_segment *segs = (kiln_fmt_segment *)(f + s->offset);
    segs[records(f)[3].segment].size = ((kiln_fmt_header *)f)->file_size;
}
static void nothing(uint8_t *f, void *arg) {}

static void test_refusals(void)
{
    unit_section("the reader refuses bad METADATA sections");
    size_t size;
    kiln_status st;
    uint8_t *data = build(kiln_allocator_default(), N_ENTRIES, &size, &st);
    REQUIRE(st == KILN_OK);
    kiln_program_view v;
    REQUIRE(kiln_program_view_init(&v, data, size) == KILN_OK);
    uint32_t u32;
    uint64_t u64;
    patch_open(data, size, "unchanged", nothing, NULL, KILN_OK);
    u32 = 1;
    patch_open(data, size, "a METADATA section in a version 1 file", set_version, &u32, KILN_ERROR_FORMAT);
    u32 = 3;
    patch_open(data, size, "version 3", set_version, &u32, KILN_ERROR_VERSION);
    patch_open(data, size, "a key twice", duplicate_key, NULL, KILN_ERROR_FORMAT);
    patch_open(data, size, "keys out of order", swap_keys, NULL, KILN_ERROR_FORMAT);
    u32 = 0;
    patch_open(data, size, "an empty key", set_key, &u32, KILN_ERROR_FORMAT);
    u32 = (uint32_t)v.n_strings;
    patch_open(data, size, "a key past the strings", set_key, &u32, KILN_ERROR_FORMAT);
    u32 = UINT32_MAX;
    patch_open(data, size, "key KILN_FMT_NONE", set_key, &u32, KILN_ERROR_FORMAT);
    u32 = (uint32_t)v.n_segments;
    patch_open(data, size, "a segment past the table", set_segment, &u32, KILN_ERROR_FORMAT);
    u32 = UINT32_MAX;
    patch_open(data, size, "segment KILN_FMT_NONE", set_segment, &u32, KILN_ERROR_FORMAT);
    u32 = 16;
    patch_open(data, size, "records of 16 bytes", set_elem_size, &u32, KILN_ERROR_FORMAT);
    u64 = UINT64_MAX / 4;
    patch_open(data, size, "a record count past the file", set_count, &u64, KILN_ERROR_FORMAT);
    u64 = 0;
    patch_open(data, size, "no records (an empty section is allowed)", set_count, &u64, KILN_OK);
    u32 = 10;
    patch_open(data, size, "an unknown section kind", set_kind, &u32, KILN_ERROR_FORMAT);
    u32 = KILN_SECTION_ATTRS;
    patch_open(data, size, "two ATTRS sections", set_kind, &u32, KILN_ERROR_FORMAT);
    patch_open(data, size, "a value past the end of the file", value_past_end, NULL, KILN_ERROR_FORMAT);

    unit_section("every truncation and flipped byte of a program with metadata");
    for (size_t n = 0; n < size; n++) {
        st = open_status(data, n);
        if (st != KILN_ERROR_FORMAT) fprintf(stderr, "  truncated to %zu bytes: %s\n", n, kiln_status_name(st));
        EXPECT(st == KILN_ERROR_FORMAT);
    }
    uint8_t *copy = malloc(size);
    REQUIRE(copy);
    for (size_t i = 0; i < size; i++) {
        memcpy(copy, data, size);
        copy[i] ^= 0xFF;
        st = open_status(copy, size);
        EXPECT(strcmp(kiln_status_name(st), "UNKNOWN") != 0);
        copy[i] = data[i] ^ 0x01;
        st = open_status(copy, size);
        EXPECT(strcmp(kiln_status_name(st), "UNKNOWN") != 0);
    }
    free(copy);
    kiln_free(kiln_allocator_default(), data);
}

/* The compiler's side: graphs carry metadata (copied into their arenas); the union over the
   methods writes a key once when the methods agree and refuses differing values, naming the key. */
static void test_compiler_union(void)
{
    unit_section("kiln_ir_graph_add_metadata and the union over methods");
    char message[512];
    kiln_ir_graph g[3];
    for (int i = 0; i < 3; i++) kiln_ir_graph_init(&g[i], kiln_allocator_default(), message, sizeof message);
    static const char shared[16] = "shared bytes"; /* 16 bytes, zero-padded */
    char value[16];
    memcpy(value, shared, sizeof value);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[0], "llm.gguf", value, sizeof value), KILN_OK);
    memset(value, 0, sizeof value); /* the graph holds its own copy */
    EXPECT(g[0].n_metadata == 1 && memcmp(g[0].metadata[0].data, "shared bytes", 13) == 0);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[0], "only.prefill", "p", 1), KILN_OK);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[0], "llm.gguf", "x", 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[0], "", "x", 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[0], NULL, "x", 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[0], "k", NULL, 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(g[0].n_metadata == 2);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[1], "llm.gguf", shared, sizeof shared), KILN_OK);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[1], "empty", NULL, 0), KILN_OK);
    EXPECT_STATUS(kiln_ir_graph_add_metadata(&g[2], "llm.gguf", "other bytes", 12), KILN_OK);
    const kiln_compile_method methods[3] = {{.name = "prefill"}, {.name = "decode"}, {.name = "third"}};

    kiln_program_builder *b;
    REQUIRE(kiln_program_builder_create(kiln_allocator_default(), &b) == KILN_OK);
    message[0] = '\0';
    EXPECT_STATUS(kiln_compile_metadata_union(g, methods, 2, b, message, sizeof message), KILN_OK);
    void *data;
    size_t size;
    REQUIRE(kiln_program_builder_finish(b, &data, &size) == KILN_OK);
    kiln_program_builder_destroy(b);
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(data, size, &p) == KILN_OK);
    EXPECT(kiln_program_metadata_count(p) == 3);
    const char *want[3] = {"empty", "llm.gguf", "only.prefill"};
    for (size_t i = 0; i < 3; i++) EXPECT(strcmp(kiln_program_metadata_key(p, i) ? kiln_program_metadata_key(p, i) : "", want[i]) == 0);
    const void *v;
    size_t n;
    EXPECT(kiln_program_metadata_get(p, "llm.gguf", &v, &n) == KILN_OK && n == 16 && memcmp(v, "shared bytes", 13) == 0);
    EXPECT(kiln_program_metadata_get(p, "empty", &v, &n) == KILN_OK && n == 0);
    kiln_program_close(p);
    kiln_free(kiln_allocator_default(), data);

    REQUIRE(kiln_program_builder_create(kiln_allocator_default(), &b) == KILN_OK);
    message[0] = '\0';
    EXPECT_STATUS(kiln_compile_metadata_union(g, methods, 3, b, message, sizeof message), KILN_ERROR_COMPILE_SPEC);
    printf("  %s\n", message);
    EXPECT(strstr(message, "'llm.gguf'") && strstr(message, "'prefill'") && strstr(message, "'third'"));
    kiln_program_builder_destroy(b);

    unit_section("allocation failures in kiln_ir_graph_add_metadata");
    for (size_t k = 1; k < 8; k++) {
        unit_alloc u;
        kiln_allocator a = unit_alloc_make(&u);
        u.fail_at = k;
        kiln_ir_graph h;
        kiln_ir_graph_init(&h, &a, message, sizeof message);
        kiln_status st = kiln_ir_graph_add_metadata(&h, "llm.gguf", zeros, sizeof zeros);
        EXPECT(st == KILN_OK || st == KILN_ERROR_OUT_OF_MEMORY);
        EXPECT(st != KILN_OK || (h.n_metadata == 1 && h.metadata[0].size == sizeof zeros));
        kiln_ir_graph_deinit(&h);
        EXPECT(u.live_blocks == 0);
    }
    for (int i = 0; i < 3; i++) kiln_ir_graph_deinit(&g[i]);
}

int main(void)
{
    test_round_trip();
    test_without_metadata();
    test_version1_files();
    test_refusals();
    test_compiler_union();
    return unit_finish("test_program_metadata");
}
