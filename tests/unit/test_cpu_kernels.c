/* test_cpu_kernels.c — the `cpu` backend's kernel tables against naive references.
 *
 * Tests backends/cpu/kernels: every op of the generic table is compared with a naive double-
 * precision reference written here from the op's definition (cpu_ops.h, the portable kernels'
 * semantics), and every other table this CPU can run is compared with the generic table on the
 * same inputs (tables the CPU cannot run print a SKIPPED line). Shapes hit tile remainders
 * (1, 3, 7, 17, 33, 65 ...), whole 6x16 tiles and panels whose last columns fall in the second
 * half of a 16-wide panel (the generic 6x16 kernel does a panel as two 8-column halves), empty
 * dimensions and several K blocks; weights are packed per table at its MR/NR. The generic and
 * avx2 tables must share one tile (their records share packed weights, docs/targets.md). Each step first passes kiln_cpu_step_validate, runs on a workspace of the size
 * kiln_cpu_workspace_size reports for its target and again on the smallest workspace the plan
 * accepts (which must not change a single bit), and writes into buffers followed by a canary.
 * Finally validate() must reject params that are inconsistent, sizes that are too small and
 * params that do not describe exactly their output (a zero factor beside a non-empty output).
 * Exit status: 0 when everything passed.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "backends/cpu/targets.h"
#include "test_kernel_support.h"

/* ---- random data ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static float frand(void) { return xorshift_unit(&rng_state); } /* [-1, 1) */

static void fill(float *x, int64_t n, float scale)
{
    for (int64_t i = 0; i < n; i++) x[i] = frand() * scale;
}

/* ---- tensors with a canary after their data ---- */

#define CANARY 64
#define CANARY_BYTE 0xA5

typedef struct tbuf {
    kiln_tensor t;
    size_t bytes;
} tbuf;

static tbuf *tb_new(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    tbuf *b = calloc(1, sizeof *b);
    b->t.dtype = dtype;
    b->t.rank = rank;
    size_t n = 1;
    for (uint32_t d = 0; d < rank; d++) {
        b->t.shape[d] = shape[d];
        n *= (size_t)shape[d];
    }
    b->bytes = n * kiln_dtype_size(dtype);
    b->t.data = malloc(b->bytes + CANARY);
    memset(b->t.data, 0, b->bytes);
    memset((char *)b->t.data + b->bytes, CANARY_BYTE, CANARY);
    return b;
}

static tbuf *tb_f32(int64_t n) { return tb_new(KILN_DTYPE_F32, 1, &n); }

static float *tb_data(tbuf *b) { return b->t.data; }

static bool tb_canary_ok(const tbuf *b)
{
    const unsigned char *c = (const unsigned char *)b->t.data + b->bytes;
    for (int i = 0; i < CANARY; i++)
        if (c[i] != CANARY_BYTE) return false;
    return true;
}

static void tb_free(tbuf *b)
{
    if (!b) return;
    free(b->t.data);
    free(b);
}

/* ---- the tables under test ---- */

typedef struct table {
    const kiln_cpu_target *target;
    const kiln_cpu_kernels *k;
    bool runnable;
} table;

static table tables[8];
static size_t n_tables;

static void tables_init(void)
{
    for (size_t i = 0; i < kiln_cpu_target_count() && n_tables < 8; i++) {
        const kiln_cpu_target *t = kiln_cpu_target_at(i);
        tables[n_tables++] = (table){t, t->kernels, kiln_cpu_target_runnable(t) != 0};
        if (!kiln_cpu_target_runnable(t))
            printf("SKIPPED: table %s (target %s): this CPU lacks its features\n", t->kernels->isa, t->name);
    }
}

/* Runs one step on table k: validate, then execute on the planned workspace and on the
   smallest one the plan accepts; both outputs must match bit for bit and canaries survive.
   Validation sees each buffer's real size, which a tensor's shape may not fill (a GEMM output
   with padded rows is logically batch x M x N in a buffer of batch x M x ldy floats). */
static bool run_step(const table *tb, uint32_t op, const void *params, tbuf **in, size_t n_in, tbuf **out,
                     size_t n_out, const char *what)
{
    const kiln_tensor *tin[KILN_CPU_MAX_STEP_TENSORS] = {0};
    kiln_tensor *tout[KILN_CPU_MAX_STEP_TENSORS] = {0};
    size_t in_sizes[KILN_CPU_MAX_STEP_TENSORS] = {0}, out_sizes[KILN_CPU_MAX_STEP_TENSORS] = {0};
    for (size_t i = 0; i < n_in; i++) {
        tin[i] = in[i] ? &in[i]->t : NULL;
        in_sizes[i] = in[i] ? in[i]->bytes : 0;
    }
    for (size_t i = 0; i < n_out; i++) {
        tout[i] = &out[i]->t;
        out_sizes[i] = out[i]->bytes;
    }
    checks++;
    kiln_status st = kiln_cpu_step_validate(op, params, tin, n_in, in_sizes, tout, n_out, out_sizes, tb->k->gemm_mr,
                                            tb->k->gemm_nr);
    if (st != KILN_OK) {
        fail("%s [%s]: validate rejected a valid step (%d)", what, tb->k->isa, st);
        return false;
    }
    if (!tb->k->ops[op]) {
        fail("%s [%s]: no kernel for op %u", what, tb->k->isa, op);
        return false;
    }
    size_t out_bytes = out[0]->bytes;
    void *first = malloc(out_bytes + 1);
    bool ok = true;
    const size_t l2s[2] = {tb->target->l2_size, 0};
    for (int pass = 0; pass < 2 && ok; pass++) {
        size_t ws = kiln_cpu_workspace_size(tb->k, op, params, tb->target->l1_size, l2s[pass]);
        void *mem = aligned_alloc(64, (ws + 63) / 64 * 64 + 64);
        kiln_cpu_exec exec = {.workspace = mem, .workspace_size = ws};
        memset(out[0]->t.data, 0x7F, out_bytes); /* garbage the kernel must overwrite */
        st = tb->k->ops[op](params, tin, tout, &exec);
        free(mem);
        if (st != KILN_OK) {
            fail("%s [%s]: step failed (%d) with workspace %zu", what, tb->k->isa, st, ws);
            ok = false;
        } else if (pass == 0) {
            memcpy(first, out[0]->t.data, out_bytes);
        } else if (memcmp(first, out[0]->t.data, out_bytes) != 0) {
            fail("%s [%s]: result depends on the workspace size", what, tb->k->isa);
            ok = false;
        }
    }
    for (size_t i = 0; i < n_out; i++)
        if (!tb_canary_ok(out[i])) {
            fail("%s [%s]: wrote past the end of output %zu", what, tb->k->isa, i);
            ok = false;
        }
    free(first);
    return ok;
}

/* |actual - expected| <= atol + rtol * |expected|, expected rounded to float first; NaN == NaN. */
static bool close_enough(const float *actual, const double *expected, int64_t n, double rtol, double atol,
                         const char *what, const char *isa)
{
    for (int64_t i = 0; i < n; i++) {
        float e = (float)expected[i], a = actual[i];
        if (isnan(e) && isnan(a)) continue;
        if (isinf(e) && a == e) continue;
        if (!(fabs((double)a - (double)e) <= atol + rtol * fabs((double)e))) {
            fail("%s [%s]: element %lld is %.9g, expected %.9g", what, isa, (long long)i, a, e);
            return false;
        }
    }
    return true;
}

static bool close_to(const float *actual, const float *expected, int64_t n, double rtol, double atol,
                     const char *what, const char *isa)
{
    double *e = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) e[i] = expected[i];
    bool ok = close_enough(actual, e, n, rtol, atol, what, isa);
    free(e);
    return ok;
}

/* ---- the activation reference, in double ---- */

static double act_ref(const kiln_cpu_act *act, double x)
{
    double a = act->alpha, b = act->beta;
    switch (act->kind) {
    case KILN_CPU_ACT_RELU: return x > 0 ? x : 0;
    case KILN_CPU_ACT_LEAKY_RELU: return x < 0 ? a * x : x;
    case KILN_CPU_ACT_CLIP: return isnan(x) ? x : x < a ? a : x > b ? b : x;
    case KILN_CPU_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case KILN_CPU_ACT_TANH: return tanh(x);
    case KILN_CPU_ACT_HARD_SIGMOID: return fmax(0.0, fmin(1.0, a * x + b));
    case KILN_CPU_ACT_HARD_SWISH: return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    case KILN_CPU_ACT_GELU_ERF: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case KILN_CPU_ACT_GELU_TANH: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case KILN_CPU_ACT_SILU: return x / (1.0 + exp(-x));
    case KILN_CPU_ACT_ELU: return x < 0 ? a * expm1(x) : x;
    case KILN_CPU_ACT_EXP: return exp(x);
    case KILN_CPU_ACT_LOG: return log(x);
    case KILN_CPU_ACT_SQRT: return sqrt(x);
    case KILN_CPU_ACT_NEG: return -x;
    case KILN_CPU_ACT_ABS: return fabs(x);
    case KILN_CPU_ACT_ERF: return erf(x);
    case KILN_CPU_ACT_RECIPROCAL: return 1.0 / x;
    case KILN_CPU_ACT_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    default: return x;
    }
}

static const kiln_cpu_act acts[] = {
    {KILN_CPU_ACT_NONE, 0, 0},       {KILN_CPU_ACT_RELU, 0, 0},       {KILN_CPU_ACT_CLIP, 0.0f, 6.0f},
    {KILN_CPU_ACT_LEAKY_RELU, 0.1f, 0}, {KILN_CPU_ACT_SIGMOID, 0, 0}, {KILN_CPU_ACT_GELU_ERF, 0, 0},
    {KILN_CPU_ACT_TANH, 0, 0},       {KILN_CPU_ACT_HARD_SWISH, 0, 0}, {KILN_CPU_ACT_SILU, 0, 0},
};
#define N_ACTS (sizeof acts / sizeof acts[0])

/* Tolerances. Sums of products in float against double: relative plus an absolute floor that
   grows with the number of terms. Elementwise math: SIMD approximations within ~1e-6. */
#define SUM_RTOL 2e-5
#define EW_RTOL 1e-5
#define EW_ATOL 1e-6

static double sum_atol(int64_t terms) { return 1e-6 * sqrt((double)(terms > 1 ? terms : 1)) + 1e-6; }

/* The generic table's output of the current case, against which the other tables compare. */
static float *generic_out;
static int64_t generic_n;

static void keep_generic(const float *y, int64_t n)
{
    free(generic_out);
    generic_out = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    memcpy(generic_out, y, sizeof(float) * (size_t)n);
    generic_n = n;
}

