/* test_format.c — unit tests of the program file format: writer -> reader round trip, string
 * and segment deduplication, and the reader's and loader's refusal of damaged programs.
 *
 * Layer: tests (format, runtime). Programs are built with the writer API directly, so the tests
 * can say exactly what is wrong with each one: a truncated file, a flipped byte, a misaligned
 * pointer, a newer version, an arena plan whose live values overlap, shapes the kernel's infer()
 * disagrees with, values read before they are written. Every damaged program must give a
 * status (the documented one where there is one), never a crash; run under ASan/UBSan to make
 * "never a crash" mean "no invalid access".
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "format/program_reader.h"
#include "format/program_writer.h"
#include "kernels/portable/kernel.h"
#include "unit_expect.h"

/* ---- helpers -------------------------------------------------------------------------------- */

/* A 64-byte aligned copy of the first `size` bytes of data, at offset `shift` from alignment. */
static uint8_t *aligned_copy(const void *data, size_t size, size_t shift, void **storage)
{
    REQUIRE(posix_memalign(storage, 64, size + shift + 1) == 0);
    uint8_t *p = (uint8_t *)*storage + shift;
    if (size) memcpy(p, data, size);
    return p;
}

static kiln_status open_copy(const void *data, size_t size, size_t shift)
{
    void *storage;
    uint8_t *p = aligned_copy(data, size, shift, &storage);
    kiln_program *program = NULL;
    kiln_status st = kiln_program_open_memory(p, size, &program);
    if (st == KILN_OK) kiln_program_close(program);
    else EXPECT(program == NULL);
    free(storage);
    return st;
}

/* Loads every method of program, sets zero inputs, executes; returns the first failure. The
   module allocator refuses requests above 64 MiB: a flipped arena size may ask for terabytes,
   which must end as OUT_OF_MEMORY (ASan would abort on the attempt), and its blocks are
   counted to prove that failed loads leak nothing. */
static kiln_status load_and_run_all(kiln_program *program)
{
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    u.max_size = (size_t)64 << 20;
    kiln_module_options opt = {.struct_size = sizeof opt, .allocator = &a, .num_threads = 1};
    kiln_module *m;
    kiln_status st = kiln_module_create(program, &opt, &m);
    if (st != KILN_OK) return st;
    for (size_t i = 0; i < kiln_program_method_count(program) && st == KILN_OK; i++) {
        kiln_method *h;
        st = kiln_method_load(m, kiln_program_method_name(program, i), &h);
        if (st != KILN_OK) break;
        for (size_t k = 0; k < kiln_method_input_count(h) && st == KILN_OK; k++) {
            kiln_tensor t;
            st = kiln_method_input_info(h, k, &t);
            int64_t n = kiln_tensor_numel(&t);
            if (st != KILN_OK || n < 0 || n > (1 << 20)) break;
            t.data = calloc((size_t)n + 1, kiln_dtype_size(t.dtype) + 1);
            st = kiln_method_set_input(h, k, &t);
            free(t.data);
        }
        if (st == KILN_OK) st = kiln_method_execute(h);
        kiln_method_unload(h);
    }
    kiln_module_destroy(m);
    EXPECT(u.live_blocks == 0);
    return st;
}

/* Opens (and, when it opens, loads and runs) a damaged copy; the status must be a known one. */
static void open_damaged(const uint8_t *data, size_t size)
{
    void *storage;
    uint8_t *p = aligned_copy(data, size, 0, &storage);
    kiln_program *program = NULL;
    kiln_status st = kiln_program_open_memory(p, size, &program);
    EXPECT(strcmp(kiln_status_name(st), "UNKNOWN") != 0);
    if (st == KILN_OK) {
        st = load_and_run_all(program);
        EXPECT(strcmp(kiln_status_name(st), "UNKNOWN") != 0);
        kiln_program_close(program);
    }
    free(storage);
}

/* ---- a one-instruction program built by hand ------------------------------------------------ */

/* What to put in the hand-built program: x (ARENA, f32 [4], method input) -> op -> y (method
   output); each field a way to get the plan wrong. */
typedef struct relu_spec {
    const char *op;             /* "Relu" */
    uint64_t x_offset, y_offset, arena_size;
    int64_t y_dim;              /* declared shape of y: [y_dim] */
    uint8_t y_dtype;
    int32_t out_arg;            /* value the instruction writes: 1 = y */
    uint32_t n_values;          /* 3 adds an extra, never-written value z */
    int32_t method_output;      /* method output value */
    uint8_t x_storage;
} relu_spec;

