/* test_gguf_reader.c — the GGUF reader (src/format/gguf): valid version 2 and 3 files with
 * every metadata type, nested arrays and every supported tensor type read back exactly; one
 * refusal per validation rule (docs/llm.md), each naming its byte offset; every truncation of a
 * valid file refused; every allocation failure survived without a leak.
 */
#include <dirent.h>
#include <inttypes.h>

#include "format/gguf/gguf_reader.h"
#include "gguf_builder.h"
#include "unit_expect.h"

static void check_valid(uint32_t version, uint32_t alignment)
{
    gguf_builder b = {0};
    gb_build_every_type(&b, version, alignment);
    unit_alloc ua;
    kiln_allocator a = unit_alloc_make(&ua);
    kiln_gguf *g = NULL;
    char msg[KILN_GGUF_MESSAGE_SIZE];
    EXPECT_STATUS(kiln_gguf_open(b.data, b.size, &a, &g, msg, sizeof msg), KILN_OK);
    REQUIRE(g);
    EXPECT(msg[0] == '\0');
    EXPECT(kiln_gguf_version(g) == version);
    EXPECT(kiln_gguf_alignment(g) == (alignment ? alignment : 32));
    EXPECT(kiln_gguf_data_offset(g) % kiln_gguf_alignment(g) == 0);
    EXPECT(kiln_gguf_n_kv(g) == 17u + (alignment ? 1 : 0));
    EXPECT(kiln_gguf_kv_at(g, 0) && kiln_gguf_kv_at(g, 0)->key_size == 4 && memcmp(kiln_gguf_kv_at(g, 0)->key, "k.u8", 4) == 0);
    EXPECT(kiln_gguf_kv_at(g, kiln_gguf_n_kv(g)) == NULL);

    int64_t i;
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
    bool flag;
    const char *s;
    size_t n;
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.u8", &i, msg, sizeof msg), KILN_OK); EXPECT(i == 200);
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.i8", &i, msg, sizeof msg), KILN_OK); EXPECT(i == -100);
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.u16", &i, msg, sizeof msg), KILN_OK); EXPECT(i == 60000);
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.i16", &i, msg, sizeof msg), KILN_OK); EXPECT(i == -30000);
    EXPECT_STATUS(kiln_gguf_get_u32(g, "k.u32", &u32, msg, sizeof msg), KILN_OK); EXPECT(u32 == 4000000000u);
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.i32", &i, msg, sizeof msg), KILN_OK); EXPECT(i == -2000000000);
    EXPECT_STATUS(kiln_gguf_value_i32(kiln_gguf_find_key(g, "k.i32"), &(int32_t){0}, NULL, 0), KILN_OK);
    EXPECT_STATUS(kiln_gguf_get_f32(g, "k.f32", &f, msg, sizeof msg), KILN_OK); EXPECT(f == 1.5f);
    EXPECT_STATUS(kiln_gguf_get_bool(g, "k.bool", &flag, msg, sizeof msg), KILN_OK); EXPECT(flag);
    EXPECT_STATUS(kiln_gguf_get_string(g, "k.string", &s, &n, msg, sizeof msg), KILN_OK);
    EXPECT(n == 6 && memcmp(s, "h\xc3\xa9llo", 6) == 0);
    EXPECT_STATUS(kiln_gguf_get_string(g, "k.empty_string", &s, &n, msg, sizeof msg), KILN_OK); EXPECT(n == 0);
    EXPECT_STATUS(kiln_gguf_value_u64(kiln_gguf_find_key(g, "k.u64"), &u64, NULL, 0), KILN_OK);
    EXPECT(u64 == UINT64_MAX);
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.i64", &i, msg, sizeof msg), KILN_OK); EXPECT(i == INT64_MIN);
    EXPECT_STATUS(kiln_gguf_value_f64(kiln_gguf_find_key(g, "k.f64"), &d, NULL, 0), KILN_OK); EXPECT(d == -2.25);

    /* Wrong types and missing keys fail cleanly and leave the output alone. */
    msg[0] = '\0';
    u32 = 12345;
    EXPECT_STATUS(kiln_gguf_get_u32(g, "k.f32", &u32, msg, sizeof msg), KILN_ERROR_MODEL);
    EXPECT(u32 == 12345 && strstr(msg, "k.f32") && strstr(msg, "f32") && strstr(msg, "expected u32"));
    msg[0] = '\0';
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.u64", &i, msg, sizeof msg), KILN_ERROR_MODEL);   /* > INT64_MAX */
    EXPECT_STATUS(kiln_gguf_get_int(g, "k.string", &i, NULL, 0), KILN_ERROR_MODEL);
    EXPECT_STATUS(kiln_gguf_get_bool(g, "k.u8", &flag, NULL, 0), KILN_ERROR_MODEL);
    EXPECT_STATUS(kiln_gguf_get_string(g, "k.arr_str", &s, &n, NULL, 0), KILN_ERROR_MODEL);
    msg[0] = '\0';
    EXPECT_STATUS(kiln_gguf_get_f32(g, "no.such.key", &f, msg, sizeof msg), KILN_ERROR_NOT_FOUND);
    EXPECT(strstr(msg, "no.such.key") != NULL);
    EXPECT(kiln_gguf_find_key(g, "k.u") == NULL && kiln_gguf_find_key(g, "k.u88") == NULL);

    /* Arrays: scalars, strings, nesting, empty, and wrong element types. */
    const kiln_gguf_value *arr;
    kiln_gguf_value e, e2, e3;
    EXPECT_STATUS(kiln_gguf_get_array(g, "k.arr_i16", KILN_GGUF_TYPE_I16, &arr, msg, sizeof msg), KILN_OK);
    EXPECT(arr->n == 3);
    EXPECT_STATUS(kiln_gguf_array_at(arr, 1, &e), KILN_OK);
    EXPECT_STATUS(kiln_gguf_value_int(&e, &i, NULL, 0), KILN_OK); EXPECT(i == -2);
    EXPECT_STATUS(kiln_gguf_array_at(arr, 3, &e), KILN_ERROR_INDEX_OUT_OF_RANGE);
    EXPECT_STATUS(kiln_gguf_array_at(kiln_gguf_find_key(g, "k.u8"), 0, &e), KILN_ERROR_MODEL);
    EXPECT_STATUS(kiln_gguf_get_array(g, "k.arr_i16", KILN_GGUF_TYPE_U16, &arr, NULL, 0), KILN_ERROR_MODEL);
    EXPECT_STATUS(kiln_gguf_get_array(g, "k.u8", KILN_GGUF_TYPE_U8, &arr, NULL, 0), KILN_ERROR_MODEL);
    EXPECT_STATUS(kiln_gguf_get_array(g, "k.arr_str", KILN_GGUF_TYPE_STRING, &arr, msg, sizeof msg), KILN_OK);
    EXPECT_STATUS(kiln_gguf_array_at(arr, 1, &e), KILN_OK);
    EXPECT_STATUS(kiln_gguf_value_string(&e, &s, &n, NULL, 0), KILN_OK); EXPECT(n == 2 && memcmp(s, "bc", 2) == 0);
    EXPECT_STATUS(kiln_gguf_get_array(g, "k.nested", KILN_GGUF_TYPE_ARRAY, &arr, msg, sizeof msg), KILN_OK);
    EXPECT(arr->n == 2);
    EXPECT_STATUS(kiln_gguf_array_at(arr, 0, &e), KILN_OK); EXPECT(e.elem_type == KILN_GGUF_TYPE_ARRAY && e.n == 2);
    EXPECT_STATUS(kiln_gguf_array_at(&e, 1, &e2), KILN_OK); EXPECT(e2.elem_type == KILN_GGUF_TYPE_U32 && e2.n == 0);
    EXPECT_STATUS(kiln_gguf_array_at(arr, 1, &e), KILN_OK);
    EXPECT_STATUS(kiln_gguf_array_at(&e, 0, &e2), KILN_OK); EXPECT(e2.n == 2);
    EXPECT_STATUS(kiln_gguf_array_at(&e2, 1, &e3), KILN_OK);
    EXPECT_STATUS(kiln_gguf_value_u32(&e3, &u32, NULL, 0), KILN_OK); EXPECT(u32 == 9);
    EXPECT_STATUS(kiln_gguf_get_array(g, "k.arr_empty", KILN_GGUF_TYPE_F64, &arr, msg, sizeof msg), KILN_OK);
    EXPECT(arr->n == 0);

    /* Tensors: shapes, sizes, data pointers into the file, the unsupported type by name. */
    EXPECT(kiln_gguf_n_tensors(g) == 8);
    static const char *const names[8] = {"t.f32", "t.q8_0", "t.q4_k", "t.q6_k", "t.q4_0", "t.f16", "t.bf16", "t.q5_k"};
    static const uint64_t sizes[8] = {24, 68, 144, 210, 72, 8, 8, 0};
    for (int t = 0; t < 8; t++) {
        const kiln_gguf_tensor *ti = kiln_gguf_find_tensor(g, names[t]);
        REQUIRE(ti);
        EXPECT(ti == kiln_gguf_tensor_at(g, (size_t)t));
        EXPECT(ti->data_size == sizes[t]);
        if (sizes[t]) {
            EXPECT(ti->data == b.data + kiln_gguf_data_offset(g) + ti->offset);
            EXPECT(ti->data[0] == (uint8_t)(t * 16) && ti->data[sizes[t] - 1] == (uint8_t)(t * 16 + sizes[t] - 1));
            EXPECT_STATUS(kiln_gguf_tensor_size(ti, &u64, NULL, 0), KILN_OK); EXPECT(u64 == sizes[t]);
        }
    }
    const kiln_gguf_tensor *q4 = kiln_gguf_find_tensor(g, "t.q4_0");
    EXPECT(q4->n_dims == 3 && q4->dims[0] == 64 && q4->dims[1] == 1 && q4->dims[2] == 2 && q4->dims[3] == 1);
    EXPECT(q4->n_elements == 128);
    const kiln_gguf_tensor *q5 = kiln_gguf_find_tensor(g, "t.q5_k");
    msg[0] = '\0';
    EXPECT_STATUS(kiln_gguf_tensor_size(q5, &u64, msg, sizeof msg), KILN_ERROR_NOT_SUPPORTED);
    EXPECT(strstr(msg, "Q5_K") && strstr(msg, "t.q5_k"));
    EXPECT(q5->data == NULL);
    EXPECT(kiln_gguf_find_tensor(g, "t.f3") == NULL && kiln_gguf_find_tensor(g, "t.f32x") == NULL);

    kiln_gguf_destroy(g);
    EXPECT(ua.live_blocks == 0);
    gb_free(&b);
}