/* Compares a table's output: generic against the reference, the others against generic. */
static void check_output(const table *tb, const float *y, const double *ref, int64_t n, double rtol, double atol,
                         const char *what)
{
    if (tb->k == &kiln_cpu_kernels_generic) {
        close_enough(y, ref, n, rtol, atol, what, tb->k->isa);
        keep_generic(y, n);
    } else if (generic_n == n) {
        close_to(y, generic_out, n, rtol, atol, what, tb->k->isa);
    }
}

/* ---- GEMM ---- */

typedef struct gemm_case {
    int64_t M, N, K, batch;
    int trans_a, trans_b, b_packed, bias_kind, pad;
    float alpha, beta;
    kiln_cpu_act act;
} gemm_case;

static void test_gemm_case(const gemm_case *c)
{
    char what[160];
    snprintf(what, sizeof what, "gemm M=%lld N=%lld K=%lld batch=%lld ta=%d tb=%d packed=%d bias=%d act=%u",
             (long long)c->M, (long long)c->N, (long long)c->K, (long long)c->batch, c->trans_a, c->trans_b,
             c->b_packed, c->bias_kind, c->act.kind);
    int64_t pad = c->b_packed ? 0 : c->pad;
    int64_t a_rows = c->trans_a ? c->K : c->M, lda = (c->trans_a ? c->M : c->K) + c->pad;
    int64_t b_rows = c->trans_b ? c->N : c->K, ldb = (c->trans_b ? c->K : c->N) + pad;
    int64_t ldy = c->N + c->pad, y_bs = c->M * ldy, a_bs = a_rows * lda, b_bs = c->b_packed ? 0 : b_rows * ldb;
    int64_t bias_n = c->bias_kind == KILN_CPU_BIAS_SCALAR    ? 1
                     : c->bias_kind == KILN_CPU_BIAS_PER_COL ? c->N
                     : c->bias_kind == KILN_CPU_BIAS_PER_ROW ? c->M
                     : c->bias_kind == KILN_CPU_BIAS_FULL    ? c->batch * c->M * c->N
                                                             : 0;
    tbuf *A = tb_f32(c->batch * a_bs), *Braw = tb_f32((c->b_packed ? 1 : c->batch) * b_rows * ldb);
    tbuf *bias = c->bias_kind ? tb_f32(bias_n) : NULL, *Y = tb_f32(c->batch * y_bs);
    /* Y is logically batch x M x N: the step's params must describe exactly its elements, which
       the padded rows' buffer holds (run_step passes the buffer's size). */
    Y->t.rank = 3;
    Y->t.shape[0] = c->batch, Y->t.shape[1] = c->M, Y->t.shape[2] = c->N;
    fill(tb_data(A), c->batch * a_bs, 1.0f);
    fill(tb_data(Braw), (c->b_packed ? 1 : c->batch) * b_rows * ldb, 1.0f);
    if (bias) fill(tb_data(bias), bias_n, 1.0f);

    int64_t n_ref = c->batch * c->M * c->N;
    double *ref = malloc(sizeof(double) * (size_t)(n_ref + 1));
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t n = 0; n < c->N; n++) {
                const float *a = tb_data(A) + b * a_bs, *bm = tb_data(Braw) + b * b_bs;
                double s = 0;
                for (int64_t k = 0; k < c->K; k++)
                    s += (double)(c->trans_a ? a[k * lda + m] : a[m * lda + k]) *
                         (c->trans_b ? bm[n * ldb + k] : bm[k * ldb + n]);
                double bv = 0;
                const float *bb = bias ? tb_data(bias) : NULL;
                if (c->bias_kind == KILN_CPU_BIAS_SCALAR) bv = bb[0];
                if (c->bias_kind == KILN_CPU_BIAS_PER_COL) bv = bb[n];
                if (c->bias_kind == KILN_CPU_BIAS_PER_ROW) bv = bb[m];
                if (c->bias_kind == KILN_CPU_BIAS_FULL) bv = bb[(b * c->M + m) * c->N + n];
                ref[(b * c->M + m) * c->N + n] = act_ref(&c->act, c->alpha * s + c->beta * bv);
            }

    float *got = malloc(sizeof(float) * (size_t)(n_ref + 1));
    for (size_t t = 0; t < n_tables; t++) {
        const table *tb = &tables[t];
        if (!tb->runnable) continue;
        tbuf *B = Braw;
        if (c->b_packed) {
            B = tb_f32((int64_t)(kiln_cpu_pack_b_size(c->K, c->N, tb->k->gemm_nr) / sizeof(float)));
            kiln_cpu_pack_b(tb_data(Braw), c->K, c->N, c->trans_b, tb->k->gemm_nr, tb_data(B));
        }
        kiln_cpu_gemm_params p = {.M = c->M, .N = c->N, .K = c->K, .batch = c->batch, .lda = lda, .ldb = ldb,
                                  .ldy = ldy, .a_batch_stride = a_bs, .b_batch_stride = b_bs, .y_batch_stride = y_bs,
                                  .bias_batch_stride = c->M * c->N, .alpha = c->alpha, .beta = c->beta,
                                  .trans_a = (uint8_t)c->trans_a, .trans_b = (uint8_t)c->trans_b,
                                  .b_packed = (uint8_t)c->b_packed, .bias_kind = (uint8_t)c->bias_kind, .act = c->act};
        tbuf *in[3] = {A, B, bias}, *out[1] = {Y};
        if (run_step(tb, KILN_CPU_OP_GEMM, &p, in, bias ? 3 : 2, out, 1, what)) {
            bool pad_ok = true;
            for (int64_t b = 0; b < c->batch; b++)
                for (int64_t m = 0; m < c->M; m++) {
                    const float *row = tb_data(Y) + b * y_bs + m * ldy;
                    memcpy(got + (b * c->M + m) * c->N, row, sizeof(float) * (size_t)c->N);
                    for (int64_t j = c->N; j < ldy; j++) {
                        uint32_t bits;
                        memcpy(&bits, &row[j], 4);
                        pad_ok &= bits == 0x7F7F7F7Fu;
                    }
                }
            if (!pad_ok) fail("%s [%s]: wrote into the row padding of Y", what, tb->k->isa);
            check_output(tb, got, ref, n_ref, SUM_RTOL, sum_atol(c->K), what);
        }
        if (B != Braw) tb_free(B);
    }
    free(got);
    free(ref);
    tb_free(A);
    tb_free(Braw);
    tb_free(bias);
    tb_free(Y);
}

static void test_gemm(void)
{
    static const int64_t Ms[] = {0, 1, 3, 6, 7, 17, 33, 65}, Ns[] = {0, 1, 5, 13, 16, 17, 33, 65},
                         Ks[] = {0, 1, 7, 65, 300};
    unsigned v = 0;
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++)
        for (size_t j = 0; j < sizeof Ns / sizeof Ns[0]; j++)
            for (size_t l = 0; l < sizeof Ks / sizeof Ks[0]; l++, v++) {
                gemm_case c = {.M = Ms[i], .N = Ns[j], .K = Ks[l], .batch = 1 + (v % 3 == 1),
                               .trans_a = v & 1, .trans_b = (v >> 1) & 1, .b_packed = (v >> 2) & 1,
                               .bias_kind = (int)(v % 5), .pad = v % 4 == 3 ? 3 : 0,
                               .alpha = v % 5 == 2 ? 0.5f : 1.0f, .beta = v % 3 == 2 ? 2.0f : 1.0f,
                               .act = acts[v % N_ACTS]};
                test_gemm_case(&c);
            }
    /* Several N blocks, several K blocks on every table, many M blocks, and no batch at all. */
    test_gemm_case(&(gemm_case){.M = 5, .N = 1100, .K = 20, .batch = 1, .b_packed = 1, .bias_kind = 2, .alpha = 1,
                                .beta = 1, .act = acts[1]});
    test_gemm_case(&(gemm_case){.M = 9, .N = 40, .K = 1100, .batch = 1, .trans_b = 1, .alpha = 1, .beta = 1,
                                .act = acts[0]});
    test_gemm_case(&(gemm_case){.M = 200, .N = 70, .K = 130, .batch = 2, .pad = 1, .bias_kind = 4, .alpha = 1,
                                .beta = 0.5f, .act = acts[5]});
    test_gemm_case(&(gemm_case){.M = 4, .N = 4, .K = 4, .batch = 0, .bias_kind = 3, .alpha = 1, .beta = 1});
}

/* ---- CONV2D ---- */

typedef struct conv_case {
    int64_t N, C, H, W, M, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, group;
    int bias, act;
} conv_case;

