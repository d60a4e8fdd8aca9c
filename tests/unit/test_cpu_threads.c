/* test_cpu_threads.c — the `cpu` backend's kernels give the same bytes on 1, 2 and 3 threads.
 *
 * Tests backends/cpu/kernels with threads (kiln_cpu_exec): every op of every kernel table this
 * CPU can run, on shapes large enough to be split (and a few that are not), runs once without
 * threads and again on a 3-thread kiln pool with n_threads 2 and 3 and a workspace slot per
 * thread; the outputs must match bit for bit, the kernels must really have split the work
 * (checked by counting tasks through a parallel_for shim), and the canaries after the outputs
 * and each workspace slot must survive. One more pass gives threads but no extra workspace slots:
 * steps that need a workspace then run as one task, the others still split. Labelled `tsan`:
 * under ThreadSanitizer it also proves the tasks of one step never race.
 * Exit status: 0 when everything passed.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "backends/cpu/targets.h"
#include "core/alloc.h"
#include "core/threadpool.h"
#include "test_kernel_support.h"
#include "test_thread_support.h"

#define CANARY 64
#define CANARY_BYTE 0xA5
#define MAX_THREADS 3

/* ---- data ---- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static float frand(void) { return xorshift_unit(&rng_state); } /* [-1, 1) */

/* A flat f32 tensor of n elements (random) followed by a canary. */
typedef struct buf {
    kiln_tensor t;
    size_t bytes;
} buf;

static buf *buf_new(int64_t n)
{
    buf *b = calloc(1, sizeof *b);
    b->t.dtype = KILN_DTYPE_F32;
    b->t.rank = 1;
    b->t.shape[0] = n;
    b->bytes = (size_t)n * sizeof(float);
    b->t.data = malloc(b->bytes + CANARY);
    for (int64_t i = 0; i < n; i++) ((float *)b->t.data)[i] = frand();
    memset((char *)b->t.data + b->bytes, CANARY_BYTE, CANARY);
    return b;
}

static bool canary_ok(const void *end)
{
    const unsigned char *c = end;
    for (int i = 0; i < CANARY; i++)
        if (c[i] != CANARY_BYTE) return false;
    return true;
}

static void buf_free(buf *b)
{
    if (!b) return;
    free(b->t.data);
    free(b);
}

/* ---- one step on one table at 1, 2, 3 threads ---- */

typedef struct step_case {
    const char *what;
    uint32_t op;
    const void *params;
    buf *in[3];
    size_t n_in;
    buf *out;
    bool must_split;    /* large enough that 2 and 3 threads must cut it */
    bool needs_ws;      /* splits only with workspace slots */
} step_case;

/* Runs the step with `threads` (1: no thread fields) and `slots` (false: no extra workspace). */
static bool run_once(const kiln_cpu_target *target, const step_case *c, uint32_t threads, bool slots, void *result,
                     size_t *tasks)
{
    const kiln_cpu_kernels *k = target->kernels;
    const kiln_tensor *in[3] = {0};
    kiln_tensor *out[1] = {&c->out->t};
    for (size_t i = 0; i < c->n_in; i++) in[i] = c->in[i] ? &c->in[i]->t : NULL;
    size_t ws = kiln_cpu_workspace_size(k, c->op, c->params, target->l1_size, target->l2_size);
    size_t slot = (ws + CANARY + 63) / 64 * 64;
    unsigned char *mem = aligned_alloc(64, slot * MAX_THREADS);
    memset(mem, CANARY_BYTE, slot * MAX_THREADS);
    kiln_cpu_exec exec = {.workspace = mem, .workspace_size = ws};
    if (threads > 1) {
        exec.parallel_for = counting_parallel_for;
        exec.pool = pool;
        exec.n_threads = threads;
        exec.thread_workspace = slots ? mem + slot : NULL;
        exec.thread_workspace_stride = slots ? slot : 0;
    }
    memset(c->out->t.data, 0x7F, c->out->bytes);
    atomic_store(&most_tasks, 1);
    kiln_status st = k->ops[c->op](c->params, in, out, &exec);
    *tasks = atomic_load(&most_tasks);
    bool ok = st == KILN_OK;
    if (!ok) fail("%s [%s] %u threads: status %d", c->what, k->isa, threads, st);
    if (!canary_ok((char *)c->out->t.data + c->out->bytes)) {
        fail("%s [%s] %u threads: wrote past the output", c->what, k->isa, threads);
        ok = false;
    }
    for (int s = 0; s < MAX_THREADS; s++)
        if (!canary_ok(mem + (size_t)s * slot + ws)) {
            fail("%s [%s] %u threads: wrote past workspace slot %d", c->what, k->isa, threads, s);
            ok = false;
        }
    memcpy(result, c->out->t.data, c->out->bytes);
    free(mem);
    return ok;
}