static void check_type_tables(void)
{
    uint32_t bs, bb;
    static const struct { uint32_t type, bs, bb; const char *name; } want[] = {
        {0, 1, 4, "F32"}, {1, 1, 2, "F16"}, {30, 1, 2, "BF16"}, {8, 32, 34, "Q8_0"},
        {2, 32, 18, "Q4_0"}, {12, 256, 144, "Q4_K"}, {14, 256, 210, "Q6_K"},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        EXPECT_STATUS(kiln_ggml_type_layout(want[k].type, &bs, &bb, NULL, 0), KILN_OK);
        EXPECT(bs == want[k].bs && bb == want[k].bb);
        EXPECT(strcmp(kiln_ggml_type_name(want[k].type), want[k].name) == 0);
    }
    char msg[KILN_GGUF_MESSAGE_SIZE] = "";
    EXPECT_STATUS(kiln_ggml_type_layout(16, &bs, &bb, msg, sizeof msg), KILN_ERROR_NOT_SUPPORTED);
    EXPECT(strstr(msg, "IQ2_XXS") != NULL);
    msg[0] = '\0';
    EXPECT_STATUS(kiln_ggml_type_layout(4, &bs, &bb, msg, sizeof msg), KILN_ERROR_NOT_SUPPORTED);
    EXPECT(strstr(msg, "not a ggml type") != NULL);
    EXPECT(kiln_ggml_type_name(4) == NULL && kiln_ggml_type_name(1000) == NULL);
    EXPECT(strcmp(kiln_gguf_type_name(KILN_GGUF_TYPE_F64), "f64") == 0 && strcmp(kiln_gguf_type_name(13), "?") == 0);
}

