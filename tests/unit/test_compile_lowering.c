/* test_compile_lowering.c — what the lowering makes of some graphs, read from the compiled
 * context binary: LLaMA's RMSNorm (Pow, ReduceMean, Add, Sqrt, Div, Mul, Mul) becomes one
 * LAYERNORM step with rms set and the model's epsilon, while the same chain whose weight is not a
 * constant keeps its steps (the row mean as a GEMM); a 3x3 convolution with 32+ channels and 32+
 * tiles becomes a Winograd step, one with fewer tiles stays direct; attention's head split and
 * merge become strides of its batched GEMMs; an Add feeding a LayerNormalization becomes its
 * residual. The numbers are checked
 * against the portable kernels in test_cross_backend_linear; this test pins the structure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_ops.h"
#include "compiled_ctxbin.h"
#include "onnx_builder.h"
#include "unit_expect.h"

#define ROW_N 48

/* x [2,5,ROW_N] -> RMSNorm -> y; the weight a constant, or a second graph input. */
static void rmsnorm_model(bool weight_is_input, uint8_t **data, size_t *size)
{
    static float w[ROW_N], two = 2.0f, eps = 1e-5f, one = 1.0f;
    for (int i = 0; i < ROW_N; i++) w[i] = 0.5f + (float)i / ROW_N;
    onnx_builder *b = onnx_builder_create(17);
    int64_t xs[3] = {2, 5, ROW_N}, ws[1] = {ROW_N};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 3, xs);
    if (weight_is_input)
        onnx_builder_input(b, "w", ONNX_BUILDER_FLOAT, 1, ws);
    else
        onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 1, ws, w, sizeof w);
    onnx_builder_initializer(b, "two", ONNX_BUILDER_FLOAT, 0, NULL, &two, sizeof two);
    onnx_builder_initializer(b, "eps", ONNX_BUILDER_FLOAT, 0, NULL, &eps, sizeof eps);
    onnx_builder_initializer(b, "one", ONNX_BUILDER_FLOAT, 0, NULL, &one, sizeof one);
    static const int64_t last[1] = {-1};
    onnx_builder_node(b, "Pow", "x,two", "sq");
    onnx_builder_attr_ints(b, onnx_builder_node(b, "ReduceMean", "sq", "ms"), "axes", 1, last);
    onnx_builder_node(b, "Add", "ms,eps", "v");
    onnx_builder_node(b, "Sqrt", "v", "r");
    onnx_builder_node(b, "Div", "one,r", "inv");
    onnx_builder_node(b, "Mul", "x,inv", "xn");
    onnx_builder_node(b, "Mul", "xn,w", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1,32,hw,hw] -> 3x3 pad 1 convolution with strides s to m (<= 64) channels -> y; with
   residual (m = 32, s = 1), y = Relu(conv + x). */
static void conv_model(int64_t hw, int64_t m, int64_t s, bool residual, uint8_t **data, size_t *size)
{
    static float w[64 * 32 * 9];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)(i % 7) * 0.01f;
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {1, 32, hw, hw}, ws[4] = {m, 32, 3, 3};
    static const int64_t pads[4] = {1, 1, 1, 1};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 4, ws, w, (size_t)(m * 32 * 9) * sizeof(float));
    const int64_t strides[2] = {s, s};
    Onnx__NodeProto *conv = onnx_builder_node(b, "Conv", "x,w", residual ? "c" : "y");
    onnx_builder_attr_ints(b, conv, "pads", 4, pads);
    onnx_builder_attr_ints(b, conv, "strides", 2, strides);
    if (residual) {
        onnx_builder_node(b, "Add", "c,x", "s");
        onnx_builder_node(b, "Relu", "s", "y");
    }
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1,8,14,14] (or [1,8,4,14,14] when three_d) -> 3x3 (3x3x3) convolution to 16 channels,
   dilation and pads d on the spatial axes the filter is 3 wide on. */
