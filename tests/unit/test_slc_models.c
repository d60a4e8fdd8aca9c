/* test_slc_models.c — `slc` planning never changes results, on every target.
 *
 * Layer: tests (black-box through kiln/compiler.h and kiln/kiln.h; the context binaries'
 * compile-spec flags are read from the program bytes with cpu_format.h). A small residual CNN is
 * built in C (convolutions with fused activations, a depthwise block, two skip additions, one
 * of them long-lived, pooling and a linear head), so its cpu delegate has short-lived buffers
 * for the cache-resident region and a long-lived one for the rest. For every target:
 *  - compiled with and without slc, both load (the context-binary reader accepts the plan) and
 *    give bit-identical outputs, close to the portable kernels' results;
 *  - every context binary of the slc program carries KILN_CTX_SPEC_SLC, none of the plain one;
 * and a three-target slc program gives, per runnable record forced, the same bits as that
 * target's plain program. slc together with no_delegate is a compile-spec error.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cpu/cpu_format.h"
#include "backends/cpu/targets.h"
#include "compare.h"
#include "core/alloc.h"
#include "onnx_builder.h"
#include "test_random.h"
#include "unit_expect.h"

#define EXPECT_OK(expr) EXPECT_STATUS(expr, KILN_OK)
#define N_OUT 10
#define IN_C 8
#define IN_HW 24

/* A float initializer of the given shape with values in [-scale, scale]. */
static void weight(onnx_builder *b, uint64_t *seed, const char *name, uint32_t rank, const int64_t *shape, float scale)
{
    size_t n = 1;
    for (uint32_t d = 0; d < rank; d++) n *= (size_t)shape[d];
    float *v = malloc(n * sizeof *v);
    REQUIRE(v);
    test_fill_random(seed, v, n, scale);
    onnx_builder_initializer(b, name, ONNX_BUILDER_FLOAT, rank, shape, v, n * sizeof *v);
    free(v);
}

static Onnx__NodeProto *conv(onnx_builder *b, uint64_t *seed, const char *in, const char *out, int64_t cin,
                             int64_t cout, int64_t k, int64_t stride, int64_t group)
{
    char w[64], bias[64], inputs[160];
    snprintf(w, sizeof w, "%s_w", out);
    snprintf(bias, sizeof bias, "%s_b", out);
    weight(b, seed, w, 4, (const int64_t[]){cout, cin / group, k, k}, 0.3f);
    weight(b, seed, bias, 1, (const int64_t[]){cout}, 0.1f);
    snprintf(inputs, sizeof inputs, "%s,%s,%s", in, w, bias);
    Onnx__NodeProto *n = onnx_builder_node(b, "Conv", inputs, out);
    int64_t pad = k / 2;
    onnx_builder_attr_ints(b, n, "kernel_shape", 2, (const int64_t[]){k, k});
    onnx_builder_attr_ints(b, n, "pads", 4, (const int64_t[]){pad, pad, pad, pad});
    onnx_builder_attr_ints(b, n, "strides", 2, (const int64_t[]){stride, stride});
    if (group != 1) onnx_builder_attr_int(b, n, "group", group);
    return n;
}

/* x -> conv relu (a) -> conv (b) + a (c) -> 1x1 relu -> depthwise relu -> 1x1 (f) + c (g) ->
   strided conv relu (h) + maxpool(a) (q: a lives across the whole net) -> gap -> flatten -> gemm. */