static void run_case(const kiln_cpu_target *target, const step_case *c)
{
    const kiln_cpu_kernels *k = target->kernels;
    const kiln_tensor *in[3] = {0};
    kiln_tensor *out[1] = {&c->out->t};
    for (size_t i = 0; i < c->n_in; i++) in[i] = c->in[i] ? &c->in[i]->t : NULL;
    checks++;
    if (kiln_cpu_step_validate(c->op, c->params, in, c->n_in, NULL, out, 1, NULL, k->gemm_mr, k->gemm_nr) != KILN_OK) {
        fail("%s [%s]: the test's step does not validate", c->what, k->isa);
        return;
    }
    void *one = malloc(c->out->bytes + 1), *many = malloc(c->out->bytes + 1);
    size_t tasks;
    if (run_once(target, c, 1, true, one, &tasks)) {
        for (uint32_t threads = 2; threads <= MAX_THREADS; threads++) {
            for (int slots = 1; slots >= 0; slots--) {
                checks++;
                if (!run_once(target, c, threads, slots != 0, many, &tasks)) continue;
                if (memcmp(one, many, c->out->bytes) != 0)
                    fail("%s [%s]: %u threads%s give other bytes than 1", c->what, k->isa, threads,
                         slots ? "" : " (no extra workspace)");
                bool can_split = slots || !c->needs_ws;
                if (c->must_split && can_split && tasks != threads)
                    fail("%s [%s]: %u threads ran %zu tasks", c->what, k->isa, threads, tasks);
                if (!can_split && tasks > 1)
                    fail("%s [%s]: %zu tasks without workspace slots", c->what, k->isa, tasks);
            }
        }
    }
    free(one);
    free(many);
}

/* ---- the cases, built per table (packed weights depend on MR/NR) ---- */

typedef struct gemm_shape {
    int64_t batch, M, N, K;
    bool b_packed, trans_a, trans_b;
    uint32_t bias_kind, act;
    bool must_split;
} gemm_shape;

