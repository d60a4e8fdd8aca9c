/* test_compile_multi_target.c — which weight blocks the records of a multi-target context binary
 * share (issue 4, item 1), on a small CNN with every weight form.
 *
 * Layer: tests (kiln/compiler.h and kiln.h; the context binary read with the runtime's own
 * validating reader, backends/cpu/rt/ctxbin_reader.h). The model has a convolution with a
 * BatchNormalization folded into it (packed A filters, computed bias), a depthwise convolution
 * (unpacked [C, KH, KW] filters), a LayerNormalization (scale and bias), a Mul by a constant
 * (binary operand) and a Gemm with constant B (packed B panels), compiled for generic, x86-64-v3
 * and x86-64-v4. Checks:
 *  - every unpacked weight tensor is one block shared by all three records;
 *  - generic and x86-64-v3 (both 6x16) share every block, packed ones included;
 *  - x86-64-v4 (12x32) has its own packed blocks;
 *  - each record the CPU can run, forced, computes the same outputs as the others and as the
 *    portable kernels (conformance tolerance).
 */
#include <math.h>

#include "backends/cpu/rt/ctxbin_reader.h"
#include "core/alloc.h"
#include "onnx_builder.h"
#include "unit_expect.h"

static void fill(float *w, size_t n, uint32_t seed, float scale, float offset)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        w[i] = offset + scale * ((float)(seed >> 8) / 16777216.0f - 0.5f);
    }
}

static void model(uint8_t **data, size_t *size)
{
    static float c1[16 * 8 * 9], c1b[16], g[16], be[16], mu[16], var[16], dw[16 * 9], dwb[16], lns[10], lnb[10],
        mulc[10], fc[12 * 1600], fcb[12];
    fill(c1, sizeof c1 / 4, 1, 0.5f, 0);
    fill(c1b, 16, 2, 0.1f, 0);
    fill(g, 16, 3, 0.2f, 1);
    fill(be, 16, 4, 0.1f, 0);
    fill(mu, 16, 5, 0.1f, 0);
    fill(var, 16, 6, 0.5f, 1);
    fill(dw, sizeof dw / 4, 7, 0.6f, 0);
    fill(dwb, 16, 8, 0.1f, 0);
    fill(lns, 10, 9, 0.2f, 1);
    fill(lnb, 10, 10, 0.1f, 0);
    fill(mulc, 10, 11, 1.0f, 0);
    fill(fc, sizeof fc / 4, 12, 0.1f, 0);
    fill(fcb, 12, 13, 0.1f, 0);
    onnx_builder *b = onnx_builder_create(17);
    int64_t xs[4] = {1, 8, 10, 10}, c1s[4] = {16, 8, 3, 3}, v16[1] = {16}, dws[4] = {16, 1, 3, 3}, v10[1] = {10},
            fcs[2] = {12, 1600}, v12[1] = {12};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_initializer(b, "c1", ONNX_BUILDER_FLOAT, 4, c1s, c1, sizeof c1);
    onnx_builder_initializer(b, "c1b", ONNX_BUILDER_FLOAT, 1, v16, c1b, sizeof c1b);
    onnx_builder_initializer(b, "gamma", ONNX_BUILDER_FLOAT, 1, v16, g, sizeof g);
    onnx_builder_initializer(b, "beta", ONNX_BUILDER_FLOAT, 1, v16, be, sizeof be);
    onnx_builder_initializer(b, "mean", ONNX_BUILDER_FLOAT, 1, v16, mu, sizeof mu);
    onnx_builder_initializer(b, "var", ONNX_BUILDER_FLOAT, 1, v16, var, sizeof var);
    onnx_builder_initializer(b, "dw", ONNX_BUILDER_FLOAT, 4, dws, dw, sizeof dw);
    onnx_builder_initializer(b, "dwb", ONNX_BUILDER_FLOAT, 1, v16, dwb, sizeof dwb);
    onnx_builder_initializer(b, "ln_scale", ONNX_BUILDER_FLOAT, 1, v10, lns, sizeof lns);
    onnx_builder_initializer(b, "ln_bias", ONNX_BUILDER_FLOAT, 1, v10, lnb, sizeof lnb);
    onnx_builder_initializer(b, "mulc", ONNX_BUILDER_FLOAT, 1, v10, mulc, sizeof mulc);
    onnx_builder_initializer(b, "fc", ONNX_BUILDER_FLOAT, 2, fcs, fc, sizeof fc);
    onnx_builder_initializer(b, "fcb", ONNX_BUILDER_FLOAT, 1, v12, fcb, sizeof fcb);
    static const int64_t k3[2] = {3, 3}, pad1[4] = {1, 1, 1, 1};
    Onnx__NodeProto *n = onnx_builder_node(b, "Conv", "x,c1,c1b", "t1");
    onnx_builder_attr_ints(b, n, "kernel_shape", 2, k3);
    onnx_builder_attr_ints(b, n, "pads", 4, pad1);
    onnx_builder_node(b, "BatchNormalization", "t1,gamma,beta,mean,var", "t2");
    onnx_builder_node(b, "Relu", "t2", "t3");
    n = onnx_builder_node(b, "Conv", "t3,dw,dwb", "t4");
    onnx_builder_attr_ints(b, n, "kernel_shape", 2, k3);
    onnx_builder_attr_ints(b, n, "pads", 4, pad1);
    onnx_builder_attr_int(b, n, "group", 16);
    n = onnx_builder_node(b, "LayerNormalization", "t4,ln_scale,ln_bias", "t5");
    onnx_builder_attr_int(b, n, "axis", -1);
    onnx_builder_node(b, "Mul", "t5,mulc", "t6");
    onnx_builder_node(b, "Flatten", "t6", "t7");
    n = onnx_builder_node(b, "Gemm", "t7,fc,fcb", "y");
    onnx_builder_attr_int(b, n, "transB", 1);
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

static const char *const targets[3] = {"generic", "x86-64-v3", "x86-64-v4"};

static void *compile(const uint8_t *onnx, size_t onnx_size, int no_delegate, size_t *size)
{
    kiln_compile_method m = {"forward", NULL, onnx, onnx_size};
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = no_delegate};
    if (!no_delegate) {
        opt.targets = targets;
        opt.n_targets = 3;
    }
    void *data = NULL;
    char message[512] = "";
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &data, size, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "compile: %s\n", message);
    REQUIRE(st == KILN_OK);
    return data;
}

