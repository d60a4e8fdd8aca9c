/* test_cpu_models.c — the delegate lifetime rules on programs the compiler produced.
 *
 * Layer: tests (black-box: include/kiln/kiln.h + kiln/compiler.h; ONNX cases through the
 * conformance loader). Three ONNX backend-test models — a convolution and a linear layer with
 * weights and planned scratch, and a Relu — are compiled into one program as methods "conv",
 * "linear" and "relu" (delegation on), and checked against the cases' expected outputs:
 *  - every method runs and matches; each of its delegate calls has a context id;
 *  - two modules of the program get different ids; two modules on one allocator share;
 *  - destroying either module of two leaves the other correct;
 *  - unloading a method keeps the others running; the last unload destroys its contexts and their
 *    scratch groups (stats); reload works;
 *  - an explicit group shared by two modules reserves one buffer, as large as the largest member;
 *  - a program compiled for every target runs each runnable record when forced, with the same
 *    results, and names the missing target otherwise;
 *  - an allocator failing its N-th allocation for every N: clear statuses, retry succeeds, no leak.
 *  - one model compiled as two methods: shared context when the compiler gave both one binary;
 *    while it names each graph after its method the binaries differ, which the test reports (the
 *    runtime side of the rule is covered by test_cpu_lifetime on shared binaries).
 */
#include "compare.h"
#include "onnx_case.h"
#include "test_cpu_support.h"

#define N_CASES 3
static const char *const case_dirs[N_CASES] = {"pytorch-converted/test_Conv2d", "pytorch-converted/test_Linear",
                                               "node/test_relu"};
static const char *const method_names[N_CASES] = {"conv", "linear", "relu"};
static onnx_case cases[N_CASES];

typedef struct compiled {
    void *bytes;
    size_t size;
    kiln_program *program;
} compiled;

static bool compile(compiled *c, const char *const *targets, size_t n_targets, const char *const *names, size_t n)
{
    kiln_compile_method methods[N_CASES * 2];
    for (size_t i = 0; i < n; i++)
        methods[i] = (kiln_compile_method){names[i], NULL, cases[i % N_CASES].model, cases[i % N_CASES].model_size};
    kiln_compile_options opt = {.struct_size = sizeof opt, .targets = targets, .n_targets = n_targets};
    char msg[512] = "";
    kiln_status st = kiln_compile_memory(&opt, methods, n, &c->bytes, &c->size, msg, sizeof msg);
    if (st != KILN_OK) {
        fprintf(stderr, "compile: %s: %s\n", kiln_status_name(st), msg);
        test_failures++;
        return false;
    }
    EXPECT_OK(kiln_program_open_memory(c->bytes, c->size, &c->program));
    return c->program != NULL;
}

static void release(compiled *c)
{
    kiln_program_close(c->program);
    kiln_free(kiln_allocator_default(), c->bytes);
}

/* Run method m on case c's inputs and compare with its expected outputs. */
static bool run_case(kiln_method *m, const onnx_case *c)
{
    if (!m) return false;
    for (size_t i = 0; i < c->n_inputs; i++)
        if (kiln_method_set_input(m, i, &c->inputs[i]) != KILN_OK) return false;
    if (kiln_method_execute(m) != KILN_OK) return false;
    for (size_t j = 0; j < c->n_expected; j++) {
        kiln_tensor out;
        char why[256];
        if (kiln_method_get_output(m, j, &out) != KILN_OK) return false;
        if (!kiln_test_compare(&out, &c->expected[j], 1e-3, 1e-7, why, sizeof why)) {
            fprintf(stderr, "output %zu: %s\n", j, why);
            return false;
        }
    }
    return true;
}