static relu_spec relu_default(void)
{
    relu_spec s = {"Relu", 0, 64, 128, 4, KILN_DTYPE_F32, 1, 2, 1, KILN_STORAGE_ARENA};
    return s;
}

static uint32_t add_string(kiln_program_builder *b, const char *s)
{
    uint32_t off;
    REQUIRE(kiln_program_builder_string(b, s, strlen(s), &off) == KILN_OK);
    return off;
}

static void *build_relu(const relu_spec *spec, size_t *size)
{
    kiln_program_builder *b;
    REQUIRE(kiln_program_builder_create(kiln_allocator_default(), &b) == KILN_OK);
    static const float zeros[8]; /* room for x at an offset */
    const int64_t x_dims[1] = {4}, y_dims[1] = {spec->y_dim};
    uint32_t x_shape, y_shape, seg;
    REQUIRE(kiln_program_builder_i64(b, x_dims, 1, &x_shape) == KILN_OK);
    REQUIRE(kiln_program_builder_i64(b, y_dims, 1, &y_shape) == KILN_OK);
    REQUIRE(kiln_program_builder_segment(b, zeros, sizeof zeros, &seg) == KILN_OK);
    kiln_fmt_value x = {.name = add_string(b, "x"), .dtype = KILN_DTYPE_F32, .rank = 1, .storage = spec->x_storage,
                        .shape = x_shape, .segment = KILN_FMT_NONE, .offset = spec->x_offset, .size = 16};
    if (spec->x_storage == KILN_STORAGE_CONST) x.segment = seg;
    kiln_fmt_value y = {.name = add_string(b, "y"), .dtype = spec->y_dtype, .rank = 1, .storage = KILN_STORAGE_ARENA,
                        .shape = y_shape, .segment = KILN_FMT_NONE, .offset = spec->y_offset,
                        .size = (uint64_t)spec->y_dim * kiln_dtype_size((kiln_dtype)spec->y_dtype)};
    kiln_fmt_value z = y;
    z.name = add_string(b, "z");
    z.offset = 128;
    z.dtype = KILN_DTYPE_F32;
    z.size = 16;
    z.shape = x_shape;
    kiln_fmt_method m = {.name = add_string(b, "forward"), .first_value = kiln_program_builder_n_values(b),
                         .n_values = spec->n_values, .first_instr = kiln_program_builder_n_instrs(b), .n_instrs = 1,
                         .n_inputs = 1, .n_outputs = 1, .arena_size = spec->arena_size};
    REQUIRE(kiln_program_builder_value(b, &x, NULL) == KILN_OK);
    REQUIRE(kiln_program_builder_value(b, &y, NULL) == KILN_OK);
    if (spec->n_values > 2) REQUIRE(kiln_program_builder_value(b, &z, NULL) == KILN_OK);
    const int32_t args[2] = {0, spec->out_arg}, in_list[1] = {0}, out_list[1] = {spec->method_output};
    kiln_fmt_instr in = {.kind = KILN_INSTR_KERNEL, .op = add_string(b, spec->op), .name = add_string(b, "relu0"),
                         .opset = 14, .first_attr = kiln_program_builder_n_attrs(b), .n_inputs = 1, .n_outputs = 1,
                         .segment = KILN_FMT_NONE};
    REQUIRE(kiln_program_builder_i32(b, args, 2, &in.args) == KILN_OK);
    REQUIRE(kiln_program_builder_i32(b, in_list, 1, &m.inputs) == KILN_OK);
    REQUIRE(kiln_program_builder_i32(b, out_list, 1, &m.outputs) == KILN_OK);
    REQUIRE(kiln_program_builder_instr(b, &in, NULL) == KILN_OK);
    REQUIRE(kiln_program_builder_method(b, &m, NULL) == KILN_OK);
    void *data;
    REQUIRE(kiln_program_builder_finish(b, &data, size) == KILN_OK);
    kiln_program_builder_destroy(b);
    return data;
}

/* Open the spec's program and load its method; returns the load status (open must succeed
   unless `open_status` says otherwise). */