static int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t d, bool ceil_mode)
{
    int64_t span = in + pad - d * (k - 1) - 1;
    if (span < 0) return 0;
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static void test_conv_case(const conv_case *c)
{
    char what[200];
    int64_t OH = window_out(c->H, c->KH, c->sh, c->pt + c->pb, c->dh, false);
    int64_t OW = window_out(c->W, c->KW, c->sw, c->pl + c->pr, c->dw, false);
    int64_t cg = c->C / c->group, mg = c->M / c->group, K = cg * c->KH * c->KW;
    bool depthwise = c->group == c->C && c->M == c->C && c->C > 0;
    snprintf(what, sizeof what, "conv N=%lld C=%lld %lldx%lld M=%lld k=%lldx%lld s=%lld,%lld p=%lld,%lld,%lld,%lld "
             "d=%lld,%lld g=%lld%s",
             (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->M, (long long)c->KH,
             (long long)c->KW, (long long)c->sh, (long long)c->sw, (long long)c->pt, (long long)c->pl,
             (long long)c->pb, (long long)c->pr, (long long)c->dh, (long long)c->dw, (long long)c->group,
             depthwise ? " dw" : "");
    int64_t nx = c->N * c->C * c->H * c->W, nw = c->M * K, ny = c->N * c->M * OH * OW;
    tbuf *X = tb_f32(nx), *Wraw = tb_f32(nw), *bias = c->bias ? tb_f32(c->M) : NULL, *Y = tb_f32(ny);
    fill(tb_data(X), nx, 1.0f);
    fill(tb_data(Wraw), nw, 1.0f);
    if (bias) fill(tb_data(bias), c->M, 1.0f);
    const kiln_cpu_act *act = &acts[c->act % N_ACTS];

    double *ref = malloc(sizeof(double) * (size_t)(ny + 1));
    const float *x = tb_data(X), *w = tb_data(Wraw);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t g = m / mg;
                    double s = bias ? tb_data(bias)[m] : 0.0;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t kh = 0; kh < c->KH; kh++)
                            for (int64_t kw = 0; kw < c->KW; kw++) {
                                int64_t ih = oh * c->sh - c->pt + kh * c->dh, iw = ow * c->sw - c->pl + kw * c->dw;
                                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                                s += (double)x[((n * c->C + g * cg + ci) * c->H + ih) * c->W + iw] *
                                     w[((m * cg + ci) * c->KH + kh) * c->KW + kw];
                            }
                    ref[((n * c->M + m) * OH + oh) * OW + ow] = act_ref(act, s);
                }

    for (size_t t = 0; t < n_tables; t++) {
        const table *tb = &tables[t];
        if (!tb->runnable) continue;
        tbuf *Wp = Wraw;
        if (!depthwise) {
            size_t group_bytes = kiln_cpu_pack_a_size(mg, K, tb->k->gemm_mr);
            Wp = tb_f32((int64_t)(group_bytes / sizeof(float) * (size_t)c->group));
            for (int64_t g = 0; g < c->group; g++)
                kiln_cpu_pack_a(w + g * mg * K, mg, K, 0, tb->k->gemm_mr,
                                tb_data(Wp) + (size_t)g * (group_bytes / sizeof(float)));
        }
        kiln_cpu_conv_params p = {.N = c->N, .C = c->C, .H = c->H, .W = c->W, .M = c->M, .OH = OH, .OW = OW,
                                  .KH = c->KH, .KW = c->KW, .stride_h = c->sh, .stride_w = c->sw, .pad_top = c->pt,
                                  .pad_left = c->pl, .dil_h = c->dh, .dil_w = c->dw, .group = c->group,
                                  .has_bias = (uint8_t)c->bias, .depthwise = depthwise, .act = *act};
        tbuf *in[3] = {X, Wp, bias}, *out[1] = {Y};
        if (run_step(tb, KILN_CPU_OP_CONV2D, &p, in, 3, out, 1, what))
            check_output(tb, tb_data(Y), ref, ny, SUM_RTOL, sum_atol(K), what);
        if (Wp != Wraw) tb_free(Wp);
    }
    free(ref);
    tb_free(X);
    tb_free(Wraw);
    tb_free(bias);
    tb_free(Y);
}

