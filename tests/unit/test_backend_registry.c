/* test_backend_registry.c — the delegate ABI (include/kiln/backend.h) end to end with a test
 * backend: registration errors, DELEGATE instructions that load, execute and unload through the
 * vtable, missing or unavailable backends, init and execute failures, and a full registry.
 *
 * Layer: tests (runtime). Programs come from tests/support/delegate_program.h: values v0..vn
 * (f32 [4], ARENA) and n DELEGATE instructions v[k] -> v[k+1] whose payload holds a scale
 * factor. The test backend multiplies by that scale, so each execute proves the payload reached
 * init() and the tensors reached execute(). Its handles come from the module allocator handed to
 * init(), which counts blocks, so "init failure leaves nothing allocated" and "destroy is
 * called on unload" are both checked by the count returning to zero.
 *
 * The registry is process-wide and never shrinks, so the full-registry check runs last, and
 * the backend vtables live in static storage as the ABI requires. The counters the backend
 * updates live in one static struct for the same reason (the vtables' `user` points at it).
 */
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "delegate_program.h"
#include "kiln/backend.h"
#include "unit_expect.h"

#define PAYLOAD_MAGIC 0x51414B31u /* "1KAQ" */

typedef struct test_payload {
    uint32_t magic;
    float scale;
} test_payload;

typedef struct test_handle {
    const kiln_allocator *allocator;
    float scale;
    uint64_t id;
} test_handle;

typedef struct backend_counters {
    int inits, executes, destroys, live_handles;
    int fail_init_at;            /* the Nth init() fails (1-based; 0 never) */
    kiln_status execute_status;  /* returned by execute() after computing */
    bool available;
    const kiln_allocator *last_allocator;
    char last_method[32];
    uint64_t next_id;
} backend_counters;

static backend_counters counters = {.available = true, .next_id = 1000};

static bool test_is_available(void *user) { return ((backend_counters *)user)->available; }

static kiln_status test_init(void *user, const kiln_backend_init_args *args, void **handle_out)
{
    backend_counters *c = user;
    c->inits++;
    c->last_allocator = args->allocator;
    snprintf(c->last_method, sizeof c->last_method, "%s", args->method_name ? args->method_name : "");
    if (args->struct_size < sizeof *args || args->payload_size != sizeof(test_payload)) return KILN_ERROR_INCOMPATIBLE;
    test_payload p;
    memcpy(&p, args->payload, sizeof p);
    if (p.magic != PAYLOAD_MAGIC) return KILN_ERROR_INCOMPATIBLE;
    if (c->fail_init_at && c->inits == c->fail_init_at) {
        /* A reason quoting a hostile name, filling the whole buffer with no NUL: the runtime
           must escape it and cut it at the buffer's end. */
        if (args->message && args->message_size >= 8) {
            memset(args->message, 'x', args->message_size);
            memcpy(args->message, "bad\n\x1b[", 6);
        }
        return KILN_ERROR_BACKEND;
    }
    test_handle *h = kiln_alloc(args->allocator, sizeof *h, _Alignof(test_handle));
    if (!h) return KILN_ERROR_OUT_OF_MEMORY;
    h->allocator = args->allocator;
    h->scale = p.scale;
    h->id = c->next_id++;
    c->live_handles++;
    *handle_out = h;
    return KILN_OK;
}

static kiln_status test_execute(void *user, void *handle, const kiln_tensor *const *inputs, size_t n_inputs,
                                kiln_tensor *const *outputs, size_t n_outputs)
{
    backend_counters *c = user;
    const test_handle *h = handle;
    c->executes++;
    if (n_inputs != 1 || n_outputs != 1 || !inputs[0] || !outputs[0]) return KILN_ERROR_BACKEND;
    const float *x = inputs[0]->data;
    float *y = outputs[0]->data;
    for (int64_t i = 0; i < kiln_tensor_numel(inputs[0]); i++) y[i] = x[i] * h->scale;
    return c->execute_status;
}

