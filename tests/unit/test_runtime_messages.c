/* test_runtime_messages.c — a forced target is checked at kiln_module_create, and failure
 * messages belong to the caller (issue 12, item 15).
 *
 * Layer: tests (runtime and cpu backend through include/kiln/kiln.h). Programs are DELEGATE
 * calls over hand-built context binaries (test_cpu_support.h) plus one compiled portable-only
 * program. Checks:
 *  - a target no context binary has a record for, or no backend knows, fails at create with
 *    KILN_ERROR_NO_RUNNABLE_TARGET and a message naming what exists; one that some binary has
 *    is accepted; a portable-only program only needs a known name;
 *  - kiln_method_load_with_message fills the caller's buffer ("" on success);
 *  - two threads loading different failing methods of one module at once each get their own
 *    message, from the call and from kiln_module_last_error (per thread), for many rounds (this
 *    test runs under TSan too).
 */
#include <pthread.h>

#include "kiln/compiler.h"
#include "test_cpu_support.h"

#define UNIT_TESTDATA "/usr/share/libonnx-testdata/data"

static kiln_status create(kiln_program *p, const char *target, kiln_module **m, char *message, size_t size)
{
    kiln_module_options o = {.struct_size = sizeof o, .num_threads = 1, .target = target};
    *m = (kiln_module *)(uintptr_t)1;
    kiln_status st = kiln_module_create_with_message(p, &o, m, message, size);
    if (st != KILN_OK) EXPECT(*m == NULL);
    return st;
}