static void test_conv(void)
{
    static const conv_case cases[] = {
        /* N  C   H   W   M  KH KW sh sw pt pl pb pr dh dw  g  bias act */
        {1, 3, 5, 7, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0},     /* pointwise */
        {2, 17, 6, 6, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1},   /* pointwise, remainders */
        {1, 4, 7, 7, 6, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2},     /* 1x1 stride 2: im2col */
        {2, 3, 7, 9, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {1, 5, 11, 13, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 3},
        {1, 4, 9, 10, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 4},   /* dilation */
        {1, 3, 8, 9, 5, 1, 5, 1, 2, 0, 2, 0, 1, 1, 1, 1, 1, 5},    /* 1x5, asymmetric pads */
        {1, 6, 8, 8, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 6},    /* grouped */
        {1, 4, 6, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 7},    /* depth multiplier 2 */
        {2, 7, 9, 11, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, 1},   /* depthwise */
        {1, 5, 12, 13, 5, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 5, 1, 2},  /* depthwise stride 2 */
        {1, 3, 14, 37, 3, 5, 5, 1, 1, 4, 4, 4, 4, 2, 2, 3, 0, 8},  /* depthwise 5x5 dilated */
        {1, 17, 5, 40, 17, 3, 3, 1, 3, 2, 0, 1, 2, 1, 1, 17, 1, 0}, /* depthwise stride 3 */
        {1, 3, 9, 45, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, 1, 0},    /* depthwise stride 2, wide rows */
        {1, 2, 5, 100, 2, 3, 3, 1, 3, 1, 1, 1, 1, 1, 1, 2, 0, 1},   /* depthwise stride 3, wide rows */
        {1, 2, 4, 40, 2, 1, 19, 1, 1, 0, 20, 0, 18, 1, 1, 2, 1, 0}, /* depthwise 1x19: pads past a vector */
        {1, 3, 6, 37, 3, 3, 3, 1, 2, 1, 17, 1, 17, 1, 1, 3, 1, 2},  /* depthwise stride 2, pads past a vector */
        {1, 2, 9, 112, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1},   /* depthwise 3x3, 112-wide rows */
        {1, 2, 3, 3, 4, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, 1},    /* pads past the kernel */
        {1, 32, 20, 20, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* K = 288: two K blocks on avx512 */
        {1, 64, 7, 6, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5},   /* K = 576: several on every table */
        {0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},    /* no images */
        {1, 3, 2, 2, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0},    /* window larger than input: 0 x 0 */
        {1, 3, 4, 4, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},    /* no output channels */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_conv_case(&cases[i]);
}

/* ---- POOL2D ---- */

typedef struct pool_case {
    int64_t N, C, H, W, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw;
    uint32_t kind, count_include_pad;
    bool ceil_mode, global;
} pool_case;

static void test_pool_case(const pool_case *c)
{
    char what[160];
    int64_t KH = c->global ? c->H : c->KH, KW = c->global ? c->W : c->KW;
    int64_t OH = c->global ? 1 : window_out(c->H, KH, c->sh, c->pt + c->pb, c->dh, c->ceil_mode);
    int64_t OW = c->global ? 1 : window_out(c->W, KW, c->sw, c->pl + c->pr, c->dw, c->ceil_mode);
    snprintf(what, sizeof what, "pool %s N=%lld C=%lld %lldx%lld k=%lldx%lld out=%lldx%lld cip=%u",
             c->kind ? "avg" : "max", (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W,
             (long long)KH, (long long)KW, (long long)OH, (long long)OW, c->count_include_pad);
    int64_t nx = c->N * c->C * c->H * c->W, ny = c->N * c->C * OH * OW;
    tbuf *X = tb_f32(nx), *Y = tb_f32(ny);
    fill(tb_data(X), nx, 3.0f);
    double *ref = malloc(sizeof(double) * (size_t)(ny + 1));
    const float *x = tb_data(X);
    for (int64_t pl = 0; pl < c->N * c->C; pl++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double best = -3.402823466e38, sum = 0;
                int64_t present = 0, padded = 0;
                for (int64_t kh = 0; kh < KH; kh++)
                    for (int64_t kw = 0; kw < KW; kw++) {
                        int64_t ih = oh * c->sh - c->pt + kh * c->dh, iw = ow * c->sw - c->pl + kw * c->dw;
                        bool in_pad = ih >= -c->pt && ih < c->H + c->pb && iw >= -c->pl && iw < c->W + c->pr;
                        padded += in_pad;
                        if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                        double v = x[(pl * c->H + ih) * c->W + iw];
                        best = v > best ? v : best;
                        sum += v;
                        present++;
                    }
                int64_t count = c->count_include_pad ? padded : present;
                ref[(pl * OH + oh) * OW + ow] = c->kind == KILN_CPU_POOL_MAX ? best : count ? sum / (double)count : 0;
            }
    kiln_cpu_pool_params p = {.N = c->N, .C = c->C, .H = c->H, .W = c->W, .OH = OH, .OW = OW, .KH = KH > 0 ? KH : 1,
                              .KW = KW > 0 ? KW : 1, .stride_h = c->sh, .stride_w = c->sw, .pad_top = c->pt,
                              .pad_left = c->pl, .pad_bottom = c->pb, .pad_right = c->pr, .dil_h = c->dh,
                              .dil_w = c->dw, .kind = c->kind, .count_include_pad = c->count_include_pad};
    for (size_t t = 0; t < n_tables; t++) {
        const table *tb = &tables[t];
        tbuf *in[1] = {X}, *out[1] = {Y};
        if (tb->runnable && run_step(tb, KILN_CPU_OP_POOL2D, &p, in, 1, out, 1, what))
            check_output(tb, tb_data(Y), ref, ny, 1e-5, 1e-6, what);
    }
    free(ref);
    tb_free(X);
    tb_free(Y);
}

/* Windows as large as the geometry bound (2^30) hanging into pads as large: validation accepts
   them (they fit the padded input), and the kernel must neither walk the taps in the padding nor
   overflow estimating its work. Windows start at -2^30 (all padding), -2^29 and 0. */
static void test_pool_huge_window(void)
{
    const int64_t big = (int64_t)1 << 30;
    int64_t x_shape[4] = {1, 1, 4, 4}, y_shape[4] = {1, 1, 3, 3};
    tbuf *X = tb_new(KILN_DTYPE_F32, 4, x_shape), *Y = tb_new(KILN_DTYPE_F32, 4, y_shape);
    fill(tb_data(X), 16, 3.0f);
    float most = -FLT_MAX;
    for (int i = 0; i < 16; i++) most = tb_data(X)[i] > most ? tb_data(X)[i] : most;
    kiln_cpu_pool_params p = {.N = 1, .C = 1, .H = 4, .W = 4, .OH = 3, .OW = 3, .KH = big, .KW = big,
                              .stride_h = big / 2, .stride_w = big / 2, .pad_top = big, .pad_left = big,
                              .pad_bottom = big, .pad_right = big, .dil_h = 1, .dil_w = 1, .kind = KILN_CPU_POOL_MAX};
    for (size_t t = 0; t < n_tables; t++) {
        tbuf *in[1] = {X}, *out[1] = {Y};
        if (!tables[t].runnable || !run_step(&tables[t], KILN_CPU_OP_POOL2D, &p, in, 1, out, 1, "pool huge window"))
            continue;
        const float *y = tb_data(Y);
        checks++;
        if (y[0] != -FLT_MAX || y[4] != most || y[8] != most)
            fail("pool huge window [%s]: got %g %g %g", tables[t].k->isa, y[0], y[4], y[8]);
    }
    tb_free(X);
    tb_free(Y);
}

static void test_pool(void)
{
    static const pool_case cases[] = {
        /* N C  H   W  KH KW sh sw pt pl pb pr dh dw kind cip ceil global */
        {1, 3, 7, 9, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0, false, false},
        {2, 5, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, false, false},
        {1, 4, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, false, false},
        {1, 4, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, false, false},
        {1, 2, 6, 7, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, true, false}, /* ceil: windows past the pads */
        {1, 2, 6, 7, 3, 3, 2, 2, 1, 0, 1, 0, 1, 1, 0, 0, true, false},
        {1, 3, 10, 11, 3, 2, 1, 2, 2, 1, 2, 1, 2, 3, 0, 0, false, false}, /* dilation */
        {1, 3, 10, 11, 3, 2, 1, 2, 2, 1, 2, 1, 2, 3, 1, 1, false, false},
        {2, 3, 5, 4, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, false, true},  /* global average */
        {2, 3, 5, 4, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, false, true},  /* global max */
        {1, 1, 2, 2, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 0, 0, false, false}, /* empty windows */
        {1, 1, 2, 2, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 1, 0, false, false},
        {0, 3, 5, 5, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, false, false},
        {1, 2, 23, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, false, false}, /* ResNet stem pool, wide rows */
        {1, 2, 9, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false, false},   /* unit stride: whole vectors */
        {1, 2, 7, 50, 2, 3, 1, 3, 0, 2, 0, 2, 1, 1, 0, 0, false, false},   /* stride 3: gathers */
        {1, 2, 4, 40, 1, 19, 1, 1, 0, 20, 0, 18, 1, 1, 0, 0, false, false}, /* 1x19: past the cached widths */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_pool_case(&cases[i]);
}

/* Max pools with NaN and infinities: every table must give the generic table's result bit for
   bit (a NaN first tap stays, a later NaN never wins, -inf is a value like any other). */
static void test_pool_nan(void)
{
    enum { H = 6, W = 37 };
    int64_t x_shape[4] = {1, 1, H, W}, y_shape[4] = {1, 1, H, W};
    tbuf *X = tb_new(KILN_DTYPE_F32, 4, x_shape), *Y = tb_new(KILN_DTYPE_F32, 4, y_shape),
         *R = tb_new(KILN_DTYPE_F32, 4, y_shape);
    float *x = tb_data(X);
    fill(x, H * W, 3.0f);
    for (int i = 0; i < H * W; i += 7) x[i] = NAN;
    for (int i = 3; i < H * W; i += 11) x[i] = -INFINITY;
    for (int i = 0; i < W; i++) x[2 * W + i] = -INFINITY; /* a whole row of -inf */
    kiln_cpu_pool_params p = {.N = 1, .C = 1, .H = H, .W = W, .OH = H, .OW = W, .KH = 3, .KW = 3, .stride_h = 1,
                              .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                              .dil_h = 1, .dil_w = 1, .kind = KILN_CPU_POOL_MAX};
    tbuf *in[1] = {X}, *ref_out[1] = {R}, *out[1] = {Y};
    checks++;
    if (strcmp(tables[0].k->isa, "generic") != 0) fail("pool NaN: table 0 is %s, not generic", tables[0].k->isa);
    if (run_step(&tables[0], KILN_CPU_OP_POOL2D, &p, in, 1, ref_out, 1, "pool NaN (generic)")) {
        for (size_t t = 1; t < n_tables; t++) {
            if (!tables[t].runnable || !run_step(&tables[t], KILN_CPU_OP_POOL2D, &p, in, 1, out, 1, "pool NaN"))
                continue;
            checks++;
            if (memcmp(tb_data(Y), tb_data(R), sizeof(float) * H * W) != 0)
                fail("pool NaN [%s]: differs from the generic table's bits", tables[t].k->isa);
        }
    }
    tb_free(X);
    tb_free(Y);
    tb_free(R);
}

/* ---- UNARY ---- */

static void test_unary(void)
{
    static const int64_t counts[] = {0, 1, 7, 16, 17, 33, 1000};
    static const float special[] = {0.0f, -0.0f, 1e-8f, -1e-8f, 1e-3f, -1e-3f, 0.5f, -0.5f, 3.0f, -3.0f,
                                    9.5f, -9.5f, 20.0f, -20.0f, 87.0f, -87.0f, 89.0f, -89.0f, 100.0f, -100.0f,
                                    -104.0f, INFINITY, -INFINITY, NAN};
    const int64_t n_special = sizeof special / sizeof special[0];
    for (uint32_t kind = 0; kind < KILN_CPU_ACT_COUNT; kind++) {
        kiln_cpu_act act = {kind, 0, 0};
        if (kind == KILN_CPU_ACT_LEAKY_RELU) act.alpha = 0.1f;
        if (kind == KILN_CPU_ACT_CLIP) act = (kiln_cpu_act){kind, -1.0f, 2.0f};
        if (kind == KILN_CPU_ACT_HARD_SIGMOID) act = (kiln_cpu_act){kind, 0.2f, 0.5f};
        if (kind == KILN_CPU_ACT_ELU) act.alpha = 1.3f;
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            int64_t n = counts[ci] == 1000 ? 1000 + n_special : counts[ci];
            char what[96];
            snprintf(what, sizeof what, "unary act=%u n=%lld", kind, (long long)n);
            tbuf *X = tb_f32(n), *Y = tb_f32(n);
            float *x = tb_data(X);
            fill(x, n, 6.0f);
            if (n > 1000) memcpy(x + 1000, special, sizeof special);
            double *ref = malloc(sizeof(double) * (size_t)(n + 1));
            for (int64_t i = 0; i < n; i++) ref[i] = act_ref(&act, x[i]);
            kiln_cpu_unary_params p = {.count = n, .act = act};
            for (size_t t = 0; t < n_tables; t++) {
                tbuf *in[1] = {X}, *out[1] = {Y};
                if (tables[t].runnable && run_step(&tables[t], KILN_CPU_OP_UNARY, &p, in, 1, out, 1, what))
                    check_output(&tables[t], tb_data(Y), ref, n, EW_RTOL, EW_ATOL, what);
            }
            free(ref);
            tb_free(X);
            tb_free(Y);
        }
    }
}

/* ---- BINARY ---- */

typedef struct binary_case {
    uint32_t rank;
    int64_t out[4], a[4], b[4]; /* a/b dims aligned with out, 1 = broadcast */
    bool a_transposed;          /* A's last two dims stored transposed */
} binary_case;

static double binary_ref(uint32_t kind, float a, float b)
{
    switch (kind) {
    case KILN_CPU_BIN_ADD: return (double)a + b;
    case KILN_CPU_BIN_SUB: return (double)a - b;
    case KILN_CPU_BIN_MUL: return (double)a * b;
    case KILN_CPU_BIN_DIV: return (double)a / b;
    case KILN_CPU_BIN_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case KILN_CPU_BIN_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    default: return pow(a, b);
    }
}

/* Dense strides of a shape laid over `out` (0 where the shape broadcasts). */
static void bcast_strides(uint32_t rank, const int64_t *shape, int64_t *strides, int64_t *numel)
{
    int64_t s = 1;
    for (uint32_t d = rank; d-- > 0;) {
        strides[d] = shape[d] == 1 ? 0 : s;
        s *= shape[d];
    }
    *numel = s;
}

static void test_binary_case(const binary_case *c, uint32_t kind, const kiln_cpu_act *act)
{
    char what[128];
    snprintf(what, sizeof what, "binary kind=%u rank=%u out=%lldx%lldx%lldx%lld act=%u", kind, c->rank,
             (long long)c->out[0], (long long)c->out[1], (long long)c->out[2], (long long)c->out[3], act->kind);
    kiln_cpu_binary_params p = {.kind = kind, .rank = c->rank, .act = *act};
    int64_t na, nb, ny = 1;
    bcast_strides(c->rank, c->a, p.a_strides, &na);
    bcast_strides(c->rank, c->b, p.b_strides, &nb);
    if (c->a_transposed && c->rank >= 2 && c->a[c->rank - 1] > 1 && c->a[c->rank - 2] > 1) {
        p.a_strides[c->rank - 1] = c->a[c->rank - 2];
        p.a_strides[c->rank - 2] = 1;
    }
    for (uint32_t d = 0; d < c->rank; d++) {
        p.out_shape[d] = c->out[d];
        ny *= c->out[d];
    }
    tbuf *A = tb_f32(na), *B = tb_f32(nb), *Y = tb_f32(ny);
    fill(tb_data(A), na, 4.0f);
    fill(tb_data(B), nb, 4.0f);
    if (kind == KILN_CPU_BIN_POW)
        for (int64_t i = 0; i < na; i++) tb_data(A)[i] = fabsf(tb_data(A)[i]) + 0.1f;
    double *ref = malloc(sizeof(double) * (size_t)(ny + 1));
    for (int64_t i = 0; i < ny; i++) {
        int64_t rem = i, ao = 0, bo = 0;
        for (uint32_t d = c->rank; d-- > 0;) {
            int64_t idx = rem % c->out[d];
            rem /= c->out[d];
            ao += idx * p.a_strides[d];
            bo += idx * p.b_strides[d];
        }
        ref[i] = act_ref(act, (float)binary_ref(kind, tb_data(A)[ao], tb_data(B)[bo]));
    }
    for (size_t t = 0; t < n_tables; t++) {
        tbuf *in[2] = {A, B}, *out[1] = {Y};
        if (tables[t].runnable && run_step(&tables[t], KILN_CPU_OP_BINARY, &p, in, 2, out, 1, what))
            check_output(&tables[t], tb_data(Y), ref, ny, EW_RTOL, EW_ATOL, what);
    }
    free(ref);
    tb_free(A);
    tb_free(B);
    tb_free(Y);
}

static void test_binary(void)
{
    static const binary_case cases[] = {
        {1, {37}, {37}, {37}, false},
        {1, {17}, {17}, {1}, false},
        {2, {3, 33}, {1, 33}, {3, 33}, false},
        {3, {2, 3, 5}, {2, 3, 5}, {1, 3, 1}, false},
        {4, {2, 5, 3, 7}, {2, 5, 3, 7}, {1, 5, 1, 1}, false},   /* per-channel NCHW */
        {4, {2, 3, 4, 5}, {1, 1, 4, 5}, {2, 3, 1, 1}, false},
        {2, {6, 9}, {6, 9}, {6, 9}, true},                      /* a non-contiguous operand */
        {0, {0}, {0}, {0}, false},                              /* scalars */
        {2, {0, 5}, {0, 5}, {1, 5}, false},                     /* empty */
        {3, {4, 1, 19}, {4, 1, 1}, {1, 1, 19}, false},          /* outer product */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (uint32_t kind = 0; kind <= KILN_CPU_BIN_POW; kind++)
            test_binary_case(&cases[i], kind, &acts[(i + kind) % 3]);
}

/* ---- SOFTMAX, LAYERNORM, CHANNEL_AFFINE ---- */

static void test_softmax(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {3, 17, 1}, {2, 33, 5}, {4, 1000, 1}, {1, 7, 16},
                                        {2, 65, 3}, {0, 5, 3}, {2, 0, 3}, {2, 5, 0}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (uint32_t log_softmax = 0; log_softmax <= 1; log_softmax++) {
            int64_t outer = shapes[i][0], n = shapes[i][1], inner = shapes[i][2], total = outer * n * inner;
            char what[96];
            snprintf(what, sizeof what, "softmax log=%u %lldx%lldx%lld", log_softmax, (long long)outer, (long long)n,
                     (long long)inner);
            tbuf *X = tb_f32(total), *Y = tb_f32(total);
            float *x = tb_data(X);
            fill(x, total, 10.0f);
            if (total > 3) x[3] = 80.0f; /* exp would overflow without the max shift */
            double *ref = malloc(sizeof(double) * (size_t)(total + 1));
            for (int64_t o = 0; o < outer; o++)
                for (int64_t in = 0; in < inner; in++) {
                    double m = -INFINITY, s = 0;
                    for (int64_t j = 0; j < n; j++) m = fmax(m, x[(o * n + j) * inner + in]);
                    for (int64_t j = 0; j < n; j++) s += exp(x[(o * n + j) * inner + in] - m);
                    for (int64_t j = 0; j < n; j++) {
                        double v = x[(o * n + j) * inner + in] - m;
                        ref[(o * n + j) * inner + in] = log_softmax ? v - log(s) : exp(v) / s;
                    }
                }
            kiln_cpu_softmax_params p = {.outer = outer, .n = n, .inner = inner, .log = log_softmax};
            for (size_t t = 0; t < n_tables; t++) {
                tbuf *in[1] = {X}, *out[1] = {Y};
                if (tables[t].runnable && run_step(&tables[t], KILN_CPU_OP_SOFTMAX, &p, in, 1, out, 1, what))
                    check_output(&tables[t], tb_data(Y), ref, total, EW_RTOL, EW_ATOL, what);
            }
            free(ref);
            tb_free(X);
            tb_free(Y);
        }
}

static void test_layernorm(void)
{
    static const int64_t shapes[][2] = {{1, 1}, {3, 17}, {5, 33}, {2, 768}, {4, 100}, {0, 8}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int64_t outer = shapes[i][0], n = shapes[i][1];
        uint32_t has_bias = i % 2 == 0;
        char what[96];
        snprintf(what, sizeof what, "layernorm %lldx%lld bias=%u", (long long)outer, (long long)n, has_bias);
        tbuf *X = tb_f32(outer * n), *S = tb_f32(n), *B = tb_f32(n), *Y = tb_f32(outer * n);
        float *x = tb_data(X);
        fill(x, outer * n, 2.0f);
        for (int64_t j = 0; j < outer * n; j++) x[j] += 5.0f; /* a mean far from 0 */
        fill(tb_data(S), n, 1.5f);
        fill(tb_data(B), n, 1.0f);
        double *ref = malloc(sizeof(double) * (size_t)(outer * n + 1));
        for (int64_t r = 0; r < outer; r++) {
            double mean = 0, var = 0;
            for (int64_t j = 0; j < n; j++) mean += x[r * n + j];
            mean /= (double)n;
            for (int64_t j = 0; j < n; j++) var += (x[r * n + j] - mean) * (x[r * n + j] - mean);
            var /= (double)n;
            for (int64_t j = 0; j < n; j++)
                ref[r * n + j] = (x[r * n + j] - mean) / sqrt(var + 1e-5) * tb_data(S)[j] +
                                 (has_bias ? tb_data(B)[j] : 0.0);
        }
        kiln_cpu_layernorm_params p = {.outer = outer, .n = n, .epsilon = 1e-5f, .has_bias = has_bias};
        for (size_t t = 0; t < n_tables; t++) {
            tbuf *in[3] = {X, S, B}, *out[1] = {Y};
            if (tables[t].runnable && run_step(&tables[t], KILN_CPU_OP_LAYERNORM, &p, in, 3, out, 1, what))
                check_output(&tables[t], tb_data(Y), ref, outer * n, EW_RTOL, 1e-5, what);
        }
        free(ref);
        tb_free(X);
        tb_free(S);
        tb_free(B);
        tb_free(Y);
    }
}

static void test_affine(void)
{
    static const int64_t shapes[][3] = {{1, 3, 1}, {2, 5, 17}, {1, 16, 49}, {2, 3, 33}, {0, 3, 3}, {2, 3, 0}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int64_t N = shapes[i][0], C = shapes[i][1], inner = shapes[i][2], total = N * C * inner;
        const kiln_cpu_act *act = &acts[i % N_ACTS];
        char what[96];
        snprintf(what, sizeof what, "affine %lldx%lldx%lld act=%u", (long long)N, (long long)C, (long long)inner,
                 act->kind);
        tbuf *X = tb_f32(total), *S = tb_f32(C), *T = tb_f32(C), *Y = tb_f32(total);
        fill(tb_data(X), total, 3.0f);
        fill(tb_data(S), C, 2.0f);
        fill(tb_data(T), C, 1.0f);
        double *ref = malloc(sizeof(double) * (size_t)(total + 1));
        for (int64_t j = 0; j < total; j++) {
            int64_t c = j / inner % C;
            ref[j] = act_ref(act, (double)tb_data(X)[j] * tb_data(S)[c] + tb_data(T)[c]);
        }
        kiln_cpu_affine_params p = {.N = N, .C = C, .inner = inner, .act = *act};
        for (size_t t = 0; t < n_tables; t++) {
            tbuf *in[3] = {X, S, T}, *out[1] = {Y};
            if (tables[t].runnable && run_step(&tables[t], KILN_CPU_OP_CHANNEL_AFFINE, &p, in, 3, out, 1, what))
                check_output(&tables[t], tb_data(Y), ref, total, EW_RTOL, EW_ATOL, what);
        }
        free(ref);
        tb_free(X);
        tb_free(S);
        tb_free(T);
        tb_free(Y);
    }
}

/* ---- COPY, TRANSPOSE: bytes must move exactly ---- */

static void test_copy(void)
{
    static const int64_t sizes[] = {0, 13, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tbuf *X = tb_new(KILN_DTYPE_U8, 1, &sizes[i]), *Y = tb_new(KILN_DTYPE_U8, 1, &sizes[i]);
        for (int64_t j = 0; j < sizes[i]; j++) ((unsigned char *)X->t.data)[j] = (unsigned char)(j * 7 + 1);
        kiln_cpu_copy_params p = {.bytes = sizes[i]};
        for (size_t t = 0; t < n_tables; t++) {
            tbuf *in[1] = {X}, *out[1] = {Y};
            if (tables[t].runnable && run_step(&tables[t], KILN_CPU_OP_COPY, &p, in, 1, out, 1, "copy") &&
                memcmp(X->t.data, Y->t.data, (size_t)sizes[i]) != 0)
                fail("copy %lld [%s]: bytes differ", (long long)sizes[i], tables[t].k->isa);
        }
        tb_free(X);
        tb_free(Y);
    }
}

typedef struct transpose_case {
    kiln_dtype dtype;
    uint32_t rank;
    int64_t shape[5], perm[5];
} transpose_case;

static void test_transpose(void)
{
    static const transpose_case cases[] = {
        {KILN_DTYPE_F32, 2, {3, 5}, {1, 0}},
        {KILN_DTYPE_F32, 4, {2, 3, 4, 5}, {0, 2, 3, 1}},
        {KILN_DTYPE_U8, 3, {3, 4, 5}, {2, 0, 1}},
        {KILN_DTYPE_I16, 3, {7, 1, 3}, {1, 2, 0}},
        {KILN_DTYPE_I64, 5, {2, 1, 3, 2, 2}, {4, 3, 2, 1, 0}},
        {KILN_DTYPE_F32, 0, {0}, {0}},
        {KILN_DTYPE_F32, 3, {2, 0, 3}, {2, 1, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const transpose_case *c = &cases[i];
        int64_t out_shape[5];
        for (uint32_t d = 0; d < c->rank; d++) out_shape[d] = c->shape[c->perm[d]];
        tbuf *X = tb_new(c->dtype, c->rank, c->shape), *Y = tb_new(c->dtype, c->rank, out_shape);
        tbuf *E = tb_new(c->dtype, c->rank, out_shape);
        size_t elem = kiln_dtype_size(c->dtype);
        for (size_t j = 0; j < X->bytes; j++) ((unsigned char *)X->t.data)[j] = (unsigned char)(j * 13 + 5);
        /* Reference: walk the input and scatter each element to its output position. */
        int64_t numel = (int64_t)(X->bytes / elem);
        for (int64_t j = 0; j < numel; j++) {
            int64_t idx[5], rem = j, off = 0;
            for (uint32_t d = c->rank; d-- > 0;) {
                idx[d] = rem % c->shape[d];
                rem /= c->shape[d];
            }
            for (uint32_t d = 0; d < c->rank; d++) off = off * out_shape[d] + idx[c->perm[d]];
            memcpy((char *)E->t.data + (size_t)off * elem, (char *)X->t.data + (size_t)j * elem, elem);
        }
        kiln_cpu_transpose_params p = {.rank = c->rank, .elem_size = (uint32_t)elem};
        for (uint32_t d = 0; d < c->rank; d++) {
            p.in_shape[d] = c->shape[d];
            p.perm[d] = c->perm[d];
        }
        for (size_t t = 0; t < n_tables; t++) {
            tbuf *in[1] = {X}, *out[1] = {Y};
            if (tables[t].runnable && run_step(&tables[t], KILN_CPU_OP_TRANSPOSE, &p, in, 1, out, 1, "transpose") &&
                memcmp(E->t.data, Y->t.data, Y->bytes) != 0)
                fail("transpose case %zu [%s]: wrong bytes", i, tables[t].k->isa);
        }
        tb_free(X);
        tb_free(Y);
        tb_free(E);
    }
}

/* ---- validation must refuse what the kernels could not run safely ---- */

static void expect_status(const char *label, uint32_t op, const void *params, tbuf **in, size_t n_in,
                          const size_t *in_sizes, tbuf **out, size_t n_out, uint32_t mr, uint32_t nr,
                          kiln_status want)
{
    const kiln_tensor *tin[KILN_CPU_MAX_STEP_TENSORS] = {0};
    kiln_tensor *tout[KILN_CPU_MAX_STEP_TENSORS] = {0};
    for (size_t i = 0; i < n_in; i++) tin[i] = in[i] ? &in[i]->t : NULL;
    for (size_t i = 0; i < n_out; i++) tout[i] = out[i] ? &out[i]->t : NULL;
    checks++;
    kiln_status st = kiln_cpu_step_validate(op, params, tin, n_in, in_sizes, tout, n_out, NULL, mr, nr);
    if (st != want) fail("validate %s: got %d, want %d", label, st, want);
}

#define REJECT(label, op, p, in, n_in, out, mr, nr)                                                 \
    expect_status(label, op, &(p), in, n_in, NULL, out, 1, mr, nr, KILN_ERROR_INCOMPATIBLE)
#define ACCEPT(label, op, p, in, n_in, out, mr, nr) expect_status(label, op, &(p), in, n_in, NULL, out, 1, mr, nr, KILN_OK)

/* Applies one mutation to a copy of the base params and expects a rejection. */
#define MUTATE(label, op, base, stmt, in, n_in, out, mr, nr)                                        \
    do {                                                                                         \
        __typeof__(base) p_ = base;                                                              \
        stmt;                                                                                    \
        REJECT(label, op, p_, in, n_in, out, mr, nr);                                            \
    } while (0)

static void test_validate_gemm(void)
{
    kiln_cpu_gemm_params base = {.M = 5, .N = 7, .K = 3, .batch = 2, .lda = 3, .ldb = 7, .ldy = 7,
                                       .a_batch_stride = 15, .b_batch_stride = 21, .y_batch_stride = 35,
                                       .alpha = 1, .beta = 1, .bias_kind = KILN_CPU_BIAS_PER_COL};
    tbuf *A = tb_f32(30), *B = tb_f32(42), *bias = tb_f32(7), *Y = tb_f32(70);
    int64_t shape_i32 = 70;
    tbuf *Yi = tb_new(KILN_DTYPE_I32, 1, &shape_i32);
    tbuf *in[3] = {A, B, bias}, *out[1] = {Y}, *out_i[1] = {Yi}, *in_nobias[3] = {A, B, NULL};
    const uint32_t mr = 4, nr = 8;
    ACCEPT("gemm base", KILN_CPU_OP_GEMM, base, in, 3, out, mr, nr);
    MUTATE("gemm M<0", KILN_CPU_OP_GEMM, base, p_.M = -1, in, 3, out, mr, nr);
    MUTATE("gemm lda<K", KILN_CPU_OP_GEMM, base, p_.K = 4, in, 3, out, mr, nr);
    MUTATE("gemm lda small", KILN_CPU_OP_GEMM, base, p_.lda = 2, in, 3, out, mr, nr);
    MUTATE("gemm ldy<N", KILN_CPU_OP_GEMM, base, p_.ldy = 6, in, 3, out, mr, nr);
    MUTATE("gemm batches overlap", KILN_CPU_OP_GEMM, base, p_.y_batch_stride = 34, in, 3, out, mr, nr);
    MUTATE("gemm shared output", KILN_CPU_OP_GEMM, base, p_.y_batch_stride = 0, in, 3, out, mr, nr);
    MUTATE("gemm A too small", KILN_CPU_OP_GEMM, base, p_.batch = 3, in, 3, out, mr, nr);
    MUTATE("gemm B too small", KILN_CPU_OP_GEMM, base, p_.b_batch_stride = 22, in, 3, out, mr, nr);
    MUTATE("gemm bias kind", KILN_CPU_OP_GEMM, base, p_.bias_kind = 5, in, 3, out, mr, nr);
    MUTATE("gemm full bias too small", KILN_CPU_OP_GEMM, base, p_.bias_kind = KILN_CPU_BIAS_FULL, in, 3, out, mr, nr);
    MUTATE("gemm act kind", KILN_CPU_OP_GEMM, base, p_.act.kind = KILN_CPU_ACT_COUNT, in, 3, out, mr, nr);
    MUTATE("gemm trans flag", KILN_CPU_OP_GEMM, base, p_.trans_a = 2, in, 3, out, mr, nr);
    MUTATE("gemm packed batched", KILN_CPU_OP_GEMM, base, p_.b_packed = 1, in, 3, out, mr, nr);
    MUTATE("gemm huge", KILN_CPU_OP_GEMM, base, (p_.M = (int64_t)1 << 47, p_.ldy = p_.N = (int64_t)1 << 47), in, 3,
           out, mr, nr);
    MUTATE("gemm negative stride", KILN_CPU_OP_GEMM, base, p_.a_batch_stride = -15, in, 3, out, mr, nr);
    REJECT("gemm bias absent", KILN_CPU_OP_GEMM, base, in_nobias, 3, out, mr, nr);
    REJECT("gemm bias not passed", KILN_CPU_OP_GEMM, base, in, 2, out, mr, nr);
    REJECT("gemm output dtype", KILN_CPU_OP_GEMM, base, in, 3, out_i, mr, nr);
    /* The params describe exactly Y's elements: neither fewer than Y has, nor none at all for a
       non-empty Y (a zero factor fits any buffer while the other factors, loop bounds, could be
       anything). */
    tbuf *Y71 = tb_f32(71), *out71[1] = {Y71}, *out_two[2] = {Y, Y};
    REJECT("gemm Y larger than described", KILN_CPU_OP_GEMM, base, in, 3, out71, mr, nr);
    MUTATE("gemm empty batch, non-empty Y", KILN_CPU_OP_GEMM, base, (p_.batch = 0, p_.M = (int64_t)1 << 40), in, 3,
           out, mr, nr);
    expect_status("gemm two outputs", KILN_CPU_OP_GEMM, &base, in, 3, NULL, out_two, 2, mr, nr, KILN_ERROR_INCOMPATIBLE);
    kiln_cpu_gemm_params packed = base;
    packed.b_packed = 1;
    packed.b_batch_stride = 0;
    ACCEPT("gemm packed", KILN_CPU_OP_GEMM, packed, in, 3, out, mr, nr);
    REJECT("gemm packed at a wider NR", KILN_CPU_OP_GEMM, packed, in, 3, out, mr, 64);
    REJECT("gemm packed NR 0", KILN_CPU_OP_GEMM, packed, in, 3, out, mr, 0);
    /* Sizes given by the caller: the buffers, not the shapes, bound the access. */
    size_t sizes[3] = {30 * 4, 42 * 4, 7 * 4};
    expect_status("gemm sizes exact", KILN_CPU_OP_GEMM, &base, in, 3, sizes, out, 1, mr, nr, KILN_OK);
    sizes[1] = 42 * 4 - 1;
    expect_status("gemm B size short", KILN_CPU_OP_GEMM, &base, in, 3, sizes, out, 1, mr, nr, KILN_ERROR_INCOMPATIBLE);
    tb_free(A);
    tb_free(B);
    tb_free(bias);
    tb_free(Y);
    tb_free(Y71);
    tb_free(Yi);
}

static void test_validate_conv_pool(void)
{
    const uint32_t mr = 4, nr = 8;
    kiln_cpu_conv_params base = {.N = 1, .C = 4, .H = 5, .W = 5, .M = 6, .OH = 5, .OW = 5, .KH = 3, .KW = 3,
                                       .stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1, .dil_h = 1,
                                       .dil_w = 1, .group = 2, .has_bias = 1};
    size_t group_floats = kiln_cpu_pack_a_size(3, 18, mr) / 4;
    tbuf *X = tb_f32(100), *W = tb_f32((int64_t)group_floats * 2), *bias = tb_f32(6), *Y = tb_f32(150);
    tbuf *in[3] = {X, W, bias}, *out[1] = {Y};
    ACCEPT("conv base", KILN_CPU_OP_CONV2D, base, in, 3, out, mr, nr);
    REJECT("conv packed at a wider MR", KILN_CPU_OP_CONV2D, base, in, 3, out, 8, nr);
    MUTATE("conv group divides", KILN_CPU_OP_CONV2D, base, p_.group = 3, in, 3, out, mr, nr);
    MUTATE("conv group 0", KILN_CPU_OP_CONV2D, base, p_.group = 0, in, 3, out, mr, nr);
    MUTATE("conv stride 0", KILN_CPU_OP_CONV2D, base, p_.stride_w = 0, in, 3, out, mr, nr);
    MUTATE("conv dilation 0", KILN_CPU_OP_CONV2D, base, p_.dil_h = 0, in, 3, out, mr, nr);
    MUTATE("conv kernel 0", KILN_CPU_OP_CONV2D, base, p_.KH = 0, in, 3, out, mr, nr);
    MUTATE("conv pad < 0", KILN_CPU_OP_CONV2D, base, p_.pad_left = -1, in, 3, out, mr, nr);
    MUTATE("conv not depthwise", KILN_CPU_OP_CONV2D, base, p_.depthwise = 1, in, 3, out, mr, nr);
    MUTATE("conv Y too small", KILN_CPU_OP_CONV2D, base, p_.OH = 6, in, 3, out, mr, nr);
    MUTATE("conv X too small", KILN_CPU_OP_CONV2D, base, p_.H = 6, in, 3, out, mr, nr);
    MUTATE("conv W too small", KILN_CPU_OP_CONV2D, base, p_.KW = 4, in, 3, out, mr, nr);
    MUTATE("conv bias flag", KILN_CPU_OP_CONV2D, base, p_.has_bias = 2, in, 3, out, mr, nr);
    MUTATE("conv geometry", KILN_CPU_OP_CONV2D, base, p_.stride_h = (int64_t)1 << 31, in, 3, out, mr, nr);
    MUTATE("conv act", KILN_CPU_OP_CONV2D, base, p_.act.kind = 99, in, 3, out, mr, nr);
    REJECT("conv bias missing", KILN_CPU_OP_CONV2D, base, in, 2, out, mr, nr);
    MUTATE("conv no images, non-empty Y", KILN_CPU_OP_CONV2D, base, (p_.N = 0, p_.OH = (int64_t)1 << 29), in, 3, out,
           mr, nr);
    /* A non-empty Y reads X: an empty X (here no input channels) would leave H, W unbounded. */
    MUTATE("conv no input channels", KILN_CPU_OP_CONV2D, base, p_.C = 0, in, 3, out, mr, nr);
    MUTATE("conv empty rows", KILN_CPU_OP_CONV2D, base, p_.H = 0, in, 3, out, mr, nr);
    kiln_cpu_conv_params dw = base;
    dw.group = dw.C = dw.M = 4;
    dw.depthwise = 1;
    tbuf *Y100 = tb_f32(100), *Y80 = tb_f32(80), *out100[1] = {Y100}, *out80[1] = {Y80};
    ACCEPT("conv depthwise", KILN_CPU_OP_CONV2D, dw, in, 3, out100, mr, nr);
    REJECT("conv depthwise Y larger than described", KILN_CPU_OP_CONV2D, dw, in, 3, out, mr, nr);
    MUTATE("conv depthwise M != C", KILN_CPU_OP_CONV2D, dw, (p_.M = 8, p_.OH = 2), in, 3, out80, mr, nr);
    tb_free(Y100);
    tb_free(Y80);

    kiln_cpu_pool_params pool = {.N = 1, .C = 2, .H = 6, .W = 6, .OH = 3, .OW = 3, .KH = 2, .KW = 2,
                                       .stride_h = 2, .stride_w = 2, .dil_h = 1, .dil_w = 1};
    tbuf *PX = tb_f32(72), *PY = tb_f32(18), *pin[1] = {PX}, *pout[1] = {PY};
    ACCEPT("pool base", KILN_CPU_OP_POOL2D, pool, pin, 1, pout, mr, nr);
    MUTATE("pool kind", KILN_CPU_OP_POOL2D, pool, p_.kind = 2, pin, 1, pout, mr, nr);
    MUTATE("pool stride 0", KILN_CPU_OP_POOL2D, pool, p_.stride_h = 0, pin, 1, pout, mr, nr);
    MUTATE("pool Y too small", KILN_CPU_OP_POOL2D, pool, p_.OW = 4, pin, 1, pout, mr, nr);
    MUTATE("pool X too small", KILN_CPU_OP_POOL2D, pool, p_.C = 3, pin, 1, pout, mr, nr);
    MUTATE("pool flag", KILN_CPU_OP_POOL2D, pool, p_.count_include_pad = 3, pin, 1, pout, mr, nr);
    MUTATE("pool pad < 0", KILN_CPU_OP_POOL2D, pool, p_.pad_bottom = -1, pin, 1, pout, mr, nr);
    MUTATE("pool no images, non-empty Y", KILN_CPU_OP_POOL2D, pool, (p_.N = 0, p_.KH = (int64_t)1 << 29), pin, 1, pout,
           mr, nr);
    MUTATE("pool empty rows", KILN_CPU_OP_POOL2D, pool, p_.H = 0, pin, 1, pout, mr, nr);
    /* ONNX windows: the dilated kernel fits the padded input, at most ceil(room/stride)+1 of them. */
    MUTATE("pool window past the padded input", KILN_CPU_OP_POOL2D, pool, p_.KH = 7, pin, 1, pout, mr, nr);
    MUTATE("pool dilated window past the input", KILN_CPU_OP_POOL2D, pool, p_.dil_w = 6, pin, 1, pout, mr, nr);
    MUTATE("pool more windows than the input has", KILN_CPU_OP_POOL2D, pool, (p_.OH = 9, p_.OW = 1), pin, 1, pout, mr,
           nr);
    kiln_cpu_pool_params padded = pool;
    padded.KH = 7, padded.pad_top = 2, padded.pad_bottom = 2, padded.stride_h = 1;
    ACCEPT("pool window within the pads", KILN_CPU_OP_POOL2D, padded, pin, 1, pout, mr, nr);
    tb_free(X);
    tb_free(W);
    tb_free(bias);
    tb_free(Y);
    tb_free(PX);
    tb_free(PY);
}

static void test_validate_rows(void)
{
    const uint32_t mr = 4, nr = 8;
    tbuf *X10 = tb_f32(10), *Y10 = tb_f32(10), *in1[1] = {X10}, *out1[1] = {Y10};
    kiln_cpu_unary_params unary = {.count = 10, .act = {KILN_CPU_ACT_TANH, 0, 0}};
    ACCEPT("unary base", KILN_CPU_OP_UNARY, unary, in1, 1, out1, mr, nr);
    MUTATE("unary count", KILN_CPU_OP_UNARY, unary, p_.count = 11, in1, 1, out1, mr, nr);
    MUTATE("unary count < 0", KILN_CPU_OP_UNARY, unary, p_.count = -1, in1, 1, out1, mr, nr);
    MUTATE("unary act", KILN_CPU_OP_UNARY, unary, p_.act.kind = 50, in1, 1, out1, mr, nr);
    REJECT("unary no input", KILN_CPU_OP_UNARY, unary, in1, 0, out1, mr, nr);
    MUTATE("unary count short", KILN_CPU_OP_UNARY, unary, p_.count = 9, in1, 1, out1, mr, nr);

    tbuf *A = tb_f32(12), *B = tb_f32(4), *Y = tb_f32(12), *in2[2] = {A, B}, *out2[1] = {Y};
    kiln_cpu_binary_params bin = {.kind = KILN_CPU_BIN_ADD, .rank = 2, .out_shape = {3, 4},
                                        .a_strides = {4, 1}, .b_strides = {0, 1}};
    ACCEPT("binary base", KILN_CPU_OP_BINARY, bin, in2, 2, out2, mr, nr);
    MUTATE("binary A stride", KILN_CPU_OP_BINARY, bin, p_.a_strides[0] = 5, in2, 2, out2, mr, nr);
    MUTATE("binary negative stride", KILN_CPU_OP_BINARY, bin, p_.b_strides[1] = -1, in2, 2, out2, mr, nr);
    MUTATE("binary rank", KILN_CPU_OP_BINARY, bin, p_.rank = 9, in2, 2, out2, mr, nr);
    MUTATE("binary kind", KILN_CPU_OP_BINARY, bin, p_.kind = 7, in2, 2, out2, mr, nr);
    MUTATE("binary Y too small", KILN_CPU_OP_BINARY, bin, p_.out_shape[1] = 5, in2, 2, out2, mr, nr);
    MUTATE("binary overflow", KILN_CPU_OP_BINARY, bin, (p_.out_shape[0] = (int64_t)1 << 40, p_.out_shape[1] = (int64_t)1 << 40), in2, 2, out2, mr, nr);
    MUTATE("binary empty dim, non-empty Y", KILN_CPU_OP_BINARY, bin, (p_.out_shape[0] = 0, p_.out_shape[1] = (int64_t)1 << 40),
           in2, 2, out2, mr, nr);

    tbuf *S24 = tb_f32(24), *T24 = tb_f32(24), *sin[1] = {S24}, *sout[1] = {T24};
    kiln_cpu_softmax_params sm = {.outer = 2, .n = 3, .inner = 4};
    ACCEPT("softmax base", KILN_CPU_OP_SOFTMAX, sm, sin, 1, sout, mr, nr);
    MUTATE("softmax too big", KILN_CPU_OP_SOFTMAX, sm, p_.inner = 5, sin, 1, sout, mr, nr);
    MUTATE("softmax flag", KILN_CPU_OP_SOFTMAX, sm, p_.log = 2, sin, 1, sout, mr, nr);
    MUTATE("softmax overflow", KILN_CPU_OP_SOFTMAX, sm, (p_.outer = (int64_t)1 << 40, p_.n = (int64_t)1 << 40), sin, 1,
           sout, mr, nr);
    MUTATE("softmax empty, non-empty Y", KILN_CPU_OP_SOFTMAX, sm, (p_.outer = 0, p_.n = (int64_t)1 << 40), sin, 1, sout,
           mr, nr);

    tbuf *LX = tb_f32(16), *LS = tb_f32(8), *LS7 = tb_f32(7), *LB = tb_f32(8), *LY = tb_f32(16);
    tbuf *lin[3] = {LX, LS, LB}, *lin_short[3] = {LX, LS7, LB}, *lout[1] = {LY};
    kiln_cpu_layernorm_params ln = {.outer = 2, .n = 8, .epsilon = 1e-5f, .has_bias = 1};
    ACCEPT("layernorm base", KILN_CPU_OP_LAYERNORM, ln, lin, 3, lout, mr, nr);
    REJECT("layernorm scale short", KILN_CPU_OP_LAYERNORM, ln, lin_short, 3, lout, mr, nr);
    REJECT("layernorm bias missing", KILN_CPU_OP_LAYERNORM, ln, lin, 2, lout, mr, nr);
    MUTATE("layernorm epsilon", KILN_CPU_OP_LAYERNORM, ln, p_.epsilon = NAN, lin, 3, lout, mr, nr);
    MUTATE("layernorm rows", KILN_CPU_OP_LAYERNORM, ln, p_.outer = 3, lin, 3, lout, mr, nr);
    MUTATE("layernorm empty rows, non-empty Y", KILN_CPU_OP_LAYERNORM, ln, (p_.outer = (int64_t)1 << 40, p_.n = 0), lin, 3,
           lout, mr, nr);

    tbuf *FX = tb_f32(12), *FS = tb_f32(3), *FT = tb_f32(3), *FY = tb_f32(12);
    tbuf *fin[3] = {FX, FS, FT}, *fin_nt[3] = {FX, FS, NULL}, *fout[1] = {FY};
    kiln_cpu_affine_params af = {.N = 1, .C = 3, .inner = 4};
    ACCEPT("affine base", KILN_CPU_OP_CHANNEL_AFFINE, af, fin, 3, fout, mr, nr);
    MUTATE("affine channels", KILN_CPU_OP_CHANNEL_AFFINE, af, (p_.C = 4, p_.inner = 3), fin, 3, fout, mr, nr);
    REJECT("affine shift missing", KILN_CPU_OP_CHANNEL_AFFINE, af, fin_nt, 3, fout, mr, nr);
    MUTATE("affine empty planes, non-empty Y", KILN_CPU_OP_CHANNEL_AFFINE, af, (p_.N = (int64_t)1 << 40, p_.inner = 0),
           fin, 3, fout, mr, nr);

    int64_t n16 = 16;
    tbuf *CX = tb_new(KILN_DTYPE_U8, 1, &n16), *CY = tb_new(KILN_DTYPE_U8, 1, &n16), *cin[1] = {CX}, *cout[1] = {CY};
    kiln_cpu_copy_params cp = {.bytes = 16};
    ACCEPT("copy base", KILN_CPU_OP_COPY, cp, cin, 1, cout, mr, nr);
    MUTATE("copy too long", KILN_CPU_OP_COPY, cp, p_.bytes = 17, cin, 1, cout, mr, nr);
    MUTATE("copy negative", KILN_CPU_OP_COPY, cp, p_.bytes = -1, cin, 1, cout, mr, nr);
    MUTATE("copy short of Y", KILN_CPU_OP_COPY, cp, p_.bytes = 15, cin, 1, cout, mr, nr);

    tbuf *TX = tb_f32(12), *TY = tb_f32(12), *tin[1] = {TX}, *tout[1] = {TY};
    kiln_cpu_transpose_params tr = {.rank = 2, .elem_size = 4, .in_shape = {3, 4}, .perm = {1, 0}};
    ACCEPT("transpose base", KILN_CPU_OP_TRANSPOSE, tr, tin, 1, tout, mr, nr);
    MUTATE("transpose perm repeats", KILN_CPU_OP_TRANSPOSE, tr, p_.perm[1] = 1, tin, 1, tout, mr, nr);
    MUTATE("transpose perm range", KILN_CPU_OP_TRANSPOSE, tr, p_.perm[0] = 2, tin, 1, tout, mr, nr);
    MUTATE("transpose elem size", KILN_CPU_OP_TRANSPOSE, tr, p_.elem_size = 2, tin, 1, tout, mr, nr);
    MUTATE("transpose too big", KILN_CPU_OP_TRANSPOSE, tr, p_.in_shape[1] = 5, tin, 1, tout, mr, nr);
    MUTATE("transpose rank", KILN_CPU_OP_TRANSPOSE, tr, p_.rank = 9, tin, 1, tout, mr, nr);
    MUTATE("transpose empty dim, non-empty Y", KILN_CPU_OP_TRANSPOSE, tr, (p_.in_shape[0] = 0, p_.in_shape[1] = (int64_t)1 << 40),
           tin, 1, tout, mr, nr);

    REJECT("unknown op", 0, cp, cin, 1, cout, mr, nr);
    REJECT("unknown op", KILN_CPU_OP_COUNT, cp, cin, 1, cout, mr, nr);

    tbuf *all[] = {X10, Y10, A, B, Y, S24, T24, LX, LS, LS7, LB, LY, FX, FS, FT, FY, CX, CY, TX, TY};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tb_free(all[i]);
}

/* ---- random params: whatever validate accepts must run inside its buffers ---- */

static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)((frand() + 1.0f) * 0.5f * (float)(hi - lo + 1)) % (hi - lo + 1); }
static int64_t rnd_dim(void) { return rnd_in(0, 12) == 0 ? rnd_in(-1, 0) : rnd_in(1, 7); }
static int64_t rnd_pos(void) { return rnd_in(0, 12) == 0 ? 0 : rnd_in(1, 3); }

/* The output elements random params describe (-1 when some dim is negative). */
static int64_t random_described_count(uint32_t op, const void *params)
{
    int64_t dims[KILN_CPU_MAX_RANK], n = 0, count = 1;
    if (op == KILN_CPU_OP_GEMM) {
        const kiln_cpu_gemm_params *p = params;
        dims[n++] = p->batch, dims[n++] = p->M, dims[n++] = p->N;
    } else if (op == KILN_CPU_OP_CONV2D) {
        const kiln_cpu_conv_params *p = params;
        dims[n++] = p->N, dims[n++] = p->M, dims[n++] = p->OH, dims[n++] = p->OW;
    } else if (op == KILN_CPU_OP_POOL2D) {
        const kiln_cpu_pool_params *p = params;
        dims[n++] = p->N, dims[n++] = p->C, dims[n++] = p->OH, dims[n++] = p->OW;
    } else {
        const kiln_cpu_binary_params *p = params;
        for (uint32_t d = 0; d < p->rank; d++) dims[n++] = p->out_shape[d];
    }
    for (int64_t i = 0; i < n; i++) {
        if (dims[i] < 0) return -1;
        count *= dims[i];
    }
    return count;
}

/* Random GEMM, CONV2D, POOL2D and BINARY params near consistency, over buffers of random
   sizes. Accepted steps run on every table (under ASan any stray access aborts; otherwise the
   canaries catch stray writes). Most draws are rejected, which is the point. */
static void test_validate_random(void)
{
    int accepted = 0;
    for (int it = 0; it < 6000; it++) {
        union {
            kiln_cpu_gemm_params gemm;
            kiln_cpu_conv_params conv;
            kiln_cpu_pool_params pool;
            kiln_cpu_binary_params bin;
        } u;
        memset(&u, 0, sizeof u);
        uint32_t op = (uint32_t)(it % 4 == 0 ? KILN_CPU_OP_GEMM : it % 4 == 1 ? KILN_CPU_OP_CONV2D
                                                               : it % 4 == 2 ? KILN_CPU_OP_POOL2D : KILN_CPU_OP_BINARY);
        if (op == KILN_CPU_OP_GEMM) {
            kiln_cpu_gemm_params *p = &u.gemm;
            p->M = rnd_dim(), p->N = rnd_dim(), p->K = rnd_dim(), p->batch = rnd_in(0, 2);
            p->trans_a = (uint8_t)rnd_in(0, 1), p->trans_b = (uint8_t)rnd_in(0, 1), p->b_packed = (uint8_t)rnd_in(0, 1);
            p->bias_kind = (uint8_t)rnd_in(0, 4);
            p->lda = (p->trans_a ? p->M : p->K) + rnd_in(-1, 1), p->ldb = (p->trans_b ? p->K : p->N) + rnd_in(-1, 1);
            p->ldy = p->N + rnd_in(-1, 1);
            p->a_batch_stride = (p->trans_a ? p->K : p->M) * p->lda + rnd_in(-1, 1);
            p->b_batch_stride = p->b_packed ? 0 : (p->trans_b ? p->N : p->K) * p->ldb + rnd_in(-1, 1);
            p->y_batch_stride = p->M * p->ldy + rnd_in(-1, 1), p->bias_batch_stride = p->M * p->N;
            p->alpha = p->beta = 1.0f;
            p->act.kind = (uint32_t)rnd_in(0, KILN_CPU_ACT_COUNT);
        } else if (op == KILN_CPU_OP_CONV2D) {
            kiln_cpu_conv_params *p = &u.conv;
            p->N = rnd_dim(), p->C = rnd_dim(), p->H = rnd_dim(), p->W = rnd_dim(), p->M = rnd_dim();
            p->KH = rnd_pos(), p->KW = rnd_pos(), p->stride_h = rnd_pos(), p->stride_w = rnd_pos();
            p->dil_h = rnd_pos(), p->dil_w = rnd_pos(), p->pad_top = rnd_in(-1, 2), p->pad_left = rnd_in(-1, 2);
            p->group = rnd_in(0, 3) == 0 ? p->C : rnd_in(0, 2);
            p->depthwise = (uint8_t)(p->group == p->C && rnd_in(0, 1)), p->has_bias = (uint8_t)rnd_in(0, 1);
            if (p->depthwise) p->M = p->C;
            p->OH = rnd_dim(), p->OW = rnd_dim();
            p->act.kind = (uint32_t)rnd_in(0, 4);
        } else if (op == KILN_CPU_OP_POOL2D) {
            kiln_cpu_pool_params *p = &u.pool;
            p->N = rnd_dim(), p->C = rnd_dim(), p->H = rnd_dim(), p->W = rnd_dim(), p->OH = rnd_dim(), p->OW = rnd_dim();
            p->KH = rnd_pos(), p->KW = rnd_pos(), p->stride_h = rnd_pos(), p->stride_w = rnd_pos();
            p->dil_h = rnd_pos(), p->dil_w = rnd_pos(), p->pad_top = rnd_in(-1, 2), p->pad_left = rnd_in(0, 2);
            p->pad_bottom = rnd_in(0, 2), p->pad_right = rnd_in(0, 2);
            p->kind = (uint32_t)rnd_in(0, 2), p->count_include_pad = (uint32_t)rnd_in(0, 1);
        } else {
            kiln_cpu_binary_params *p = &u.bin;
            p->kind = (uint32_t)rnd_in(0, 7), p->rank = (uint32_t)rnd_in(0, 3);
            for (uint32_t d = 0; d < p->rank; d++) {
                p->out_shape[d] = rnd_dim();
                p->a_strides[d] = rnd_in(-1, 6);
                p->b_strides[d] = rnd_in(0, 1) ? 0 : rnd_in(0, 6);
            }
        }
        tbuf *t[4];
        for (int i = 0; i < 4; i++) t[i] = tb_f32(rnd_in(0, 3) ? rnd_in(0, 300) : rnd_in(0, 1500));
        for (int i = 0; i < 3; i++) fill(tb_data(t[i]), t[i]->t.shape[0], 2.0f);
        /* Usually the output's shape holds exactly the elements the params describe (validation
           wants that) in a buffer of its random size, at least as large. */
        int64_t described = random_described_count(op, &u);
        if (rnd_in(0, 3) && described >= 0 && described <= t[3]->t.shape[0]) t[3]->t.shape[0] = described;
        tbuf *in[3] = {t[0], t[1], rnd_in(0, 4) ? t[2] : NULL}, *out[1] = {t[3]};
        size_t n_in = (size_t)rnd_in(1, 3);
        size_t in_sizes[3] = {t[0]->bytes, t[1]->bytes, t[2]->bytes}, out_sizes[1] = {t[3]->bytes};
        for (size_t k = 0; k < n_tables; k++) {
            const table *tb = &tables[k];
            const kiln_tensor *tin[3] = {&in[0]->t, &in[1]->t, in[2] ? &in[2]->t : NULL};
            kiln_tensor *tout[1] = {&out[0]->t};
            if (!tb->runnable || kiln_cpu_step_validate(op, &u, tin, n_in, in_sizes, tout, 1, out_sizes, tb->k->gemm_mr,
                                                        tb->k->gemm_nr) != KILN_OK)
                continue;
            accepted++;
            size_t ws = kiln_cpu_workspace_size(tb->k, op, &u, tb->target->l1_size, it % 3 ? tb->target->l2_size : 0);
            void *mem = malloc(ws ? ws : 1);
            kiln_cpu_exec exec = {.workspace = mem, .workspace_size = ws};
            if (tb->k->ops[op](&u, tin, tout, &exec) != KILN_OK) fail("random op %u [%s]: accepted step failed", op, tb->k->isa);
            free(mem);
            for (int i = 0; i < 4; i++)
                if (!tb_canary_ok(t[i])) fail("random op %u [%s]: wrote past buffer %d", op, tb->k->isa, i);
        }
        for (int i = 0; i < 4; i++) tb_free(t[i]);
    }
    checks++;
    if (accepted < 100) fail("random params: only %d steps accepted, the generator is off", accepted);
}

/* Generic and x86-64-v3 records of one binary store their packed weights once only if the two
   tables pack for the same register tile. */
static void test_shared_tile(void)
{
    checks++;
    if (kiln_cpu_kernels_generic.gemm_mr != kiln_cpu_kernels_avx2.gemm_mr ||
        kiln_cpu_kernels_generic.gemm_nr != kiln_cpu_kernels_avx2.gemm_nr)
        fail("generic tile %ux%u differs from avx2 tile %ux%u", kiln_cpu_kernels_generic.gemm_mr,
             kiln_cpu_kernels_generic.gemm_nr, kiln_cpu_kernels_avx2.gemm_mr, kiln_cpu_kernels_avx2.gemm_nr);
}

int main(void)
{
    tables_init();
    test_shared_tile();
    test_gemm();
    test_conv();
    test_pool();
    test_pool_huge_window();
    test_pool_nan();
    test_unary();
    test_binary();
    test_softmax();
    test_layernorm();
    test_affine();
    test_copy();
    test_transpose();
    test_validate_gemm();
    test_validate_conv_pool();
    test_validate_rows();
    test_validate_random();
    free(generic_out);
    printf("test_cpu_kernels: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
