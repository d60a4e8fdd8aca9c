/* test_npy.c — unit tests of the .npy reader and writer (tools/io/npy.{h,c}).
 *
 * Layer: tests (tools). Needs no Python: the NumPy files below were produced once by NumPy 1.24
 * (numpy.lib.format.write_array) and pasted as C strings. Checks that those files read to the
 * right tensors and that version-1.0 little-endian ones write back byte for byte; that every dtype
 * and rank 0..KILN_MAX_RANK round-trips through a file; that header variants NumPy accepts are
 * accepted and corrupt, truncated or unsupported files give the documented status (never a crash,
 * checked further by mutating every header byte), each refusal with a message saying what is wrong
 * (escaped where it quotes the file); that a FIFO, a directory or a missing path is refused before
 * it is read; that writes leave no temporary file behind when they fail; and that an allocator
 * failing at any point yields OUT_OF_MEMORY without leaks.
 * Exit status 0 when every check passes.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "io/npy.h"
#include "kiln/kiln.h"

#define EXPECT(cond)                                                                             \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                 \
            (*fails)++;                                                                          \
        }                                                                                        \
    } while (0)

#define EXPECT_STATUS(expr, want)                                                                \
    do {                                                                                         \
        kiln_status got_ = (expr);                                                               \
        if (got_ != (want)) {                                                                    \
            fprintf(stderr, "%s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__, #expr,      \
                    kiln_status_name(got_), kiln_status_name(want));                             \
            (*fails)++;                                                                          \
        }                                                                                        \
    } while (0)

/* ---- files written by NumPy 1.24 ----------------------------------------------------------- */

static const char npy_f32_2x3[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }       "
    "                                                   \012\000\000\200\277\000\000\000\277\000"
    "\000\000\000\000\000\000\077\000\000\200\077\000\000\300\077";

static const char npy_i64_4[] =
    "\223NUMPY\001\000v\000{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }         "
    "                                                   \012\375\377\377\377\377\377\377\377\000"
    "\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000\000\000\000\000\000\001\000"
    "\000";

static const char npy_f64_scalar[] =
    "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, 'shape': (), }           "
    "                                                   \012\000\000\000\000\000\000\004@";

static const char npy_bool_2x2[] =
    "\223NUMPY\001\000v\000{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }       "
    "                                                   \012\001\000\000\001";

static const char npy_u8_3[] =
    "\223NUMPY\001\000v\000{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }         "
    "                                                   \012\000\200\377";

static const char npy_f16_2[] =
    "\223NUMPY\001\000v\000{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }         "
    "                                                   \012\000<\000\300";

static const char npy_i16_2x1x2[] =
    "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': False, 'shape': (2, 1, 2), }    "
    "                                                   \012\001\000\376\377,\001\000\200";

static const char npy_f32_0x3[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }       "
    "                                                   \012";

static const char npy_v2_i32_3[] =
    "\223NUMPY\002\000t\000\000\000{'descr': '<i4', 'fortran_order': False, 'shape': (3,), } "
    "                                                         \012\001\000\000\000\377\377\377"
    "\377@\342\001\000";

static const char npy_v3_u16_2[] =
    "\223NUMPY\003\000t\000\000\000{'descr': '<u2', 'fortran_order': False, 'shape': (2,), } "
    "                                                         \012\001\000\377\377";

static const char npy_be_i32_3[] =
    "\223NUMPY\001\000v\000{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }         "
    "                                                   \012\000\000\000\001\377\377\377\377\000"
    "\001\342@";

static const char npy_fortran_f32_2x2[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }        "
    "                                                   \012\000\000\000\000\000\000\000@\000"
    "\000\200\077\000\000@@";

static const float f32_2x3_values[] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
static const int64_t i64_4_values[] = {-3, 0, 7, INT64_C(1) << 40};
static const double f64_scalar_values[] = {2.5};
static const uint8_t bool_2x2_values[] = {1, 0, 0, 1};
static const uint8_t u8_3_values[] = {0, 128, 255};
static const uint16_t f16_2_values[] = {0x3c00, 0xc000};       /* 1.0, -2.0 as IEEE half */
static const int16_t i16_values[] = {1, -2, 300, -32768};
static const int32_t i32_3_values[] = {1, -1, 123456};
static const uint16_t u16_2_values[] = {1, 65535};