static void dilated_model(int64_t d, bool three_d, uint8_t **data, size_t *size)
{
    static float w[16 * 8 * 27];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)(i % 5) * 0.01f;
    onnx_builder *b = onnx_builder_create(13);
    uint32_t rank = three_d ? 5 : 4;
    int64_t xs[5] = {1, 8, 4, 14, 14}, ws[5] = {16, 8, 3, 3, 3};
    const int64_t pads[6] = {d, d, d, d, d, d}, dil[3] = {d, d, d};
    if (!three_d) xs[2] = 14;
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, rank, xs);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, rank, ws, w, (three_d ? 27u : 9u) * 16 * 8 * sizeof(float));
    Onnx__NodeProto *conv = onnx_builder_node(b, "Conv", "x,w", "y");
    onnx_builder_attr_ints(b, conv, "pads", 2 * (rank - 2), pads);
    onnx_builder_attr_ints(b, conv, "dilations", rank - 2, dil);
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1,8,4,6,6] -> 3x3x3 pad 1 convolution to 8 channels -> Add(x). */
static void conv3d_residual_model(uint8_t **data, size_t *size)
{
    static float w[8 * 8 * 27];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)(i % 5) * 0.01f;
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[5] = {1, 8, 4, 6, 6}, ws[5] = {8, 8, 3, 3, 3};
    static const int64_t pads[6] = {1, 1, 1, 1, 1, 1};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 5, xs);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 5, ws, w, sizeof w);
    onnx_builder_attr_ints(b, onnx_builder_node(b, "Conv", "x,w", "c"), "pads", 6, pads);
    onnx_builder_node(b, "Add", "c,x", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1,8,16,16] -> 3x3 pad 1 convolution to 8 channels (too few for Winograd) -> Add(x) -> Relu. */
static void conv_model_c8_residual(uint8_t **data, size_t *size)
{
    static float w[8 * 8 * 9];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)(i % 5) * 0.01f;
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {1, 8, 16, 16}, ws[4] = {8, 8, 3, 3};
    static const int64_t pads[4] = {1, 1, 1, 1};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 4, ws, w, sizeof w);
    onnx_builder_attr_ints(b, onnx_builder_node(b, "Conv", "x,w", "c"), "pads", 4, pads);
    onnx_builder_node(b, "Add", "c,x", "s");
    onnx_builder_node(b, "Relu", "s", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1,32,14,14] -> 3x3 pad 1 stride 2 convolution to 64 channels (7x7: pixels as rows) ->
   Add(r, a model input [1,64,7,7]) -> Relu. */
static void rows_residual_model(uint8_t **data, size_t *size)
{
    static float w[64 * 32 * 9];
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)(i % 3) * 0.01f;
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {1, 32, 14, 14}, rs[4] = {1, 64, 7, 7}, ws[4] = {64, 32, 3, 3};
    static const int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_input(b, "r", ONNX_BUILDER_FLOAT, 4, rs);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 4, ws, w, sizeof w);
    Onnx__NodeProto *conv = onnx_builder_node(b, "Conv", "x,w", "c");
    onnx_builder_attr_ints(b, conv, "pads", 4, pads);
    onnx_builder_attr_ints(b, conv, "strides", 2, strides);
    onnx_builder_node(b, "Add", "r,c", "s");
    onnx_builder_node(b, "Relu", "s", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [m,k] -> MatMul with a constant [k,n] -> y. */
static void matmul_model(int64_t m, int64_t k, int64_t n, uint8_t **data, size_t *size)
{
    float *w = calloc((size_t)(k * n), sizeof(float));
    REQUIRE(w);
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[2] = {m, k}, ws[2] = {k, n};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, xs);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 2, ws, w, (size_t)(k * n) * sizeof(float));
    onnx_builder_node(b, "MatMul", "x,w", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
    free(w);
}