static void gemm_cases(const kiln_cpu_target *target)
{
    static const gemm_shape shapes[] = {
        {1, 1, 3000, 300, true, false, false, KILN_CPU_BIAS_PER_COL, KILN_CPU_ACT_NONE, true},
        {1, 100, 150, 90, true, false, false, KILN_CPU_BIAS_NONE, KILN_CPU_ACT_RELU, true},
        {1, 37, 515, 70, false, true, false, KILN_CPU_BIAS_PER_ROW, KILN_CPU_ACT_SIGMOID, true},
        {1, 300, 17, 250, false, false, true, KILN_CPU_BIAS_FULL, KILN_CPU_ACT_NONE, true},
        {1, 61, 203, 300, true, true, false, KILN_CPU_BIAS_SCALAR, KILN_CPU_ACT_GELU_TANH, true},
        {5, 40, 50, 100, false, false, false, KILN_CPU_BIAS_FULL, KILN_CPU_ACT_NONE, true},
        {3, 64, 64, 64, false, false, true, KILN_CPU_BIAS_NONE, KILN_CPU_ACT_NONE, true},
        {7, 13, 29, 600, true, false, false, KILN_CPU_BIAS_PER_COL, KILN_CPU_ACT_RELU, true},
        {1, 5, 7, 9, false, false, false, KILN_CPU_BIAS_NONE, KILN_CPU_ACT_NONE, false},
    };
    const kiln_cpu_kernels *k = target->kernels;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const gemm_shape *s = &shapes[i];
        kiln_cpu_gemm_params p = {.M = s->M, .N = s->N, .K = s->K, .batch = s->batch, .alpha = 0.75f, .beta = 1.25f,
                                  .trans_a = s->trans_a, .trans_b = s->trans_b, .b_packed = s->b_packed,
                                  .bias_kind = (uint8_t)s->bias_kind, .act = {.kind = s->act}};
        p.lda = s->trans_a ? s->M : s->K;
        p.ldb = s->trans_b ? s->K : s->N;
        p.ldy = s->N;
        p.a_batch_stride = s->M * s->K;
        p.b_batch_stride = s->b_packed ? 0 : s->K * s->N;
        p.y_batch_stride = s->M * s->N;
        p.bias_batch_stride = s->bias_kind == KILN_CPU_BIAS_FULL ? s->M * s->N : 0;
        buf *a = buf_new(s->batch * s->M * s->K), *b, *bias = NULL;
        if (s->b_packed) {
            buf *raw = buf_new(s->K * s->N);
            b = buf_new((int64_t)(kiln_cpu_pack_b_size(s->K, s->N, k->gemm_nr) / sizeof(float)));
            kiln_cpu_pack_b(raw->t.data, s->K, s->N, 0, k->gemm_nr, b->t.data);
            buf_free(raw);
        } else {
            b = buf_new(s->batch * s->K * s->N);
        }
        int64_t bias_n[] = {0, 1, s->N, s->M, s->batch * s->M * s->N};
        if (s->bias_kind != KILN_CPU_BIAS_NONE) bias = buf_new(bias_n[s->bias_kind]);
        buf *y = buf_new(s->batch * s->M * s->N);
        char what[96];
        snprintf(what, sizeof what, "gemm %lldx%lldx%lldx%lld", (long long)s->batch, (long long)s->M,
                 (long long)s->N, (long long)s->K);
        step_case c = {what, KILN_CPU_OP_GEMM, &p, {a, b, bias}, 3, y, s->must_split, true};
        run_case(target, &c);
        buf_free(a);
        buf_free(b);
        buf_free(bias);
        buf_free(y);
    }
}

typedef struct conv_shape {
    int64_t N, C, H, W, M, KH, KW, stride, pad, dil, group;
    bool depthwise, bias;
    uint32_t act;
} conv_shape;

static void conv_cases(const kiln_cpu_target *target)
{
    static const conv_shape shapes[] = {
        {2, 8, 20, 20, 24, 3, 3, 1, 1, 1, 1, false, true, KILN_CPU_ACT_RELU},     /* im2col */
        {1, 32, 40, 38, 32, 3, 3, 2, 1, 1, 2, false, true, KILN_CPU_ACT_NONE},    /* grouped, strided */
        {1, 64, 7, 7, 256, 3, 3, 1, 1, 1, 1, false, false, KILN_CPU_ACT_RELU},    /* few pixels */
        {1, 3, 64, 64, 16, 7, 7, 2, 3, 1, 1, false, true, KILN_CPU_ACT_CLIP},     /* stem */
        {1, 64, 20, 20, 40, 1, 1, 1, 0, 1, 1, false, true, KILN_CPU_ACT_RELU},    /* pointwise */
        {2, 64, 14, 14, 128, 1, 1, 1, 0, 1, 2, false, false, KILN_CPU_ACT_NONE},  /* grouped pointwise */
        {1, 64, 40, 40, 64, 3, 3, 1, 1, 1, 64, true, true, KILN_CPU_ACT_CLIP},    /* depthwise */
        {2, 48, 49, 47, 48, 5, 5, 2, 2, 1, 48, true, false, KILN_CPU_ACT_NONE},   /* depthwise strided */
    };
    const kiln_cpu_kernels *k = target->kernels;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const conv_shape *s = &shapes[i];
        kiln_cpu_conv_params p = {.N = s->N, .C = s->C, .H = s->H, .W = s->W, .M = s->M, .KH = s->KH, .KW = s->KW,
                                  .stride_h = s->stride, .stride_w = s->stride, .pad_top = s->pad,
                                  .pad_left = s->pad, .dil_h = s->dil, .dil_w = s->dil, .group = s->group,
                                  .has_bias = s->bias, .depthwise = s->depthwise,
                                  .act = {.kind = s->act, .alpha = -0.5f, .beta = 0.5f}};
        p.OH = (s->H + 2 * s->pad - s->dil * (s->KH - 1) - 1) / s->stride + 1;
        p.OW = (s->W + 2 * s->pad - s->dil * (s->KW - 1) - 1) / s->stride + 1;
        int64_t cg = s->C / s->group, mg = s->M / s->group, K = cg * s->KH * s->KW;
        buf *x = buf_new(s->N * s->C * s->H * s->W), *w, *bias = s->bias ? buf_new(s->M) : NULL;
        if (s->depthwise) {
            w = buf_new(s->C * s->KH * s->KW);
        } else {
            buf *raw = buf_new(s->M * K);
            size_t group_bytes = kiln_cpu_pack_a_size(mg, K, k->gemm_mr);
            w = buf_new((int64_t)(group_bytes * (size_t)s->group / sizeof(float)));
            for (int64_t g = 0; g < s->group; g++)
                kiln_cpu_pack_a((float *)raw->t.data + g * mg * K, mg, K, 0, k->gemm_mr,
                                (float *)((char *)w->t.data + (size_t)g * group_bytes));
            buf_free(raw);
        }
        buf *y = buf_new(s->N * s->M * p.OH * p.OW);
        char what[96];
        snprintf(what, sizeof what, "conv #%zu", i);
        step_case c = {what, KILN_CPU_OP_CONV2D, &p, {x, w, bias}, 3, y, true, !s->depthwise};
        run_case(target, &c);
        buf_free(x);
        buf_free(w);
        buf_free(bias);
        buf_free(y);
    }
}

