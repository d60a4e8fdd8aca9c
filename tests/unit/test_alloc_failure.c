/* test_alloc_failure.c — allocation-failure stress test of the runtime and the compiler.
 *
 * Layer: tests (runtime, compiler). ExecuTorch's allocation_failure_stress_test and SQLite's OOM
 * tests: for every N, allocation number N fails (once, then in a second pass N and every later
 * one), and the whole path (kiln_module_create, kiln_method_load, set_input, execute,
 * get_output, unload, destroy; or kiln_compile_memory) must either succeed or return
 * KILN_ERROR_OUT_OF_MEMORY, leaving zero blocks allocated once everything is released. After
 * a transient failure, retrying the failed step must succeed. Once N passes the number of
 * allocations a clean run makes, everything succeeds and the loop ends.
 *
 * Models: ONNX backend test cases with their real inputs (so data-dependent shapes are valid),
 * each compiled for the portable kernels and for the cpu backend.
 */
#include <stdint.h>
#include <string.h>

#include "onnx_case.h"
#include "unit_expect.h"

/* Enough for every model below; a clean run that needs more fails the test rather than loop. */
#define MAX_ALLOCS 100000

static const char *const cases[] = {
    "node/test_add",                        /* one static instruction */
    "node/test_conv_with_strides_padding",  /* scratch */
    "node/test_reshape_reordered_all_dims", /* a DYNAMIC value: allocated per execute */
    "node/test_gather_0",
    "pytorch-operator/test_operator_basic", /* several instructions */
};

static bool ok_or_oom(kiln_status st) { return st == KILN_OK || st == KILN_ERROR_OUT_OF_MEMORY; }

/* Retries `expr` once after an out-of-memory failure when failures are transient. Sets `st`. */
#define STEP(st, persistent, expr)                                                               \
    do {                                                                                         \
        (st) = (expr);                                                                           \
        if ((st) == KILN_ERROR_OUT_OF_MEMORY && !(persistent)) {                                 \
            (st) = (expr);                                                                       \
            EXPECT_STATUS((st), KILN_OK);                                                        \
        }                                                                                        \
        if (!ok_or_oom(st))                                                                      \
            fprintf(stderr, "  %s: %s\n", #expr, kiln_status_name(st));                          \
        EXPECT(ok_or_oom(st));                                                                   \
    } while (0)

/* One full run against the program; true when every step succeeded. */
static bool run_once(const void *program, size_t size, const onnx_case *c, unit_alloc *u, kiln_allocator *a)
{
    bool persistent = u->persistent;
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(program, size, &p) == KILN_OK);
    kiln_module_options opt = {.struct_size = sizeof opt, .allocator = a, .num_threads = 1};
    kiln_module *m = NULL;
    kiln_method *h = NULL;
    kiln_status st;
    bool all_ok = false;
    STEP(st, persistent, kiln_module_create(p, &opt, &m));
    if (st != KILN_OK) goto done;
    STEP(st, persistent, kiln_method_load(m, "forward", &h));
    if (st != KILN_OK) goto done;
    for (size_t i = 0; i < c->n_inputs; i++) {
        STEP(st, persistent, kiln_method_set_input(h, i, &c->inputs[i]));
        if (st != KILN_OK) goto done;
    }
    STEP(st, persistent, kiln_method_execute(h));
    if (st != KILN_OK) goto done;
    for (size_t j = 0; j < c->n_expected; j++) {
        kiln_tensor out;
        EXPECT_STATUS(kiln_method_get_output(h, j, &out), KILN_OK);
        EXPECT(out.data && out.rank == c->expected[j].rank && out.dtype == c->expected[j].dtype);
        EXPECT(kiln_tensor_numel(&out) == kiln_tensor_numel(&c->expected[j]));
    }
    /* A second execute (dynamic buffers of the first are released and taken again). */
    STEP(st, persistent, kiln_method_execute(h));
    all_ok = st == KILN_OK;
done:
    if (h) kiln_method_unload(h);
    kiln_module_destroy(m);
    kiln_program_close(p);
    return all_ok;
}

