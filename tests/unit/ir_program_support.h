/* ir_program_support.h — one-node ONNX graphs taken through the compiler's IR by hand (import,
 * a change a test makes, plan and emit) and the program loaded and run through the public API,
 * for the tests of what the IR carries into a program (test_ir_domain.c, test_dtype.c).
 *
 * Layer: tests (compiler IR, planner and emitter; the runtime's public API). Header-only, like
 * unit_expect.h, so each test stays one program.
 */
#ifndef KILN_TESTS_UNIT_IR_PROGRAM_SUPPORT_H
#define KILN_TESTS_UNIT_IR_PROGRAM_SUPPORT_H

#include <stdlib.h>
#include <string.h>

#include "compiler/emit.h"
#include "compiler/ir.h"
#include "compiler/onnx/onnx_import.h"
#include "core/alloc.h"
#include "kernels/portable/kernel.h"
#include "onnx_builder.h"
#include "unit_expect.h"

/* x f32 [2, cols] -> op (MatMul: by a constant W [cols, 3]) -> y, imported into g (initialised
   here with message); not yet inferred. */
static inline void irp_import(kiln_ir_graph *g, const char *op, int64_t cols, char *message, size_t message_size)
{
    const int64_t x_shape[2] = {2, cols}, w_shape[2] = {cols, 3};
    float *w = calloc((size_t)cols * 3, sizeof *w);
    REQUIRE(w);
    for (int64_t i = 0; i < cols * 3; i++) w[i] = (float)(i + 1);
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, x_shape);
    if (strcmp(op, "MatMul") == 0) {
        onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 2, w_shape, w, (size_t)cols * 3 * sizeof *w);
        onnx_builder_node(b, op, "x,w", "y");
    } else {
        onnx_builder_node(b, op, "x", "y");
    }
    onnx_builder_output(b, "y");
    uint8_t *model;
    size_t size;
    onnx_builder_serialize(b, &model, &size);
    kiln_ir_graph_init(g, kiln_allocator_default(), message, message_size);
    EXPECT_STATUS(kiln_onnx_import(g, model, size, NULL, NULL, 0, false), KILN_OK);
    free(model);
    free(w);
    onnx_builder_destroy(b);
}

/* g planned and emitted as the method "forward" of a program: its bytes (kiln_free with the
   default allocator) and size. */
static inline void *irp_emit(kiln_ir_graph *g, size_t *size)
{
    kiln_program_builder *b;
    REQUIRE(kiln_program_builder_create(kiln_allocator_default(), &b) == KILN_OK);
    kiln_ir_plan plan;
    EXPECT_STATUS(kiln_ir_plan_memory(g, &plan), KILN_OK);
    EXPECT_STATUS(kiln_ir_emit_method(g, &plan, "forward", b), KILN_OK);
    void *data = NULL;
    *size = 0;
    EXPECT_STATUS(kiln_program_builder_finish(b, &data, size), KILN_OK);
    kiln_program_builder_destroy(b);
    REQUIRE(data);
    return data;
}

/* Opens the program, loads "forward" (message: the load's line) and, when it loads, runs it on
   an f32 input of alternating signs, expecting Relu's output. The load's status. */
static inline kiln_status irp_load_and_run_relu(const void *data, size_t size, char *message, size_t message_size)
{
    kiln_program *p = NULL;
    kiln_status st = kiln_program_open_memory(data, size, &p);
    EXPECT_STATUS(st, KILN_OK);
    kiln_module *m = NULL;
    kiln_module_options mo = {.struct_size = sizeof mo, .num_threads = 1};
    if (st == KILN_OK) EXPECT_STATUS(kiln_module_create(p, &mo, &m), KILN_OK);
    kiln_method *method = NULL;
    st = m ? kiln_method_load_with_message(m, "forward", &method, message, message_size) : KILN_ERROR_INTERNAL;
    if (st == KILN_OK) {
        kiln_tensor xt, yt;
        EXPECT_STATUS(kiln_method_input_info(method, 0, &xt), KILN_OK);
        int64_t n = kiln_tensor_numel(&xt);
        float *x = calloc((size_t)n, sizeof *x);
        REQUIRE(x && xt.dtype == KILN_DTYPE_F32);
        for (int64_t i = 0; i < n; i++) x[i] = (float)((i % 2) ? i : -i);
        xt.data = x;
        EXPECT_STATUS(kiln_method_set_input(method, 0, &xt), KILN_OK);
        EXPECT_STATUS(kiln_method_execute(method), KILN_OK);
        EXPECT_STATUS(kiln_method_get_output(method, 0, &yt), KILN_OK);
        const float *y = yt.data;
        bool relu = y != NULL;
        for (int64_t i = 0; relu && i < n; i++) relu = y[i] == (x[i] > 0 ? x[i] : 0);
        EXPECT(relu);
        free(x);
    }
    kiln_method_unload(method);
    kiln_module_destroy(m);
    if (p) kiln_program_close(p);
    return st;
}

#endif
