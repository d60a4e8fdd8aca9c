/* test_runtime_handles.c — stale handles are refused, never followed; unload frees its method.
 *
 * Layer: tests (runtime, public API only). node/test_add (x + y, f32 [3,4,5]) compiled on the
 * portable kernels and delegated to the cpu backend. Checks, each of which read or freed freed
 * memory before handles were slot + generation (issue 12, items 13 and 14):
 *  - a method of a destroyed module (execute, set_input, get_output, info, unload), a second
 *    kiln_module_destroy, kiln_method_load on a destroyed module, a second kiln_program_close and
 *    a closed program's accessors;
 *  - a destroyed module's method after a new module (whose allocations land where the old
 *    ones were) has loaded methods of its own;
 *  - random integers and real heap addresses passed as handles;
 *  - 20,000 load/unload cycles leave the module's (counting) allocator where it was;
 *  - threads (this test runs under TSan too): loads, executes and unloads on a shared module
 *    while another thread destroys modules and hammers their stale handles; an unload while
 *    another thread executes that method; a method unloaded while its module is destroyed;
 *    one module destroyed by two threads at once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "test_runtime_support.h"

/* Sets x and y, executes and checks x + y; returns the first failing status (or a mismatch as
   KILN_ERROR_BACKEND). Thread-safe: touches no test counter. */
static kiln_status add_once(kiln_method *h, float seed)
{
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = seed * (float)i, y[i] = (float)(i % 7) - seed;
    kiln_tensor tx = tensor_of(x), ty = tensor_of(y), out;
    kiln_status st = kiln_method_set_input(h, 0, &tx);
    if (st == KILN_OK) st = kiln_method_set_input(h, 1, &ty);
    if (st == KILN_OK) st = kiln_method_execute(h);
    if (st == KILN_OK) st = kiln_method_get_output(h, 0, &out);
    for (int i = 0; st == KILN_OK && i < N; i++)
        if (((const float *)out.data)[i] != x[i] + y[i]) st = KILN_ERROR_BACKEND;
    return st;
}

static kiln_module *new_module(kiln_program *p, const kiln_allocator *a)
{
    kiln_module_options o = {.struct_size = sizeof o, .allocator = a, .num_threads = 1};
    kiln_module *m = NULL;
    EXPECT_STATUS(kiln_module_create(p, &o, &m), KILN_OK);
    REQUIRE(m);
    return m;
}

static kiln_method *load(kiln_module *m)
{
    kiln_method *h = NULL;
    EXPECT_STATUS(kiln_method_load(m, "forward", &h), KILN_OK);
    REQUIRE(h);
    return h;
}

static void test_after_destroy(const void *bytes, size_t size)
{
    unit_section("handles of destroyed modules and closed programs");
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(bytes, size, &p) == KILN_OK);
    kiln_module *m = new_module(p, NULL);
    kiln_method *h = load(m), *unloaded = load(m);
    EXPECT_STATUS(add_once(h, 1.0f), KILN_OK);
    kiln_method_unload(unloaded);
    kiln_module_destroy(m);
    expect_stale_method(h);
    expect_stale_method(unloaded);
    kiln_module_destroy(m); /* a second destroy is ignored */
    kiln_method *h2 = (kiln_method *)(uintptr_t)1;
    EXPECT_STATUS(kiln_method_load(m, "forward", &h2), KILN_ERROR_STALE_HANDLE);
    EXPECT(h2 == NULL);
    char message[256];
    EXPECT_STATUS(kiln_method_load_with_message(m, "forward", &h2, message, sizeof message), KILN_ERROR_STALE_HANDLE);
    EXPECT(strstr(message, "stale") != NULL);
    EXPECT(strcmp(kiln_module_last_error(m), "") == 0);

    /* A program closed while a module holds it: the module works, the handle is stale. */
    kiln_module *live = new_module(p, NULL);
    kiln_program_close(p);
    kiln_program_close(p); /* a second close is ignored */
    EXPECT(kiln_program_method_count(p) == 0 && kiln_program_method_name(p, 0) == NULL);
    kiln_module *m2 = (kiln_module *)(uintptr_t)1;
    EXPECT_STATUS(kiln_module_create(p, NULL, &m2), KILN_ERROR_STALE_HANDLE);
    EXPECT(m2 == NULL);
    kiln_method *lh = load(live);
    EXPECT_STATUS(add_once(lh, 2.0f), KILN_OK);
    kiln_module_destroy(live); /* the program's memory goes with its last module */
    expect_stale_method(lh);
}