typedef struct blob_case {
    const char *name;
    const char *bytes;
    size_t size;
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[KILN_MAX_RANK];
    const void *values;
    size_t values_size;
    bool rewrites_exactly;      /* version 1.0 in host order: kiln writes these very bytes */
} blob_case;

#define BLOB(b) #b, b, sizeof b - 1

static const blob_case blob_cases[] = {
    {BLOB(npy_f32_2x3), KILN_DTYPE_F32, 2, {2, 3}, f32_2x3_values, sizeof f32_2x3_values, true},
    {BLOB(npy_i64_4), KILN_DTYPE_I64, 1, {4}, i64_4_values, sizeof i64_4_values, true},
    {BLOB(npy_f64_scalar), KILN_DTYPE_F64, 0, {0}, f64_scalar_values, sizeof f64_scalar_values, true},
    {BLOB(npy_bool_2x2), KILN_DTYPE_BOOL, 2, {2, 2}, bool_2x2_values, sizeof bool_2x2_values, true},
    {BLOB(npy_u8_3), KILN_DTYPE_U8, 1, {3}, u8_3_values, sizeof u8_3_values, true},
    {BLOB(npy_f16_2), KILN_DTYPE_F16, 1, {2}, f16_2_values, sizeof f16_2_values, true},
    {BLOB(npy_i16_2x1x2), KILN_DTYPE_I16, 3, {2, 1, 2}, i16_values, sizeof i16_values, true},
    {BLOB(npy_f32_0x3), KILN_DTYPE_F32, 2, {0, 3}, NULL, 0, true},
    {BLOB(npy_v2_i32_3), KILN_DTYPE_I32, 1, {3}, i32_3_values, sizeof i32_3_values, false},
    {BLOB(npy_v3_u16_2), KILN_DTYPE_U16, 1, {2}, u16_2_values, sizeof u16_2_values, false},
    {BLOB(npy_be_i32_3), KILN_DTYPE_I32, 1, {3}, i32_3_values, sizeof i32_3_values, false},
};
#define BLOB_CASE_COUNT (sizeof blob_cases / sizeof blob_cases[0])

/* ---- helpers --------------------------------------------------------------------------------- */

/* An allocator that counts live blocks and can fail its Nth call, to find leaks and to drive
   every allocation failure path. */
typedef struct counting_allocator {
    kiln_allocator base;
    long live;                  /* blocks allocated and not yet freed */
    long calls;                 /* allocation calls so far */
    long fail_at;               /* index of the call that fails, or -1 */
} counting_allocator;

static void *counting_alloc(void *ctx, size_t size, size_t alignment)
{
    counting_allocator *c = ctx;
    if (c->calls++ == c->fail_at) return NULL;
    void *p = kiln_allocator_default()->alloc(NULL, size, alignment);
    if (p) c->live++;
    return p;
}

static void counting_free(void *ctx, void *ptr)
{
    counting_allocator *c = ctx;
    c->live--;
    kiln_allocator_default()->free(NULL, ptr);
}

static void counting_init(counting_allocator *c, long fail_at)
{
    c->base = (kiln_allocator){c, counting_alloc, counting_free};
    c->live = 0;
    c->calls = 0;
    c->fail_at = fail_at;
}