static kiln_status load_relu(const relu_spec *spec, kiln_status open_status)
{
    size_t size;
    void *data = build_relu(spec, &size);
    kiln_program *p;
    kiln_status st = kiln_program_open_memory(data, size, &p);
    EXPECT_STATUS(st, open_status);
    if (st == KILN_OK) {
        kiln_module *m;
        REQUIRE(kiln_module_create(p, NULL, &m) == KILN_OK);
        kiln_method *h = NULL;
        st = kiln_method_load(m, "forward", &h);
        if (st == KILN_OK) {
            const float x[4] = {-1, 2, -3, 4};
            kiln_tensor t = {KILN_DTYPE_F32, 1, {4}, (void *)x};
            kiln_tensor y;
            EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_OK);
            EXPECT_STATUS(kiln_method_execute(h), KILN_OK);
            EXPECT_STATUS(kiln_method_get_output(h, 0, &y), KILN_OK);
            const float *yd = y.data;
            EXPECT(yd && yd[0] == 0 && yd[1] == 2 && yd[2] == 0 && yd[3] == 4);
        } else {
            EXPECT(h == NULL);
        }
        kiln_module_destroy(m);
        kiln_program_close(p);
    }
    kiln_free(kiln_allocator_default(), data);
    return st;
}

static void test_load_verification(void)
{
    unit_section("hand-built programs: the loader verifies plan, shapes and dataflow");
    relu_spec s = relu_default();
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_OK);            /* the control: a sound plan */

    s = relu_default();
    s.y_offset = 0;                                           /* y overlaps x, both live at instr 0 */
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_FORMAT);

    s = relu_default();
    s.arena_size = 64;
    s.y_offset = 0;
    s.x_offset = 0;                                           /* same, in an arena just big enough */
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_FORMAT);

    s = relu_default();
    s.y_offset = 128;                                         /* past arena_size: the reader refuses */
    EXPECT_STATUS(load_relu(&s, KILN_ERROR_FORMAT), KILN_ERROR_FORMAT);

    s = relu_default();
    s.y_offset = 32;                                          /* not 64-aligned */
    EXPECT_STATUS(load_relu(&s, KILN_ERROR_FORMAT), KILN_ERROR_FORMAT);

    s = relu_default();
    s.y_dim = 5;                                              /* infer() says [4] */
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_FORMAT);

    s = relu_default();
    s.y_dtype = KILN_DTYPE_I32;                               /* infer() says f32 */
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_FORMAT);

    s = relu_default();
    s.n_values = 3;
    s.method_output = 2;                                      /* z is returned but never written */
    s.arena_size = 192;
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_FORMAT);

    s = relu_default();
    s.out_arg = 0;                                            /* the instruction writes its input */
    s.method_output = 0;
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_FORMAT);

    s = relu_default();
    s.x_storage = KILN_STORAGE_CONST;                         /* a method input must be ARENA */
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_FORMAT);
    s.x_offset = 4;                         /* a constant off the 64-byte alignment: refused at open */
    EXPECT_STATUS(load_relu(&s, KILN_ERROR_FORMAT), KILN_ERROR_FORMAT);

    s = relu_default();
    s.op = "NoSuchOp";
    EXPECT_STATUS(load_relu(&s, KILN_OK), KILN_ERROR_NOT_SUPPORTED);
}

/* ---- round trip ----------------------------------------------------------------------------- */