/* Opens b and expects KILN_ERROR_MODEL with a message holding `want` and "at byte <offset>". */
static void expect_refused(gguf_builder *b, const char *want, uint64_t offset)
{
    unit_alloc ua;
    kiln_allocator a = unit_alloc_make(&ua);
    ua.max_size = (size_t)1 << 20;        /* a refusal must come before any large allocation */
    kiln_gguf *g = (kiln_gguf *)1;
    char msg[KILN_GGUF_MESSAGE_SIZE];
    EXPECT_STATUS(kiln_gguf_open(b->data, b->size, &a, &g, msg, sizeof msg), KILN_ERROR_MODEL);
    EXPECT(g == NULL);
    char at[48];
    snprintf(at, sizeof at, "at byte %" PRIu64, offset);
    if (!strstr(msg, want) || !strstr(msg, at)) {
        fprintf(stderr, "  message \"%s\" lacks \"%s\" or \"%s\"\n", msg, want, at);
        unit_failures++;
    }
    EXPECT(ua.live_blocks == 0);
    gb_free(b);
}

/* A header and one key "a" of type u8 value 1; returns the builder for more. */
static void one_key(gguf_builder *b, uint32_t n_tensors)
{
    gb_header(b, 3, n_tensors, 1);
    gb_key(b, "a", T_U8), gb_u8(b, 1);
}