static void test_new_module_same_place(const void *bytes, size_t size)
{
    unit_section("a destroyed module's method after a new module took its place");
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(bytes, size, &p) == KILN_OK);
    for (int round = 0; round < 4; round++) {
        kiln_module *old = new_module(p, NULL);
        kiln_method *stale = load(old);
        kiln_module_destroy(old);
        /* The allocator hands the freed blocks out again: the new module and its methods sit
           where the old ones did. */
        kiln_module *fresh = new_module(p, NULL);
        kiln_method *h = load(fresh);
        EXPECT(h != stale && fresh != old);
        expect_stale_method(stale);
        EXPECT_STATUS(kiln_method_load(old, "forward", &stale), KILN_ERROR_STALE_HANDLE);
        kiln_module_destroy(old);
        EXPECT_STATUS(add_once(h, (float)round), KILN_OK);
        kiln_module_destroy(fresh);
    }
    kiln_program_close(p);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_random_handles(const void *bytes, size_t size)
{
    unit_section("random integers and heap addresses as handles");
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(bytes, size, &p) == KILN_OK);
    kiln_module *m = new_module(p, NULL);
    kiln_method *h = load(m);
    void *heap[8];
    for (int i = 0; i < 8; i++) heap[i] = calloc(1, 256);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    int wrong = 0;
    for (int i = 0; i < 100000; i++) {
        uintptr_t v = i < 8 ? (uintptr_t)heap[i] : i < 64 ? (uintptr_t)(i - 8) : (uintptr_t)xorshift(&s);
        if (v == 0) continue;
        if (kiln_method_execute((kiln_method *)v) != KILN_ERROR_STALE_HANDLE) wrong++;
        if (kiln_method_input_count((kiln_method *)v) != 0) wrong++;
        kiln_method *out = NULL;
        if (kiln_method_load((kiln_module *)v, "forward", &out) != KILN_ERROR_STALE_HANDLE || out) wrong++;
        if (kiln_program_method_count((kiln_program *)v) != 0) wrong++;
        kiln_method_unload((kiln_method *)v);
        kiln_module_destroy((kiln_module *)v);
        kiln_program_close((kiln_program *)v);
    }
    /* A module handle is not a method handle, nor the other way round. */
    if (kiln_method_execute((kiln_method *)(void *)m) != KILN_ERROR_STALE_HANDLE) wrong++;
    kiln_method *out = NULL;
    if (kiln_method_load((kiln_module *)(void *)h, "forward", &out) != KILN_ERROR_STALE_HANDLE) wrong++;
    kiln_module_destroy((kiln_module *)(void *)p);
    EXPECT(wrong == 0);
    EXPECT_STATUS(add_once(h, 3.0f), KILN_OK); /* the live ones were not disturbed */
    for (int i = 0; i < 8; i++) free(heap[i]);
    kiln_module_destroy(m);
    kiln_program_close(p);
}

static void test_unload_frees(const void *bytes, size_t size, int cycles)
{
    unit_section("load/unload cycles hold no memory");
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(bytes, size, &p) == KILN_OK);
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    kiln_module *m = new_module(p, &a);
    size_t base = u.live_blocks;
    kiln_method *keep = load(m); /* a method that stays: the others come and go around it */
    size_t with_one = u.live_blocks;
    for (int i = 0; i < cycles; i++) {
        kiln_method *h = NULL;
        if (kiln_method_load(m, "forward", &h) != KILN_OK) break;
        if (i % 1000 == 0) EXPECT_STATUS(add_once(h, (float)i), KILN_OK);
        kiln_method_unload(h);
        if (u.live_blocks != with_one) break;
    }
    printf("%d cycles: %zu live blocks before, %zu after\n", cycles, with_one, u.live_blocks);
    EXPECT(u.live_blocks == with_one);
    kiln_method_unload(keep);
    EXPECT(u.live_blocks == base);
    kiln_module_destroy(m);
    EXPECT(u.live_blocks == 0);
    kiln_program_close(p);
}

/* ---- threads ---------------------------------------------------------------------------------- */

typedef struct shared {
    kiln_program *program;
    kiln_module *module;            /* shared by the workers */
    atomic_int failures;
    atomic_bool stop;
} shared;

static void fail_if(shared *sh, bool bad, const char *what)
{
    if (!bad) return;
    fprintf(stderr, "thread check failed: %s\n", what);
    atomic_fetch_add(&sh->failures, 1);
}

/* Loads, runs and unloads on the shared module; its previous handle must be stale. */
static void *worker(void *arg)
{
    shared *sh = arg;
    kiln_method *previous = NULL;
    for (int i = 0; i < 300; i++) {
        kiln_method *h = NULL;
        kiln_status st = kiln_method_load(sh->module, "forward", &h);
        fail_if(sh, st != KILN_OK, "load on the shared module");
        if (st != KILN_OK) break;
        fail_if(sh, add_once(h, (float)i) != KILN_OK, "execute on the shared module");
        kiln_method_unload(h);
        if (previous) fail_if(sh, kiln_method_execute(previous) != KILN_ERROR_STALE_HANDLE, "stale handle executed");
        previous = h;
    }
    return NULL;
}