static void test_round_trip(void)
{
    unit_section("writer -> reader round trip, string and segment deduplication");
    kiln_program_builder *b;
    REQUIRE(kiln_program_builder_create(kiln_allocator_default(), &b) == KILN_OK);

    uint32_t s_relu = add_string(b, "Relu"), s_relu2 = add_string(b, "Relu"), s_other = add_string(b, "Add");
    EXPECT(s_relu == s_relu2 && s_relu != s_other && s_relu != 0);
    EXPECT(add_string(b, "") == 0);                        /* offset 0 is the empty string */
    uint32_t s_nul1, s_nul2;                               /* bytes with NULs are never merged */
    EXPECT_STATUS(kiln_program_builder_string(b, "a\0b", 3, &s_nul1), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_string(b, "a\0b", 3, &s_nul2), KILN_OK);
    EXPECT(s_nul1 != s_nul2);

    static uint8_t seg_a[200], seg_b[200], seg_a_copy[200];
    for (int i = 0; i < 200; i++) seg_a[i] = seg_a_copy[i] = (uint8_t)i, seg_b[i] = (uint8_t)(i ^ 0x55);
    uint32_t ia, ib, ia2, ie, ie2, ipre;
    EXPECT_STATUS(kiln_program_builder_segment(b, seg_a, sizeof seg_a, &ia), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_segment(b, seg_b, sizeof seg_b, &ib), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_segment(b, seg_a_copy, sizeof seg_a_copy, &ia2), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_segment(b, seg_a, 100, &ipre), KILN_OK);  /* a prefix is new content */
    EXPECT_STATUS(kiln_program_builder_segment(b, NULL, 0, &ie), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_segment(b, seg_b, 0, &ie2), KILN_OK);
    EXPECT(ia == 0 && ib == 1 && ia2 == ia && ipre == 2 && ie == 3 && ie2 == ie);

    const int64_t dims[3] = {2, 5, 10}, ints[3] = {-1, 0, INT64_MAX};
    const int32_t floats[2] = {0x3F800000, 0x40000000};
    uint32_t shape, ints_ref, floats_ref, str_ref, strs_ref;
    EXPECT_STATUS(kiln_program_builder_i64(b, dims, 3, &shape), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_i64(b, ints, 3, &ints_ref), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_i32(b, floats, 2, &floats_ref), KILN_OK);
    EXPECT(shape == 0 && ints_ref == 3 && floats_ref == 0);
    EXPECT_STATUS(kiln_program_builder_string(b, "nearest", 7, &str_ref), KILN_OK);
    EXPECT_STATUS(kiln_program_builder_string(b, "ab\0cd", 5, &strs_ref), KILN_OK);
    kiln_fmt_attr attrs[] = {
        {.name = add_string(b, "axis"), .type = KILN_ATTR_INT, .i = -2},
        {.name = add_string(b, "alpha"), .type = KILN_ATTR_FLOAT, .i = 0x3E4CCCCD},
        {.name = add_string(b, "perm"), .type = KILN_ATTR_INTS, .count = 3, .ref = ints_ref},
        {.name = add_string(b, "scales"), .type = KILN_ATTR_FLOATS, .count = 2, .ref = floats_ref},
        {.name = add_string(b, "mode"), .type = KILN_ATTR_STRING, .count = 7, .ref = str_ref},
        {.name = add_string(b, "names"), .type = KILN_ATTR_STRINGS, .count = 2, .ref = strs_ref},
        {.name = add_string(b, "value"), .type = KILN_ATTR_TENSOR, .count = shape,
         .i = KILN_DTYPE_U8 | (2 << 8), .ref = ib},     /* u8 [2,5]: 10 of the 200 bytes */
    };
    enum { N_ATTRS = sizeof attrs / sizeof attrs[0] };
    for (size_t i = 0; i < N_ATTRS; i++) {
        uint32_t index;
        EXPECT_STATUS(kiln_program_builder_attr(b, &attrs[i], &index), KILN_OK);
        EXPECT(index == i);
    }
    kiln_fmt_value values[2] = {
        {.name = add_string(b, "w"), .dtype = KILN_DTYPE_U8, .rank = 3, .storage = KILN_STORAGE_CONST,
         .shape = shape, .segment = ia, .offset = 0, .size = 100},
        {.name = add_string(b, "d"), .dtype = KILN_DTYPE_F32, .storage = KILN_STORAGE_DYNAMIC,
         .segment = KILN_FMT_NONE},
    };
    for (size_t i = 0; i < 2; i++) EXPECT_STATUS(kiln_program_builder_value(b, &values[i], NULL), KILN_OK);
    EXPECT(kiln_program_builder_n_values(b) == 2 && kiln_program_builder_n_attrs(b) == N_ATTRS);
    const int32_t io[2] = {0, 1};
    uint32_t io_ref;
    EXPECT_STATUS(kiln_program_builder_i32(b, io, 2, &io_ref), KILN_OK);
    kiln_fmt_instr instr = {.kind = KILN_INSTR_KERNEL, .op = s_relu, .opset = 13, .first_attr = 0,
                            .n_attrs = N_ATTRS, .args = io_ref, .n_inputs = 1, .n_outputs = 1,
                            .segment = KILN_FMT_NONE, .scratch_size = 128};
    EXPECT_STATUS(kiln_program_builder_instr(b, &instr, NULL), KILN_OK);
    kiln_fmt_method methods[2] = {
        {.name = add_string(b, "first"), .n_values = 2, .n_instrs = 1, .outputs = io_ref, .n_outputs = 1,
         .arena_size = 0, .scratch_size = 128},
        {.name = add_string(b, "second"), .n_values = 1, .arena_size = 4096},
    };
    for (size_t i = 0; i < 2; i++) EXPECT_STATUS(kiln_program_builder_method(b, &methods[i], NULL), KILN_OK);

    void *data;
    size_t size;
    REQUIRE(kiln_program_builder_finish(b, &data, &size) == KILN_OK);
    kiln_program_builder_destroy(b);
    EXPECT((uintptr_t)data % 64 == 0 && size % 64 == 0);

    kiln_program_view v;
    EXPECT_STATUS(kiln_program_view_init(&v, data, size), KILN_OK);
    EXPECT(v.size == size && v.n_segments == 4 && v.n_attrs == N_ATTRS && v.n_values == 2 && v.n_instrs == 1 &&
           v.n_methods == 2 && v.n_i64 == 6 && v.n_i32 == 4);
    EXPECT(strcmp(kiln_view_string(&v, s_relu), "Relu") == 0 && strcmp(kiln_view_string(&v, s_other), "Add") == 0);
    EXPECT(memcmp(kiln_view_string(&v, s_nul2), "a\0b", 4) == 0);
    /* Segments: each distinct content once, aligned, hashed, bytes intact. */
    const void *seg_data[4] = {seg_a, seg_b, seg_a, NULL};
    const uint64_t seg_size[4] = {200, 200, 100, 0};
    uint64_t segment_bytes = 0;
    for (uint32_t i = 0; i < 4 && v.n_segments == 4; i++) {
        const kiln_fmt_segment *s = &v.segments[i];
        EXPECT(s->offset % 64 == 0 && s->size == seg_size[i]);
        EXPECT(s->size == 0 || memcmp(kiln_view_segment_data(&v, i), seg_data[i], s->size) == 0);
        EXPECT(s->hash == kiln_hash64(kiln_view_segment_data(&v, i), s->size, 0));
        segment_bytes += s->size;
    }
    EXPECT(segment_bytes == 500); /* seg_a stored once although added twice */
    for (size_t i = 0; i < N_ATTRS && v.n_attrs == N_ATTRS; i++) EXPECT(memcmp(&v.attrs[i], &attrs[i], sizeof attrs[i]) == 0);
    for (size_t i = 0; i < 2 && v.n_values == 2; i++) EXPECT(memcmp(&v.values[i], &values[i], sizeof values[i]) == 0);
    for (size_t i = 0; i < 2 && v.n_methods == 2; i++) EXPECT(memcmp(&v.methods[i], &methods[i], sizeof methods[i]) == 0);
    EXPECT(v.n_instrs == 1 && memcmp(&v.instrs[0], &instr, sizeof instr) == 0);
    EXPECT(v.n_i64 == 6 && memcmp(v.i64, dims, sizeof dims) == 0 && memcmp(v.i64 + 3, ints, sizeof ints) == 0);
    EXPECT(v.n_i32 == 4 && memcmp(v.i32, floats, sizeof floats) == 0 && memcmp(v.i32 + 2, io, sizeof io) == 0);
    /* A view of the same bytes through the public API. */
    kiln_program *p;
    EXPECT_STATUS(kiln_program_open_memory(data, size, &p), KILN_OK);
    EXPECT(kiln_program_method_count(p) == 2);
    EXPECT(strcmp(kiln_program_method_name(p, 0), "first") == 0 && strcmp(kiln_program_method_name(p, 1), "second") == 0);
    EXPECT(kiln_program_method_name(p, 2) == NULL);
    kiln_program_close(p);
    kiln_free(kiln_allocator_default(), data);

    /* Builder failures: every allocation failing at any point gives OUT_OF_MEMORY, no leak. */
    for (size_t n = 1; n < 64; n++) {
        unit_alloc u;
        kiln_allocator a = unit_alloc_make(&u);
        u.fail_at = n;
        kiln_status st = kiln_program_builder_create(&a, &b);
        if (st == KILN_OK) {
            uint32_t r;
            for (int k = 0; k < 40 && st == KILN_OK; k++) {
                char name[16];
                snprintf(name, sizeof name, "name%d", k);
                st = kiln_program_builder_string(b, name, strlen(name), &r);
                if (st == KILN_OK) st = kiln_program_builder_segment(b, seg_a, (size_t)k, &r);
                if (st == KILN_OK) st = kiln_program_builder_value(b, &values[0], &r);
            }
            if (st == KILN_OK) st = kiln_program_builder_finish(b, &data, &size);
            if (st == KILN_OK) kiln_free(&a, data);
            kiln_program_builder_destroy(b);
        }
        EXPECT(st == KILN_OK || st == KILN_ERROR_OUT_OF_MEMORY);
        EXPECT(u.live_blocks == 0);
    }
}

