/* test_runtime_api.c — black-box tests of the runtime API (include/kiln/kiln.h only).
 *
 * Layer: tests (runtime, public API). Compiles node/test_add (x + y, f32 [3,4,5]) with
 * kiln_compile_memory, once on the portable kernels and once delegated to the cpu backend, and
 * checks for both: NULL arguments, wrong index/dtype/shape statuses, the state rules (execute
 * before every input is set, get_output before execute), stale method handles after unload,
 * a program closed before its module still working, two modules of one program staying
 * independent, and output views staying valid until the next execute.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "test_runtime_support.h"

static void fill(float *v, float scale, float offset)
{
    for (int i = 0; i < N; i++) v[i] = scale * (float)i + offset;
}

/* Sets x and y, executes, and checks that output 0 is x + y. */
static void run_add(kiln_method *h, float xs, float ys)
{
    float x[N], y[N];
    fill(x, xs, 1), fill(y, ys, -2);
    kiln_tensor tx = tensor_of(x), ty = tensor_of(y), out;
    EXPECT_STATUS(kiln_method_set_input(h, 0, &tx), KILN_OK);
    EXPECT_STATUS(kiln_method_set_input(h, 1, &ty), KILN_OK);
    EXPECT_STATUS(kiln_method_execute(h), KILN_OK);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &out), KILN_OK);
    EXPECT(out.dtype == KILN_DTYPE_F32 && out.rank == 3 && out.shape[0] == 3 && out.shape[1] == 4 && out.shape[2] == 5);
    const float *o = out.data;
    bool ok = o != NULL;
    for (int i = 0; ok && i < N; i++) ok = o[i] == x[i] + y[i];
    EXPECT(ok);
}

static kiln_module *new_module(kiln_program *p)
{
    kiln_module *m = NULL;
    EXPECT_STATUS(kiln_module_create(p, NULL, &m), KILN_OK);
    REQUIRE(m);
    return m;
}