static void test_run_and_identity(compiled *c)
{
    kiln_runtime_stats s0 = stats_now();
    kiln_module *m1 = cpu_module_create(c->program, NULL, NULL, NULL), *m2 = cpu_module_create(c->program, NULL, NULL, NULL);
    kiln_method *a[N_CASES], *b[N_CASES];
    for (int i = 0; i < N_CASES; i++) {
        a[i] = cpu_method_load(m1, method_names[i]);
        b[i] = cpu_method_load(m2, method_names[i]);
        EXPECT(kiln_method_delegate_count(a[i]) >= 1);
        EXPECT(context_id(a[i], 0) != 0 && context_id(a[i], 0) != context_id(b[i], 0));
        EXPECT(run_case(a[i], &cases[i]) && run_case(b[i], &cases[i]));
    }
    EXPECT(stats_now().live_contexts >= s0.live_contexts + 2 * N_CASES);
    kiln_module_destroy(m1); /* m2 keeps executing */
    for (int i = 0; i < N_CASES; i++) EXPECT(run_case(b[i], &cases[i]));
    kiln_module *m3 = cpu_module_create(c->program, NULL, NULL, NULL);
    kiln_method *c0 = cpu_method_load(m3, method_names[0]);
    kiln_module_destroy(m2); /* and the other order */
    EXPECT(run_case(c0, &cases[0]));
    kiln_module_destroy(m3);
    EXPECT(stats_now().live_contexts == s0.live_contexts);

    fault_alloc fa; /* one allocator object: one identity, shared contexts */
    fault_alloc_init(&fa, 0);
    kiln_module *s1 = cpu_module_create(c->program, &fa.base, NULL, NULL), *s2 = cpu_module_create(c->program, &fa.base, NULL, NULL);
    kiln_method *x = cpu_method_load(s1, "linear"), *y = cpu_method_load(s2, "linear");
    EXPECT(context_id(x, 0) == context_id(y, 0));
    kiln_module_destroy(s1);
    EXPECT(run_case(y, &cases[1]));
    kiln_module_destroy(s2);
    EXPECT(atomic_load(&fa.live) == 0);
}

static void test_references_and_groups(compiled *c)
{
    kiln_runtime_stats s0 = stats_now();
    kiln_module *m = cpu_module_create(c->program, NULL, NULL, NULL);
    kiln_method *conv = cpu_method_load(m, "conv"), *linear = cpu_method_load(m, "linear"), *relu = cpu_method_load(m, "relu");
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_scratch_groups > s0.live_scratch_groups); /* conv and linear plan scratch */
    kiln_method_unload(conv);
    EXPECT(run_case(linear, &cases[1]) && run_case(relu, &cases[2]));
    kiln_method_unload(linear);
    kiln_method_unload(relu);
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_contexts == s0.live_contexts && s2.live_scratch_groups == s0.live_scratch_groups);
    EXPECT(s2.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    conv = cpu_method_load(m, "conv");
    EXPECT(run_case(conv, &cases[0]));
    kiln_module_destroy(m);

    /* One explicit group over two modules: one buffer, the largest member's size. */
    kiln_scratch_group *g = NULL;
    EXPECT_OK(kiln_scratch_group_create(&g));
    kiln_module *g1 = cpu_module_create(c->program, NULL, g, NULL), *g2 = cpu_module_create(c->program, NULL, g, NULL);
    kiln_scratch_group_release(g);
    kiln_method *l1 = cpu_method_load(g1, "linear");
    uint64_t linear_bytes = stats_now().scratch_bytes_reserved - s0.scratch_bytes_reserved;
    kiln_method *c2 = cpu_method_load(g2, "conv"), *l2 = cpu_method_load(g2, "linear");
    kiln_runtime_stats s3 = stats_now();
    EXPECT(s3.live_scratch_groups == s0.live_scratch_groups + 1);
    EXPECT(s3.scratch_bytes_reserved - s0.scratch_bytes_reserved >= linear_bytes);
    EXPECT(run_case(l1, &cases[1]) && run_case(c2, &cases[0]) && run_case(l2, &cases[1]));
    kiln_module_destroy(g1);
    kiln_module_destroy(g2);
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups);
}

/* The same model compiled as two methods: shared only if the compiler gave them one binary. */
static void test_same_model_twice(void)
{
    static const char *const twice[2] = {"first", "second"};
    compiled c;
    kiln_compile_method methods[2] = {{twice[0], NULL, cases[1].model, cases[1].model_size},
                                      {twice[1], NULL, cases[1].model, cases[1].model_size}};
    kiln_compile_options opt = {.struct_size = sizeof opt};
    char msg[512] = "";
    EXPECT_OK(kiln_compile_memory(&opt, methods, 2, &c.bytes, &c.size, msg, sizeof msg));
    EXPECT_OK(kiln_program_open_memory(c.bytes, c.size, &c.program));
    kiln_module *m = cpu_module_create(c.program, NULL, NULL, NULL);
    kiln_method *a = cpu_method_load(m, "first"), *b = cpu_method_load(m, "second");
    EXPECT(run_case(a, &cases[1]) && run_case(b, &cases[1]));
    if (context_id(a, 0) == context_id(b, 0))
        printf("same model twice: one context binary, one context\n");
    else
        printf("NOTE: the compiler gave the two methods different context binaries (graph named after the "
               "method), so they cannot share a context; the runtime's sharing rule is checked by "
               "test_cpu_lifetime on shared binaries\n");
    kiln_module_destroy(m);
    release(&c);
}

