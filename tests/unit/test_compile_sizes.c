/* test_compile_sizes.c — byte sizes that overflow are KILN_ERROR_LIMIT naming the value, never a
 * wrapped size in the program (issue 12, item 10).
 *
 * Layer: tests (compiler through the public API). An f32 input of shape [2^62] has 2^62
 * elements (fits int64) but 2^64 bytes: the compiler recorded 0 bytes, compiled, and the reader
 * refused the file. Neighbours: [2^31, 2^31] f32 (same bytes from two dims), a shape whose
 * element count overflows int64, the same shapes given through --input-shape, an output
 * inferred too large (Expand), four inputs whose sizes add up past 2^64 (the planner's sum),
 * and, as controls, the largest shapes that fit, which compile.
 */
#include "test_model_support.h"

/* x of `shape` (f32) -> Relu -> y. */
static onnx_builder *relu_of(uint32_t rank, const int64_t *shape)
{
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, rank, shape);
    onnx_builder_node(b, "Relu", "x", "y");
    onnx_builder_output(b, "y");
    return b;
}

static void too_large_inputs(void)
{
    unit_section("inputs whose byte size overflows");
    const int64_t s62[1] = {(int64_t)1 << 62};
    onnx_builder *b = relu_of(1, s62);
    tm_expect_refused(b, KILN_ERROR_LIMIT, "input 'x' of shape [4611686018427387904] (f32) is too large", NULL);
    onnx_builder_destroy(b);

    const int64_t s31[2] = {(int64_t)1 << 31, (int64_t)1 << 31};
    b = relu_of(2, s31);
    tm_expect_refused(b, KILN_ERROR_LIMIT, "input 'x' of shape [2147483648, 2147483648] (f32) is too large", NULL);
    onnx_builder_destroy(b);

    const int64_t s_numel[3] = {(int64_t)1 << 32, (int64_t)1 << 32, 2};
    b = relu_of(3, s_numel);
    tm_expect_refused(b, KILN_ERROR_LIMIT, "input 'x' of shape [4294967296, 4294967296, 2] (f32) is too large", NULL);
    onnx_builder_destroy(b);

    /* The same size through an input-shape override of a symbolic model shape. */
    const int64_t small[1] = {4};
    b = relu_of(1, small);
    uint8_t *model;
    size_t model_size;
    onnx_builder_serialize(b, &model, &model_size);
    kiln_input_shape override = {.name = "x", .rank = 1, .dims = {(int64_t)1 << 62}};
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = 1, .input_shapes = &override,
                                .n_input_shapes = 1};
    kiln_compile_method m = {.name = "forward", .model_data = model, .model_size = model_size};
    void *program = NULL;
    size_t size = 0;
    char message[512];
    EXPECT_STATUS(kiln_compile_memory(&opt, &m, 1, &program, &size, message, sizeof message), KILN_ERROR_LIMIT);
    EXPECT(strstr(message, "input 'x' of shape [4611686018427387904] (f32) is too large") != NULL);
    free(program);
    free(model);
    onnx_builder_destroy(b);
}

static void too_large_outputs(void)
{
    unit_section("an inferred output whose byte size overflows");
    static const int64_t target[2] = {(int64_t)1 << 31, (int64_t)1 << 31};
    static const int64_t target_shape[1] = {2};
    const int64_t one[2] = {1, 1};
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, one);
    onnx_builder_initializer(b, "shape", ONNX_BUILDER_INT64, 1, target_shape, target, sizeof target);
    onnx_builder_node(b, "Expand", "x,shape", "y");
    onnx_builder_output(b, "y");
    tm_expect_refused(b, KILN_ERROR_LIMIT, "node 'n0' (Expand", NULL);
    onnx_builder_destroy(b);
}

static void too_large_together(void)
{
    unit_section("activations whose sizes add up past 2^64 bytes");
    const int64_t s60[1] = {(int64_t)1 << 60}; /* 2^62 bytes each: four of them are 2^64 */
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "a", ONNX_BUILDER_FLOAT, 1, s60);
    onnx_builder_input(b, "b", ONNX_BUILDER_FLOAT, 1, s60);
    onnx_builder_input(b, "c", ONNX_BUILDER_FLOAT, 1, s60);
    onnx_builder_input(b, "d", ONNX_BUILDER_FLOAT, 1, s60);
    onnx_builder_output(b, "a");
    onnx_builder_output(b, "b");
    onnx_builder_output(b, "c");
    onnx_builder_output(b, "d");
    tm_expect_refused(b, KILN_ERROR_LIMIT, "pass 2^64 bytes", NULL);
    onnx_builder_destroy(b);
}

/* The largest sizes that fit are compiled (and would be refused at load for want of memory,
   which is the runtime's business, not a compile error). */
static void largest_that_fit(void)
{
    unit_section("the largest sizes that fit compile");
    const int64_t s59[1] = {(int64_t)1 << 59}; /* x and y: 2^61 bytes each */
    onnx_builder *b = relu_of(1, s59);
    tm_expect_compiles(b);
    onnx_builder_destroy(b);
    const int64_t s61[1] = {((int64_t)1 << 61) - 16}; /* 64 bytes short of 2^63 */
    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 1, s61);
    onnx_builder_output(b, "x");
    tm_expect_compiles(b);
    onnx_builder_destroy(b);
}

int main(void)
{
    too_large_inputs();
    too_large_outputs();
    too_large_together();
    largest_that_fit();
    return unit_finish("test_compile_sizes");
}