static void test_null_arguments(kiln_program *p)
{
    unit_section("NULL arguments, bad options, unknown names");
    kiln_program *np = (kiln_program *)(uintptr_t)1;
    kiln_module *m = (kiln_module *)(uintptr_t)1;
    kiln_method *h = (kiln_method *)(uintptr_t)1;
    EXPECT_STATUS(kiln_program_open(NULL, &np), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(np == NULL);
    EXPECT_STATUS(kiln_program_open("/nonexistent/x.kiln", NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_program_open("/nonexistent/x.kiln", &np), KILN_ERROR_IO);
    EXPECT_STATUS(kiln_program_open_memory(NULL, 100, &np), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(kiln_program_method_count(NULL) == 0);
    EXPECT(kiln_program_method_name(NULL, 0) == NULL);
    EXPECT(kiln_program_method_name(p, 1) == NULL);
    EXPECT(strcmp(kiln_program_method_name(p, 0), "forward") == 0);
    kiln_program_close(NULL);

    EXPECT_STATUS(kiln_module_create(NULL, NULL, &m), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(m == NULL);
    EXPECT_STATUS(kiln_module_create(p, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    kiln_module_options opt = {.struct_size = sizeof opt - 1};
    EXPECT_STATUS(kiln_module_create(p, &opt, &m), KILN_ERROR_INVALID_ARGUMENT);
    opt.struct_size = sizeof opt;
    opt.num_threads = -1;
    EXPECT_STATUS(kiln_module_create(p, &opt, &m), KILN_ERROR_INVALID_ARGUMENT);
    opt.num_threads = 0;
    kiln_allocator no_free = {NULL, NULL, NULL};
    opt.allocator = &no_free;
    EXPECT_STATUS(kiln_module_create(p, &opt, &m), KILN_ERROR_INVALID_ARGUMENT);
    kiln_module_destroy(NULL);

    m = new_module(p);
    EXPECT_STATUS(kiln_method_load(NULL, "forward", &h), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(h == NULL);
    EXPECT_STATUS(kiln_method_load(m, NULL, &h), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_load(m, "forward", NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_load(m, "backward", &h), KILN_ERROR_NOT_FOUND);
    EXPECT_STATUS(kiln_method_load(m, "", &h), KILN_ERROR_NOT_FOUND);
    EXPECT_STATUS(kiln_method_load(m, "forward", &h), KILN_OK);
    kiln_tensor t;
    EXPECT_STATUS(kiln_method_set_input(NULL, 0, &t), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_set_input(h, 0, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_execute(NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_get_output(NULL, 0, &t), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_get_output(h, 0, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_input_info(NULL, 0, &t), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_input_info(h, 0, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_output_info(h, 0, NULL), KILN_ERROR_INVALID_ARGUMENT);
    uint64_t id;
    EXPECT_STATUS(kiln_method_context_id(NULL, 0, &id), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_context_id(h, 0, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(kiln_method_input_count(NULL) == 0 && kiln_method_output_count(NULL) == 0);
    EXPECT(kiln_method_input_name(NULL, 0) == NULL && kiln_method_output_name(NULL, 0) == NULL);
    EXPECT(kiln_method_delegate_count(NULL) == 0);
    kiln_method_unload(NULL);
    kiln_module_destroy(m); /* unloads h */
}

static void test_io_checks(kiln_program *p)
{
    unit_section("input/output metadata, wrong index, dtype, shape and data");
    kiln_module *m = new_module(p);
    kiln_method *h;
    REQUIRE(kiln_method_load(m, "forward", &h) == KILN_OK);
    EXPECT(kiln_method_input_count(h) == 2 && kiln_method_output_count(h) == 1);
    EXPECT(strcmp(kiln_method_input_name(h, 0), "x") == 0 && strcmp(kiln_method_input_name(h, 1), "y") == 0);
    EXPECT(strcmp(kiln_method_output_name(h, 0), "sum") == 0);
    EXPECT(kiln_method_input_name(h, 2) == NULL && kiln_method_output_name(h, 1) == NULL);
    kiln_tensor info;
    EXPECT_STATUS(kiln_method_input_info(h, 1, &info), KILN_OK);
    EXPECT(info.dtype == KILN_DTYPE_F32 && info.rank == 3 && info.shape[0] == 3 && info.shape[1] == 4 &&
           info.shape[2] == 5 && info.data == NULL);
    EXPECT_STATUS(kiln_method_output_info(h, 0, &info), KILN_OK);
    EXPECT(info.dtype == KILN_DTYPE_F32 && info.rank == 3 && info.shape[2] == 5 && info.data == NULL);
    EXPECT_STATUS(kiln_method_input_info(h, 2, &info), KILN_ERROR_INDEX_OUT_OF_RANGE);
    EXPECT_STATUS(kiln_method_output_info(h, 1, &info), KILN_ERROR_INDEX_OUT_OF_RANGE);

    float x[N];
    fill(x, 1, 0);
    kiln_tensor t = tensor_of(x);
    EXPECT_STATUS(kiln_method_set_input(h, 2, &t), KILN_ERROR_INDEX_OUT_OF_RANGE);
    EXPECT_STATUS(kiln_method_set_input(h, SIZE_MAX, &t), KILN_ERROR_INDEX_OUT_OF_RANGE);
    t.dtype = KILN_DTYPE_I32;
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_ERROR_DTYPE_MISMATCH);
    t = tensor_of(x);
    t.rank = 2;
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_ERROR_SHAPE_MISMATCH);
    t = tensor_of(x);
    t.shape[1] = 5, t.shape[2] = 4;                 /* same element count, other shape */
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_ERROR_SHAPE_MISMATCH);
    t = tensor_of(x);
    t.rank = KILN_MAX_RANK + 1;
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_ERROR_SHAPE_MISMATCH);
    t = tensor_of(NULL);
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_method_get_output(h, 1, &info), KILN_ERROR_INDEX_OUT_OF_RANGE);
    kiln_module_destroy(m);
}

static void test_state_rules(kiln_program *p)
{
    unit_section("execute before set_input, get_output before execute, failed executes");
    kiln_module *m = new_module(p);
    kiln_method *h;
    REQUIRE(kiln_method_load(m, "forward", &h) == KILN_OK);
    kiln_tensor out;
    EXPECT_STATUS(kiln_method_execute(h), KILN_ERROR_INVALID_STATE);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &out), KILN_ERROR_INVALID_STATE);
    float x[N];
    fill(x, 1, 0);
    kiln_tensor t = tensor_of(x);
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_OK);
    EXPECT_STATUS(kiln_method_execute(h), KILN_ERROR_INVALID_STATE);   /* y still unset */
    EXPECT_STATUS(kiln_method_get_output(h, 0, &out), KILN_ERROR_INVALID_STATE);
    EXPECT_STATUS(kiln_method_set_input(h, 1, &t), KILN_OK);
    EXPECT_STATUS(kiln_method_execute(h), KILN_OK);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &out), KILN_OK);
    /* The caller's buffer is not retained: changing it after set_input changes nothing. */
    fill(x, 100, 100);
    EXPECT_STATUS(kiln_method_execute(h), KILN_OK);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &out), KILN_OK);
    EXPECT(((const float *)out.data)[7] == 14.0f);
    kiln_module_destroy(m);
}

static void test_stale_handles(kiln_program *p)
{
    unit_section("a method handle after unload is stale, not freed memory");
    kiln_module *m = new_module(p);
    kiln_method *h;
    REQUIRE(kiln_method_load(m, "forward", &h) == KILN_OK);
    run_add(h, 1, 2);
    kiln_method_unload(h);
    expect_stale_method(h);                         /* ends with a second unload, ignored */
    /* A fresh load gives a working handle; the stale one stays stale. */
    kiln_method *h2;
    EXPECT_STATUS(kiln_method_load(m, "forward", &h2), KILN_OK);
    run_add(h2, 3, 1);
    EXPECT_STATUS(kiln_method_execute(h), KILN_ERROR_STALE_HANDLE);
    kiln_module_destroy(m);
}

static void test_program_lifetime(const void *bytes, size_t size)
{
    unit_section("a program closed before its module is destroyed keeps working");
    char path[] = "/tmp/kiln_test_runtime_api_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0 && write(fd, bytes, size) == (ssize_t)size);
    close(fd);
    kiln_program *p;
    EXPECT_STATUS(kiln_program_open(path, &p), KILN_OK);
    unlink(path);                                   /* the mapping outlives the name */
    kiln_module *m = new_module(p);
    kiln_program_close(p);
    kiln_method *h;
    EXPECT_STATUS(kiln_method_load(m, "forward", &h), KILN_OK);
    run_add(h, 2, 3);
    kiln_method_unload(h);
    EXPECT_STATUS(kiln_method_load(m, "forward", &h), KILN_OK); /* loads after close too */
    run_add(h, -1, 0.5f);
    kiln_module_destroy(m);                         /* the last reference: unmaps */
}

static void test_two_modules(kiln_program *p)
{
    unit_section("two modules of one program are independent");
    kiln_module *a = new_module(p), *b = new_module(p);
    kiln_method *ha, *hb;
    REQUIRE(kiln_method_load(a, "forward", &ha) == KILN_OK);
    REQUIRE(kiln_method_load(b, "forward", &hb) == KILN_OK);
    run_add(ha, 1, 1);
    run_add(hb, -3, 7);
    kiln_tensor oa, ob;
    EXPECT_STATUS(kiln_method_get_output(ha, 0, &oa), KILN_OK);
    EXPECT_STATUS(kiln_method_get_output(hb, 0, &ob), KILN_OK);
    EXPECT(oa.data != ob.data);
    EXPECT(((const float *)oa.data)[10] == 19.0f && ((const float *)ob.data)[10] == 39.0f);
    /* Methods of one module are independent too. */
    kiln_method *ha2;
    REQUIRE(kiln_method_load(a, "forward", &ha2) == KILN_OK);
    run_add(ha2, 0, 0);
    EXPECT(((const float *)oa.data)[10] == 19.0f);
    kiln_method_unload(ha);
    run_add(hb, 2, 2);
    kiln_module_destroy(a);
    run_add(hb, 5, 5);
    kiln_module_destroy(b);
}

static void test_output_views(kiln_program *p)
{
    unit_section("output views stay valid until the next execute");
    kiln_module *m = new_module(p);
    kiln_method *h;
    REQUIRE(kiln_method_load(m, "forward", &h) == KILN_OK);
    run_add(h, 1, 0);
    kiln_tensor first, again;
    EXPECT_STATUS(kiln_method_get_output(h, 0, &first), KILN_OK);
    float before[N];
    memcpy(before, first.data, sizeof before);
    /* Reading outputs, input metadata or setting inputs does not disturb the view. */
    EXPECT_STATUS(kiln_method_get_output(h, 0, &again), KILN_OK);
    EXPECT(again.data == first.data);
    float x[N];
    fill(x, 9, 9);
    kiln_tensor t = tensor_of(x);
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_OK);
    EXPECT(memcmp(first.data, before, sizeof before) == 0);
    /* The next execute may reuse the memory; a fresh get_output shows the new result. */
    EXPECT_STATUS(kiln_method_execute(h), KILN_OK);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &again), KILN_OK);
    EXPECT(((const float *)again.data)[1] == 16.0f); /* x[1] = 18, y[1] = -2 from run_add */
    kiln_module_destroy(m);
}

