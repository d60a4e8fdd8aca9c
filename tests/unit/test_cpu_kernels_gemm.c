/* test_cpu_kernels_gemm.c — the GEMM step of the `cpu` backend's kernel tables against a naive
 * reference.
 *
 * Tests backends/cpu/kernels (the comparisons are described in test_cpu_kernels_support.h).
 * Shapes hit tile remainders (1, 3, 7, 17, 33, 65 ...), whole 6x16 tiles and panels whose last
 * columns fall in the second half of a 16-wide panel (the generic 6x16 kernel does a panel as two
 * 8-column halves), empty dimensions and several K blocks; B is packed per table at its NR. The
 * generic and avx2 tables must share one tile (their records share packed weights,
 * docs/targets.md). Exit status: 0 when everything passed.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_cpu_kernels_support.h"

/* ---- GEMM ---- */

typedef struct gemm_case {
    int64_t M, N, K, batch;
    int trans_a, trans_b, b_packed, bias_kind, pad;
    float alpha, beta;
    kiln_cpu_act act;
} gemm_case;

/* A case's reference and buffers. */
static void free_case(double *ref, tbuf *A, tbuf *Braw, tbuf *bias, tbuf *Y)
{
    free(ref);
    tb_free(A);
    tb_free(Braw);
    tb_free(bias);
    tb_free(Y);
}

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
    free_case(ref, A, Braw, bias, Y);
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
    /* Decode rows against packed weights over several K blocks: A read in place (a_step 1), and
       a transposed A, which is packed. */
    test_gemm_case(&(gemm_case){.M = 1, .N = 70, .K = 1100, .batch = 1, .b_packed = 1, .bias_kind = 2, .alpha = 1,
                                .beta = 1, .act = acts[1]});
    test_gemm_case(&(gemm_case){.M = 1, .N = 70, .K = 1100, .batch = 1, .trans_a = 1, .b_packed = 1, .alpha = 1,
                                .beta = 1, .act = acts[0]});
    test_gemm_case(&(gemm_case){.M = 200, .N = 70, .K = 130, .batch = 2, .pad = 1, .bias_kind = 4, .alpha = 1,
                                .beta = 0.5f, .act = acts[5]});
    test_gemm_case(&(gemm_case){.M = 4, .N = 4, .K = 4, .batch = 0, .bias_kind = 3, .alpha = 1, .beta = 1});
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

/* Precision bf16: B packed as bf16 pairs, A rounded to bf16 as the step packs it, f32 sums.
   The reference multiplies the same bf16-rounded operands exactly (double), so the tolerance is
   the f32 summation's, as for f32 GEMMs; K odd (a half-empty last pair), several K blocks,
   M = 1 (decode), edge tiles, A transposed, biases and activations. Only tables with a bf16
   microkernel run these; a CPU without one is said to skip them. */