/* Add(x, r) -> LayerNormalization [2,5,ROW_N] -> y; keep_sum: the sum is an output too. */
static void residual_layernorm_model(bool keep_sum, uint8_t **data, size_t *size)
{
    static float scale[ROW_N];
    for (int i = 0; i < ROW_N; i++) scale[i] = 1.0f + (float)i / ROW_N;
    onnx_builder *b = onnx_builder_create(17);
    int64_t xs[3] = {2, 5, ROW_N}, ss[1] = {ROW_N};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 3, xs);
    onnx_builder_input(b, "r", ONNX_BUILDER_FLOAT, 3, xs);
    onnx_builder_initializer(b, "scale", ONNX_BUILDER_FLOAT, 1, ss, scale, sizeof scale);
    onnx_builder_node(b, "Add", "x,r", "sum");
    onnx_builder_node(b, "LayerNormalization", "sum,scale", "y");
    onnx_builder_output(b, "y");
    if (keep_sum) onnx_builder_output(b, "sum");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* Self-attention without projections' biases: x [batch, tokens, heads * d] -> Q, K, V by
   constant MatMuls, heads split by Reshape + Transpose, scores / sqrt(d) + mask (an input
   [batch, 1, 1, tokens]) -> Softmax -> times V -> heads merged by Transpose + Reshape -> y. */
static void attention_model(int64_t batch, int64_t tokens, int64_t heads, int64_t d, uint8_t **data, size_t *size)
{
    int64_t h = heads * d;
    float *w = calloc((size_t)(h * h), sizeof(float)), scale = 2.0f;
    REQUIRE(w);
    onnx_builder *b = onnx_builder_create(17);
    int64_t xs[3] = {batch, tokens, h}, ms[4] = {batch, 1, 1, tokens}, ws[2] = {h, h}, four = 4, three = 3;
    int64_t split[4] = {batch, tokens, heads, d}, merge[3] = {batch, tokens, h};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 3, xs);
    onnx_builder_input(b, "mask", ONNX_BUILDER_FLOAT, 4, ms);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 2, ws, w, (size_t)(h * h) * sizeof(float));
    onnx_builder_initializer(b, "split", ONNX_BUILDER_INT64, 1, &four, split, sizeof split);
    onnx_builder_initializer(b, "merge", ONNX_BUILDER_INT64, 1, &three, merge, sizeof merge);
    onnx_builder_initializer(b, "scale", ONNX_BUILDER_FLOAT, 0, NULL, &scale, sizeof scale);
    static const int64_t heads_first[4] = {0, 2, 1, 3}, keys[4] = {0, 2, 3, 1};
    const char *names[3][4] = {{"q", "q4", "qt", "x,w"}, {"k", "k4", "kt", "x,w"}, {"v", "v4", "vt", "x,w"}};
    for (int i = 0; i < 3; i++) {
        char reshape[16];
        onnx_builder_node(b, "MatMul", names[i][3], names[i][0]);
        snprintf(reshape, sizeof reshape, "%s,split", names[i][0]);
        onnx_builder_node(b, "Reshape", reshape, names[i][1]);
        onnx_builder_attr_ints(b, onnx_builder_node(b, "Transpose", names[i][1], names[i][2]), "perm", 4,
                               i == 1 ? keys : heads_first);
    }
    onnx_builder_node(b, "MatMul", "qt,kt", "s");
    onnx_builder_node(b, "Div", "s,scale", "sd");
    onnx_builder_node(b, "Add", "sd,mask", "sm");
    onnx_builder_attr_int(b, onnx_builder_node(b, "Softmax", "sm", "p"), "axis", -1);
    onnx_builder_node(b, "MatMul", "p,vt", "c");
    onnx_builder_attr_ints(b, onnx_builder_node(b, "Transpose", "c", "ct"), "perm", 4, heads_first);
    onnx_builder_node(b, "Reshape", "ct,merge", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
    free(w);
}

/* x [5,16] -> MatMul with a constant [16,24] -> GELU in the tanh form PyTorch exports
   (F.gelu(approximate="tanh")): 0.5 * g * (1 + tanh(sqrt(2/pi) * (g + c * g * g * g))) -> y.
   c is GELU's 0.044715 or, to show the pattern checks its constants, another number. */