static void join_path(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

static bool write_raw(const char *path, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(bytes, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* The whole file in a malloc'd buffer (freed by the caller), or NULL. */
static unsigned char *read_raw(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = malloc(1 << 16);
    *size = buf ? fread(buf, 1, 1 << 16, f) : 0;
    fclose(f);
    return buf;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    }
    closedir(d);
    return n;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char path[512];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        join_path(path, sizeof path, dir, e->d_name);
        if (unlink(path) != 0) remove_tree(path);
    }
    closedir(d);
    rmdir(dir);
}

static bool same_shape(const kiln_tensor *t, kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    if (t->dtype != dtype || t->rank != rank) return false;
    for (uint32_t i = 0; i < rank; i++) {
        if (t->shape[i] != shape[i]) return false;
    }
    return true;
}

static bool tensor_is_zeroed(const kiln_tensor *t)
{
    static const kiln_tensor zero;
    return memcmp(t, &zero, sizeof zero) == 0;
}

/* Reads bytes from memory and, through a file in dir, from disk; both must give `want`. */
static void expect_read_status(const char *dir, const void *bytes, size_t size, kiln_status want,
                               int *fails)
{
    counting_allocator ca;
    counting_init(&ca, -1);
    kiln_tensor t;
    EXPECT_STATUS(kiln_npy_read_memory(bytes, size, &ca.base, &t, NULL, 0), want);
    if (want != KILN_OK) EXPECT(tensor_is_zeroed(&t));
    kiln_free(&ca.base, t.data);

    char path[512];
    join_path(path, sizeof path, dir, "status.npy");
    EXPECT(write_raw(path, bytes, size));
    EXPECT_STATUS(kiln_npy_read(path, &ca.base, &t, NULL, 0), want);
    if (want != KILN_OK) EXPECT(tensor_is_zeroed(&t));
    kiln_free(&ca.base, t.data);
    EXPECT(ca.live == 0);
    unlink(path);
}

/* A version-`major` file around a header text (padded to 64 bytes as NumPy does) and data. */
static size_t build_npy(unsigned char *buf, size_t cap, int major, const char *header,
                        const void *data, size_t data_size)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t text = strlen(header);
    size_t header_size = text + 1 + (64 - (prefix + text + 1) % 64) % 64;
    if (prefix + header_size + data_size > cap) return 0;
    memcpy(buf, "\223NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++) buf[8 + i] = (unsigned char)(header_size >> (8 * i));
    memcpy(buf + prefix, header, text);
    memset(buf + prefix + text, ' ', header_size - text - 1);
    buf[prefix + header_size - 1] = '\n';
    if (data_size) memcpy(buf + prefix + header_size, data, data_size);
    return prefix + header_size + data_size;
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_numpy_files(const char *dir, int *fails)
{
    for (size_t i = 0; i < BLOB_CASE_COUNT; i++) {
        const blob_case *c = &blob_cases[i];
        counting_allocator ca;
        counting_init(&ca, -1);
        kiln_tensor t, back;
        kiln_status st = kiln_npy_read_memory(c->bytes, c->size, &ca.base, &t, NULL, 0);
        if (st != KILN_OK) {
            fprintf(stderr, "%s: read gave %s\n", c->name, kiln_status_name(st));
            (*fails)++;
            continue;
        }
        EXPECT(same_shape(&t, c->dtype, c->rank, c->shape));
        EXPECT(t.data && (uintptr_t)t.data % 64 == 0);
        EXPECT(c->values_size == 0 || memcmp(t.data, c->values, c->values_size) == 0);

        char path[512];
        join_path(path, sizeof path, dir, c->name);
        EXPECT_STATUS(kiln_npy_write(path, &t), KILN_OK);
        EXPECT_STATUS(kiln_npy_read(path, &ca.base, &back, NULL, 0), KILN_OK);
        EXPECT(same_shape(&back, c->dtype, c->rank, c->shape));
        EXPECT(c->values_size == 0 || memcmp(back.data, c->values, c->values_size) == 0);
        if (c->rewrites_exactly) {
            size_t size = 0;
            unsigned char *written = read_raw(path, &size);
            EXPECT(written && size == c->size && memcmp(written, c->bytes, size) == 0);
            free(written);
        }
        kiln_free(&ca.base, t.data);
        kiln_free(&ca.base, back.data);
        EXPECT(ca.live == 0);
        unlink(path);
    }
    expect_read_status(dir, npy_fortran_f32_2x2, sizeof npy_fortran_f32_2x2 - 1,
                       KILN_ERROR_NOT_SUPPORTED, fails);
}

/* Every dtype at every rank 0..KILN_MAX_RANK through a file and back. */
static void test_round_trip(const char *dir, int *fails)
{
    static const kiln_dtype dtypes[] = {
        KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_F64, KILN_DTYPE_I8, KILN_DTYPE_I16, KILN_DTYPE_I32,
        KILN_DTYPE_I64, KILN_DTYPE_U8, KILN_DTYPE_U16, KILN_DTYPE_U32, KILN_DTYPE_U64, KILN_DTYPE_BOOL,
    };
    static const int64_t dims[KILN_MAX_RANK] = {2, 3, 1, 2, 1, 2, 1, 2};
    char path[512];
    join_path(path, sizeof path, dir, "round_trip.npy");
    unsigned char data[96 * 8];
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        for (uint32_t rank = 0; rank <= KILN_MAX_RANK; rank++) {
            kiln_tensor t = {dtypes[d], rank, {0}, data};
            for (uint32_t i = 0; i < rank; i++) t.shape[i] = dims[i];
            size_t size = (size_t)kiln_tensor_numel(&t) * kiln_dtype_size(t.dtype);
            for (size_t i = 0; i < size; i++) {
                data[i] = t.dtype == KILN_DTYPE_BOOL ? (unsigned char)(i % 2) : (unsigned char)(i * 37 + d);
            }
            kiln_tensor back;
            EXPECT_STATUS(kiln_npy_write(path, &t), KILN_OK);
            EXPECT_STATUS(kiln_npy_read(path, NULL, &back, NULL, 0), KILN_OK);
            EXPECT(same_shape(&back, t.dtype, t.rank, t.shape));
            EXPECT(back.data && memcmp(back.data, data, size) == 0);
            kiln_free(kiln_allocator_default(), back.data);
        }
    }
    EXPECT(count_entries(dir) == 1);        /* only round_trip.npy: no temporary left behind */
    unlink(path);
}

static void test_header_variants(const char *dir, int *fails)
{
    static const char *const accepted[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
        "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,)}",
        "  {  'descr' : '=f4' ,\n 'fortran_order' : False , 'shape' : ( 2 , ) , }  \t",
        "{'descr': 'f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1,)}",
        "{'descr': '<u1', 'fortran_order': False, 'shape': (8,)}",
        "{'descr': '=i1', 'fortran_order': False, 'shape': (2, 4)}",
        "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 4)}",
        "{'descr': '>f8', 'fortran_order': False, 'shape': ()}",
    };
    static const char *const corrupt[] = {
        "", "{", "}", "{}", "[]", "{,}",
        "{'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",
        "{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,)}",
        "{'descr': <f4, 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4\", 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)},",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,),,}",
        "{descr: '<f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",      /* data too short */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",      /* trailing bytes */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (0,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,)}",
    };
    static const char *const unsupported[] = {
        "{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '|O', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<U2', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<b2', 'fortran_order': False, 'shape': (4,)}",
        "{'descr': '', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}",
    };
    const unsigned char data[8] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0};
    unsigned char buf[1024];
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        size_t n = build_npy(buf, sizeof buf, 1 + (int)(i % 3), accepted[i], data, sizeof data);
        expect_read_status(dir, buf, n, KILN_OK, fails);
    }
    for (size_t i = 0; i < sizeof corrupt / sizeof corrupt[0]; i++) {
        size_t n = build_npy(buf, sizeof buf, 1 + (int)(i % 3), corrupt[i], data, sizeof data);
        expect_read_status(dir, buf, n, KILN_ERROR_FORMAT, fails);
    }
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        size_t n = build_npy(buf, sizeof buf, 1, unsupported[i], data, sizeof data);
        expect_read_status(dir, buf, n, KILN_ERROR_NOT_SUPPORTED, fails);
    }
    size_t n = build_npy(buf, sizeof buf, 1,
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 2)}",
                         data, sizeof data);
    expect_read_status(dir, buf, n, KILN_ERROR_LIMIT, fails);

    /* A NUL inside the header text. */
    n = build_npy(buf, sizeof buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data,
                  sizeof data);
    buf[10 + 12] = 0;
    expect_read_status(dir, buf, n, KILN_ERROR_FORMAT, fails);
}