static void check_refusals(void)
{
    gguf_builder b = {0};
    gb_bytes(&b, "GGUX", 4), gb_u32(&b, 3), gb_u64(&b, 0), gb_u64(&b, 0);
    expect_refused(&b, "not a GGUF file", 0);
    gb_header(&b, 1, 0, 0);
    expect_refused(&b, "version 1 is not supported", 4);
    gb_header(&b, 4, 0, 0);
    expect_refused(&b, "version 4 is not supported", 4);
    gb_header(&b, 0x03000000u, 0, 0);
    expect_refused(&b, "big-endian GGUF file is not supported", 4);
    gb_header(&b, 3, 0, (uint64_t)1 << 60);
    gb_key(&b, "a", T_U8), gb_u8(&b, 1);
    expect_refused(&b, "metadata count is larger", 16);
    gb_header(&b, 3, (uint64_t)1 << 60, 0);
    expect_refused(&b, "tensor count is larger", 8);
    /* The tensor count fits the file after the header but not after the metadata. */
    gb_header(&b, 3, 2, 1), gb_key(&b, "k", T_STRING), gb_str(&b, "0123456789012345678901234567890123456789012345");
    expect_refused(&b, "bytes after the metadata", 8);
    gb_header(&b, 3, 0, 1), gb_u64(&b, 1000), gb_bytes(&b, "abcdefghijklmnopqrst", 20);
    expect_refused(&b, "file ends inside a metadata key", 32);
    gb_header(&b, 3, 0, 1), gb_u64(&b, 70000);
    for (int k = 0; k < 70000; k++) gb_u8(&b, 'a');
    gb_u32(&b, T_U8), gb_u8(&b, 0);
    expect_refused(&b, "more than the limit of 65535", 24);
    gb_header(&b, 3, 0, 1), gb_key(&b, "", T_U8), gb_u8(&b, 0), gb_u8(&b, 0);
    expect_refused(&b, "metadata key is empty", 24);
    gb_header(&b, 3, 0, 1), gb_u64(&b, 3), gb_bytes(&b, "a\0b", 3), gb_u32(&b, T_U8), gb_u8(&b, 0);
    expect_refused(&b, "contains a NUL byte", 24);
    gb_header(&b, 3, 0, 1), gb_key(&b, "a", 13), gb_u8(&b, 0);
    expect_refused(&b, "value type 13", 33);
    gb_header(&b, 3, 0, 1), gb_key(&b, "a", T_ARRAY), gb_u32(&b, 99), gb_u64(&b, 0);
    expect_refused(&b, "array element type 99", 37);
    gb_header(&b, 3, 0, 1), gb_key(&b, "a", T_ARRAY), gb_u32(&b, T_U32), gb_u64(&b, (uint64_t)1 << 62);
    gb_u32(&b, 0);
    expect_refused(&b, "cannot fit", 41);
    gb_header(&b, 3, 0, 1), gb_key(&b, "a", T_ARRAY);
    for (int k = 0; k < KILN_GGUF_MAX_ARRAY_DEPTH; k++) gb_u32(&b, T_ARRAY), gb_u64(&b, 1);
    gb_u32(&b, T_U8), gb_u64(&b, 0);
    expect_refused(&b, "nested more than 8 deep", 37 + 12 * (KILN_GGUF_MAX_ARRAY_DEPTH - 1));
    gb_header(&b, 3, 0, 1), gb_key(&b, "a", T_BOOL), gb_u8(&b, 2);
    expect_refused(&b, "neither 0 nor 1", 37);
    gb_header(&b, 3, 0, 3), gb_key(&b, "a", T_U8), gb_u8(&b, 0), gb_key(&b, "b", T_U8), gb_u8(&b, 0);
    gb_key(&b, "a", T_U8), gb_u8(&b, 0);
    expect_refused(&b, "key 'a' appears twice", 24 + 14 + 14 + 13);
    gb_header(&b, 3, 0, 1), gb_key(&b, "general.alignment", T_U64), gb_u64(&b, 32);
    expect_refused(&b, "general.alignment is u64, expected u32", 53);
    gb_header(&b, 3, 0, 1), gb_key(&b, "general.alignment", T_U32), gb_u32(&b, 48);
    expect_refused(&b, "48 is not a power of two", 53);
    gb_header(&b, 3, 0, 1), gb_key(&b, "general.alignment", T_U32), gb_u32(&b, 0);
    expect_refused(&b, "0 is not a power of two", 53);

    /* Tensor infos; the key "a" takes bytes 24..37, the first tensor info starts at 38. */
    uint64_t dims[5] = {4, 1, 1, 1, 1};
    one_key(&b, 1), gb_tensor(&b, "w", 0, dims, 0, 0);
    gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "tensor 'w' has 0 dimensions", 47);
    one_key(&b, 1), gb_tensor(&b, "w", 5, dims, 0, 0);
    gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "tensor 'w' has 5 dimensions", 47);
    dims[1] = 0;
    one_key(&b, 1), gb_tensor(&b, "w", 2, dims, 0, 0), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "dimension 1 of size 0", 59);
    dims[1] = (uint64_t)1 << 63;
    one_key(&b, 1), gb_tensor(&b, "w", 2, dims, 0, 0), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "dimension 1 of size 9223372036854775808", 59);
    dims[0] = dims[1] = (uint64_t)1 << 32;
    one_key(&b, 1), gb_tensor(&b, "w", 2, dims, 0, 0), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "more elements than fit in 63 bits", 59);
    dims[0] = 4, dims[1] = 1;
    one_key(&b, 1), gb_tensor(&b, "w", 1, dims, 1000, 0), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "type 1000, which is not a ggml tensor type", 59);
    one_key(&b, 1), gb_tensor(&b, "w", 1, dims, 5, 0), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "type 5, which is not a ggml tensor type", 59);
    char long_name[66];
    memset(long_name, 'n', 65), long_name[65] = '\0';
    one_key(&b, 1), gb_tensor(&b, long_name, 1, dims, 0, 0), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "tensor name is 65 bytes long", 38);
    one_key(&b, 2), gb_tensor(&b, "w", 1, dims, 0, 0), gb_tensor(&b, "w", 1, dims, 0, 32);
    gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef0123456789abcdef0123456789abcdef", 48);
    expect_refused(&b, "tensor name 'w' appears twice", 38 + 33);
    one_key(&b, 1), gb_tensor(&b, "w", 1, dims, 0, 16), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "data offset 16, not a multiple of the alignment 32", 63);
    one_key(&b, 1), gb_tensor(&b, "w", 1, dims, 0, 64), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcdef", 16);
    expect_refused(&b, "past the end of the data section", 63);
    one_key(&b, 1), gb_tensor(&b, "w", 1, dims, 0, 0), gb_pad(&b, 32), gb_bytes(&b, "0123456789abcde", 15);
    expect_refused(&b, "needs 16 bytes at data offset 0", 63);
    dims[0] = 33;
    one_key(&b, 1), gb_tensor(&b, "w", 1, dims, 8, 0), gb_pad(&b, 32);
    for (int k = 0; k < 68; k++) gb_u8(&b, 0);
    expect_refused(&b, "rows of 33 elements, not a multiple of its block of 32", 51);
    dims[0] = 4;
    one_key(&b, 1), gb_tensor(&b, "w", 1, dims, 0, 0);
    expect_refused(&b, "ends before its (aligned) data section", 71);
}

