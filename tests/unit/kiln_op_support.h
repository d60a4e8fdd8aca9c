/* kiln_op_support.h — calling one kiln-domain kernel (kiln.RMSNorm, kiln.RoPE ...) as the runtime
 * does (infer, then run in exactly the scratch infer asked for), for the test_kiln_op_*.c tests.
 *
 * Layer: tests. Header-only (static), each test file being a program of its own. Outputs and
 * scratch are malloc'ed per run and freed by op_case_free; the scratch is followed by a canary
 * that run() must leave alone.
 */
#ifndef KILN_TESTS_UNIT_KILN_OP_SUPPORT_H
#define KILN_TESTS_UNIT_KILN_OP_SUPPORT_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/portable/kernel.h"
#include "unit_expect.h"

#define OP_MAX_ATTRS 8
#define OP_MAX_INPUTS 6
#define OP_CANARY 64

typedef struct op_case {
    kiln_node node;
    kiln_attr attrs[OP_MAX_ATTRS];
    const kiln_tensor *in[OP_MAX_INPUTS];
    kiln_tensor out;
    size_t scratch_size;
    unsigned char *scratch;
    int n_threads;          /* run(): 1 (op_case_init), or more: tasks run in reverse order */
} op_case;

static inline void op_case_init(op_case *c, const char *op, size_t n_inputs)
{
    memset(c, 0, sizeof *c);
    c->node = (kiln_node){.op = op, .domain = KILN_DOMAIN_KILN, .name = op, .opset = 1, .attrs = c->attrs,
                          .n_inputs = n_inputs, .n_outputs = 1};
    c->n_threads = 1;
}

static inline void op_attr_int(op_case *c, const char *name, int64_t v)
{
    c->attrs[c->node.n_attrs++] = (kiln_attr){.name = name, .type = KILN_ATTR_INT, .i = v};
}

static inline void op_attr_float(op_case *c, const char *name, float v)
{
    c->attrs[c->node.n_attrs++] = (kiln_attr){.name = name, .type = KILN_ATTR_FLOAT, .f = v};
}

/* A tensor over caller data (no copy). */
static inline kiln_tensor op_tensor(kiln_dtype dtype, uint32_t rank, const int64_t *shape, const void *data)
{
    kiln_tensor t = {.dtype = dtype, .rank = rank, .data = (void *)data};
    for (uint32_t d = 0; d < rank; d++) t.shape[d] = shape[d];
    return t;
}

static inline kiln_status op_infer(op_case *c)
{
    const kiln_kernel *k = kiln_portable_kernel_find(KILN_DOMAIN_KILN, c->node.op, 1);
    REQUIRE(k != NULL);
    kiln_tensor *outs[1] = {&c->out};
    c->scratch_size = 0;
    return k->infer(&c->node, c->in, outs, &c->scratch_size);
}

/* infer() must refuse with `want`, and kiln_kernel_explain must say something containing `says`
   (nothing at all when want is KILN_OK). */
static inline void op_expect_refusal(op_case *c, kiln_status want, const char *says)
{
    kiln_status st = op_infer(c);
    EXPECT_STATUS(st, want);
    char why[256] = "x";
    kiln_kernel_explain(kiln_portable_kernel_find(KILN_DOMAIN_KILN, c->node.op, 1), &c->node, c->in, why, sizeof why);
    unit_checks++;
    if (want == KILN_OK ? why[0] != '\0' : !strstr(why, says)) {
        fprintf(stderr, "%s: refused with \"%s\", expected it to say \"%s\"\n", c->node.op, why, says);
        unit_failures++;
    }
}

static void op_inline_for(void *pool, size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    (void)pool;
    for (size_t i = 0; i < n; i++) fn(arg, i);
}

/* The most tasks one parallel_for of the last op_run had. */
static size_t op_most_tasks;

/* As the pool would, in an order no kernel may rely on: the last task first. */
static void op_reverse_for(void *pool, size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    (void)pool;
    if (n > op_most_tasks) op_most_tasks = n;
    for (size_t i = n; i-- > 0;) fn(arg, i);
}

/* infer, then run into a fresh output (filled with NaN first, so an element run() forgets shows). */
static inline kiln_status op_run(op_case *c)
{
    kiln_status st = op_infer(c);
    if (st != KILN_OK) return st;
    size_t bytes = kiln_tensor_bytes(&c->out);
    c->out.data = malloc(bytes + 1);
    REQUIRE(c->out.data != NULL);
    for (size_t i = 0; i < bytes / sizeof(float); i++) ((float *)c->out.data)[i] = NAN;
    c->scratch = malloc(c->scratch_size + OP_CANARY);
    REQUIRE(c->scratch != NULL);
    memset(c->scratch, 0xA5, c->scratch_size + OP_CANARY);
    kiln_kernel_ctx ctx = {c->scratch, c->scratch_size, c->n_threads > 1 ? op_reverse_for : op_inline_for, NULL,
                           c->n_threads};
    kiln_tensor *outs[1] = {&c->out};
    op_most_tasks = 1;
    st = kiln_portable_kernel_find(KILN_DOMAIN_KILN, c->node.op, 1)->run(&c->node, c->in, outs, &ctx);
    for (size_t i = 0; i < OP_CANARY; i++) EXPECT(c->scratch[c->scratch_size + i] == 0xA5);
    return st;
}

static inline void op_case_free(op_case *c)
{
    free(c->out.data);
    free(c->scratch);
    c->out.data = NULL;
    c->scratch = NULL;
}

/* Compares n floats against double references: |got - want| <= tol * (1 + |want|). */
static inline void expect_close(const char *what, const float *got, const double *want, int64_t n, double tol)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - want[i]);
        unit_checks++;
        if (!(err <= tol * (1.0 + fabs(want[i])))) {
            if (bad++ < 5) fprintf(stderr, "%s: element %lld is %.9g, expected %.9g\n", what, (long long)i, got[i], want[i]);
            unit_failures++;
        }
    }
}

static uint64_t op_rng = 0x2545F4914F6CDD1Dull;

/* Uniform in [-1, 1). */
static inline float op_rand(void)
{
    op_rng ^= op_rng << 13;
    op_rng ^= op_rng >> 7;
    op_rng ^= op_rng << 17;
    return (float)((op_rng >> 40) * (1.0 / (1 << 24)) * 2.0 - 1.0);
}

static inline void op_fill(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) x[i] = op_rand();
}

#endif /* KILN_TESTS_UNIT_KILN_OP_SUPPORT_H */
