/* test_cpu_kernels_support.h — what the kernel-table tests (tests/unit/test_cpu_kernels_*.c)
 * share: random data, tensors with a canary after their data, the tables under test, the step
 * runner, the activation reference and the comparison of outputs.
 *
 * Layer: tests. Header-only (static inline), since each test file is a program of its own: every
 * program gets its own counters, random seed and list of tables. Every op of the generic table is
 * compared with a naive double-precision reference written in the test from the op's definition
 * (cpu_ops.h, the portable kernels' semantics), and every other table this CPU can run is compared
 * with the generic table on the same inputs (tables the CPU cannot run print a SKIPPED line).
 * Each step first passes kiln_cpu_step_validate, runs on a workspace of the size
 * kiln_cpu_workspace_size reports for its target and again on the smallest workspace the plan
 * accepts (which must not change a single bit), and writes into buffers followed by a canary.
 */
#ifndef KILN_TESTS_UNIT_TEST_CPU_KERNELS_SUPPORT_H
#define KILN_TESTS_UNIT_TEST_CPU_KERNELS_SUPPORT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "backends/cpu/targets.h"
#include "test_kernel_support.h"

/* ---- random data ---- */

/* Every program starts from this seed, so the data of one program's tests do not depend on what
   another program draws. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static inline float frand(void) { return xorshift_unit(&rng_state); } /* [-1, 1) */

static inline void fill(float *x, int64_t n, float scale)
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

static inline tbuf *tb_new(kiln_dtype dtype, uint32_t rank, const int64_t *shape)
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

static inline tbuf *tb_f32(int64_t n) { return tb_new(KILN_DTYPE_F32, 1, &n); }

static inline float *tb_data(tbuf *b) { return b->t.data; }

static inline bool tb_canary_ok(const tbuf *b)
{
    const unsigned char *c = (const unsigned char *)b->t.data + b->bytes;
    for (int i = 0; i < CANARY; i++)
        if (c[i] != CANARY_BYTE) return false;
    return true;
}

static inline void tb_free(tbuf *b)
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

static inline void tables_init(void)
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
static inline bool run_step(const table *tb, uint32_t op, const void *params, tbuf **in, size_t n_in, tbuf **out,
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
static inline bool close_enough(const float *actual, const double *expected, int64_t n, double rtol, double atol,
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

static inline bool close_to(const float *actual, const float *expected, int64_t n, double rtol, double atol,
                            const char *what, const char *isa)
{
    double *e = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) e[i] = expected[i];
    bool ok = close_enough(actual, e, n, rtol, atol, what, isa);
    free(e);
    return ok;
}

/* ---- the activation reference, in double ---- */

static inline double act_ref(const kiln_cpu_act *act, double x)
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

static inline double sum_atol(int64_t terms) { return 1e-6 * sqrt((double)(terms > 1 ? terms : 1)) + 1e-6; }

/* The generic table's output of the current case, against which the other tables compare. */
static float *generic_out;
static int64_t generic_n;

static inline void keep_generic(const float *y, int64_t n)
{
    free(generic_out);
    generic_out = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    memcpy(generic_out, y, sizeof(float) * (size_t)n);
    generic_n = n;
}

/* Compares a table's output: generic against the reference, the others against generic. */
static inline void check_output(const table *tb, const float *y, const double *ref, int64_t n, double rtol, double atol,
                                const char *what)
{
    if (tb->k == &kiln_cpu_kernels_generic) {
        close_enough(y, ref, n, rtol, atol, what, tb->k->isa);
        keep_generic(y, n);
    } else if (generic_n == n) {
        close_to(y, generic_out, n, rtol, atol, what, tb->k->isa);
    }
}

/* Frees what the comparisons kept and prints the program's "N checks, M failures" line; the
   exit status for main(): 0 when every check passed. */
static inline int kernel_tests_report(const char *program)
{
    free(generic_out);
    generic_out = NULL;
    generic_n = 0;
    printf("%s: %d checks, %d failures\n", program, checks, failures);
    return failures ? 1 : 0;
}

#endif /* KILN_TESTS_UNIT_TEST_CPU_KERNELS_SUPPORT_H */