/* Every prefix of a valid file is refused with a message, never read past its end (the
   prefixes are copied to exact-size buffers, so ASan sees any overread). */
static void check_truncations(void)
{
    gguf_builder b = {0};
    gb_build_every_type(&b, 3, 64);
    size_t refused = 0;
    for (size_t n = 0; n < b.size; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        REQUIRE(copy);
        memcpy(copy, b.data, n);
        unit_alloc ua;
        kiln_allocator a = unit_alloc_make(&ua);
        kiln_gguf *g = NULL;
        char msg[KILN_GGUF_MESSAGE_SIZE];
        kiln_status st = kiln_gguf_open(copy, n, &a, &g, msg, sizeof msg);
        /* The file's last tensor (Q5_K, unsupported, size unknown) only needs its offset inside the
           file, so prefixes that keep its first byte still open: that is right, not a hole. */
        if (st == KILN_OK) {
            EXPECT(n >= kiln_gguf_data_offset(g) + kiln_gguf_find_tensor(g, "t.q5_k")->offset);
            kiln_gguf_destroy(g);
        } else {
            refused++;
            EXPECT(st == KILN_ERROR_MODEL && g == NULL && msg[0] != '\0' && strstr(msg, "at byte"));
        }
        EXPECT(ua.live_blocks == 0);
        free(copy);
    }
    EXPECT(refused > b.size - 200);
    printf("  %zu of %zu truncations refused\n", refused, b.size);
    gb_free(&b);
}