static void test_forced_targets(void)
{
    static const char *const all[3] = {"generic", "x86-64-v3", "x86-64-v4"};
    compiled c;
    if (!compile(&c, all, 3, method_names, N_CASES)) return;
    for (int t = 0; t < 3; t++) {
        kiln_module *m = cpu_module_create(c.program, NULL, NULL, all[t]);
        bool runnable = kiln_cpu_target_runnable(kiln_cpu_target_find(all[t]));
        for (int i = 0; i < N_CASES; i++) {
            kiln_method *f = NULL;
            kiln_status st = kiln_method_load(m, method_names[i], &f);
            EXPECT_STATUS(st, runnable ? KILN_OK : KILN_ERROR_NO_RUNNABLE_TARGET);
            if (st == KILN_OK) EXPECT(run_case(f, &cases[i]));
            else if (!runnable) EXPECT(strstr(kiln_module_last_error(m), "cannot run here") != NULL);
        }
        kiln_module_destroy(m);
    }
    /* A name no record has is refused when the module is created, naming the records. */
    kiln_module_options o = {.struct_size = sizeof o, .num_threads = 1, .target = "armv8.2-a"};
    kiln_module *m = NULL;
    char message[512];
    EXPECT_STATUS(kiln_module_create_with_message(c.program, &o, &m, message, sizeof message), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(m == NULL);
    EXPECT(strstr(message, "this program's context binaries have records for: generic, x86-64-v3, x86-64-v4") != NULL);
    release(&c);
}

/* Retry a call that failed on the injected allocation, with the allocator healed. */
#define RETRY(call, fa)                                                                          \
    do {                                                                                         \
        kiln_status st_ = (call);                                                                \
        if (st_ != KILN_OK) {                                                                    \
            EXPECT_STATUS(st_, KILN_ERROR_OUT_OF_MEMORY);                                        \
            (fa)->fail_at = 0;                                                                   \
            EXPECT_OK(call);                                                                     \
        }                                                                                        \
    } while (0)

static void test_faults(compiled *c)
{
    long n = 1;
    for (; n < 10000; n++) {
        fault_alloc fa;
        fault_alloc_init(&fa, n);
        kiln_runtime_stats s0 = stats_now();
        kiln_module_options o = {sizeof o, &fa.base, NULL, 1, NULL};
        kiln_module *m = NULL;
        RETRY(kiln_module_create(c->program, &o, &m), &fa);
        for (int i = 0; m && i < N_CASES; i++) {
            kiln_method *f = NULL;
            RETRY(kiln_method_load(m, method_names[i], &f), &fa);
            EXPECT(run_case(f, &cases[i]));
        }
        kiln_module_destroy(m);
        kiln_runtime_stats s1 = stats_now();
        EXPECT(atomic_load(&fa.live) == 0);
        EXPECT(s1.live_contexts == s0.live_contexts && s1.live_scratch_groups == s0.live_scratch_groups);
        EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved);
        if (n > atomic_load(&fa.count)) break;
    }
    printf("faults: failed each of %ld allocations in turn\n", n - 1);
}

int main(void)
{
    for (int i = 0; i < N_CASES; i++) {
        char dir[512], why[256];
        snprintf(dir, sizeof dir, "%s/%s", ONNX_CASE_DEFAULT_ROOT, case_dirs[i]);
        if (!onnx_case_load(&cases[i], dir, why, sizeof why)) {
            printf("SKIP: %s: %s (install libonnx-testdata)\n", case_dirs[i], why);
            return 0;
        }
    }
    compiled c;
    if (compile(&c, NULL, 0, method_names, N_CASES)) {
        test_run_and_identity(&c);
        test_references_and_groups(&c);
        test_faults(&c);
        release(&c);
    }
    test_same_model_twice();
    test_forced_targets();
    for (int i = 0; i < N_CASES; i++) onnx_case_free(&cases[i]);
    return test_report("test_cpu_models");
}