static float bf16_round(float x)
{
    uint32_t u = (uint32_t)kiln_cpu_f32_to_bf16(x) << 16;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

static void test_gemm_bf16_case(int64_t M, int64_t N, int64_t K, int trans_a, int bias_kind, kiln_cpu_act act)
{
    char what[160];
    snprintf(what, sizeof what, "gemm bf16 M=%lld N=%lld K=%lld ta=%d bias=%d act=%u", (long long)M, (long long)N,
             (long long)K, trans_a, bias_kind, act.kind);
    int64_t lda = trans_a ? M : K;
    tbuf *A = tb_f32(M * K), *Braw = tb_f32(K * N), *bias = bias_kind ? tb_f32(N) : NULL, *Y = tb_f32(M * N);
    fill(tb_data(A), M * K, 1.0f);
    fill(tb_data(Braw), K * N, 1.0f);
    if (bias) fill(tb_data(bias), N, 1.0f);
    double *ref = malloc(sizeof(double) * (size_t)(M * N + 1));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (double)bf16_round(tb_data(A)[trans_a ? k * lda + m : m * lda + k]) *
                       bf16_round(tb_data(Braw)[k * N + n]);
            ref[m * N + n] = act_ref(&act, acc + (bias ? tb_data(bias)[n] : 0.0));
        }
    for (size_t t = 0; t < n_tables; t++) {
        const table *tb = &tables[t];
        if (!tb->runnable || !tb->k->bf16) continue;
        int64_t words = (int64_t)(kiln_cpu_pack_b_bf16_size(K, N, tb->k->gemm_nr) / sizeof(uint32_t));
        tbuf *B = tb_new(KILN_DTYPE_BF16, 1, &(int64_t){2 * words});
        kiln_cpu_pack_b_bf16(tb_data(Braw), K, N, 0, tb->k->gemm_nr, (uint32_t *)B->t.data);
        kiln_cpu_gemm_params p = {.M = M, .N = N, .K = K, .batch = 1, .lda = lda, .ldb = N, .ldy = N,
                                  .alpha = 1, .beta = 1, .trans_a = (uint8_t)trans_a,
                                  .b_packed = KILN_CPU_PACKED_BF16, .bias_kind = (uint8_t)bias_kind, .act = act};
        tbuf *in[3] = {A, B, bias}, *out[1] = {Y};
        if (run_step(tb, KILN_CPU_OP_GEMM, &p, in, bias ? 3 : 2, out, 1, what))
            close_enough(tb_data(Y), ref, M * N, SUM_RTOL, sum_atol(K), what, tb->k->isa);
        tb_free(B);
    }
    free_case(ref, A, Braw, bias, Y);
}

static void test_gemm_bf16(void)
{
    bool any = false;
    for (size_t t = 0; t < n_tables; t++) any |= tables[t].runnable && tables[t].k->bf16;
    if (!any) {
        printf("SKIPPED: bf16 GEMM cases: no table with a bf16 microkernel runs on this CPU (needs AVX512-BF16)\n");
        return;
    }
    const kiln_cpu_act none = {.kind = KILN_CPU_ACT_NONE}, relu = {.kind = KILN_CPU_ACT_RELU};
    const kiln_cpu_act gelu = {.kind = KILN_CPU_ACT_GELU_ERF};
    test_gemm_bf16_case(1, 70, 1101, 0, KILN_CPU_BIAS_PER_COL, none);   /* decode, K odd, several K blocks */
    test_gemm_bf16_case(13, 33, 7, 0, KILN_CPU_BIAS_NONE, relu);         /* edge tiles, one short K block */
    test_gemm_bf16_case(37, 100, 2500, 1, KILN_CPU_BIAS_PER_COL, gelu); /* A transposed, non-fused act */
    test_gemm_bf16_case(64, 128, 1, 0, KILN_CPU_BIAS_NONE, none);       /* one k: a half pair */
}

/* One level of Strassen (B packed as its seven quadrant sums): against a double reference of
   the classical product, with four times the classical tolerance, scaled by |alpha| (each
   element sums products of partial sums: the error grows with the norms of A and B: 8.7e-5 on
   outputs of about 20 at K = 2048). Half sizes that leave partial MR and NR panels, K/2 up to one whole K block,
   A transposed, every bias kind with alpha and beta, fused and separate activations. */
