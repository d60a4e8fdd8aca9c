/* test_model_support.h — compile a model built with onnx_builder and run the program, for the unit
 * tests of what the compiler accepts and what it makes of it.
 *
 * Layer: tests (public compiler and runtime API; test support's onnx_builder). Header-only, like
 * unit_expect.h, so each test stays one program.
 */
#ifndef KILN_TESTS_MODEL_SUPPORT_H
#define KILN_TESTS_MODEL_SUPPORT_H

#include "onnx_builder.h"
#include "unit_expect.h"

/* Compiles a serialized model from memory; the program (free()) in *program when KILN_OK, else
 * NULL. message receives the compiler's line. */
static inline kiln_status tm_compile_bytes(const void *model, size_t model_size, int no_delegate, void **program,
                                           size_t *size, char *message, size_t message_size)
{
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = no_delegate};
    kiln_compile_method m = {.name = "forward", .model_data = model, .model_size = model_size};
    *program = NULL;
    *size = 0;
    return kiln_compile_memory(&opt, &m, 1, program, size, message, message_size);
}

/* The same for the builder's model. */
static inline kiln_status tm_compile(const onnx_builder *b, int no_delegate, void **program, size_t *size,
                                     char *message, size_t message_size)
{
    uint8_t *model;
    size_t model_size;
    onnx_builder_serialize(b, &model, &model_size);
    kiln_status st = tm_compile_bytes(model, model_size, no_delegate, program, size, message, message_size);
    free(model);
    return st;
}

/* Expects the serialized model to fail with `want` and a message that is one line holding
 * `needle` (and `needle2` when not NULL). */
static inline void tm_expect_refused_bytes(const void *model, size_t model_size, kiln_status want, const char *needle,
                                           const char *needle2)
{
    void *program;
    size_t size;
    char message[1024];
    kiln_status st = tm_compile_bytes(model, model_size, 1, &program, &size, message, sizeof message);
    EXPECT_STATUS(st, want);
    bool found = strstr(message, needle) != NULL && (!needle2 || strstr(message, needle2) != NULL);
    bool one_line = strchr(message, '\n') == NULL && strchr(message, '\r') == NULL;
    if (!found || !one_line)
        fprintf(stderr, "  message: %s\n  expected it to contain: %s%s%s\n", message, needle, needle2 ? " and " : "",
                needle2 ? needle2 : "");
    EXPECT(found);
    EXPECT(one_line);
    free(program);
}

static inline void tm_expect_refused(const onnx_builder *b, kiln_status want, const char *needle, const char *needle2)
{
    uint8_t *model;
    size_t model_size;
    onnx_builder_serialize(b, &model, &model_size);
    tm_expect_refused_bytes(model, model_size, want, needle, needle2);
    free(model);
}

/* Expects the model to compile (on the portable kernels), printing the message when not. */
static inline void tm_expect_compiles(const onnx_builder *b)
{
    void *program;
    size_t size;
    char message[1024];
    kiln_status st = tm_compile(b, 1, &program, &size, message, sizeof message);
    EXPECT_STATUS(st, KILN_OK);
    if (st != KILN_OK) fprintf(stderr, "  message: %s\n", message);
    free(program);
}

/* The serialized model with the first occurrence of `from` replaced by `to` (same length, may
 * hold NUL bytes: n bytes of each); exits the test when `from` is not there. */
static inline uint8_t *tm_patch(const onnx_builder *b, const char *from, const char *to, size_t n, size_t *size)
{
    uint8_t *model;
    onnx_builder_serialize(b, &model, size);
    for (size_t i = 0; i + n <= *size; i++) {
        if (memcmp(model + i, from, n) == 0) {
            memcpy(model + i, to, n);
            return model;
        }
    }
    fprintf(stderr, "tm_patch: '%s' is not in the model\n", from);
    exit(1);
}

/* Loads method "forward" of the program, sets f32 inputs[i] (shape from the method), executes and
 * copies f32 output j into outputs[j] (n_out[j] elements expected). False, with the reason
 * printed, if any step fails. */
static inline bool tm_run(const void *program, size_t size, const float *const *inputs, size_t n_inputs,
                          float *const *outputs, const size_t *n_out, size_t n_outputs)
{
    kiln_program *p = NULL;
    kiln_module *m = NULL;
    kiln_method *f = NULL;
    bool ok = false;
    kiln_status st = kiln_program_open_memory(program, size, &p);
    if (st == KILN_OK) {
        kiln_module_options o = {.struct_size = sizeof o, .num_threads = 1};
        st = kiln_module_create(p, &o, &m);
    }
    if (st == KILN_OK) st = kiln_method_load(m, "forward", &f);
    if (st != KILN_OK) fprintf(stderr, "  load: %s (%s)\n", kiln_status_name(st), m ? kiln_module_last_error(m) : "");
    for (size_t i = 0; st == KILN_OK && i < n_inputs; i++) {
        kiln_tensor t;
        st = kiln_method_input_info(f, i, &t);
        t.data = (void *)inputs[i];
        if (st == KILN_OK) st = kiln_method_set_input(f, i, &t);
    }
    if (st == KILN_OK) st = kiln_method_execute(f);
    if (st == KILN_OK && kiln_method_output_count(f) != n_outputs) st = KILN_ERROR_NOT_FOUND;
    for (size_t j = 0; st == KILN_OK && j < n_outputs; j++) {
        kiln_tensor t;
        st = kiln_method_get_output(f, j, &t);
        if (st == KILN_OK && (t.dtype != KILN_DTYPE_F32 || kiln_tensor_numel(&t) != (int64_t)n_out[j]))
            st = KILN_ERROR_SHAPE_MISMATCH;
        if (st == KILN_OK) memcpy(outputs[j], t.data, n_out[j] * sizeof(float));
    }
    if (st != KILN_OK) fprintf(stderr, "  run: %s\n", kiln_status_name(st));
    ok = st == KILN_OK;
    if (f) kiln_method_unload(f);
    kiln_module_destroy(m);
    kiln_program_close(p);
    return ok;
}

#endif