static void stress_runtime(const char *name, const void *program, size_t size, const onnx_case *c)
{
    for (int persistent = 0; persistent < 2; persistent++) {
        size_t n;
        for (n = 1; n < MAX_ALLOCS; n++) {
            unit_alloc u;
            kiln_allocator a = unit_alloc_make(&u);
            u.fail_at = n;
            u.persistent = persistent;
            bool ok = run_once(program, size, c, &u, &a);
            if (u.live_blocks != 0) fprintf(stderr, "  %s: failing allocation %zu leaked %zu blocks\n", name, n, u.live_blocks);
            EXPECT(u.live_blocks == 0);
            if (u.n_failed == 0) { /* N is past the last allocation: a clean run */
                EXPECT(ok);
                break;
            }
        }
        EXPECT(n < MAX_ALLOCS);
        printf("  %s, %s failures: %zu allocation points\n", name, persistent ? "persistent" : "transient", n - 1);
    }
}

static void stress_compile(const char *name, const onnx_case *c, int no_delegate)
{
    for (int persistent = 0; persistent < 2; persistent++) {
        size_t n;
        for (n = 1; n < MAX_ALLOCS; n++) {
            unit_alloc u;
            kiln_allocator a = unit_alloc_make(&u);
            u.fail_at = n;
            u.persistent = persistent;
            kiln_compile_options opt = {.struct_size = sizeof opt, .allocator = &a, .input_shapes = c->shapes,
                                        .n_input_shapes = c->n_inputs, .input_shapes_by_position = 1,
                                        .no_delegate = no_delegate};
            kiln_compile_method m = {.name = "forward", .model_data = c->model, .model_size = c->model_size};
            void *data = NULL;
            size_t size = 0;
            char message[256];
            kiln_status st = kiln_compile_memory(&opt, &m, 1, &data, &size, message, sizeof message);
            if (!ok_or_oom(st)) fprintf(stderr, "  compile %s, allocation %zu failing: %s (%s)\n", name, n, kiln_status_name(st), message);
            EXPECT(ok_or_oom(st));
            EXPECT(st == KILN_OK ? data != NULL : data == NULL);
            if (data) a.free(a.ctx, data);
            if (u.live_blocks != 0) fprintf(stderr, "  compile %s: failing allocation %zu leaked %zu blocks\n", name, n, u.live_blocks);
            EXPECT(u.live_blocks == 0);
            if (u.n_failed == 0) {
                EXPECT_STATUS(st, KILN_OK);
                break;
            }
        }
        EXPECT(n < MAX_ALLOCS);
        printf("  compile %s, %s failures: %zu allocation points\n", name, persistent ? "persistent" : "transient", n - 1);
    }
}

static void *compile_case(const onnx_case *c, int no_delegate, size_t *size)
{
    kiln_compile_options opt = {.struct_size = sizeof opt, .input_shapes = c->shapes, .n_input_shapes = c->n_inputs,
                                .input_shapes_by_position = 1, .no_delegate = no_delegate};
    kiln_compile_method m = {.name = "forward", .model_data = c->model, .model_size = c->model_size};
    void *data = NULL;
    char message[256];
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &data, size, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "compile failed: %s\n", message);
    REQUIRE(st == KILN_OK);
    return data;
}

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[512], why[256];
        snprintf(dir, sizeof dir, "%s/%s", UNIT_TESTDATA, cases[i]);
        onnx_case c;
        if (!onnx_case_load(&c, dir, why, sizeof why)) {
            fprintf(stderr, "cannot load %s: %s\n", dir, why);
            return 1;
        }
        for (int no_delegate = 1; no_delegate >= 0; no_delegate--) {
            char name[300];
            snprintf(name, sizeof name, "%s (%s)", cases[i], no_delegate ? "portable" : "cpu backend");
            unit_section(name);
            size_t size;
            void *program = compile_case(&c, no_delegate, &size);
            stress_runtime(name, program, size, &c);
            free(program);
            stress_compile(name, &c, no_delegate);
        }
        onnx_case_free(&c);
    }
    return unit_finish("test_alloc_failure");
}