static void pool_cases(const kiln_cpu_target *target)
{
    for (uint32_t kind = KILN_CPU_POOL_MAX; kind <= KILN_CPU_POOL_AVG; kind++) {
        kiln_cpu_pool_params p = {.N = 1, .C = 64, .H = 56, .W = 56, .OH = 28, .OW = 28, .KH = 3, .KW = 3,
                                  .stride_h = 2, .stride_w = 2, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
                                  .pad_right = 1, .dil_h = 1, .dil_w = 1, .kind = kind, .count_include_pad = kind};
        buf *x = buf_new(64 * 56 * 56), *y = buf_new(64 * 28 * 28);
        step_case c = {kind ? "avgpool" : "maxpool", KILN_CPU_OP_POOL2D, &p, {x}, 1, y, true, false};
        run_case(target, &c);
        buf_free(x);
        buf_free(y);
    }
    kiln_cpu_pool_params g = {.N = 2, .C = 512, .H = 14, .W = 14, .OH = 1, .OW = 1, .KH = 14, .KW = 14,
                              .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .kind = KILN_CPU_POOL_AVG};
    buf *x = buf_new(2 * 512 * 196), *y = buf_new(2 * 512);
    step_case c = {"global avgpool", KILN_CPU_OP_POOL2D, &g, {x}, 1, y, true, false};
    run_case(target, &c);
    buf_free(x);
    buf_free(y);
}