/* Destroys modules and hammers their stale handles while the workers run. */
static void *destroyer(void *arg)
{
    shared *sh = arg;
    for (int i = 0; i < 60; i++) {
        kiln_module *m = NULL;
        kiln_method *h = NULL;
        fail_if(sh, kiln_module_create(sh->program, NULL, &m) != KILN_OK, "create");
        fail_if(sh, !m || kiln_method_load(m, "forward", &h) != KILN_OK, "load");
        if (!h) break;
        kiln_module_destroy(m);
        for (int k = 0; k < 20; k++) {
            fail_if(sh, kiln_method_execute(h) != KILN_ERROR_STALE_HANDLE, "execute after destroy");
            kiln_method *again = NULL;
            fail_if(sh, kiln_method_load(m, "forward", &again) != KILN_ERROR_STALE_HANDLE, "load after destroy");
            kiln_method_unload(h);
            kiln_module_destroy(m);
        }
    }
    return NULL;
}

/* Executes h (inputs already set) until it turns stale under a concurrent unload; every result
   is OK or stale. Outputs are not read: a view dies with the unload. */
static void *executor(void *arg)
{
    void **args = arg;
    shared *sh = args[0];
    kiln_method *h = args[1];
    int runs = 0;
    for (;;) {
        kiln_status st = kiln_method_execute(h);
        if (st == KILN_ERROR_STALE_HANDLE) break;
        fail_if(sh, st != KILN_OK, "execute racing an unload");
        if (st != KILN_OK) break;
        if (++runs == 20) atomic_store(&sh->stop, true); /* let the unloader go */
    }
    return NULL;
}

static void *unloader(void *arg)
{
    void **args = arg;
    shared *sh = args[0];
    while (!atomic_load(&sh->stop)) sched_yield();
    kiln_method_unload(args[1]); /* waits for an execute in flight */
    return NULL;
}

static void *destroy_module(void *arg)
{
    kiln_module_destroy(arg);
    return NULL;
}

static void *unload_method(void *arg)
{
    kiln_method_unload(arg);
    return NULL;
}

static void test_threads(const void *bytes, size_t size)
{
    unit_section("threads: loads and unloads beside destroys and stale handles");
    shared sh = {0};
    REQUIRE(kiln_program_open_memory(bytes, size, &sh.program) == KILN_OK);
    sh.module = new_module(sh.program, NULL);
    pthread_t t[4];
    for (int i = 0; i < 3; i++) REQUIRE(pthread_create(&t[i], NULL, worker, &sh) == 0);
    REQUIRE(pthread_create(&t[3], NULL, destroyer, &sh) == 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);

    unit_section("threads: unload while another thread executes the method");
    for (int round = 0; round < 5; round++) {
        kiln_method *h = load(sh.module);
        EXPECT_STATUS(add_once(h, 1.5f), KILN_OK);
        atomic_store(&sh.stop, false);
        void *args[2] = {&sh, h};
        REQUIRE(pthread_create(&t[0], NULL, executor, args) == 0);
        REQUIRE(pthread_create(&t[1], NULL, unloader, args) == 0);
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
        expect_stale_method(h);
    }

    unit_section("threads: a method unloaded while its module is destroyed; one module destroyed twice");
    for (int round = 0; round < 20; round++) {
        kiln_module *m = new_module(sh.program, NULL);
        kiln_method *h = load(m), *other = load(m);
        REQUIRE(pthread_create(&t[0], NULL, unload_method, h) == 0);
        REQUIRE(pthread_create(&t[1], NULL, destroy_module, m) == 0);
        REQUIRE(pthread_create(&t[2], NULL, destroy_module, m) == 0);
        for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
        expect_stale_method(h);
        expect_stale_method(other);
    }
    EXPECT(atomic_load(&sh.failures) == 0);
    kiln_module_destroy(sh.module);
    kiln_program_close(sh.program);
}

static void test_program(const char *what, int no_delegate)
{
    printf("== node/test_add %s\n", what);
    size_t size;
    void *bytes = unit_compile_case("node/test_add", no_delegate, &size);
    test_after_destroy(bytes, size);
    test_new_module_same_place(bytes, size);
    test_random_handles(bytes, size);
    test_unload_frees(bytes, size, no_delegate ? 20000 : 2000);
    test_threads(bytes, size);
    free(bytes);
}

int main(void)
{
    test_program("on portable kernels", 1);
    test_program("delegated to the cpu backend", 0);
    return unit_finish("test_runtime_handles");
}
