/* test_core.c — unit tests of src/core: statuses, dtypes, the arena, the byte buffer, the content
 * hash and the overflow-safe arithmetic helpers.
 *
 * Layer: tests (core). The hash values below are fixed by the format spec (segment hashes and
 * context-binary signatures are stored in files): if one changes, the format version must too.
 */
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/hash.h"
#include "unit_expect.h"

/* ---- statuses ------------------------------------------------------------------------------ */

typedef struct status_row {
    kiln_status status;
    int value;
    const char *name;
    const char *message;
} status_row;

static const status_row status_rows[] = {
#define STATUS_ROW_(name, value, message) {KILN_##name, value, #name, message},
    KILN_STATUS_MAP(STATUS_ROW_)
#undef STATUS_ROW_
};
#define N_STATUS (sizeof status_rows / sizeof status_rows[0])

/* The documented range a status value must fall in, by the first word after ERROR_. */
static bool status_in_documented_range(int v)
{
    return v == 0 || (v <= -1 && v >= -99) || (v <= -100 && v >= -199) || (v <= -200 && v >= -299) ||
           (v <= -300 && v >= -399) || (v <= -400 && v >= -499) || v == -900;
}

static void test_statuses(void)
{
    unit_section("status names and messages for every code");
    for (size_t i = 0; i < N_STATUS; i++) {
        const status_row *r = &status_rows[i];
        EXPECT((int)r->status == r->value);
        EXPECT(strcmp(kiln_status_name(r->status), r->name) == 0);
        EXPECT(strcmp(kiln_status_str(r->status), r->message) == 0);
        EXPECT(status_in_documented_range(r->value));
        EXPECT(r->value == 0 ? strcmp(r->name, "OK") == 0 : strncmp(r->name, "ERROR_", 6) == 0);
        for (size_t j = 0; j < i; j++) EXPECT(status_rows[j].value != r->value);
    }
    EXPECT(N_STATUS >= 28);
    EXPECT(strcmp(kiln_status_name(KILN_ERROR_INTERNAL), "ERROR_INTERNAL") == 0 && KILN_ERROR_INTERNAL == -900);
    int unknown[] = {1, -11, -99, -104, -500, -899, -901, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        EXPECT(strcmp(kiln_status_str((kiln_status)unknown[i]), "unknown status") == 0);
        EXPECT(strcmp(kiln_status_name((kiln_status)unknown[i]), "UNKNOWN") == 0);
    }
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH);
    EXPECT(strcmp(kiln_version_string(), want) == 0);
}

/* ---- dtypes --------------------------------------------------------------------------------- */

static void test_dtypes(void)
{
    unit_section("dtype sizes, names and element counts");
    static const struct { kiln_dtype dtype; size_t size; const char *name; } rows[KILN_DTYPE_COUNT] = {
        {KILN_DTYPE_F32, 4, "f32"}, {KILN_DTYPE_F16, 2, "f16"}, {KILN_DTYPE_BF16, 2, "bf16"},
        {KILN_DTYPE_F64, 8, "f64"}, {KILN_DTYPE_I8, 1, "i8"},   {KILN_DTYPE_I16, 2, "i16"},
        {KILN_DTYPE_I32, 4, "i32"}, {KILN_DTYPE_I64, 8, "i64"}, {KILN_DTYPE_U8, 1, "u8"},
        {KILN_DTYPE_U16, 2, "u16"}, {KILN_DTYPE_U32, 4, "u32"}, {KILN_DTYPE_U64, 8, "u64"},
        {KILN_DTYPE_BOOL, 1, "bool"},
        /* block-quantized: no bytes per element (test_dtype.c checks their blocks) */
        {KILN_DTYPE_Q8_0, 0, "q8_0"}, {KILN_DTYPE_Q4_0, 0, "q4_0"}, {KILN_DTYPE_Q4_K, 0, "q4_k"},
        {KILN_DTYPE_Q6_K, 0, "q6_k"},
    };
    for (int i = 0; i < KILN_DTYPE_COUNT; i++) {
        EXPECT((int)rows[i].dtype == i);
        EXPECT(kiln_dtype_size(rows[i].dtype) == rows[i].size);
        EXPECT(strcmp(kiln_dtype_name(rows[i].dtype), rows[i].name) == 0);
    }
    EXPECT(kiln_dtype_size((kiln_dtype)KILN_DTYPE_COUNT) == 0);
    EXPECT(kiln_dtype_size((kiln_dtype)-1) == 0);
    EXPECT(strcmp(kiln_dtype_name((kiln_dtype)KILN_DTYPE_COUNT), "?") == 0);
    EXPECT(strcmp(kiln_dtype_name((kiln_dtype)-1), "?") == 0);

    kiln_tensor t = {KILN_DTYPE_F32, 0, {0}, NULL};
    EXPECT(kiln_tensor_numel(&t) == 1);               /* a scalar */
    t.rank = 3;
    t.shape[0] = 2, t.shape[1] = 3, t.shape[2] = 4;
    EXPECT(kiln_tensor_numel(&t) == 24);
    t.shape[1] = 0;
    EXPECT(kiln_tensor_numel(&t) == 0);               /* empty */
    t.shape[1] = -1;
    EXPECT(kiln_tensor_numel(&t) == -1);              /* negative dimension */
    t.rank = 2;
    t.shape[0] = INT64_MAX / 2, t.shape[1] = 3;
    EXPECT(kiln_tensor_numel(&t) == -1);              /* overflow */
    t.rank = KILN_MAX_RANK;
    for (int d = 0; d < KILN_MAX_RANK; d++) t.shape[d] = 2;
    EXPECT(kiln_tensor_numel(&t) == 256);
}