static void test_destroy(void *user, void *handle)
{
    backend_counters *c = user;
    test_handle *h = handle;
    c->destroys++;
    c->live_handles--;
    kiln_free(h->allocator, h);
}

static uint64_t test_context_id(void *user, void *handle)
{
    (void)user;
    return ((const test_handle *)handle)->id;
}

static const kiln_backend qa_backend = {KILN_BACKEND_ABI_VERSION, sizeof(kiln_backend), "qa_test", &counters,
                                        test_is_available, test_init, test_execute, test_destroy, test_context_id, NULL};
/* The same functions without the optional context_id. */
static const kiln_backend qa_noid_backend = {KILN_BACKEND_ABI_VERSION, sizeof(kiln_backend), "qa_noid", &counters,
                                             test_is_available, test_init, test_execute, test_destroy, NULL, NULL};

/* ---- programs -------------------------------------------------------------------------------- */

/* A method "forward" of n chained DELEGATE calls; backends[k] names call k's backend and
   scales[k] its payload's factor. */
static void *build_delegate_program(size_t n, const char *const *backends, const float *scales, size_t *size)
{
    test_payload payloads[8];
    kiln_test_delegate_call calls[8];
    REQUIRE(n < 8);
    for (size_t k = 0; k < n; k++) {
        payloads[k] = (test_payload){.magic = PAYLOAD_MAGIC, .scale = scales[k]};
        calls[k] = (kiln_test_delegate_call){backends[k], &payloads[k], sizeof payloads[k]};
    }
    void *data;
    REQUIRE(kiln_test_delegate_program(calls, n, &data, size) == KILN_OK);
    return data;
}

/* A loaded test: program bytes, program, module on a counting allocator. */
typedef struct fixture {
    void *bytes;
    kiln_program *program;
    unit_alloc u;
    kiln_allocator a;
    kiln_module *module;
} fixture;

static void fixture_open(fixture *f, size_t n, const char *const *backends, const float *scales)
{
    size_t size;
    f->bytes = build_delegate_program(n, backends, scales, &size);
    REQUIRE(kiln_program_open_memory(f->bytes, size, &f->program) == KILN_OK);
    f->a = unit_alloc_make(&f->u);
    kiln_module_options opt = {.struct_size = sizeof opt, .allocator = &f->a, .num_threads = 1};
    REQUIRE(kiln_module_create(f->program, &opt, &f->module) == KILN_OK);
}

static void fixture_close(fixture *f)
{
    kiln_module_destroy(f->module);
    EXPECT(f->u.live_blocks == 0);
    kiln_program_close(f->program);
    kiln_free(kiln_allocator_default(), f->bytes);
}