/* Whether tensor t of a graph is read as a packed weight by some step (GEMM B with b_packed,
   or the filters of a convolution that is not depthwise). */
static bool read_packed(const kiln_ctxbin *bin, const kiln_ctx_graph *g, uint32_t t)
{
    const kiln_ctx_step *steps = kiln_ctxbin_steps(bin, g);
    for (uint32_t s = 0; s < g->n_steps; s++) {
        if (steps[s].tensors[1] != (int32_t)t) continue;
        if (steps[s].op == KILN_CPU_OP_GEMM) {
            kiln_cpu_gemm_params p;
            memcpy(&p, steps[s].params, sizeof p);
            if (p.b_packed) return true;
        }
        if (steps[s].op == KILN_CPU_OP_CONV2D) {
            kiln_cpu_conv_params p;
            memcpy(&p, steps[s].params, sizeof p);
            if (!p.depthwise) return true;
        }
    }
    return false;
}

static void test_blocks(const uint8_t *program, size_t size)
{
    unit_section("weight blocks shared between the records");
    const uint8_t *data = NULL;
    for (size_t at = 0; at + KILN_CTX_HEADER_SIZE <= size && !data; at += 64)
        if (memcmp(program + at, KILN_CTX_MAGIC, 8) == 0) data = program + at;
    REQUIRE(data);
    const kiln_ctx_header *h = (const void *)data;
    kiln_ctxbin bin;
    char message[256];
    REQUIRE(kiln_ctxbin_open(&bin, data, (size_t)h->file_size, kiln_allocator_default(), message, sizeof message) ==
            KILN_OK);
    REQUIRE(h->n_records == 3);
    const kiln_ctx_record *r = bin.records; /* generic, x86-64-v3, x86-64-v4 in that order */
    EXPECT(r[0].gemm_mr == r[1].gemm_mr && r[0].gemm_nr == r[1].gemm_nr);
    EXPECT(r[2].gemm_mr != r[0].gemm_mr || r[2].gemm_nr != r[0].gemm_nr);
    size_t unpacked = 0, packed = 0;
    for (uint32_t gi = 0; gi < r[0].n_graphs; gi++) {
        const kiln_ctx_graph *g[3];
        for (int k = 0; k < 3; k++) g[k] = &kiln_ctxbin_graphs(&bin, &r[k])[gi];
        REQUIRE(g[0]->n_tensors == g[1]->n_tensors && g[0]->n_tensors == g[2]->n_tensors);
        const kiln_ctx_tensor *t[3];
        for (int k = 0; k < 3; k++) t[k] = kiln_ctxbin_tensors(&bin, g[k]);
        for (uint32_t i = 0; i < g[0]->n_tensors; i++) {
            if (t[0][i].kind != KILN_CTX_TENSOR_WEIGHT) continue;
            if (read_packed(&bin, g[0], i)) {
                packed++;
                EXPECT(t[0][i].block == t[1][i].block);  /* same tile: same packed bytes */
                EXPECT(t[2][i].block != t[0][i].block);  /* 12x32 panels are other bytes */
            } else {
                unpacked++;
                EXPECT(t[0][i].block == t[1][i].block && t[0][i].block == t[2][i].block);
            }
        }
    }
    printf("%zu unpacked weights shared by all records, %zu packed ones by generic and x86-64-v3\n", unpacked, packed);
    /* conv bias (folded), depthwise filters + bias, layernorm scale + bias, mul operand, gemm bias */
    EXPECT(unpacked >= 7);
    EXPECT(packed == 2); /* conv filters, gemm B */
    kiln_ctxbin_close(&bin);
}