static void test_delegates(kiln_program *p, bool delegated)
{
    unit_section(delegated ? "delegate count and context ids (cpu backend)" : "no delegates on portable kernels");
    kiln_module *m = new_module(p);
    kiln_method *h, *h2;
    REQUIRE(kiln_method_load(m, "forward", &h) == KILN_OK);
    REQUIRE(kiln_method_load(m, "forward", &h2) == KILN_OK);
    uint64_t id = 0, id2 = 0;
    if (!delegated) {
        EXPECT(kiln_method_delegate_count(h) == 0);
        EXPECT_STATUS(kiln_method_context_id(h, 0, &id), KILN_ERROR_INDEX_OUT_OF_RANGE);
    } else {
        EXPECT(kiln_method_delegate_count(h) == 1);
        EXPECT_STATUS(kiln_method_context_id(h, 0, &id), KILN_OK);
        EXPECT_STATUS(kiln_method_context_id(h2, 0, &id2), KILN_OK);
        EXPECT(id != 0 && id == id2); /* methods of one module share contexts */
        EXPECT_STATUS(kiln_method_context_id(h, 1, &id), KILN_ERROR_INDEX_OUT_OF_RANGE);
        kiln_module *other = new_module(p);
        kiln_method *h3;
        REQUIRE(kiln_method_load(other, "forward", &h3) == KILN_OK);
        uint64_t id3 = 0;
        EXPECT_STATUS(kiln_method_context_id(h3, 0, &id3), KILN_OK);
        EXPECT(id3 != id2);           /* default modules never share */
        kiln_module_destroy(other);
    }
    kiln_module_destroy(m);
}

