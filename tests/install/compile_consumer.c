/* compile_consumer.c — a program outside the kiln tree that uses the installed compiler
 * library: it compiles a one-node ONNX model (y = x + x) with kiln/compiler.h into program
 * bytes in memory, runs them with kiln/kiln.h and checks the result. Built by
 * tests/install/check_install.sh through pkg-config (kiln-compiler) and find_package(kiln)
 * (kiln::kiln_compiler, kiln::kiln_compiler_static). */
#include <kiln/compiler.h>
#include <kiln/kiln.h>
#include <stdio.h>
#include <stdlib.h>

/* The model, as /usr/bin/python3 with onnx serialises it:
 *   g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"], name="double")], "twice",
 *       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
 *       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
 *   helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8,
 *                     producer_name="").SerializeToString()                                  */
static const unsigned char model[] = {
    0x08, 0x08, 0x12, 0x00, 0x3a, 0x41, 0x0a, 0x16, 0x0a, 0x01, 0x78, 0x0a, 0x01, 0x78, 0x12, 0x01,
    0x79, 0x1a, 0x06, 0x64, 0x6f, 0x75, 0x62, 0x6c, 0x65, 0x22, 0x03, 0x41, 0x64, 0x64, 0x12, 0x05,
    0x74, 0x77, 0x69, 0x63, 0x65, 0x5a, 0x0f, 0x0a, 0x01, 0x78, 0x12, 0x0a, 0x0a, 0x08, 0x08, 0x01,
    0x12, 0x04, 0x0a, 0x02, 0x08, 0x04, 0x62, 0x0f, 0x0a, 0x01, 0x79, 0x12, 0x0a, 0x0a, 0x08, 0x08,
    0x01, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x04, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d,
};

static void *aligned(void *ctx, size_t size, size_t alignment)
{
    (void)ctx;
    return aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}

static void release(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static int fail(const char *what, kiln_status st, const char *message)
{
    fprintf(stderr, "compile_consumer: %s: %s%s%s\n", what, kiln_status_name(st), message[0] ? ": " : "", message);
    return 1;
}

int main(void)
{
    const kiln_allocator allocator = {NULL, aligned, release};
    kiln_compile_options options = {.struct_size = sizeof options, .allocator = &allocator};
    kiln_compile_method method = {.name = "forward", .model_data = model, .model_size = sizeof model};
    char message[256] = "";
    void *bytes = NULL;
    size_t size = 0;
    kiln_status st = kiln_compile_memory(&options, &method, 1, &bytes, &size, message, sizeof message);
    if (st != KILN_OK) return fail("kiln_compile_memory", st, message);

    kiln_program *program = NULL;
    kiln_module *module = NULL;
    kiln_method *forward = NULL;
    float x[4] = {1.0f, -2.0f, 3.5f, 0.25f};
    kiln_tensor in = {.dtype = KILN_DTYPE_F32, .rank = 1, .shape = {4}, .data = x}, out;
    int rc = 1;
    if ((st = kiln_program_open_memory(bytes, size, &program)) != KILN_OK ||
        (st = kiln_module_create(program, NULL, &module)) != KILN_OK ||
        (st = kiln_method_load(module, "forward", &forward)) != KILN_OK ||
        (st = kiln_method_set_input(forward, 0, &in)) != KILN_OK || (st = kiln_method_execute(forward)) != KILN_OK ||
        (st = kiln_method_get_output(forward, 0, &out)) != KILN_OK) {
        rc = fail("running the compiled program", st, "");
    } else {
        const float *y = out.data;
        rc = out.dtype != KILN_DTYPE_F32 || out.rank != 1 || out.shape[0] != 4;
        for (int i = 0; i < 4 && !rc; i++) rc = y[i] != 2.0f * x[i];
        printf("kiln %s: compiled x + x into %zu bytes and ran it: y = %g %g %g %g%s\n", kiln_version_string(), size,
               y[0], y[1], y[2], y[3], rc ? " (WRONG)" : "");
    }
    kiln_method_unload(forward);
    kiln_module_destroy(module);
    kiln_program_close(program);
    allocator.free(allocator.ctx, bytes);
    return rc;
}
