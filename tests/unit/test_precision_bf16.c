/* test_precision_bf16.c — compile spec precision bf16 end to end (compiler + cpu backend).
 *
 * Tests backends/cpu (aot lowering to bf16 weights, the x86-64-v4-bf16 target and its
 * avx512bf16 table) through the public API: a small MLP (Gemm + Relu, MatMul + Add, Softmax)
 * and a small convolution net (a Winograd layer with its tiles as rows, a stride-2 layer with
 * its pixels as rows, global pooling, Gemm) compiled for x86-64-v4-bf16 at f32 and at bf16. The bf16 program must hold its GEMM weights in
 * about half the bytes; on a CPU with AVX512-BF16 both run and the bf16 outputs must stay within
 * a bf16 tolerance of the f32 ones (the accuracy is printed). Precision bf16 on a target without
 * a bf16 GEMM is a compile-spec error (test_compile_spec). A CPU without AVX512-BF16 skips the
 * run, and says so.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "backends/cpu/targets.h"
#include "core/alloc.h"
#include "onnx_builder.h"
#include "test_random.h"
#include "unit_expect.h"

#define EXPECT_OK(expr) EXPECT_STATUS(expr, KILN_OK)
/* One row of 1024 into 1000 is a decode-shaped GEMM with work enough to be cut along N over
   two threads (the weights' panel offsets of precision bf16 are then exercised). */
#define BATCH 1
#define IN 1024
#define HIDDEN 1000
#define OUT 40
#define CONV_C 32
#define CONV_M 64
#define CONV_HW 14
#define CONV_P 384

static void weight(onnx_builder *b, uint64_t *seed, const char *name, int64_t rows, int64_t cols, float scale)
{
    size_t n = (size_t)(rows * cols);
    float *v = kiln_alloc(kiln_allocator_default(), n * sizeof *v, 64);
    test_fill_random(seed, v, n, scale);
    onnx_builder_initializer(b, name, ONNX_BUILDER_FLOAT, cols ? 2 : 1, (const int64_t[]){rows, cols}, v,
                             n * sizeof *v);
    kiln_free(kiln_allocator_default(), v);
}

/* x [BATCH, IN] -> Gemm(w1^T, b1) -> Relu -> MatMul(w2) -> Add(b2) -> Softmax -> y [BATCH, OUT]. */
static void build_model(uint8_t **data, size_t *size)
{
    uint64_t seed = 0x62663136ull;
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, (const int64_t[]){BATCH, IN});
    weight(b, &seed, "w1", HIDDEN, IN, 0.1f);
    float b1[HIDDEN], b2[OUT];
    test_fill_random(&seed, b1, HIDDEN, 0.1f);
    test_fill_random(&seed, b2, OUT, 0.1f);
    onnx_builder_initializer(b, "b1", ONNX_BUILDER_FLOAT, 1, (const int64_t[]){HIDDEN}, b1, sizeof b1);
    weight(b, &seed, "w2", HIDDEN, OUT, 0.1f);
    onnx_builder_initializer(b, "b2", ONNX_BUILDER_FLOAT, 1, (const int64_t[]){OUT}, b2, sizeof b2);
    onnx_builder_attr_int(b, onnx_builder_node(b, "Gemm", "x,w1,b1", "h0"), "transB", 1);
    onnx_builder_node(b, "Relu", "h0", "h");
    onnx_builder_node(b, "MatMul", "h,w2", "m");
    onnx_builder_node(b, "Add", "m,b2", "z");
    onnx_builder_attr_int(b, onnx_builder_node(b, "Softmax", "z", "y"), "axis", -1);
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1, CONV_C, 14, 14] -> Conv 3x3 pad 1 (Winograd, 49 tiles as rows) -> Relu -> Conv 3x3
   stride 2 (49 pixels as rows) -> Conv 1x1 to CONV_P channels (pointwise: its planes are B as
   they are, the filters' rows cut over two threads) -> GlobalAveragePool -> Flatten -> Gemm
   -> y [1, OUT]. */
static void build_conv_model(uint8_t **data, size_t *size)
{
    uint64_t seed = 0x636f6e76ull;
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, (const int64_t[]){1, CONV_C, CONV_HW, CONV_HW});
    static const int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
    float *w = malloc(sizeof(float) * CONV_M * CONV_M * 9);
    test_fill_random(&seed, w, CONV_M * CONV_C * 9, 0.1f);
    onnx_builder_initializer(b, "w1", ONNX_BUILDER_FLOAT, 4, (const int64_t[]){CONV_M, CONV_C, 3, 3}, w,
                             sizeof(float) * CONV_M * CONV_C * 9);
    test_fill_random(&seed, w, CONV_M * CONV_M * 9, 0.1f);
    onnx_builder_initializer(b, "w2", ONNX_BUILDER_FLOAT, 4, (const int64_t[]){CONV_M, CONV_M, 3, 3}, w,
                             sizeof(float) * CONV_M * CONV_M * 9);
    free(w);
    w = malloc(sizeof(float) * CONV_P * CONV_M);
    test_fill_random(&seed, w, CONV_P * CONV_M, 0.2f);
    onnx_builder_initializer(b, "w3", ONNX_BUILDER_FLOAT, 4, (const int64_t[]){CONV_P, CONV_M, 1, 1}, w,
                             sizeof(float) * CONV_P * CONV_M);
    free(w);
    weight(b, &seed, "fc", OUT, CONV_P, 0.3f);
    onnx_builder_attr_ints(b, onnx_builder_node(b, "Conv", "x,w1", "c1"), "pads", 4, pads);
    onnx_builder_node(b, "Relu", "c1", "r1");
    Onnx__NodeProto *c2 = onnx_builder_node(b, "Conv", "r1,w2", "c2");
    onnx_builder_attr_ints(b, c2, "pads", 4, pads);
    onnx_builder_attr_ints(b, c2, "strides", 2, strides);
    onnx_builder_node(b, "Conv", "c2,w3", "c3");
    onnx_builder_node(b, "GlobalAveragePool", "c3", "g");
    onnx_builder_node(b, "Flatten", "g", "f");
    onnx_builder_attr_int(b, onnx_builder_node(b, "Gemm", "f,fc", "y"), "transB", 1);
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1, 256, 4, 4] -> Conv 1x1 to 512 channels: 16 pixels make one column panel, so two threads
   split the filters' rows (bf16 pair panels addressed by row). */