/* Byte values the reader must normalise or swap. */
static void test_data_fixups(int *fails)
{
    unsigned char buf[256];
    const unsigned char bools[4] = {0, 1, 2, 255};
    size_t n = build_npy(buf, sizeof buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}",
                         bools, sizeof bools);
    kiln_tensor t;
    EXPECT_STATUS(kiln_npy_read_memory(buf, n, NULL, &t, NULL, 0), KILN_OK);
    EXPECT(t.dtype == KILN_DTYPE_BOOL && memcmp(t.data, (const unsigned char[4]){0, 1, 1, 1}, 4) == 0);
    kiln_free(kiln_allocator_default(), t.data);

    const unsigned char big_2_5[8] = {0x40, 0x04, 0, 0, 0, 0, 0, 0};
    n = build_npy(buf, sizeof buf, 2, "{'descr': '>f8', 'fortran_order': False, 'shape': ()}", big_2_5,
                  sizeof big_2_5);
    EXPECT_STATUS(kiln_npy_read_memory(buf, n, NULL, &t, NULL, 0), KILN_OK);
    EXPECT(t.dtype == KILN_DTYPE_F64 && t.rank == 0 && *(const double *)t.data == 2.5);
    kiln_free(kiln_allocator_default(), t.data);
}

/* Damage to magic, version, header size and length, on both read paths. */
static void test_corrupt_preamble(const char *dir, int *fails)
{
    unsigned char buf[512];
    size_t size = sizeof npy_f32_2x3 - 1;
    memcpy(buf, npy_f32_2x3, size);
    for (size_t n = 0; n < size; n++) expect_read_status(dir, buf, n, KILN_ERROR_FORMAT, fails);
    buf[size] = 0;
    expect_read_status(dir, buf, size + 1, KILN_ERROR_FORMAT, fails);

    static const struct { size_t offset; unsigned char value; kiln_status want; } edits[] = {
        {0, 0x92, KILN_ERROR_FORMAT}, {3, 'u', KILN_ERROR_FORMAT},
        {6, 4, KILN_ERROR_VERSION}, {6, 0xff, KILN_ERROR_VERSION}, {7, 1, KILN_ERROR_VERSION},
        {6, 0, KILN_ERROR_FORMAT}, {6, 2, KILN_ERROR_FORMAT},   /* 2.0 reads a 4-byte size */
        {8, 0x77, KILN_ERROR_FORMAT}, {8, 0x75, KILN_ERROR_FORMAT}, {8, 0, KILN_ERROR_FORMAT},
        {9, 0xff, KILN_ERROR_FORMAT}, {9, 0x01, KILN_ERROR_FORMAT},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        memcpy(buf, npy_f32_2x3, size);
        buf[edits[i].offset] = edits[i].value;
        expect_read_status(dir, buf, size, edits[i].want, fails);
    }

    /* Version 2.0 with a header size far beyond the file and beyond the parse limit. */
    size = sizeof npy_v2_i32_3 - 1;
    memcpy(buf, npy_v2_i32_3, size);
    buf[11] = 0x7f;
    expect_read_status(dir, buf, size, KILN_ERROR_FORMAT, fails);
    memcpy(buf, npy_v2_i32_3, size);
    buf[10] = 0x01;
    expect_read_status(dir, buf, size, KILN_ERROR_FORMAT, fails);
}