/* ---- damaged copies of a compiled program --------------------------------------------------- */

static void test_damage(const char *what, const uint8_t *data, size_t size)
{
    char title[160];
    snprintf(title, sizeof title, "%s (%zu bytes): truncation, alignment, version, flipped bytes", what, size);
    unit_section(title);
    EXPECT_STATUS(open_copy(data, size, 0), KILN_OK);
    for (size_t n = 0; n < size; n++) {
        kiln_status st = open_copy(data, n, 0);
        if (st != KILN_ERROR_FORMAT) fprintf(stderr, "  truncated to %zu bytes: %s\n", n, kiln_status_name(st));
        EXPECT(st == KILN_ERROR_FORMAT);
    }
    /* Trailing bytes: file_size no longer matches. */
    uint8_t *longer = calloc(1, size + 64);
    REQUIRE(longer);
    memcpy(longer, data, size);
    EXPECT_STATUS(open_copy(longer, size + 64, 0), KILN_ERROR_FORMAT);
    free(longer);

    EXPECT_STATUS(open_copy(data, size, 1), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(open_copy(data, size, 4), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(open_copy(data, size, 8), KILN_OK);       /* 8-byte alignment is enough */

    uint8_t *copy = malloc(size);
    REQUIRE(copy);
    const uint32_t versions[] = {KILN_FORMAT_VERSION + 1, 0, UINT32_MAX};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        memcpy(copy, data, size);
        memcpy(copy + offsetof(kiln_fmt_header, version), &versions[i], 4);
        EXPECT_STATUS(open_copy(copy, size, 0), KILN_ERROR_VERSION);
    }
    memcpy(copy, data, size);
    copy[0] = 'k';
    EXPECT_STATUS(open_copy(copy, size, 0), KILN_ERROR_FORMAT);

    /* Every byte, two ways: flip all bits and flip the lowest. The status may be OK (a harmless
       byte, e.g. padding or weights) or an error, never a crash. */
    for (size_t i = 0; i < size; i++) {
        memcpy(copy, data, size);
        copy[i] ^= 0xFF;
        open_damaged(copy, size);
        copy[i] = data[i] ^ 0x01;  /* counts and offsets off by one */
        open_damaged(copy, size);
    }
    free(copy);
}

/* ---- files ---------------------------------------------------------------------------------- */

static void test_files(const uint8_t *data, size_t size)
{
    unit_section("kiln_program_open on files: whole, truncated, empty, missing, a directory");
    char path[] = "/tmp/kiln_test_format_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, data, size) == (ssize_t)size);
    kiln_program *p = NULL;
    EXPECT_STATUS(kiln_program_open(path, &p), KILN_OK);
    EXPECT(p && kiln_program_method_count(p) == 1);
    kiln_program_close(p);
    REQUIRE(ftruncate(fd, (off_t)size - 1) == 0);
    EXPECT_STATUS(kiln_program_open(path, &p), KILN_ERROR_FORMAT);
    EXPECT(p == NULL);
    REQUIRE(ftruncate(fd, 0) == 0);
    EXPECT_STATUS(kiln_program_open(path, &p), KILN_ERROR_FORMAT);
    close(fd);
    unlink(path);
    EXPECT_STATUS(kiln_program_open(path, &p), KILN_ERROR_IO);
    EXPECT_STATUS(kiln_program_open("/tmp", &p), KILN_ERROR_IO);
    EXPECT_STATUS(kiln_program_open(NULL, &p), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_open(path, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_open_memory(NULL, 64, &p), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_open_memory(data, size, NULL), KILN_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    test_round_trip();
    test_load_verification();
    size_t size;
    uint8_t *portable = unit_compile_case("node/test_add", 1, &size);
    test_damage("node/test_add, portable kernels", portable, size);
    test_files(portable, size);
    free(portable);
    uint8_t *delegated = unit_compile_case("node/test_add", 0, &size);
    test_damage("node/test_add, delegated to the cpu backend", delegated, size);
    free(delegated);
    return unit_finish("test_format");
}