static void expect_scaled(kiln_method *h, float scale)
{
    const float x[4] = {1, -2, 3, 0.5f};
    kiln_tensor t = {KILN_DTYPE_F32, 1, {4}, (void *)x}, y;
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_OK);
    EXPECT_STATUS(kiln_method_execute(h), KILN_OK);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &y), KILN_OK);
    const float *yd = y.data;
    EXPECT(yd && yd[0] == scale && yd[1] == -2 * scale && yd[2] == 3 * scale && yd[3] == 0.5f * scale);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_registration_errors(void)
{
    unit_section("registration errors: NULL, missing functions, names, ABI version, duplicates");
    EXPECT_STATUS(kiln_backend_register(NULL), KILN_ERROR_INVALID_ARGUMENT);
    static kiln_backend bad;
    bad = qa_backend;
    bad.name = "qa_bad";
    bad.init = NULL;
    EXPECT_STATUS(kiln_backend_register(&bad), KILN_ERROR_INVALID_ARGUMENT);
    bad = qa_backend;
    bad.name = NULL;
    EXPECT_STATUS(kiln_backend_register(&bad), KILN_ERROR_INVALID_ARGUMENT);
    bad.name = "";
    EXPECT_STATUS(kiln_backend_register(&bad), KILN_ERROR_INVALID_ARGUMENT);
    bad.name = "a_name_that_is_much_longer_than_kiln_allows"; /* >= KILN_BACKEND_NAME_MAX */
    EXPECT_STATUS(kiln_backend_register(&bad), KILN_ERROR_INVALID_ARGUMENT);
    bad = qa_backend;
    bad.name = "qa_bad";
    bad.abi_version = KILN_BACKEND_ABI_VERSION + 1;
    EXPECT_STATUS(kiln_backend_register(&bad), KILN_ERROR_BACKEND_ABI);
    bad.abi_version = KILN_BACKEND_ABI_VERSION;
    bad.struct_size = sizeof(kiln_backend) - 8;
    EXPECT_STATUS(kiln_backend_register(&bad), KILN_ERROR_BACKEND_ABI);
    EXPECT(kiln_backend_find("qa_bad") == NULL);

    size_t before = kiln_backend_count();
    EXPECT_STATUS(kiln_backend_register(&qa_backend), KILN_OK);
    EXPECT_STATUS(kiln_backend_register(&qa_noid_backend), KILN_OK);
    EXPECT(kiln_backend_count() == before + 2);
    EXPECT(kiln_backend_at(before) == &qa_backend && kiln_backend_at(before + 1) == &qa_noid_backend);
    EXPECT(kiln_backend_at(before + 2) == NULL);
    EXPECT(kiln_backend_find("qa_test") == &qa_backend);
    EXPECT(kiln_backend_find("qa_tes") == NULL && kiln_backend_find(NULL) == NULL);
    EXPECT_STATUS(kiln_backend_register(&qa_backend), KILN_ERROR_BACKEND_DUPLICATE);
    static kiln_backend same_name;
    same_name = qa_noid_backend;
    same_name.name = "qa_test";                     /* another vtable, a taken name */
    EXPECT_STATUS(kiln_backend_register(&same_name), KILN_ERROR_BACKEND_DUPLICATE);
    if (kiln_backend_find("cpu")) {
        same_name.name = "cpu";
        EXPECT_STATUS(kiln_backend_register(&same_name), KILN_ERROR_BACKEND_DUPLICATE);
    }
    EXPECT(kiln_backend_count() == before + 2);
}

static void test_delegate_lifecycle(void)
{
    unit_section("a DELEGATE instruction: init with the payload, execute, context id, destroy on unload");
    const char *const names[1] = {"qa_test"};
    const float scales[1] = {3.0f};
    fixture f;
    fixture_open(&f, 1, names, scales);
    backend_counters before = counters;
    kiln_method *h;
    EXPECT_STATUS(kiln_method_load(f.module, "forward", &h), KILN_OK);
    EXPECT(counters.inits == before.inits + 1 && counters.live_handles == before.live_handles + 1);
    EXPECT(counters.last_allocator == &f.a && strcmp(counters.last_method, "forward") == 0);
    EXPECT(kiln_method_delegate_count(h) == 1);
    uint64_t id = 0;
    EXPECT_STATUS(kiln_method_context_id(h, 0, &id), KILN_OK);
    EXPECT(id == counters.next_id - 1);
    EXPECT_STATUS(kiln_method_context_id(h, 1, &id), KILN_ERROR_INDEX_OUT_OF_RANGE);
    expect_scaled(h, 3.0f);
    expect_scaled(h, 3.0f);
    EXPECT(counters.executes == before.executes + 2);
    kiln_method_unload(h);
    EXPECT(counters.destroys == before.destroys + 1 && counters.live_handles == before.live_handles);
    EXPECT(f.u.live_blocks == 1); /* the module only: unload freed the method and its handle */

    /* Two calls in one method, and a module destroyed with its method still loaded. */
    const char *const two[2] = {"qa_test", "qa_test"};
    const float two_scales[2] = {2.0f, -0.5f};
    fixture g;
    fixture_open(&g, 2, two, two_scales);
    before = counters;
    EXPECT_STATUS(kiln_method_load(g.module, "forward", &h), KILN_OK);
    EXPECT(kiln_method_delegate_count(h) == 2 && counters.inits == before.inits + 2);
    uint64_t id0 = 0, id1 = 0;
    EXPECT_STATUS(kiln_method_context_id(h, 0, &id0), KILN_OK);
    EXPECT_STATUS(kiln_method_context_id(h, 1, &id1), KILN_OK);
    EXPECT(id0 != id1 && id0 != 0);
    expect_scaled(h, -1.0f);
    fixture_close(&g);                              /* unloads h: both handles destroyed */
    EXPECT(counters.destroys == before.destroys + 2 && counters.live_handles == before.live_handles);
    fixture_close(&f);

    /* Without the optional context_id the id is not available. */
    const char *const noid[1] = {"qa_noid"};
    fixture_open(&f, 1, noid, scales);
    EXPECT_STATUS(kiln_method_load(f.module, "forward", &h), KILN_OK);
    EXPECT_STATUS(kiln_method_context_id(h, 0, &id), KILN_ERROR_NOT_SUPPORTED);
    expect_scaled(h, 3.0f);
    fixture_close(&f);
}