/* ---- allocation helpers --------------------------------------------------------------------- */

static void test_alloc_helpers(void)
{
    unit_section("kiln_alloc, kiln_alloc_zero, kiln_strdup, the default allocator");
    const kiln_allocator *d = kiln_allocator_default();
    EXPECT(d && d->alloc && d->free && d == kiln_allocator_default());
    static const size_t aligns[] = {1, 2, 8, 16, 64, 128, 4096};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        void *p = kiln_alloc(d, 10, aligns[i]);
        EXPECT(p && (uintptr_t)p % aligns[i] == 0);
        kiln_free(d, p);
    }
    EXPECT(kiln_alloc(d, 8, 0) == NULL);
    EXPECT(kiln_alloc(d, 8, 24) == NULL);           /* not a power of two */
    void *zero = kiln_alloc(d, 0, 8);                /* size 0 still succeeds */
    EXPECT(zero != NULL);
    kiln_free(d, zero);
    kiln_free(d, NULL);                              /* ignored */
    uint8_t *z = kiln_alloc_zero(d, 1000, 64);
    bool all_zero = z != NULL;
    for (size_t i = 0; z && i < 1000; i++) all_zero = all_zero && z[i] == 0;
    EXPECT(all_zero);
    kiln_free(d, z);
    char *s = kiln_strdup(d, "kiln");
    EXPECT(s && strcmp(s, "kiln") == 0);
    kiln_free(d, s);

    unit_alloc u;
    kiln_allocator fail = unit_alloc_make(&u);
    u.fail_at = 1;
    EXPECT(kiln_alloc(&fail, 8, 8) == NULL);
    u.fail_at = 2;
    EXPECT(kiln_alloc_zero(&fail, 8, 8) == NULL);   /* NULL, not a memset of NULL */
    char *x = kiln_strdup(&fail, "x");
    EXPECT(x && u.live_blocks == 1);
    kiln_free(&fail, x);
    EXPECT(u.live_blocks == 0);
    u.fail_at = 4;
    EXPECT(kiln_strdup(&fail, "x") == NULL);
}

/* ---- arena ---------------------------------------------------------------------------------- */