static void gelu_tanh_model(float c, uint8_t **data, size_t *size)
{
    static float w[16 * 24];
    const float k = 0.7978845834732056f, one = 1.0f, half = 0.5f;
    onnx_builder *b = onnx_builder_create(17);
    int64_t xs[2] = {5, 16}, ws[2] = {16, 24};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, xs);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 2, ws, w, sizeof w);
    onnx_builder_initializer(b, "c", ONNX_BUILDER_FLOAT, 0, NULL, &c, sizeof c);
    onnx_builder_initializer(b, "k", ONNX_BUILDER_FLOAT, 0, NULL, &k, sizeof k);
    onnx_builder_initializer(b, "one", ONNX_BUILDER_FLOAT, 0, NULL, &one, sizeof one);
    onnx_builder_initializer(b, "half", ONNX_BUILDER_FLOAT, 0, NULL, &half, sizeof half);
    onnx_builder_node(b, "MatMul", "x,w", "g");
    onnx_builder_node(b, "Mul", "g,g", "g2");
    onnx_builder_node(b, "Mul", "g,g2", "g3");
    onnx_builder_node(b, "Mul", "c,g3", "cg3");
    onnx_builder_node(b, "Add", "g,cg3", "inner");
    onnx_builder_node(b, "Mul", "k,inner", "arg");
    onnx_builder_node(b, "Tanh", "arg", "t");
    onnx_builder_node(b, "Add", "one,t", "t1");
    onnx_builder_node(b, "Mul", "g,t1", "gt");
    onnx_builder_node(b, "Mul", "half,gt", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* Compiles the model for the generic target (or x86-64-v4-bf16 at precision bf16), counts the
   steps of each op in its one graph and keeps the params of its last LAYERNORM, CONV2D and GEMM
   steps; no_strassen as the compile option. */
static void compiled_steps(uint8_t *onnx, size_t onnx_size, const char *precision, bool no_strassen,
                           uint32_t counts[16], kiln_cpu_layernorm_params *ln, kiln_cpu_conv_params *conv,
                           kiln_cpu_gemm_params *gemm)
{
    const char *target[1] = {precision ? "x86-64-v4-bf16" : "generic"};
    kiln_compile_options opt = {.struct_size = sizeof opt, .targets = target, .n_targets = 1,
                                .precisions = precision ? &precision : NULL, .n_precisions = precision ? 1 : 0,
                                .no_strassen = no_strassen};
    void *program = NULL;
    kiln_ctxbin bin;
    kiln_test_compiled_ctxbin(&opt, onnx, onnx_size, &program, &bin);
    free(onnx);
    const kiln_ctx_graph *g = &kiln_ctxbin_graphs(&bin, &bin.records[0])[0];
    const kiln_ctx_step *steps = kiln_ctxbin_steps(&bin, g);
    memset(counts, 0, 16 * sizeof counts[0]);
    for (uint32_t s = 0; s < g->n_steps; s++) {
        if (steps[s].op < 16) counts[steps[s].op]++;
        if (steps[s].op == KILN_CPU_OP_LAYERNORM) memcpy(ln, steps[s].params, sizeof *ln);
        if (steps[s].op == KILN_CPU_OP_CONV2D) memcpy(conv, steps[s].params, sizeof *conv);
        if (steps[s].op == KILN_CPU_OP_GEMM) memcpy(gemm, steps[s].params, sizeof *gemm);
    }
    kiln_ctxbin_close(&bin);
    free(program);
}

int main(void)
{
    uint32_t counts[16];
    kiln_cpu_layernorm_params ln = {0};
    kiln_cpu_conv_params conv = {0};
    kiln_cpu_gemm_params gemm = {0};
    uint8_t *onnx = NULL;
    size_t size = 0;

    unit_section("RMSNorm with a constant weight: one LAYERNORM step, rms set");
    rmsnorm_model(false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_LAYERNORM] == 1);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 0 && counts[KILN_CPU_OP_BINARY] == 0 && counts[KILN_CPU_OP_UNARY] == 0);
    EXPECT(ln.rms == 1 && ln.has_bias == 0 && ln.n == ROW_N && ln.outer == 10 && ln.epsilon == 1e-5f);

    unit_section("the same chain with the weight an input: no fusion, the row mean a GEMM");
    rmsnorm_model(true, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_LAYERNORM] == 0);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 1);
    EXPECT(counts[KILN_CPU_OP_BINARY] >= 3);

    unit_section("3x3 convolution, 32 -> 40 channels, 16x16: Winograd (64 tiles)");
    conv_model(16, 40, 1, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.winograd == 1);

    unit_section("the same at 7x7: direct (16 tiles, too few as columns), pixels as columns (40 channels)");
    conv_model(7, 40, 1, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.winograd == 0 && conv.pixel_rows == 0);

    unit_section("7x7 with 64 output channels: Winograd with the 16 tiles as rows");
    conv_model(7, 64, 1, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.winograd == 1 && conv.pixel_rows == 1);

    unit_section("stride 2 from 14x14 to 7x7, 64 output channels: direct, pixels as rows (49 would fill 77% of two panels)");
    conv_model(14, 64, 2, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.winograd == 0 && conv.pixel_rows == 1);

    unit_section("16x16 with 64 output channels: Winograd, 64 tiles as columns");
    conv_model(16, 64, 1, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.winograd == 1 && conv.pixel_rows == 0);

    unit_section("14x14 with 64 output channels: Winograd, 49 tiles as rows");
    conv_model(14, 64, 1, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.winograd == 1 && conv.pixel_rows == 1);

    unit_section("Winograd convolution + Add(x) + Relu: one step, the residual added in its output transform");
    conv_model(16, 32, 1, true, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && counts[KILN_CPU_OP_BINARY] == 0 && counts[KILN_CPU_OP_UNARY] == 0);
    EXPECT(conv.winograd == 1 && conv.has_residual == 1 && conv.act.kind == KILN_CPU_ACT_RELU);

    unit_section("the same at 8 input channels (direct): the Add stays a step, Relu fused into it");
    conv_model_c8_residual(&onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && counts[KILN_CPU_OP_BINARY] == 1 && counts[KILN_CPU_OP_UNARY] == 0);
    EXPECT(conv.has_residual == 0);

    unit_section("pixels-as-rows convolution + Add(r) + Relu: one step, the residual added after the transposition");
    rows_residual_model(&onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && counts[KILN_CPU_OP_BINARY] == 0 && counts[KILN_CPU_OP_UNARY] == 0);
    EXPECT(conv.pixel_rows == 1 && conv.winograd == 0 && conv.has_residual == 1 && conv.act.kind == KILN_CPU_ACT_RELU);

    unit_section("3x3 dilation 2 over 14x14: 10% of the taps read padding, the 2-D strategies (no tap lists)");
    dilated_model(2, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.taps == 0 && conv.D == 0 && conv.kw_n == 0);

    unit_section("dilation 6: tap lists, every filter column kept");
    dilated_model(6, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.taps == 1 && conv.kw_lo == 0 && conv.kw_n == 3);
    EXPECT(conv.D == 1 && conv.OD == 1 && conv.KD == 1 && conv.dil_d == 1 && conv.pad_front == 0);

    unit_section("dilation 24: tap lists, only the middle filter column kept");
    dilated_model(24, false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.taps == 1 && conv.kw_lo == 1 && conv.kw_n == 1);

    unit_section("3-D 3x3x3 pad 1 over [4,14,14]: one tap-list CONV2D step with its depth axis");
    dilated_model(1, true, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && conv.taps == 1 && conv.D == 4 && conv.OD == 4 && conv.KD == 3);
    EXPECT(conv.pad_front == 1 && conv.kw_lo == 0 && conv.kw_n == 3 && conv.OH == 14);

    unit_section("3-D convolution + Add(x): one tap-list step with the input as its residual");
    conv3d_residual_model(&onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_CONV2D] == 1 && counts[KILN_CPU_OP_BINARY] == 0);
    EXPECT(conv.taps == 1 && conv.has_residual == 1);

    unit_section("MatMul 1024 x 1024 x 1024 with a constant B: one Strassen level, B as its seven sums");
    matmul_model(1024, 1024, 1024, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 1 && gemm.b_packed == KILN_CPU_PACKED_STRASSEN);

    unit_section("halves under 512, K/2 past one K block, or an odd dimension: classical panels");
    static const int64_t classical[][3] = {{1022, 1024, 1024}, {1024, 2050, 1024}, {1024, 1024, 1023}};
    for (size_t i = 0; i < sizeof classical / sizeof classical[0]; i++) {
        matmul_model(classical[i][0], classical[i][1], classical[i][2], &onnx, &size);
        compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
        EXPECT(counts[KILN_CPU_OP_GEMM] == 1 && gemm.b_packed == 1);
    }

    unit_section("the same with no_strassen (--no-strassen): classical panels");
    matmul_model(1024, 1024, 1024, &onnx, &size);
    compiled_steps(onnx, size, NULL, true, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 1 && gemm.b_packed == 1);

    unit_section("precision bf16: the same 1024 product as bf16 pairs, not Strassen");
    matmul_model(1024, 1024, 1024, &onnx, &size);
    compiled_steps(onnx, size, "bf16", false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 1 && gemm.b_packed == KILN_CPU_PACKED_BF16);
    unit_section("Add of two tensors -> LayerNormalization: one LAYERNORM step with a residual");
    residual_layernorm_model(false, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_LAYERNORM] == 1 && counts[KILN_CPU_OP_BINARY] == 0);
    EXPECT(ln.has_residual == 1 && ln.outer == 10 && ln.n == ROW_N);

    unit_section("the same with the sum an output too: the Add stays a step");
    residual_layernorm_model(true, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_LAYERNORM] == 1 && counts[KILN_CPU_OP_BINARY] == 1 && ln.has_residual == 0);

    unit_section("attention, one sequence: no Transpose step; the mask is the scores' bias");
    attention_model(1, 13, 3, 8, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_TRANSPOSE] == 0 && counts[KILN_CPU_OP_BINARY] == 0);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 5 && counts[KILN_CPU_OP_SOFTMAX] == 1);
    /* probabilities x V: V's heads read in place (row stride 24, head stride 8), the context
       written in place of the merged heads (row stride 24, head stride 8) */
    EXPECT(gemm.batch == 3 && gemm.M == 13 && gemm.N == 8 && gemm.K == 13);
    EXPECT(gemm.trans_b == 0 && gemm.ldb == 24 && gemm.b_batch_stride == 8);
    EXPECT(gemm.ldy == 24 && gemm.y_batch_stride == 8);

    unit_section("attention over a batch of two sequences (two batch dims): the Transposes stay steps");
    attention_model(2, 13, 3, 8, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_TRANSPOSE] == 4 && counts[KILN_CPU_OP_GEMM] == 5);

    unit_section("MatMul -> GELU (tanh form, as GPT-2 exports it): one GEMM step, act GELU_TANH");
    gelu_tanh_model(0.044715f, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 1 && counts[KILN_CPU_OP_BINARY] == 0 && counts[KILN_CPU_OP_UNARY] == 0);
    EXPECT(gemm.act.kind == KILN_CPU_ACT_GELU_TANH);

    unit_section("the same chain with 0.05 for 0.044715: not GELU, the nodes stay steps");
    gelu_tanh_model(0.05f, &onnx, &size);
    compiled_steps(onnx, size, NULL, false, counts, &ln, &conv, &gemm);
    EXPECT(counts[KILN_CPU_OP_GEMM] == 1 && gemm.act.kind == KILN_CPU_ACT_NONE);
    EXPECT(counts[KILN_CPU_OP_BINARY] >= 7 && counts[KILN_CPU_OP_UNARY] + counts[KILN_CPU_OP_BINARY] >= 8);
    return unit_finish("test_compile_lowering");
}