static void test_create_targets(void)
{
    printf("checking forced targets at kiln_module_create\n");
    tb_spec generic = {.n = 16};
    const char *const two[2] = {"generic", "x86-64-v3"};
    tb_spec both = {.n = 16, .targets = two, .n_targets = 2};
    tb_binary a = tb_build(&generic), b = tb_build(&both);
    tp_method methods[2] = {{"a", 16, {&a}, 1}, {"b", 16, {&b}, 1}};
    char message[512];
    kiln_module *m;

    tp_program only_a = tp_build(methods, 1);
    kiln_program *p = tp_open(&only_a);
    EXPECT_STATUS(create(p, "armv9-a", &m, message, sizeof message), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(strstr(message, "target 'armv9-a' is not a target this runtime knows (known targets: generic, x86-64-v3") == message);
    EXPECT(strstr(message, "this program's context binaries have records for: generic") != NULL);
    EXPECT_STATUS(create(p, "x86-64-v3", &m, message, sizeof message), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(strcmp(message, "no context binary of this program has a record for target 'x86-64-v3'; records: generic") == 0);
    EXPECT_STATUS(create(p, "x86-64-v3", &m, NULL, 0), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT_STATUS(kiln_module_create(p, &(kiln_module_options){sizeof(kiln_module_options), NULL, NULL, 1, "armv9-a"}, &m),
                  KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT_STATUS(create(p, "bad\nname\x1b[31m", &m, message, sizeof message), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(strchr(message, '\n') == NULL && strchr(message, '\x1b') == NULL); /* escaped: one line */
    EXPECT_OK(create(p, "generic", &m, message, sizeof message));
    EXPECT(strcmp(message, "") == 0);
    kiln_module_destroy(m);
    EXPECT_OK(create(p, NULL, &m, message, sizeof message));
    kiln_module_destroy(m);
    kiln_program_close(p);
    tp_free(&only_a);

    /* One binary with the record is enough at create; a method whose binary lacks it still
       fails at its load, saying so. */
    tp_program mixed = tp_build(methods, 2);
    p = tp_open(&mixed);
    EXPECT_OK(create(p, "x86-64-v3", &m, message, sizeof message));
    kiln_method *f = NULL;
    EXPECT_STATUS(kiln_method_load_with_message(m, "a", &f, message, sizeof message), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(f == NULL);
    EXPECT(strstr(message, "loading method 'a' failed: target 'x86-64-v3' is not in this context binary") == message);
    EXPECT(strcmp(kiln_module_last_error(m), message) == 0);
    EXPECT_STATUS(kiln_method_load_with_message(m, "nope", &f, message, sizeof message), KILN_ERROR_NOT_FOUND);
    EXPECT(strcmp(message, "loading method 'nope' failed: the program has no method 'nope'") == 0);
    if (kiln_cpu_target_runnable(kiln_cpu_target_find("x86-64-v3"))) {
        EXPECT_OK(kiln_method_load_with_message(m, "b", &f, message, sizeof message));
        EXPECT(strcmp(message, "") == 0);
    }
    kiln_module_destroy(m);
    kiln_program_close(p);
    tp_free(&mixed);
    free(a.data);
    free(b.data);
}

static void test_portable_program(void)
{
    printf("checking forced targets on a program without context binaries\n");
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = 1};
    kiln_compile_method cm = {.name = "forward", .model_path = UNIT_TESTDATA "/node/test_relu/model.onnx"};
    void *data = NULL;
    size_t size = 0;
    char message[512];
    kiln_status st = kiln_compile_memory(&opt, &cm, 1, &data, &size, message, sizeof message);
    if (st != KILN_OK) {
        fprintf(stderr, "cannot compile node/test_relu: %s\n", message);
        test_failures++;
        return;
    }
    kiln_program *p = NULL;
    EXPECT_OK(kiln_program_open_memory(data, size, &p));
    kiln_module *m;
    EXPECT_STATUS(create(p, "armv9-a", &m, message, sizeof message), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(strstr(message, "target 'armv9-a' is not a target this runtime knows (known targets: generic") == message);
    /* A known name applies to nothing here, whatever this CPU runs. */
    EXPECT_OK(create(p, "x86-64-v4", &m, message, sizeof message));
    kiln_module_destroy(m);
    kiln_program_close(p);
    kiln_free(kiln_allocator_default(), data);
}

/* ---- concurrent failing loads ------------------------------------------------------------------ */

typedef struct loader {
    kiln_module *module;
    const char *method;
    const char *reason;     /* what its message must say */
    atomic_int *wrong;
} loader;

static void *load_failing(void *arg)
{
    loader *l = arg;
    for (int i = 0; i < 400; i++) {
        char message[512];
        kiln_method *f = NULL;
        kiln_status st = kiln_method_load_with_message(l->module, l->method, &f, message, sizeof message);
        if (st == KILN_OK || !strstr(message, l->reason) || !strstr(kiln_module_last_error(l->module), l->reason)) {
            fprintf(stderr, "thread loading '%s' got %s: '%s' / last error '%s'\n", l->method, kiln_status_name(st),
                    message, kiln_module_last_error(l->module));
            atomic_fetch_add(l->wrong, 1);
            kiln_method_unload(f);
            break;
        }
    }
    return NULL;
}

static void test_concurrent_messages(void)
{
    printf("checking two threads loading failing methods at once\n");
    tb_spec small_group = {.n = 32, .group_scratch_size = 64};
    const char *const unknown[1] = {"x86-64-v9"};
    tb_spec foreign = {.n = 32, .targets = unknown, .n_targets = 1};
    tb_binary a = tb_build(&small_group), b = tb_build(&foreign);
    tp_method methods[2] = {{"small", 32, {&a}, 1}, {"foreign", 32, {&b}, 1}};
    tp_program prog = tp_build(methods, 2);
    kiln_program *p = tp_open(&prog);
    kiln_module *m = cpu_module_create(p, NULL, NULL, NULL);
    atomic_int wrong = 0;
    loader ls[2] = {{m, "small", "scratch group size 64 is smaller", &wrong},
                    {m, "foreign", "no record of this context binary runs here: binary has [x86-64-v9]", &wrong}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, load_failing, &ls[i]) != 0) abort();
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    EXPECT(atomic_load(&wrong) == 0);
    EXPECT(strcmp(kiln_module_last_error(m), "") == 0); /* this thread loaded nothing */
    kiln_module_destroy(m);
    kiln_program_close(p);
    tp_free(&prog);
    free(a.data);
    free(b.data);
}

int main(void)
{
    test_create_targets();
    test_portable_program();
    test_concurrent_messages();
    return test_report("test_runtime_messages");
}