static void test_failures(void)
{
    unit_section("missing and unavailable backends, init and execute failures");
    const float scales[2] = {1.0f, 1.0f};
    const char *const missing[1] = {"qa_absent"};
    fixture f;
    fixture_open(&f, 1, missing, scales);
    int inits = counters.inits;
    kiln_method *h = (kiln_method *)(uintptr_t)1;
    EXPECT_STATUS(kiln_method_load(f.module, "forward", &h), KILN_ERROR_BACKEND_UNAVAILABLE);
    EXPECT(h == NULL && counters.inits == inits);
    EXPECT(f.u.live_blocks == 2); /* the module and this thread's kiln_module_last_error text */
    fixture_close(&f);

    const char *const names[2] = {"qa_test", "qa_test"};
    fixture_open(&f, 2, names, scales);
    counters.available = false;                     /* registered, but not on this machine */
    EXPECT_STATUS(kiln_method_load(f.module, "forward", &h), KILN_ERROR_BACKEND_UNAVAILABLE);
    EXPECT(counters.inits == inits && f.u.live_blocks == 2); /* module + last-error text */
    counters.available = true;

    /* The second init fails: the first handle is destroyed, nothing stays allocated, and the
       backend's own status is what the caller sees. */
    backend_counters before = counters;
    counters.fail_init_at = counters.inits + 2;
    EXPECT_STATUS(kiln_method_load(f.module, "forward", &h), KILN_ERROR_BACKEND);
    EXPECT(h == NULL);
    EXPECT(counters.inits == before.inits + 2 && counters.destroys == before.destroys + 1);
    EXPECT(counters.live_handles == before.live_handles && f.u.live_blocks == 2);
    counters.fail_init_at = counters.inits + 1;     /* the first one fails */
    char message[1024];
    EXPECT_STATUS(kiln_method_load_with_message(f.module, "forward", &h, message, sizeof message), KILN_ERROR_BACKEND);
    EXPECT(counters.live_handles == before.live_handles && f.u.live_blocks == 2);
    EXPECT(strncmp(message, "loading method 'forward' failed: bad\\n\\x1b[xxx", 46) == 0);
    EXPECT(!strchr(message, '\n') && !strchr(message, '\x1b'));
    EXPECT(strcmp(message, kiln_module_last_error(f.module)) == 0);
    counters.fail_init_at = 0;

    /* execute() failing: the status reaches the caller and there is no output to read. */
    EXPECT_STATUS(kiln_method_load(f.module, "forward", &h), KILN_OK);
    const float x[4] = {1, 2, 3, 4};
    kiln_tensor t = {KILN_DTYPE_F32, 1, {4}, (void *)x}, y;
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_OK);
    counters.execute_status = KILN_ERROR_BACKEND;
    EXPECT_STATUS(kiln_method_execute(h), KILN_ERROR_BACKEND);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &y), KILN_ERROR_INVALID_STATE);
    counters.execute_status = KILN_OK;
    EXPECT_STATUS(kiln_method_execute(h), KILN_OK);   /* recovers */
    EXPECT_STATUS(kiln_method_get_output(h, 0, &y), KILN_OK);
    kiln_method_unload(h);
    fixture_close(&f);

    /* Out of memory inside init() for every allocation point: nothing leaks. */
    for (size_t n = 1; n < 100; n++) {
        fixture_open(&f, 2, names, scales);
        f.u.fail_at = f.u.n_allocs + n;
        kiln_status st = kiln_method_load(f.module, "forward", &h);
        EXPECT(st == KILN_OK || st == KILN_ERROR_OUT_OF_MEMORY);
        bool clean_run = f.u.n_failed == 0;
        fixture_close(&f);
        if (clean_run) break;
    }
    EXPECT(counters.live_handles == 0);
}

