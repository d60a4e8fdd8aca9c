/* test_cpu_kernels_elementwise.c — the row and element steps of the `cpu` backend's kernel
 * tables against naive references: UNARY, BINARY, SOFTMAX, LAYERNORM, CHANNEL_AFFINE, COPY and
 * TRANSPOSE.
 *
 * Tests backends/cpu/kernels (the comparisons are described in test_cpu_kernels_support.h).
 * Every activation runs on lengths around the vector widths and on special values (tiny, huge,
 * infinite, NaN); binary ops broadcast and read a transposed operand; rows are contiguous or
 * strided; copy and transpose must move the bytes exactly. Exit status: 0 when everything passed.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_cpu_kernels_support.h"

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

/* An element's bits must not depend on its neighbours (drivers cut rows at different places for
   different thread counts and workspaces, so an element lands in different vector lanes): every
   activation of a shifted copy of the same data gives the same bits. Inputs mix magnitudes so
   that vectors mix the branches an approximation has (GELU: small lanes, erf by pieces). */
static void test_unary_lanes(void)
{
    const int64_t n = 515;
    for (uint32_t kind = 1; kind < KILN_CPU_ACT_COUNT; kind++) {
        kiln_cpu_act act = {kind, kind == KILN_CPU_ACT_CLIP ? -1.0f : 0.1f, 2.0f};
        tbuf *X = tb_f32(n), *Y = tb_f32(n), *X1 = tb_f32(n - 1), *Y1 = tb_f32(n - 1);
        float *x = tb_data(X);
        fill(x, n, 1.0f);
        for (int64_t i = 0; i < n; i += 7) x[i] *= 5.0f;
        memcpy(tb_data(X1), x + 1, (size_t)(n - 1) * sizeof(float));
        char what[64];
        snprintf(what, sizeof what, "unary act=%u lanes", kind);
        kiln_cpu_unary_params p = {.count = n, .act = act}, p1 = {.count = n - 1, .act = act};
        for (size_t t = 0; t < n_tables; t++) {
            tbuf *in[1] = {X}, *out[1] = {Y}, *in1[1] = {X1}, *out1[1] = {Y1};
            if (!tables[t].runnable || !run_step(&tables[t], KILN_CPU_OP_UNARY, &p, in, 1, out, 1, what) ||
                !run_step(&tables[t], KILN_CPU_OP_UNARY, &p1, in1, 1, out1, 1, what))
                continue;
            checks++;
            if (memcmp((const float *)tb_data(Y) + 1, tb_data(Y1), (size_t)(n - 1) * sizeof(float)) != 0)
                fail("%s [%s]: an element's result depends on its lane", what, tables[t].k->isa);
        }
        tb_free(X);
        tb_free(Y);
        tb_free(X1);
        tb_free(Y1);
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
    for (uint32_t variant = 0; variant < 4; variant++) {
        uint32_t rms = variant & 1, residual = variant >> 1;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            int64_t outer = shapes[i][0], n = shapes[i][1];
            uint32_t has_bias = (i + rms) % 2 == 0;
            char what[96];
            snprintf(what, sizeof what, "%s %lldx%lld bias=%u%s", rms ? "rmsnorm" : "layernorm", (long long)outer,
                     (long long)n, has_bias, residual ? " + residual" : "");
            tbuf *X = tb_f32(outer * n), *S = tb_f32(n), *B = tb_f32(n), *Y = tb_f32(outer * n);
            tbuf *R = tb_f32(outer * n);
            float *x = tb_data(X);
            fill(x, outer * n, 2.0f);
            for (int64_t j = 0; j < outer * n; j++) x[j] += 5.0f; /* a mean far from 0 */
            fill(tb_data(S), n, 1.5f);
            fill(tb_data(B), n, 1.0f);
            fill(tb_data(R), outer * n, 1.0f);
            /* with a residual the reference normalises x + r, rounded to float as an Add would */
            float *sum = malloc(sizeof(float) * (size_t)(outer * n + 1));
            for (int64_t j = 0; j < outer * n; j++) sum[j] = residual ? x[j] + tb_data(R)[j] : x[j];
            x = sum;
            double *ref = malloc(sizeof(double) * (size_t)(outer * n + 1));
            for (int64_t r = 0; r < outer; r++) {
                double mean = 0, var = 0;
                for (int64_t j = 0; j < n && !rms; j++) mean += x[r * n + j];
                mean /= (double)n;
                for (int64_t j = 0; j < n; j++) var += (x[r * n + j] - mean) * (x[r * n + j] - mean);
                var /= (double)n;
                for (int64_t j = 0; j < n; j++)
                    ref[r * n + j] = (x[r * n + j] - mean) / sqrt(var + 1e-5) * tb_data(S)[j] +
                                     (has_bias ? tb_data(B)[j] : 0.0);
            }
            kiln_cpu_layernorm_params p = {.outer = outer, .n = n, .epsilon = 1e-5f, .has_bias = has_bias, .rms = rms,
                                           .has_residual = residual};
            for (size_t t = 0; t < n_tables; t++) {
                tbuf *in[4] = {X, S, B, R}, *out[1] = {Y};
                if (tables[t].runnable &&
                    run_step(&tables[t], KILN_CPU_OP_LAYERNORM, &p, in, residual ? 4 : 3, out, 1, what))
                    check_output(&tables[t], tb_data(Y), ref, outer * n, EW_RTOL, 1e-5, what);
            }
            free(ref);
            free(sum);
            tb_free(R);
            tb_free(X);
            tb_free(S);
            tb_free(B);
            tb_free(Y);
        }
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

int main(void)
{
    tables_init();
    test_unary();
    test_unary_lanes();
    test_binary();
    test_softmax();
    test_layernorm();
    test_affine();
    test_copy();
    test_transpose();
    return kernel_tests_report("test_cpu_kernels_elementwise");
}
