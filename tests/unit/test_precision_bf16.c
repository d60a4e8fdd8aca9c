/* test_precision_bf16.c — compile spec precision bf16 end to end (compiler + cpu backend).
 *
 * Tests backends/cpu (aot lowering to bf16 weights, the x86-64-v4-bf16 target and its
 * avx512bf16 table) through the public API: a small MLP (Gemm + Relu, MatMul + Add, Softmax)
 * compiled for x86-64-v4-bf16 at f32 and at bf16. The bf16 program must hold its GEMM weights in
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
#define BATCH 5
#define IN 300
#define HIDDEN 257
#define OUT 40

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

static bool run(const program *p, const float *x, float *y)
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
        kiln_tensor in = {KILN_DTYPE_F32, 2, {BATCH, IN}, (void *)x}, out;
        EXPECT_OK(kiln_method_set_input(m, 0, &in));
        EXPECT_OK(kiln_method_execute(m));
        EXPECT(kiln_method_delegate_count(m) >= 1);
        if (kiln_method_get_output(m, 0, &out) == KILN_OK && out.rank == 2 && out.shape[1] == OUT) {
            memcpy(y, out.data, sizeof(float) * BATCH * OUT);
            ok = true;
        }
    }
    kiln_module_destroy(mod);
    kiln_program_close(prog);
    EXPECT(ok);
    return ok;
}

int main(void)
{
    uint8_t *model = NULL;
    size_t model_size = 0;
    build_model(&model, &model_size);
    program f32 = {0}, bf16 = {0};

    unit_section("x86-64-v4-bf16 at f32 and at bf16: the bf16 program holds its GEMM weights in half the bytes");
    REQUIRE(compile(model, model_size, "f32", &f32) && compile(model, model_size, "bf16", &bf16));
    size_t weights = (size_t)(HIDDEN * IN + HIDDEN * OUT) * sizeof(float);
    printf("  program bytes: f32 %zu, bf16 %zu (f32 GEMM weights: %zu)\n", f32.size, bf16.size, weights);
    EXPECT(f32.size > bf16.size && f32.size - bf16.size >= weights * 45 / 100);

    unit_section("bf16 outputs against f32 (softmax probabilities)");
    const kiln_cpu_target *t = kiln_cpu_target_find("x86-64-v4-bf16");
    if (!t || !kiln_cpu_target_runnable(t)) {
        printf("SKIPPED: running bf16: this CPU lacks AVX512-BF16 (the programs were compiled and checked)\n");
    } else {
        static float x[BATCH * IN], y32[BATCH * OUT], y16[BATCH * OUT];
        uint64_t seed = 7;
        test_fill_random(&seed, x, BATCH * IN, 1.0f);
        if (run(&f32, x, y32) && run(&bf16, x, y16)) {
            double worst = 0, ref = 0;
            for (size_t i = 0; i < BATCH * OUT; i++) {
                worst = fmax(worst, fabs((double)y16[i] - y32[i]));
                ref = fmax(ref, fabs((double)y32[i]));
            }
            printf("  accuracy against f32: max |bf16 - f32| = %.3g, %.3g of max |f32|\n", worst, worst / ref);
            /* bf16 keeps 8 bits of mantissa: operands are off by up to 2^-9 relative, sums of a
               few hundred such products by about that much of their magnitude. */
            EXPECT(worst <= 1e-2 * ref);
            EXPECT(worst > 0.0); /* the bf16 path ran: f32 would agree to the bit */
        }
    }
    kiln_free(kiln_allocator_default(), f32.bytes);
    kiln_free(kiln_allocator_default(), bf16.bytes);
    free(model);
    return unit_finish("test_precision_bf16");
}
