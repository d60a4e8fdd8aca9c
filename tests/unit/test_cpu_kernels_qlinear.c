/* test_cpu_kernels_qlinear.c — QLINEAR steps (kiln.Linear over Q8_0 / Q4_0 blocks on the cpu
 * backend, kernels/qlinear-driver.c and the kits' q*_dot kernels) on every table this CPU can
 * run, against the portable kiln.Linear kernel (src/kernels/portable/kiln_linear_embed.c), the
 * oracle the cpu backend replaces.
 *
 * Layer: tests (harness: test_cpu_kernels_support.h). Weights are random blocks with small
 * finite f16 scales; X rows M = 1 .. 9 (every remainder of the kernels' 4 X rows and the avx2
 * kernel's pairs) and larger prefill counts up to 70, N odd and even (remainders of the 4-row
 * groups), K from one block to past the portable kernel's 256-element chunk, with and without a
 * bias. Both paths accumulate in f32 in different orders, so they agree within float rounding:
 * |cpu - portable| <= 1e-5 * sum |x * w| (+ 1e-30). Split over three threads the step must give
 * the same bits as on one; validation must refuse a wrong row size, a weight too small and a
 * block type without kernels.
 */
#include "kernels/portable/elementwise_half.h"
#include "kernels/portable/kernel.h"
#include "kernels/portable/quant/quant_rows.h"
#include "test_cpu_kernels_support.h"

/* Random rows of dtype's blocks: random quants, each block's f16 scale in [-0.05, 0.05). */
static uint8_t *random_blocks(kiln_dtype dtype, int64_t rows, int64_t k, size_t *row_size)
{
    uint32_t block_elements, block_bytes;
    if (kiln_dtype_row_size(dtype, k, row_size) != KILN_OK || kiln_dtype_block(dtype, &block_elements, &block_bytes))
        abort();
    size_t bytes = *row_size * (size_t)rows;
    uint8_t *w = malloc(bytes + 1);
    for (size_t i = 0; i < bytes; i++) w[i] = (uint8_t)(frand() * 128 + 128);
    for (size_t b = 0; b < bytes / block_bytes; b++) {
        uint16_t h = kiln_ew_f32_to_f16(frand() * 0.05f);
        memcpy(w + b * block_bytes, &h, 2);
    }
    return w;
}

/* The portable kiln.Linear on the same bytes, run as the runtime runs it (one task). */
static void portable_linear(kiln_dtype dtype, const uint8_t *w, const float *x, const float *bias, int64_t m,
                            int64_t n, int64_t k, float *y)
{
    const kiln_kernel *kernel = kiln_portable_kernel_find(KILN_DOMAIN_KILN, "Linear", 1);
    kiln_node node = {.op = "Linear", .domain = KILN_DOMAIN_KILN, .name = "Linear", .opset = 1,
                      .n_inputs = bias ? 3 : 2, .n_outputs = 1};
    kiln_tensor tx = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {m, k}, .data = (void *)x};
    kiln_tensor tw = {.dtype = dtype, .rank = 2, .shape = {n, k}, .data = (void *)w};
    kiln_tensor tb = {.dtype = KILN_DTYPE_F32, .rank = 1, .shape = {n}, .data = (void *)bias};
    kiln_tensor ty = {0};
    const kiln_tensor *in[3] = {&tx, &tw, &tb};
    kiln_tensor *out[1] = {&ty};
    size_t scratch = 0;
    if (!kernel || kernel->infer(&node, in, out, &scratch) != KILN_OK || scratch != 0) {
        fail("portable kiln.Linear refused M=%lld N=%lld K=%lld", (long long)m, (long long)n, (long long)k);
        return;
    }
    ty.data = y;
    kiln_kernel_ctx ctx = {0};
    ctx.n_threads = 1;
    if (kernel->run(&node, in, out, &ctx) != KILN_OK) fail("portable kiln.Linear failed");
}

static void reverse_for(void *pool, size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    (void)pool;
    for (size_t i = n; i-- > 0;) fn(arg, i);
}