static void build_model(uint8_t **data, size_t *size)
{
    uint64_t seed = 0x6b696c6e736c63ull;
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, (const int64_t[]){1, IN_C, IN_HW, IN_HW});
    conv(b, &seed, "x", "a0", IN_C, 16, 3, 1, 1);
    onnx_builder_node(b, "Relu", "a0", "a");
    conv(b, &seed, "a", "b", 16, 16, 3, 1, 1);
    onnx_builder_node(b, "Add", "b,a", "c");
    conv(b, &seed, "c", "d0", 16, 32, 1, 1, 1);
    onnx_builder_node(b, "Relu", "d0", "d");
    conv(b, &seed, "d", "e0", 32, 32, 3, 1, 32);
    onnx_builder_node(b, "Relu", "e0", "e");
    conv(b, &seed, "e", "f", 32, 16, 1, 1, 1);
    onnx_builder_node(b, "Add", "f,c", "g");
    conv(b, &seed, "g", "h0", 16, 16, 3, 2, 1);
    onnx_builder_node(b, "Relu", "h0", "h");
    Onnx__NodeProto *pool = onnx_builder_node(b, "MaxPool", "a", "p");
    onnx_builder_attr_ints(b, pool, "kernel_shape", 2, (const int64_t[]){2, 2});
    onnx_builder_attr_ints(b, pool, "strides", 2, (const int64_t[]){2, 2});
    onnx_builder_node(b, "Add", "h,p", "q");
    onnx_builder_node(b, "GlobalAveragePool", "q", "r");
    onnx_builder_node(b, "Flatten", "r", "s");
    weight(b, &seed, "fc_w", 2, (const int64_t[]){N_OUT, 16}, 0.3f);
    weight(b, &seed, "fc_b", 1, (const int64_t[]){N_OUT}, 0.1f);
    Onnx__NodeProto *fc = onnx_builder_node(b, "Gemm", "s,fc_w,fc_b", "y");
    onnx_builder_attr_int(b, fc, "transB", 1);
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

static uint8_t *model;
static size_t model_size;
static float input[IN_C * IN_HW * IN_HW];

typedef struct program {
    void *bytes;
    size_t size;
} program;

static bool compile(const char *const *targets, size_t n_targets, int slc, int no_delegate, program *p)
{
    kiln_compile_method m = {"forward", NULL, model, model_size};
    kiln_compile_options opt = {.struct_size = sizeof opt, .targets = targets, .n_targets = n_targets, .slc = slc,
                                .no_delegate = no_delegate};
    char msg[512] = "";
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &p->bytes, &p->size, msg, sizeof msg);
    if (st != KILN_OK) fprintf(stderr, "compile (slc %d): %s: %s\n", slc, kiln_status_name(st), msg);
    EXPECT_OK(st);
    return st == KILN_OK;
}

/* Context binaries in the program carrying / lacking KILN_CTX_SPEC_SLC. */
static void count_slc_binaries(const program *p, size_t *with, size_t *without)
{
    *with = *without = 0;
    const uint8_t *bytes = p->bytes;
    for (size_t at = 0; at + KILN_CTX_HEADER_SIZE <= p->size; at += 8) {
        if (memcmp(bytes + at, KILN_CTX_MAGIC, 8) != 0) continue;
        kiln_ctx_header h;
        memcpy(&h, bytes + at, sizeof h);
        if (h.version != KILN_CTX_VERSION) continue;
        if (h.spec_flags & KILN_CTX_SPEC_SLC) (*with)++;
        else (*without)++;
    }
}

/* Run p with record `target` forced; output into y. */
static bool run(const program *p, const char *target, float *y)
{
    kiln_program *prog = NULL;
    kiln_module *mod = NULL;
    kiln_method *m = NULL;
    bool ok = false;
    EXPECT_OK(kiln_program_open_memory(p->bytes, p->size, &prog));
    kiln_module_options o = {.struct_size = sizeof o, .num_threads = 1, .target = target};
    if (prog) EXPECT_OK(kiln_module_create(prog, &o, &mod));
    if (mod) EXPECT_OK(kiln_method_load(mod, "forward", &m));
    if (m) {
        kiln_tensor x = {KILN_DTYPE_F32, 4, {1, IN_C, IN_HW, IN_HW}, input}, out;
        EXPECT_OK(kiln_method_set_input(m, 0, &x));
        EXPECT_OK(kiln_method_execute(m));
        if (kiln_method_get_output(m, 0, &out) == KILN_OK && out.rank == 2 && out.shape[1] == N_OUT) {
            memcpy(y, out.data, N_OUT * sizeof *y);
            ok = true;
        }
        EXPECT(target == NULL || kiln_method_delegate_count(m) >= 1);
    }
    kiln_module_destroy(mod);
    kiln_program_close(prog);
    EXPECT(ok);
    return ok;
}