/* Every header byte replaced by bytes that matter to the parser: any status is fine, but no
   crash (ASan builds check that too), no leak, and an accepted file must be self-consistent. */
static void test_mutations(int *fails)
{
    static const unsigned char values[] = {0, 0xff, 0x80, ' ', ',', '(', ')', '{', '}', '\'', '"', '9', '0', ':', '\n'};
    const char *const sources[] = {npy_f32_2x3, npy_v3_u16_2, npy_f64_scalar};
    const size_t sizes[] = {sizeof npy_f32_2x3 - 1, sizeof npy_v3_u16_2 - 1, sizeof npy_f64_scalar - 1};
    unsigned char buf[512];
    for (size_t s = 0; s < 3; s++) {
        for (size_t pos = 0; pos < 128 && pos < sizes[s]; pos++) {
            for (size_t v = 0; v < sizeof values; v++) {
                memcpy(buf, sources[s], sizes[s]);
                buf[pos] = values[v];
                counting_allocator ca;
                counting_init(&ca, -1);
                kiln_tensor t;
                kiln_status st = kiln_npy_read_memory(buf, sizes[s], &ca.base, &t, NULL, 0);
                if (st == KILN_OK) {
                    int64_t numel = kiln_tensor_numel(&t);
                    EXPECT(t.data && t.rank <= KILN_MAX_RANK && numel >= 0);
                    EXPECT((size_t)numel * kiln_dtype_size(t.dtype) < sizes[s]);
                    kiln_free(&ca.base, t.data);
                } else {
                    EXPECT(tensor_is_zeroed(&t));
                }
                EXPECT(ca.live == 0);
            }
        }
    }
}