static void test_gemm_strassen_case(int64_t M, int64_t N, int64_t K, int trans_a, int trans_b, int bias_kind,
                                    float alpha, float beta, kiln_cpu_act act)
{
    char what[160];
    snprintf(what, sizeof what, "gemm strassen M=%lld N=%lld K=%lld ta=%d tb=%d bias=%d act=%u", (long long)M,
             (long long)N, (long long)K, trans_a, trans_b, bias_kind, act.kind);
    int64_t lda = trans_a ? M : K;
    int64_t bias_n = bias_kind == KILN_CPU_BIAS_SCALAR    ? 1
                     : bias_kind == KILN_CPU_BIAS_PER_COL ? N
                     : bias_kind == KILN_CPU_BIAS_PER_ROW ? M
                                                          : M * N;
    tbuf *A = tb_f32(M * K), *Braw = tb_f32(K * N), *bias = bias_kind ? tb_f32(bias_n) : NULL, *Y = tb_f32(M * N);
    fill(tb_data(A), M * K, 1.0f);
    fill(tb_data(Braw), K * N, 1.0f);
    if (bias) fill(tb_data(bias), bias_n, 1.0f);
    double *ref = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (double)tb_data(A)[trans_a ? k * lda + m : m * lda + k] *
                       tb_data(Braw)[trans_b ? n * K + k : k * N + n];
            double b = !bias                                 ? 0.0
                       : bias_kind == KILN_CPU_BIAS_SCALAR   ? tb_data(bias)[0]
                       : bias_kind == KILN_CPU_BIAS_PER_COL  ? tb_data(bias)[n]
                       : bias_kind == KILN_CPU_BIAS_PER_ROW  ? tb_data(bias)[m]
                                                             : tb_data(bias)[m * N + n];
            ref[m * N + n] = act_ref(&act, alpha * acc + beta * b);
        }
    for (size_t t = 0; t < n_tables; t++) {
        const table *tb = &tables[t];
        if (!tb->runnable) continue;
        size_t bytes = kiln_cpu_pack_b_strassen_size(K, N, tb->k->gemm_nr);
        tbuf *B = tb_f32((int64_t)(bytes / sizeof(float)));
        kiln_cpu_pack_b_strassen(tb_data(Braw), K, N, trans_b, tb->k->gemm_nr, tb_data(B));
        kiln_cpu_gemm_params p = {.M = M, .N = N, .K = K, .batch = 1, .lda = lda, .ldb = N, .ldy = N,
                                  .alpha = alpha, .beta = beta, .trans_a = (uint8_t)trans_a,
                                  .b_packed = KILN_CPU_PACKED_STRASSEN, .bias_kind = (uint8_t)bias_kind, .act = act};
        tbuf *in[3] = {A, B, bias}, *out[1] = {Y};
        if (run_step(tb, KILN_CPU_OP_GEMM, &p, in, bias ? 3 : 2, out, 1, what))
            close_enough(tb_data(Y), ref, M * N, SUM_RTOL, 4.0 * sum_atol(K) * fmax(1.0, fabs(alpha)), what, tb->k->isa);
        tb_free(B);
    }
    free_case(ref, A, Braw, bias, Y);
}

static void test_gemm_strassen(void)
{
    const kiln_cpu_act none = {.kind = KILN_CPU_ACT_NONE}, relu = {.kind = KILN_CPU_ACT_RELU};
    const kiln_cpu_act gelu = {.kind = KILN_CPU_ACT_GELU_ERF};
    test_gemm_strassen_case(2, 2, 2, 0, 0, KILN_CPU_BIAS_NONE, 1.0f, 1.0f, none);        /* 1x1 quadrants */
    test_gemm_strassen_case(26, 70, 34, 0, 0, KILN_CPU_BIAS_PER_COL, 1.0f, 1.0f, none);  /* partial panels */
    test_gemm_strassen_case(64, 128, 96, 1, 1, KILN_CPU_BIAS_PER_ROW, 0.5f, 2.0f, gelu); /* A^T, B^T, act */
    test_gemm_strassen_case(50, 66, 2048, 0, 0, KILN_CPU_BIAS_FULL, -1.5f, 0.25f, relu); /* K/2 = 1024 */
    test_gemm_strassen_case(150, 96, 40, 1, 0, KILN_CPU_BIAS_SCALAR, 1.0f, -1.0f, relu);
}

int main(void)
{
    tables_init();
    test_shared_tile();
    test_gemm();
    test_gemm_bf16();
    test_gemm_strassen();
    return kernel_tests_report("test_cpu_kernels_gemm");
}