static void release(program *p) { kiln_free(kiln_allocator_default(), p->bytes); }

static bool close_to(const float *got, const float *want)
{
    kiln_tensor a = {KILN_DTYPE_F32, 2, {1, N_OUT}, (void *)got}, e = {KILN_DTYPE_F32, 2, {1, N_OUT}, (void *)want};
    char why[256];
    bool ok = kiln_test_compare(&a, &e, 1e-3, 1e-5, why, sizeof why);
    if (!ok) fprintf(stderr, "against the portable kernels: %s\n", why);
    return ok;
}

/* Per target: plain and slc bit-identical, both near the portable result. Keeps the plain
   outputs per target in plain_out for the multi-target check. */
static void test_each_target(const float *reference, float plain_out[][N_OUT], bool *ran)
{
    for (size_t t = 0; t < kiln_cpu_target_count(); t++) {
        const kiln_cpu_target *target = kiln_cpu_target_at(t);
        const char *name = target->name;
        program plain, slc;
        ran[t] = false;
        if (!compile(&name, 1, 0, 0, &plain)) continue;
        if (compile(&name, 1, 1, 0, &slc)) {
            size_t with, without;
            count_slc_binaries(&slc, &with, &without);
            EXPECT(with >= 1 && without == 0);
            count_slc_binaries(&plain, &with, &without);
            EXPECT(with == 0 && without >= 1);
            if (!kiln_cpu_target_runnable(target)) {
                printf("  %s: compiled; not run (this CPU cannot)\n", name);
            } else {
                float y_slc[N_OUT];
                if (run(&plain, name, plain_out[t]) && run(&slc, name, y_slc)) {
                    EXPECT(memcmp(plain_out[t], y_slc, sizeof y_slc) == 0);
                    EXPECT(close_to(plain_out[t], reference));
                    ran[t] = true;
                    printf("  %s: slc output bit-identical to plain\n", name);
                }
            }
            release(&slc);
        }
        release(&plain);
    }
}

static void test_multi_target(float plain_out[][N_OUT], const bool *ran)
{
    const char *all[] = {"generic", "x86-64-v3", "x86-64-v4"};
    program p;
    if (!compile(all, 3, 1, 0, &p)) return;
    for (size_t t = 0; t < kiln_cpu_target_count(); t++) {
        const char *name = kiln_cpu_target_at(t)->name;
        bool in_program = false;
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) in_program |= strcmp(all[i], name) == 0;
        if (!ran[t] || !in_program) continue;
        float y[N_OUT];
        if (run(&p, name, y)) EXPECT(memcmp(y, plain_out[t], sizeof y) == 0);
    }
    release(&p);
}

int main(void)
{
    build_model(&model, &model_size);
    uint64_t seed = 42;
    test_fill_random(&seed, input, sizeof input / sizeof input[0], 1.0f);

    unit_section("slc with no_delegate is rejected");
    kiln_compile_method m = {"forward", NULL, model, model_size};
    kiln_compile_options bad = {.struct_size = sizeof bad, .slc = 1, .no_delegate = 1};
    void *bytes = NULL;
    size_t size = 0;
    char msg[256] = "";
    EXPECT_STATUS(kiln_compile_memory(&bad, &m, 1, &bytes, &size, msg, sizeof msg), KILN_ERROR_COMPILE_SPEC);
    EXPECT(bytes == NULL && strstr(msg, "no_delegate") != NULL);

    unit_section("slc and plain programs per target");
    program portable;
    float reference[N_OUT];
    REQUIRE(compile(NULL, 0, 0, 1, &portable) && run(&portable, NULL, reference));
    release(&portable);
    float plain_out[8][N_OUT];
    bool ran[8];
    REQUIRE(kiln_cpu_target_count() <= 8);
    test_each_target(reference, plain_out, ran);

    unit_section("a three-target slc program, every runnable record forced");
    test_multi_target(plain_out, ran);
    free(model);
    return unit_finish("test_slc_models");
}