/* Fail the 1st, 2nd, ... allocation until reading succeeds: OUT_OF_MEMORY and no leak each time. */
static void test_allocation_failures(const char *dir, int *fails)
{
    char path[512];
    join_path(path, sizeof path, dir, "oom.npy");
    EXPECT(write_raw(path, npy_i64_4, sizeof npy_i64_4 - 1));
    for (int from_file = 0; from_file < 2; from_file++) {
        for (long fail_at = 0;; fail_at++) {
            counting_allocator ca;
            counting_init(&ca, fail_at);
            kiln_tensor t;
            kiln_status st = from_file ? kiln_npy_read(path, &ca.base, &t, NULL, 0)
                                       : kiln_npy_read_memory(npy_i64_4, sizeof npy_i64_4 - 1, &ca.base, &t, NULL, 0);
            if (st == KILN_OK) {
                kiln_free(&ca.base, t.data);
                EXPECT(fail_at == (from_file ? 2 : 1));     /* header text + data, or data only */
                break;
            }
            EXPECT_STATUS(st, KILN_ERROR_OUT_OF_MEMORY);
            EXPECT(ca.live == 0);
            if (fail_at > 10) break;
        }
    }
    unlink(path);
}

static void test_bad_arguments(const char *dir, int *fails)
{
    kiln_tensor t;
    float value = 1.0f;
    kiln_tensor good = {KILN_DTYPE_F32, 1, {1}, &value};
    char path[512], sub[512];
    join_path(path, sizeof path, dir, "args.npy");
    join_path(sub, sizeof sub, dir, "missing/args.npy");

    EXPECT_STATUS(kiln_npy_read(NULL, NULL, &t, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_npy_read(path, NULL, NULL, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_npy_read_memory(NULL, 4, NULL, &t, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_npy_read_memory(npy_u8_3, sizeof npy_u8_3 - 1, NULL, NULL, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_npy_read_memory(NULL, 0, NULL, &t, NULL, 0), KILN_ERROR_FORMAT);
    EXPECT_STATUS(kiln_npy_read(path, NULL, &t, NULL, 0), KILN_ERROR_IO);            /* does not exist */
    EXPECT_STATUS(kiln_npy_read(dir, NULL, &t, NULL, 0), KILN_ERROR_IO);             /* a directory */

    EXPECT_STATUS(kiln_npy_write(NULL, &good), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_npy_write(path, NULL), KILN_ERROR_INVALID_ARGUMENT);
    kiln_tensor bad = good;
    bad.dtype = KILN_DTYPE_BF16;
    EXPECT_STATUS(kiln_npy_write(path, &bad), KILN_ERROR_NOT_SUPPORTED);
    bad.dtype = (kiln_dtype)99;
    EXPECT_STATUS(kiln_npy_write(path, &bad), KILN_ERROR_INVALID_ARGUMENT);
    bad = good;
    bad.rank = KILN_MAX_RANK + 1;
    EXPECT_STATUS(kiln_npy_write(path, &bad), KILN_ERROR_INVALID_ARGUMENT);
    bad = good;
    bad.shape[0] = -1;
    EXPECT_STATUS(kiln_npy_write(path, &bad), KILN_ERROR_INVALID_ARGUMENT);
    bad = good;
    bad.data = NULL;
    EXPECT_STATUS(kiln_npy_write(path, &bad), KILN_ERROR_INVALID_ARGUMENT);
    bad.shape[0] = 0;
    EXPECT_STATUS(kiln_npy_write(path, &bad), KILN_OK);                     /* empty: no data needed */
    unlink(path);
    EXPECT(count_entries(dir) == 0);

    /* Failed writes leave nothing behind: a missing directory, and a rename onto a directory. */
    EXPECT_STATUS(kiln_npy_write(sub, &good), KILN_ERROR_IO);
    join_path(sub, sizeof sub, dir, "a_directory");
    EXPECT(mkdir(sub, 0700) == 0);
    EXPECT_STATUS(kiln_npy_write(sub, &good), KILN_ERROR_IO);
    EXPECT(count_entries(dir) == 1);
    rmdir(sub);

    /* Overwriting replaces the file; its mode follows the umask as with a plain open(). */
    EXPECT_STATUS(kiln_npy_write(path, &good), KILN_OK);
    value = 2.0f;
    EXPECT_STATUS(kiln_npy_write(path, &good), KILN_OK);
    EXPECT_STATUS(kiln_npy_read(path, NULL, &t, NULL, 0), KILN_OK);
    EXPECT(t.data && *(const float *)t.data == 2.0f);
    kiln_free(kiln_allocator_default(), t.data);
    mode_t mask = umask(022);
    umask(mask);
    struct stat info;
    EXPECT(stat(path, &info) == 0 && (info.st_mode & 0777) == (0666 & ~mask));
    unlink(path);
}

/* Reads bytes from memory with a message buffer: the status, and a message holding `want`
   (one line, no control bytes). */
static void expect_message(const void *bytes, size_t size, kiln_status status, const char *want, int *fails)
{
    char message[KILN_NPY_MESSAGE_SIZE];
    kiln_tensor t;
    memset(message, 'x', sizeof message);
    kiln_status st = kiln_npy_read_memory(bytes, size, NULL, &t, message, sizeof message);
    EXPECT_STATUS(st, status);
    EXPECT(memchr(message, '\0', sizeof message) != NULL);
    if (!strstr(message, want)) {
        fprintf(stderr, "test_npy: message '%s' does not say '%s'\n", message, want);
        (*fails)++;
    }
    for (const char *c = message; *c; c++) EXPECT((unsigned char)*c >= 0x20 && *c != 0x7f);
    kiln_free(kiln_allocator_default(), t.data);
}

static void expect_header_message(const char *header, const void *data, size_t data_size, kiln_status status,
                                  const char *want, int *fails)
{
    unsigned char buf[1024];
    size_t n = build_npy(buf, sizeof buf, 1, header, data, data_size);
    EXPECT(n > 0);
    expect_message(buf, n, status, want, fails);
}

/* Each refusal says what is wrong: the tool prints these lines as they are. */
static void test_messages(int *fails)
{
    float f[6] = {0};
    expect_message(npy_f32_2x3, sizeof npy_f32_2x3 - 2, KILN_ERROR_FORMAT,
                   "truncated: the header announces 24 data bytes, the file holds 23", fails);
    expect_message(npy_f32_2x3, 5, KILN_ERROR_FORMAT, "truncated: 5 bytes", fails);
    expect_message("", 0, KILN_ERROR_FORMAT, "empty file", fails);
    expect_message("PK\003\004 not numpy", 15, KILN_ERROR_FORMAT, "not a .npy file", fails);
    expect_message("\223NUMPY\004\000\010\000{}      ", 18, KILN_ERROR_VERSION, "format version 4.0 is not supported",
                   fails);
    expect_header_message("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f, 24,
                          KILN_ERROR_NOT_SUPPORTED,
                          "Fortran-order arrays are not supported (save with numpy.ascontiguousarray)", fails);
    expect_header_message("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", f, 8, KILN_ERROR_NOT_SUPPORTED,
                          "object arrays (pickled Python objects) are not supported", fails);
    expect_header_message("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", f, 4,
                          KILN_ERROR_NOT_SUPPORTED, "structured dtypes", fails);
    expect_header_message("{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }", f, 20, KILN_ERROR_NOT_SUPPORTED,
                          "dtype '<U5' is not supported", fails);
    /* Header bytes are quoted escaped: a stray high byte (0x9b is CSI on 8-bit terminals) too. */
    expect_header_message("{'descr': '<\233\3774', 'fortran_order': False, 'shape': (1,), }", f, 4,
                          KILN_ERROR_NOT_SUPPORTED, "dtype '<\\x9b\\xff4'", fails);
    expect_header_message("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", f, 4,
                          KILN_ERROR_FORMAT, "unknown key 'extra'", fails);
    expect_header_message("{'descr': '<f4', 'shape': (1,), }", f, 4, KILN_ERROR_FORMAT, "no 'fortran_order' key",
                          fails);
    expect_header_message("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", f, 4,
                          KILN_ERROR_LIMIT, "9 dimensions; kiln supports at most 8", fails);
    expect_header_message("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f, 8, KILN_ERROR_FORMAT,
                          "4 bytes after the 4 data bytes", fails);

    /* Success leaves an empty message; a small buffer gets a cut, terminated line. */
    char message[16];
    kiln_tensor t;
    EXPECT_STATUS(kiln_npy_read_memory(npy_u8_3, sizeof npy_u8_3 - 1, NULL, &t, message, sizeof message), KILN_OK);
    EXPECT(message[0] == '\0');
    kiln_free(kiln_allocator_default(), t.data);
    EXPECT_STATUS(kiln_npy_read_memory(npy_u8_3, 20, NULL, &t, message, sizeof message), KILN_ERROR_FORMAT);
    EXPECT(strlen(message) == sizeof message - 1);
}

/* A FIFO, a directory and a missing file are refused before anything is read, each saying so.
   A FIFO without a writer used to block open() forever: the alarm turns a regression into a
   failure instead of a hang. */
static void test_special_files(const char *dir, int *fails)
{
    char path[512], message[KILN_NPY_MESSAGE_SIZE];
    kiln_tensor t;
    join_path(path, sizeof path, dir, "fifo.npy");
    if (mkfifo(path, 0600) != 0) {
        fprintf(stderr, "test_npy: cannot make a FIFO at %s\n", path);
        (*fails)++;
        return;
    }
    alarm(20);
    EXPECT_STATUS(kiln_npy_read(path, NULL, &t, message, sizeof message), KILN_ERROR_IO);
    alarm(0);
    EXPECT(strcmp(message, "is a FIFO, not a regular file") == 0);
    EXPECT(tensor_is_zeroed(&t));
    unlink(path);
    EXPECT_STATUS(kiln_npy_read(dir, NULL, &t, message, sizeof message), KILN_ERROR_IO);
    EXPECT(strcmp(message, "is a directory, not a regular file") == 0);
    join_path(path, sizeof path, dir, "missing.npy");
    EXPECT_STATUS(kiln_npy_read(path, NULL, &t, message, sizeof message), KILN_ERROR_IO);
    EXPECT(strstr(message, "No such file") != NULL);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    char dir[400];
    snprintf(dir, sizeof dir, "%s/kiln_test_npy_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "test_npy: cannot create a temporary directory under %s\n", dir);
        return 1;
    }
    int fails = 0;
    test_numpy_files(dir, &fails);
    test_round_trip(dir, &fails);
    test_header_variants(dir, &fails);
    test_data_fixups(&fails);
    test_corrupt_preamble(dir, &fails);
    test_mutations(&fails);
    test_allocation_failures(dir, &fails);
    test_bad_arguments(dir, &fails);
    test_messages(&fails);
    test_special_files(dir, &fails);
    remove_tree(dir);
    if (fails) {
        fprintf(stderr, "test_npy: %d check(s) failed\n", fails);
        return 1;
    }
    printf("test_npy: all checks passed\n");
    return 0;
}
