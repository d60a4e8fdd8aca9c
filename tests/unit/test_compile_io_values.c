/* test_compile_io_values.c — graph outputs that are not computed by any node (issue 12, item 9).
 *
 * Layer: tests (compiler + runtime through the public API). A graph input may also be a graph
 * output, and so may an initializer or a Constant node's value. The planner used to start an
 * input-that-is-an-output at the end of the instruction list (its "live from before the first
 * instruction" mark was overwritten), so a temporary got the same bytes and the runtime's plan
 * check refused to load the program. Each model here must compile, load and give the right values,
 * on the portable kernels and with the cpu delegates.
 */
#include "test_model_support.h"

enum { N = 6 };
static const int64_t shape[2] = {2, 3};
static const float x[N] = {1, -2, 3, -4, 5, -6};
static const float w[N] = {0.5f, 1.5f, -2.5f, 3.5f, -4.5f, 5.5f};
static const float c[N] = {10, 20, 30, 40, 50, 60};

static const size_t n_two[2] = {N, N};

static bool same(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

static void compile_and_run(const onnx_builder *b, const float *const *in, size_t n_in, const float *const *want,
                            const size_t *counts, size_t n_out)
{
    for (int no_delegate = 1; no_delegate >= 0; no_delegate--) {
        void *program;
        size_t size;
        char message[512];
        kiln_status st = tm_compile(b, no_delegate, &program, &size, message, sizeof message);
        EXPECT_STATUS(st, KILN_OK);
        if (st != KILN_OK) {
            fprintf(stderr, "  %s\n", message);
            continue;
        }
        float got[4][N];
        float *outs[4] = {got[0], got[1], got[2], got[3]};
        bool ran = tm_run(program, size, in, n_in, outs, counts, n_out);
        EXPECT(ran);
        for (size_t j = 0; ran && j < n_out; j++) EXPECT(same(got[j], want[j], counts[j]));
        free(program);
    }
}

/* Inputs x and w; t = Neg(w), y = Abs(t) (t is a temporary that dies before the end); outputs x
   (no node reads it) and y. */
static void input_is_output(void)
{
    unit_section("a graph input that is a graph output and feeds no node");
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_input(b, "w", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_node(b, "Neg", "w", "t");
    onnx_builder_node(b, "Abs", "t", "y");
    onnx_builder_output(b, "x");
    onnx_builder_output(b, "y");
    float y[N];
    for (int i = 0; i < N; i++) y[i] = w[i] < 0 ? -w[i] : w[i];
    const float *in[2] = {x, w}, *want[2] = {x, y};
    compile_and_run(b, in, 2, want, n_two, 2);
    onnx_builder_destroy(b);
}

/* Input x is an output and also feeds t = Neg(x), y = Abs(t). */
static void input_is_output_and_feeds_nodes(void)
{
    unit_section("a graph input that is a graph output and feeds nodes");
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_node(b, "Neg", "x", "t");
    onnx_builder_node(b, "Abs", "t", "y");
    onnx_builder_output(b, "y");
    onnx_builder_output(b, "x");
    float y[N];
    for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? -x[i] : x[i];
    const float *in[1] = {x}, *want[2] = {y, x};
    compile_and_run(b, in, 1, want, n_two, 2);
    onnx_builder_destroy(b);
}

/* An initializer c and a Constant node's scalar k are outputs beside y = Neg(Neg(x)). */
static void constant_is_output(void)
{
    unit_section("an initializer and a Constant value that are graph outputs");
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_initializer(b, "c", ONNX_BUILDER_FLOAT, 2, shape, c, sizeof c);
    onnx_builder_node(b, "Neg", "x", "t");
    onnx_builder_node(b, "Neg", "t", "y");
    Onnx__NodeProto *k = onnx_builder_node(b, "Constant", "", "k");
    onnx_builder_attr_float(b, k, "value_float", 7.5f);
    onnx_builder_output(b, "c");
    onnx_builder_output(b, "y");
    onnx_builder_output(b, "k");
    static const float seven_and_a_half[1] = {7.5f};
    static const size_t n_out[3] = {N, N, 1};
    const float *in[1] = {x}, *want[3] = {c, x, seven_and_a_half};
    compile_and_run(b, in, 1, want, n_out, 3);
    onnx_builder_destroy(b);
}

int main(void)
{
    input_is_output();
    input_is_output_and_feeds_nodes();
    constant_is_output();
    return unit_finish("test_compile_io_values");
}