static void test_arena(void)
{
    unit_section("arena: alignment, zeroing, big requests, failure, release of every chunk");
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    kiln_arena arena;
    kiln_arena_init(&arena, &a, 1024);
    EXPECT(arena.chunk_size == 1024 && arena.head == NULL && arena.bytes_reserved == 0);
    uint8_t *prev = NULL;
    for (size_t align = 1; align <= 64; align *= 2) {
        uint8_t *p = kiln_arena_alloc(&arena, 3, align);
        EXPECT(p && (uintptr_t)p % align == 0);
        EXPECT(p && p[0] == 0 && p[1] == 0 && p[2] == 0);
        if (p) memset(p, 0xAB, 3);
        EXPECT(p != prev);
        prev = p;
    }
    EXPECT(u.live_blocks == 1);                      /* all in the first chunk */
    EXPECT(kiln_arena_alloc(&arena, 8, 128) == NULL); /* alignment above 64 */
    EXPECT(kiln_arena_alloc(&arena, 8, 0) == NULL);
    EXPECT(kiln_arena_alloc(&arena, 8, 3) == NULL);
    EXPECT(kiln_arena_alloc(&arena, 0, 8) != NULL);  /* size 0: one byte */

    /* A request that does not fit the head and is above a quarter chunk gets a private chunk
       behind the head, so the head keeps its free tail for the next small request. */
    size_t blocks = u.live_blocks;
    uint8_t *big = kiln_arena_alloc(&arena, 900, 8);
    EXPECT(big && u.live_blocks == blocks + 1);
    bool zeroed = big != NULL;
    for (size_t i = 0; big && i < 900; i++) zeroed = zeroed && big[i] == 0;
    EXPECT(zeroed);
    uint8_t *small = kiln_arena_alloc(&arena, 16, 8);
    EXPECT(small && u.live_blocks == blocks + 1);
    EXPECT(arena.bytes_reserved == 1024 + 900);

    EXPECT(kiln_arena_alloc_array(&arena, SIZE_MAX / 2, 4, 8) == NULL); /* n * size overflows */
    EXPECT(kiln_arena_alloc(&arena, SIZE_MAX - 8, 8) == NULL);          /* header + size overflows */
    int32_t *arr = KILN_ARENA_ARRAY(&arena, int32_t, 10);
    EXPECT(arr && arr[9] == 0);
    char *s = kiln_arena_strdup(&arena, "hello");
    EXPECT(s && strcmp(s, "hello") == 0);
    static const double pi = 3.25;
    double *dp = kiln_arena_memdup(&arena, &pi, sizeof pi, _Alignof(double));
    EXPECT(dp && *dp == 3.25);

    kiln_allocator view = kiln_arena_as_allocator(&arena);
    void *v = view.alloc(view.ctx, 100, 256);        /* clamped to the arena's 64 */
    EXPECT(v && (uintptr_t)v % 64 == 0);
    view.free(view.ctx, v);                          /* a no-op: memory goes with the arena */

    kiln_arena_deinit(&arena);
    EXPECT(u.live_blocks == 0 && arena.head == NULL && arena.bytes_reserved == 0);

    /* A failing allocator gives NULL and leaves the arena usable. */
    kiln_arena_init(&arena, &a, 0);
    EXPECT(arena.chunk_size == 64 * 1024);
    u.fail_at = u.n_allocs + 1;
    EXPECT(kiln_arena_alloc(&arena, 16, 8) == NULL);
    EXPECT(kiln_arena_alloc(&arena, 16, 8) != NULL);
    kiln_arena_deinit(&arena);
    EXPECT(u.live_blocks == 0);
}

/* ---- buf ------------------------------------------------------------------------------------ */

static void test_buf(void)
{
    unit_section("buf: append, pad, reserve overflow, release, failure");
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    kiln_buf b;
    kiln_buf_init(&b, &a);
    EXPECT(b.size == 0 && b.cap == 0 && b.data == NULL);
    EXPECT(kiln_buf_append(&b, "abc", 3));
    EXPECT(b.size == 3 && memcmp(b.data, "abc", 3) == 0 && (uintptr_t)b.data % 64 == 0);
    EXPECT(kiln_buf_append(&b, NULL, 0));
    EXPECT(kiln_buf_pad(&b, 64));
    EXPECT(b.size == 64 && b.data[3] == 0 && b.data[63] == 0);
    EXPECT(kiln_buf_pad(&b, 64) && b.size == 64); /* already aligned */
    uint8_t chunk[1000];
    for (size_t i = 0; i < sizeof chunk; i++) chunk[i] = (uint8_t)i;
    for (int i = 0; i < 5; i++) EXPECT(kiln_buf_append(&b, chunk, sizeof chunk));
    EXPECT(b.size == 5064 && b.cap >= b.size && memcmp(b.data + 64 + 4000, chunk, sizeof chunk) == 0);
    EXPECT(u.live_blocks == 1);                    /* growth frees the old block */
    EXPECT(!kiln_buf_reserve(&b, SIZE_MAX));       /* size + extra overflows */
    EXPECT(!kiln_buf_reserve(&b, SIZE_MAX - b.size)); /* doubling overflows */
    EXPECT(b.size == 5064);

    u.fail_at = u.n_allocs + 1;
    size_t cap = b.cap;
    EXPECT(!kiln_buf_reserve(&b, cap));            /* allocation fails: buffer unchanged */
    EXPECT(b.size == 5064 && b.cap == cap && memcmp(b.data + 64, chunk, sizeof chunk) == 0);

    size_t size;
    void *p = kiln_buf_release(&b, &size);
    EXPECT(p && size == 5064 && b.data == NULL && b.size == 0 && b.cap == 0);
    kiln_free(&a, p);
    kiln_buf_deinit(&b);                           /* after release: nothing to free */
    EXPECT(u.live_blocks == 0);
}

/* ---- hash ----------------------------------------------------------------------------------- */