static void elementwise_cases(const kiln_cpu_target *target)
{
    static const uint32_t acts[] = {KILN_CPU_ACT_RELU,     KILN_CPU_ACT_SIGMOID, KILN_CPU_ACT_TANH,
                                    KILN_CPU_ACT_GELU_ERF, KILN_CPU_ACT_EXP,     KILN_CPU_ACT_NONE};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        kiln_cpu_unary_params p = {.count = 300001, .act = {.kind = acts[i]}};
        buf *x = buf_new(p.count), *y = buf_new(p.count);
        step_case c = {"unary", KILN_CPU_OP_UNARY, &p, {x}, 1, y, true, false};
        run_case(target, &c);
        buf_free(x);
        buf_free(y);
    }
    /* [4, 300, 257] op [300, 1] and a scalar, with a fused activation. */
    kiln_cpu_binary_params b = {.kind = KILN_CPU_BIN_MUL, .rank = 3, .out_shape = {4, 300, 257},
                                .a_strides = {300 * 257, 257, 1}, .b_strides = {0, 1, 0},
                                .act = {.kind = KILN_CPU_ACT_SILU}};
    buf *a = buf_new(4 * 300 * 257), *v = buf_new(300), *y = buf_new(4 * 300 * 257), *sc = buf_new(1);
    step_case c = {"binary broadcast", KILN_CPU_OP_BINARY, &b, {a, v}, 2, y, true, false};
    run_case(target, &c);
    kiln_cpu_binary_params b2 = {.kind = KILN_CPU_BIN_POW, .rank = 1, .out_shape = {4 * 300 * 257},
                                 .a_strides = {1}, .b_strides = {0}};
    step_case c2 = {"binary scalar", KILN_CPU_OP_BINARY, &b2, {a, sc}, 2, y, true, false};
    run_case(target, &c2);
    kiln_cpu_affine_params af = {.N = 2, .C = 64, .inner = 3001, .act = {.kind = KILN_CPU_ACT_RELU}};
    buf *ax = buf_new(2 * 64 * 3001), *s1 = buf_new(64), *s2 = buf_new(64), *ay = buf_new(2 * 64 * 3001);
    step_case c3 = {"channel affine", KILN_CPU_OP_CHANNEL_AFFINE, &af, {ax, s1, s2}, 3, ay, true, false};
    run_case(target, &c3);
    kiln_cpu_copy_params cp = {.bytes = 4 * 300 * 257 * 4};
    step_case c4 = {"copy", KILN_CPU_OP_COPY, &cp, {a}, 1, y, true, false};
    run_case(target, &c4);
    kiln_cpu_transpose_params tp = {.rank = 3, .elem_size = 4, .in_shape = {4, 300, 257}, .perm = {2, 0, 1}};
    step_case c5 = {"transpose", KILN_CPU_OP_TRANSPOSE, &tp, {a}, 1, y, true, false};
    run_case(target, &c5);
    buf_free(a);
    buf_free(v);
    buf_free(y);
    buf_free(sc);
    buf_free(ax);
    buf_free(s1);
    buf_free(s2);
    buf_free(ay);
}

static void row_cases(const kiln_cpu_target *target)
{
    static const kiln_cpu_softmax_params softmaxes[] = {{300, 1000, 1, 0, 0}, {20, 100, 70, 0, 0}, {40, 77, 33, 1, 0}};
    for (size_t i = 0; i < sizeof softmaxes / sizeof softmaxes[0]; i++) {
        const kiln_cpu_softmax_params *p = &softmaxes[i];
        int64_t n = p->outer * p->n * p->inner;
        buf *x = buf_new(n), *y = buf_new(n);
        step_case c = {"softmax", KILN_CPU_OP_SOFTMAX, p, {x}, 1, y, true, false};
        run_case(target, &c);
        buf_free(x);
        buf_free(y);
    }
    kiln_cpu_layernorm_params ln = {.outer = 300, .n = 768, .epsilon = 1e-5f, .has_bias = 1};
    buf *x = buf_new(300 * 768), *s = buf_new(768), *b = buf_new(768), *y = buf_new(300 * 768);
    step_case c = {"layernorm", KILN_CPU_OP_LAYERNORM, &ln, {x, s, b}, 3, y, true, false};
    run_case(target, &c);
    buf_free(x);
    buf_free(s);
    buf_free(b);
    buf_free(y);
}

int main(void)
{
    if (kiln_threadpool_create(kiln_allocator_default(), MAX_THREADS, &pool) != KILN_OK) {
        fprintf(stderr, "FAIL: cannot create a thread pool\n");
        return 1;
    }
    for (size_t i = 0; i < kiln_cpu_target_count(); i++) {
        const kiln_cpu_target *t = kiln_cpu_target_at(i);
        if (!kiln_cpu_target_runnable(t)) {
            printf("SKIPPED: table %s (target %s): this CPU lacks its features\n", t->kernels->isa, t->name);
            continue;
        }
        gemm_cases(t);
        conv_cases(t);
        pool_cases(t);
        elementwise_cases(t);
        row_cases(t);
    }
    kiln_threadpool_destroy(pool);
    printf("test_cpu_threads: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