static void test_registry_full(void)
{
    unit_section("a full registry refuses further backends");
    static char names[KILN_BACKEND_REGISTRY_SIZE][16];
    static kiln_backend fillers[KILN_BACKEND_REGISTRY_SIZE];
    size_t count = kiln_backend_count();
    EXPECT(count < KILN_BACKEND_REGISTRY_SIZE);
    size_t k = 0;
    for (; count + k < KILN_BACKEND_REGISTRY_SIZE; k++) {
        snprintf(names[k], sizeof names[k], "qa_fill%zu", k);
        fillers[k] = qa_noid_backend;
        fillers[k].name = names[k];
        EXPECT_STATUS(kiln_backend_register(&fillers[k]), KILN_OK);
    }
    EXPECT(kiln_backend_count() == KILN_BACKEND_REGISTRY_SIZE);
    static kiln_backend one_more;
    one_more = qa_noid_backend;
    one_more.name = "qa_one_more";
    EXPECT_STATUS(kiln_backend_register(&one_more), KILN_ERROR_BACKEND_REGISTRY_FULL);
    EXPECT_STATUS(kiln_backend_register(&qa_backend), KILN_ERROR_BACKEND_DUPLICATE); /* still a duplicate */
    EXPECT(kiln_backend_find("qa_one_more") == NULL && kiln_backend_find("qa_test") == &qa_backend);
    EXPECT(kiln_backend_count() == KILN_BACKEND_REGISTRY_SIZE);
    /* Registered backends keep working. */
    const char *const names1[1] = {"qa_fill0"};
    const float scales[1] = {2.0f};
    fixture f;
    fixture_open(&f, 1, names1, scales);
    kiln_method *h;
    EXPECT_STATUS(kiln_method_load(f.module, "forward", &h), KILN_OK);
    expect_scaled(h, 2.0f);
    fixture_close(&f);
}

int main(void)
{
    /* A first module registers the backends built into libkiln, so the counts below are final. */
    size_t size;
    void *bytes = unit_compile_case("node/test_relu", 1, &size);
    kiln_program *p;
    kiln_module *m;
    REQUIRE(kiln_program_open_memory(bytes, size, &p) == KILN_OK);
    REQUIRE(kiln_module_create(p, NULL, &m) == KILN_OK);
    kiln_module_destroy(m);
    kiln_program_close(p);
    free(bytes);

    test_registration_errors();
    test_delegate_lifecycle();
    test_failures();
    test_registry_full();
    EXPECT(counters.live_handles == 0 && counters.inits >= counters.destroys);
    return unit_finish("test_backend_registry");
}