static void build_pointwise_model(uint8_t **data, size_t *size)
{
    uint64_t seed = 0x31783131ull;
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, (const int64_t[]){1, 256, 4, 4});
    float *w = malloc(sizeof(float) * 512 * 256);
    test_fill_random(&seed, w, 512 * 256, 0.1f);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 4, (const int64_t[]){512, 256, 1, 1}, w,
                             sizeof(float) * 512 * 256);
    free(w);
    onnx_builder_node(b, "Conv", "x,w", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

typedef struct program {
    void *bytes;
    size_t size;
} program;

static bool compile(const uint8_t *model, size_t model_size, const char *precision, program *out)
{
    static const char *const target[1] = {"x86-64-v4-bf16"};
    const char *const precisions[1] = {precision};
    kiln_compile_method m = {"forward", NULL, model, model_size};
    kiln_compile_options o = {.struct_size = sizeof o, .targets = target, .n_targets = 1, .precisions = precisions,
                              .n_precisions = 1};
    char message[256] = "";
    kiln_status st = kiln_compile_memory(&o, &m, 1, &out->bytes, &out->size, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "compile (%s): %s\n", precision, message);
    EXPECT_OK(st);
    return st == KILN_OK;
}

static bool run(const program *p, const kiln_tensor *in, float *y, size_t n_out)
{
    kiln_program *prog = NULL;
    kiln_module *mod = NULL;
    kiln_method *m = NULL;
    bool ok = false;
    EXPECT_OK(kiln_program_open_memory(p->bytes, p->size, &prog));
    kiln_module_options o = {.struct_size = sizeof o, .num_threads = 2};
    if (prog) EXPECT_OK(kiln_module_create(prog, &o, &mod));
    if (mod) EXPECT_OK(kiln_method_load(mod, "forward", &m));
    if (m) {
        kiln_tensor out;
        EXPECT_OK(kiln_method_set_input(m, 0, in));
        EXPECT_OK(kiln_method_execute(m));
        EXPECT(kiln_method_delegate_count(m) >= 1);
        if (kiln_method_get_output(m, 0, &out) == KILN_OK && (size_t)kiln_tensor_numel(&out) == n_out) {
            memcpy(y, out.data, sizeof(float) * n_out);
            ok = true;
        }
    }
    kiln_module_destroy(mod);
    kiln_program_close(prog);
    EXPECT(ok);
    return ok;
}

/* The model at f32 and at bf16: the bf16 program's weights take less room (at least `saved`
   bytes), and, where the CPU runs bf16, its outputs stay within `rtol` of the f32 ones (of the
   largest f32 output; printed). */
static void compare(const char *what, uint8_t *model, size_t model_size, const kiln_tensor *in, size_t n_out,
                    size_t saved, double rtol)
{
    program f32 = {0}, bf16 = {0};
    unit_section(what);
    if (!compile(model, model_size, "f32", &f32) || !compile(model, model_size, "bf16", &bf16)) return;
    printf("  program bytes: f32 %zu, bf16 %zu\n", f32.size, bf16.size);
    EXPECT(f32.size > bf16.size && f32.size - bf16.size >= saved);
    const kiln_cpu_target *t = kiln_cpu_target_find("x86-64-v4-bf16");
    if (!t || !kiln_cpu_target_runnable(t)) {
        printf("SKIPPED: running bf16: this CPU lacks AVX512-BF16 (the programs were compiled and checked)\n");
    } else {
        float *y32 = calloc(n_out, sizeof(float)), *y16 = calloc(n_out, sizeof(float));
        if (run(&f32, in, y32, n_out) && run(&bf16, in, y16, n_out)) {
            double worst = 0, ref = 0;
            for (size_t i = 0; i < n_out; i++) {
                worst = fmax(worst, fabs((double)y16[i] - y32[i]));
                ref = fmax(ref, fabs((double)y32[i]));
            }
            printf("  accuracy against f32: max |bf16 - f32| = %.3g, %.3g of max |f32|\n", worst, worst / ref);
            EXPECT(worst <= rtol * ref);
            EXPECT(worst > 0.0); /* the bf16 path ran: f32 would agree to the bit */
        }
        free(y32);
        free(y16);
    }
    kiln_free(kiln_allocator_default(), f32.bytes);
    kiln_free(kiln_allocator_default(), bf16.bytes);
}

int main(void)
{
    uint8_t *model = NULL;
    size_t model_size = 0;
    uint64_t seed = 7;

    /* bf16 keeps 8 bits of mantissa: operands are off by up to 2^-9 relative, sums of a few
       hundred such products by about that much of their magnitude. */
    static float x[BATCH * IN];
    test_fill_random(&seed, x, BATCH * IN, 1.0f);
    kiln_tensor xin = {KILN_DTYPE_F32, 2, {BATCH, IN}, x};
    build_model(&model, &model_size);
    compare("an MLP at f32 and at bf16 (softmax probabilities): GEMM weights in half the bytes", model, model_size,
            &xin, BATCH * OUT, (size_t)(HIDDEN * IN + HIDDEN * OUT) * sizeof(float) * 45 / 100, 1e-2);
    free(model);

    static float img[CONV_C * CONV_HW * CONV_HW];
    test_fill_random(&seed, img, CONV_C * CONV_HW * CONV_HW, 1.0f);
    kiln_tensor iin = {KILN_DTYPE_F32, 4, {1, CONV_C, CONV_HW, CONV_HW}, img};
    build_conv_model(&model, &model_size);
    /* The Winograd filters are 16/9 of 3x3 ones; bf16 halves them and the stride-2 ones. */
    compare("a convolution net at f32 and at bf16: Winograd, pixel-rows and pointwise filters in half the bytes", model,
            model_size, &iin, OUT,
            (size_t)(16 * CONV_M * CONV_C + 9 * CONV_M * CONV_M + CONV_P * CONV_M) * sizeof(float) * 45 / 100,
            2e-2);
    free(model);

    static float planes[256 * 16];
    test_fill_random(&seed, planes, 256 * 16, 1.0f);
    kiln_tensor pin = {KILN_DTYPE_F32, 4, {1, 256, 4, 4}, planes};
    build_pointwise_model(&model, &model_size);
    compare("a pointwise convolution at f32 and at bf16, its filters cut over two threads by rows", model,
            model_size, &pin, 512 * 16, (size_t)(512 * 256) * sizeof(float) * 45 / 100, 2e-2);
    free(model);
    return unit_finish("test_precision_bf16");
}