static void test_hash(void)
{
    unit_section("kiln_hash64 values are stable (they are stored in program files)");
    uint8_t bytes[100];
    for (int i = 0; i < 100; i++) bytes[i] = (uint8_t)(i * 7 + 1);
    static const struct { size_t size; uint64_t seed, hash; } known[] = {
        {0, 0, 0xe72b229f0f9c70f2ULL},   {1, 0, 0x28938880de0a61e9ULL},  {7, 0, 0x3b68550e7c18d60cULL},
        {8, 0, 0x86838b8c3ab58959ULL},   {9, 0, 0x9673709cf8e37490ULL},  {31, 0, 0xbbb9fd3250138773ULL},
        {32, 0, 0xb34a216dd3517ba8ULL},  {33, 0, 0xaff25439d47ecfaaULL}, {64, 0, 0x373c94277bab1773ULL},
        {100, 0, 0xf36a338f01f0a914ULL}, {100, 42, 0xef6d70a28610d91dULL},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        uint64_t h = kiln_hash64(bytes, known[i].size, known[i].seed);
        if (h != known[i].hash)
            fprintf(stderr, "hash of %zu bytes seed %llu: got 0x%016llx\n", known[i].size,
                    (unsigned long long)known[i].seed, (unsigned long long)h);
        EXPECT(h == known[i].hash);
    }
    EXPECT(kiln_hash64("abc", 3, 0) == 0xc6949ba126547951ULL);
    EXPECT(kiln_hash64(NULL, 0, 0) == known[0].hash);
    /* Every byte position matters, in the 32-byte lanes, the 8-byte tail loop and the tail. */
    uint64_t base = kiln_hash64(bytes, 100, 0);
    for (size_t i = 0; i < 100; i++) {
        bytes[i] ^= 1;
        EXPECT(kiln_hash64(bytes, 100, 0) != base);
        bytes[i] ^= 1;
    }
    EXPECT(kiln_hash64(bytes, 100, 1) != base);
    /* Unaligned input hashes like aligned input. */
    uint8_t shifted[101];
    memcpy(shifted + 1, bytes, 100);
    EXPECT(kiln_hash64(shifted + 1, 100, 0) == base);
}

/* ---- overflow helpers ----------------------------------------------------------------------- */

static void test_overflow_helpers(void)
{
    unit_section("overflow-safe arithmetic and range checks");
    size_t s;
    uint64_t u;
    int64_t i;
    EXPECT(kiln_add_size(1, 2, &s) && s == 3);
    EXPECT(kiln_add_size(SIZE_MAX - 1, 1, &s) && s == SIZE_MAX);
    EXPECT(!kiln_add_size(SIZE_MAX, 1, &s));
    EXPECT(kiln_mul_size(SIZE_MAX / 2, 2, &s) && s == SIZE_MAX - 1);
    EXPECT(!kiln_mul_size(SIZE_MAX / 2 + 1, 2, &s));
    EXPECT(kiln_mul_size(0, SIZE_MAX, &s) && s == 0);
    EXPECT(kiln_add_u64(UINT64_MAX - 5, 5, &u) && u == UINT64_MAX);
    EXPECT(!kiln_add_u64(UINT64_MAX - 5, 6, &u));
    EXPECT(kiln_mul_u64(UINT64_C(1) << 32, UINT64_C(1) << 31, &u) && u == UINT64_C(1) << 63);
    EXPECT(!kiln_mul_u64(UINT64_C(1) << 32, UINT64_C(1) << 32, &u));
    EXPECT(kiln_mul_i64(-3, 4, &i) && i == -12);
    EXPECT(kiln_mul_i64(INT64_MIN, 1, &i) && i == INT64_MIN);
    EXPECT(!kiln_mul_i64(INT64_MIN, -1, &i));
    EXPECT(!kiln_mul_i64(INT64_MAX / 2 + 1, 2, &i));

    EXPECT(kiln_range_ok(0, 0, 0));
    EXPECT(kiln_range_ok(10, 0, 10));                /* an empty range at the end */
    EXPECT(!kiln_range_ok(11, 0, 10));
    EXPECT(kiln_range_ok(4, 6, 10));
    EXPECT(!kiln_range_ok(4, 7, 10));
    EXPECT(!kiln_range_ok(UINT64_MAX, 2, UINT64_MAX)); /* offset + size wraps */
    EXPECT(!kiln_range_ok(2, UINT64_MAX, UINT64_MAX));

    EXPECT(kiln_align_up(0, 64) == 0);
    EXPECT(kiln_align_up(1, 64) == 64);
    EXPECT(kiln_align_up(64, 64) == 64);
    EXPECT(kiln_align_up(65, 8) == 72);
}

int main(void)
{
    test_statuses();
    test_dtypes();
    test_alloc_helpers();
    test_arena();
    test_buf();
    test_hash();
    test_overflow_helpers();
    return unit_finish("test_core");
}