static void qlinear_case(kiln_dtype dtype, int64_t m, int64_t n, int64_t k, bool bias)
{
    size_t row_size;
    uint8_t *w = random_blocks(dtype, n, k, &row_size);
    tbuf *X = tb_new(KILN_DTYPE_F32, 2, (const int64_t[]){m, k});
    tbuf *W = tb_new(KILN_DTYPE_U8, 2, (const int64_t[]){n, (int64_t)row_size});
    tbuf *B = bias ? tb_f32(n) : NULL, *Y = tb_new(KILN_DTYPE_F32, 2, (const int64_t[]){m, n});
    memcpy(W->t.data, w, W->bytes);
    fill(tb_data(X), m * k, 1.0f);
    if (B) fill(tb_data(B), n, 1.0f);
    float *want = malloc((size_t)(m * n) * sizeof *want + 1);
    portable_linear(dtype, w, tb_data(X), B ? tb_data(B) : NULL, m, n, k, want);
    /* The tolerance's scale: sum |x * w| of each output, w decoded as the portable kernel does. */
    float *row = malloc((size_t)k * sizeof *row);
    double *mag = malloc((size_t)(m * n) * sizeof *mag + 1);
    for (int64_t j = 0; j < n; j++) {
        kiln_dequantize_row(dtype, w + (size_t)j * row_size, row, k);
        for (int64_t i = 0; i < m; i++) {
            double s = B ? fabs(tb_data(B)[j]) : 0.0;
            for (int64_t e = 0; e < k; e++) s += fabs((double)tb_data(X)[i * k + e] * row[e]);
            mag[i * n + j] = s;
        }
    }
    kiln_cpu_qlinear_params p = {.M = m, .N = n, .K = k, .row_size = (int64_t)row_size, .dtype = dtype,
                                 .has_bias = bias};
    char what[128];
    snprintf(what, sizeof what, "qlinear %s M=%lld N=%lld K=%lld%s", kiln_dtype_name(dtype), (long long)m,
             (long long)n, (long long)k, bias ? " bias" : "");
    for (size_t t = 0; t < n_tables; t++) {
        if (!tables[t].runnable) continue;
        tbuf *in[3] = {X, W, B}, *out[1] = {Y};
        if (!run_step(&tables[t], KILN_CPU_OP_QLINEAR, &p, in, 3, out, 1, what)) continue;
        const float *y = tb_data(Y);
        for (int64_t i = 0; i < m * n; i++) {
            checks++;
            if (!(fabs((double)y[i] - (double)want[i]) <= 1e-5 * mag[i] + 1e-30)) {
                fail("%s [%s]: element %lld is %.9g, portable %.9g", what, tables[t].k->isa, (long long)i, y[i],
                     want[i]);
                break;
            }
        }
        /* Split over three tasks (run in reverse order): the same bits. */
        float *one = malloc(Y->bytes + 1);
        memcpy(one, tb_data(Y), Y->bytes);
        const kiln_tensor *tin[3] = {&X->t, &W->t, B ? &B->t : NULL};
        kiln_tensor *tout[1] = {&Y->t};
        kiln_cpu_exec exec = {.parallel_for = reverse_for, .n_threads = 3};
        memset(tb_data(Y), 0x7F, Y->bytes);
        checks++;
        if (tables[t].k->ops[KILN_CPU_OP_QLINEAR](&p, tin, tout, &exec) != KILN_OK ||
            memcmp(one, tb_data(Y), Y->bytes) != 0)
            fail("%s [%s]: three tasks gave other bits than one", what, tables[t].k->isa);
        free(one);
    }
    free(w), free(want), free(row), free(mag);
    tb_free(X), tb_free(W), tb_free(B), tb_free(Y);
}

/* Params the validator must refuse against these tensors. */
static void refusals(void)
{
    int64_t m = 2, n = 3, k = 64;
    size_t row_size;
    kiln_dtype_row_size(KILN_DTYPE_Q8_0, k, &row_size);
    tbuf *X = tb_new(KILN_DTYPE_F32, 2, (const int64_t[]){m, k});
    tbuf *W = tb_new(KILN_DTYPE_U8, 2, (const int64_t[]){n, (int64_t)row_size});
    tbuf *Y = tb_new(KILN_DTYPE_F32, 2, (const int64_t[]){m, n});
    const kiln_tensor *in[3] = {&X->t, &W->t, NULL};
    kiln_tensor *out[1] = {&Y->t};
    size_t in_sizes[3] = {X->bytes, W->bytes, 0}, out_sizes[1] = {Y->bytes};
    const kiln_cpu_qlinear_params good = {.M = m, .N = n, .K = k, .row_size = (int64_t)row_size,
                                          .dtype = KILN_DTYPE_Q8_0};
    kiln_cpu_qlinear_params bad[6];
    for (int i = 0; i < 6; i++) bad[i] = good;
    bad[0].row_size -= 1;                /* not the type's row */
    bad[1].dtype = KILN_DTYPE_Q4_K;      /* no kernels */
    bad[2].N = n + 1;                    /* more rows than W holds (and Y) */
    bad[3].has_bias = 1;                 /* no bias tensor */
    bad[4].K = k + 32;                   /* X too small, row size off */
    bad[5].dtype = KILN_DTYPE_Q4_0;      /* Q4_0 rows are 18 bytes a block, not 34 */
    checks++;
    if (kiln_cpu_step_validate(KILN_CPU_OP_QLINEAR, &good, in, 3, in_sizes, out, 1, out_sizes, 6, 16) != KILN_OK)
        fail("qlinear: validation refused a valid step");
    for (int i = 0; i < 6; i++) {
        checks++;
        if (kiln_cpu_step_validate(KILN_CPU_OP_QLINEAR, &bad[i], in, 3, in_sizes, out, 1, out_sizes, 6, 16) == KILN_OK)
            fail("qlinear: validation accepted bad params %d", i);
    }
    tb_free(X), tb_free(W), tb_free(Y);
}

int main(void)
{
    tables_init();
    static const kiln_dtype types[] = {KILN_DTYPE_Q8_0, KILN_DTYPE_Q4_0};
    for (size_t t = 0; t < 2; t++) {
        for (int64_t m = 1; m <= 9; m++) {
            qlinear_case(types[t], m, 7, 96, m % 2 == 1);
            qlinear_case(types[t], m, 33, 288, m % 2 == 0);
        }
        qlinear_case(types[t], 1, 1, 32, false);
        qlinear_case(types[t], 1, 301, 768, true);    /* decode, split over the threads */
        qlinear_case(types[t], 3, 5, 4096, false);    /* long rows */
        qlinear_case(types[t], 17, 13, 320, true);
        qlinear_case(types[t], 70, 29, 288, false);   /* prefill */
        qlinear_case(types[t], 64, 36, 256, true);
    }
    refusals();
    return kernel_tests_report("test_cpu_kernels_qlinear");
}