/* The outputs of a program's forward method with record `target` forced (NULL: portable
   program), on a fixed input; false when this CPU cannot run that record. */
static bool run(const void *program, size_t size, const char *target, float *y, size_t n)
{
    kiln_program *p = NULL;
    kiln_module *m = NULL;
    kiln_method *f = NULL;
    EXPECT_STATUS(kiln_program_open_memory(program, size, &p), KILN_OK);
    kiln_module_options o = {.struct_size = sizeof o, .num_threads = 1, .target = target};
    EXPECT_STATUS(kiln_module_create(p, &o, &m), KILN_OK);
    kiln_status st = kiln_method_load(m, "forward", &f);
    bool ran = false;
    if (st == KILN_ERROR_NO_RUNNABLE_TARGET) {
        printf("SKIPPED: record %s: this CPU cannot run it\n", target);
    } else if (st == KILN_OK) {
        float x[800];
        for (int i = 0; i < 800; i++) x[i] = sinf((float)i * 0.11f);
        kiln_tensor in = {.dtype = KILN_DTYPE_F32, .rank = 4, .shape = {1, 8, 10, 10}, .data = x};
        kiln_tensor out;
        EXPECT_STATUS(kiln_method_set_input(f, 0, &in), KILN_OK);
        EXPECT_STATUS(kiln_method_execute(f), KILN_OK);
        EXPECT_STATUS(kiln_method_get_output(f, 0, &out), KILN_OK);
        ran = kiln_tensor_numel(&out) == (int64_t)n;
        EXPECT(ran);
        if (ran) memcpy(y, out.data, n * sizeof *y);
    } else {
        EXPECT_STATUS(st, KILN_OK);
    }
    kiln_module_destroy(m);
    kiln_program_close(p);
    return ran;
}

static void test_records_agree(const void *program, size_t size, const void *portable, size_t portable_size)
{
    unit_section("every record forced computes the same outputs");
    float want[12], got[12];
    REQUIRE(run(portable, portable_size, NULL, want, 12));
    for (int k = 0; k < 3; k++) {
        if (!run(program, size, targets[k], got, 12)) continue;
        for (int i = 0; i < 12; i++) {
            unit_checks++;
            if (!(fabsf(got[i] - want[i]) <= 1e-3f * fabsf(want[i]) + 1e-5f)) {
                fprintf(stderr, "record %s: output %d is %g, portable kernels give %g\n", targets[k], i, got[i], want[i]);
                unit_failures++;
            }
        }
    }
}

int main(void)
{
    uint8_t *onnx;
    size_t onnx_size, size, portable_size;
    model(&onnx, &onnx_size);
    void *program = compile(onnx, onnx_size, 0, &size);
    void *portable = compile(onnx, onnx_size, 1, &portable_size);
    test_blocks(program, size);
    test_records_agree(program, size, portable, portable_size);
    free(program);
    free(portable);
    free(onnx);
    return unit_finish("test_compile_multi_target");
}