static void test_program(const char *what, int no_delegate)
{
    printf("== node/test_add %s\n", what);
    size_t size;
    void *bytes = unit_compile_case("node/test_add", no_delegate, &size);
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(bytes, size, &p) == KILN_OK);
    EXPECT(kiln_program_method_count(p) == 1);
    test_null_arguments(p);
    test_io_checks(p);
    test_state_rules(p);
    test_stale_handles(p);
    test_two_modules(p);
    test_output_views(p);
    test_delegates(p, !no_delegate);
    kiln_program_close(p);
    test_program_lifetime(bytes, size);
    free(bytes);
}

static void test_compile_errors(void)
{
    unit_section("kiln_compile_memory argument and model errors");
    kiln_compile_options opt = {.struct_size = sizeof opt};
    static const uint8_t garbage[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x02};
    kiln_compile_method m = {.name = "forward", .model_data = garbage, .model_size = sizeof garbage};
    void *data = (void *)1;
    size_t size = 1;
    char message[200];
    EXPECT_STATUS(kiln_compile_memory(&opt, &m, 1, &data, &size, message, sizeof message), KILN_ERROR_MODEL);
    EXPECT(data == NULL && size == 0 && message[0] != '\0');
    EXPECT_STATUS(kiln_compile_memory(NULL, &m, 1, &data, &size, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_compile_memory(&opt, NULL, 0, &data, &size, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_compile_memory(&opt, &m, 1, NULL, &size, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    kiln_compile_options small = {.struct_size = sizeof small - 1};
    EXPECT_STATUS(kiln_compile_memory(&small, &m, 1, &data, &size, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    kiln_compile_method twice[2] = {
        {.name = "forward", .model_path = UNIT_TESTDATA "/node/test_relu/model.onnx"},
        {.name = "forward", .model_path = UNIT_TESTDATA "/node/test_add/model.onnx"},
    };
    EXPECT_STATUS(kiln_compile_memory(&opt, twice, 2, &data, &size, message, sizeof message), KILN_ERROR_COMPILE_SPEC);
    kiln_compile_method missing = {.name = "forward", .model_path = "/nonexistent/model.onnx"};
    /* An unreadable model is an invalid input (compiler.h), and the message says why. */
    EXPECT_STATUS(kiln_compile_memory(&opt, &missing, 1, &data, &size, message, sizeof message), KILN_ERROR_MODEL);
    EXPECT(data == NULL);
    EXPECT(strstr(message, "/nonexistent/model.onnx': No such file or directory") != NULL);
}

int main(void)
{
    test_program("on portable kernels", 1);
    test_program("delegated to the cpu backend", 0);
    test_compile_errors();
    return unit_finish("test_runtime_api");
}