/* Fail the Nth allocation for every N until the open succeeds: each failure is
   KILN_ERROR_OUT_OF_MEMORY with nothing leaked. */
static void check_allocation_failures(void)
{
    gguf_builder b = {0};
    gb_build_every_type(&b, 2, 0);
    for (size_t fail_at = 1;; fail_at++) {
        unit_alloc ua;
        kiln_allocator a = unit_alloc_make(&ua);
        ua.fail_at = fail_at;
        kiln_gguf *g = NULL;
        char msg[KILN_GGUF_MESSAGE_SIZE];
        kiln_status st = kiln_gguf_open(b.data, b.size, &a, &g, msg, sizeof msg);
        if (st == KILN_OK) {
            kiln_gguf_destroy(g);
            EXPECT(ua.live_blocks == 0);
            break;
        }
        EXPECT(st == KILN_ERROR_OUT_OF_MEMORY && g == NULL && strstr(msg, "out of memory"));
        EXPECT(ua.live_blocks == 0);
        REQUIRE(fail_at < 100);
    }
    gb_free(&b);
}

/* The fuzz seeds (tests/gguf/make_fuzz_seeds.py) say by name what the reader must do with
   them: valid_* and vocab_* open, bad_* are refused as a bad model with a message; regress_*
   (fuzzer findings) only must not crash, which fuzz_replay_gguf checks. */
static void check_seed_corpus(const char *dir)
{
    DIR *d = opendir(dir);
    REQUIRE(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strncmp(e->d_name, "regress_", 8) == 0) continue;
        size_t size = 0;
        uint8_t *bytes = unit_read_file(path, &size);
        REQUIRE(bytes);
        kiln_gguf *g = NULL;
        char msg[KILN_GGUF_MESSAGE_SIZE];
        kiln_status st = kiln_gguf_open(bytes, size, NULL, &g, msg, sizeof msg);
        if (st != KILN_OK) EXPECT(msg[0] != '\0');
        bool want_ok = strncmp(e->d_name, "bad_", 4) != 0;
        if ((st == KILN_OK) != want_ok || (!want_ok && st != KILN_ERROR_MODEL)) {
            fprintf(stderr, "  seed %s: %s (%s)\n", e->d_name, kiln_status_name(st), msg);
            unit_failures++;
        }
        unit_checks++;
        kiln_gguf_destroy(g);
        free(bytes);
        n++;
    }
    closedir(d);
    printf("  %d seeds\n", n);
    EXPECT(n >= 20);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        unit_section("the fuzz seed corpus");
        check_seed_corpus(argv[1]);
        return unit_finish("test_gguf_reader (seeds)");
    }
    unit_section("valid version 3 file, alignment 64");
    check_valid(3, 64);
    unit_section("valid version 2 file, default alignment");
    check_valid(2, 0);
    unit_section("ggml and GGUF type tables");
    check_type_tables();
    unit_section("one refusal per validation rule");
    check_refusals();
    unit_section("every truncation");
    check_truncations();
    unit_section("allocation failures");
    check_allocation_failures();
    EXPECT_STATUS(kiln_gguf_open(NULL, 4, NULL, &(kiln_gguf *){0}, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    return unit_finish("test_gguf_reader");
}
