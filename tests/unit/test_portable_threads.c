/* test_portable_threads.c — the threaded portable kernels give the same bytes on 1, 2 and 3 threads.
 *
 * Tests kernels/portable through the kernel interface (infer then run, as the runtime calls
 * them): Gemm, MatMul (batched and folded), Conv (im2col, grouped, pointwise, depthwise),
 * ConvTranspose, MaxPool (with Indices), AveragePool, GlobalAveragePool, kiln.RMSNorm and
 * kiln.Linear run once with one thread and again on a 3-thread kiln pool with n_threads 2 and 3,
 * in exactly the scratch
 * infer() reported (followed by a canary). Outputs must match bit for bit, and the shapes that
 * are large enough must really have been split (tasks counted through a parallel_for shim).
 * Labelled `tsan`: under ThreadSanitizer it also proves the tasks never race.
 * Exit status: 0 when everything passed.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/threadpool.h"
#include "kernels/portable/kernel.h"
#include "test_kernel_support.h"
#include "test_thread_support.h"

#define CANARY 64
#define CANARY_BYTE 0xA5
#define MAX_THREADS 3
#define MAX_ATTRS 8

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static float frand(void) { return xorshift_unit(&rng_state); } /* [-1, 1) */

static kiln_tensor *tensor_new(uint32_t rank, const int64_t *shape)
{
    kiln_tensor *t = calloc(1, sizeof *t);
    t->dtype = KILN_DTYPE_F32;
    t->rank = rank;
    int64_t n = 1;
    for (uint32_t d = 0; d < rank; d++) n *= (t->shape[d] = shape[d]);
    t->data = malloc((size_t)n * sizeof(float) + 1);
    for (int64_t i = 0; i < n; i++) ((float *)t->data)[i] = frand();
    return t;
}

static void tensor_free(kiln_tensor *t)
{
    if (!t) return;
    free(t->data);
    free(t);
}

/* ---- one node ---- */

typedef struct node_case {
    const char *what;
    kiln_node node;
    kiln_attr attrs[MAX_ATTRS];
    kiln_tensor *in[3];
    size_t n_out;
    bool must_split;
} node_case;

static void attr_ints(node_case *c, const char *name, size_t n, const int64_t *values)
{
    c->attrs[c->node.n_attrs++] = (kiln_attr){.name = name, .type = KILN_ATTR_INTS, .n = n, .ints = values};
}

static void attr_int(node_case *c, const char *name, int64_t v)
{
    c->attrs[c->node.n_attrs++] = (kiln_attr){.name = name, .type = KILN_ATTR_INT, .i = v};
}

/* Runs the node on `threads` threads into fresh outputs; their bytes in *result (caller frees). */
static bool run_node(node_case *c, const kiln_kernel *k, int threads, void **result, size_t *bytes, size_t *tasks)
{
    kiln_tensor outs_storage[2] = {0};
    kiln_tensor *outs[2] = {&outs_storage[0], c->n_out > 1 ? &outs_storage[1] : NULL};
    size_t scratch_size = 0;
    kiln_status st = k->infer(&c->node, (const kiln_tensor *const *)c->in, outs, &scratch_size);
    if (st != KILN_OK) {
        fprintf(stderr, "FAIL: %s: infer %s\n", c->what, kiln_status_name(st));
        failures++;
        return false;
    }
    size_t total = 0, sizes[2] = {0};
    for (size_t j = 0; j < c->n_out; j++) {
        sizes[j] = kiln_tensor_bytes(outs[j]);
        outs[j]->data = malloc(sizes[j] + 1);
        memset(outs[j]->data, 0x7F, sizes[j]);
        total += sizes[j];
    }
    unsigned char *scratch = aligned_alloc(64, (scratch_size + CANARY + 63) / 64 * 64);
    memset(scratch, CANARY_BYTE, scratch_size + CANARY);
    kiln_kernel_ctx ctx = {scratch, scratch_size, counting_parallel_for, pool, threads};
    atomic_store(&most_tasks, 1);
    st = k->run(&c->node, (const kiln_tensor *const *)c->in, outs, &ctx);
    *tasks = atomic_load(&most_tasks);
    bool ok = st == KILN_OK;
    if (!ok) {
        fprintf(stderr, "FAIL: %s: run %s on %d threads\n", c->what, kiln_status_name(st), threads);
        failures++;
    }
    for (int i = 0; i < CANARY; i++)
        if (scratch[scratch_size + (size_t)i] != CANARY_BYTE) {
            fprintf(stderr, "FAIL: %s: %d threads wrote past the scratch infer() reported\n", c->what, threads);
            failures++;
            ok = false;
            break;
        }
    *result = malloc(total + 1);
    *bytes = total;
    for (size_t j = 0, at = 0; j < c->n_out; at += sizes[j], j++) {
        memcpy((char *)*result + at, outs[j]->data, sizes[j]);
        free(outs[j]->data);
    }
    free(scratch);
    return ok;
}

static void check_node(node_case *c, const char *op)
{
    c->node.op = op;
    c->node.name = c->what;
    c->node.opset = c->node.domain ? 1 : 17; /* kiln's own ops (node.domain KILN_DOMAIN_KILN) are opset 1 */
    c->node.attrs = c->attrs;
    const kiln_kernel *k = kiln_portable_kernel_find(c->node.domain, op, c->node.opset);
    checks++;
    if (!k) {
        fprintf(stderr, "FAIL: no portable kernel for %s\n", op);
        failures++;
        return;
    }
    void *one = NULL, *many = NULL;
    size_t one_bytes, many_bytes, tasks;
    if (run_node(c, k, 1, &one, &one_bytes, &tasks)) {
        for (int threads = 2; threads <= MAX_THREADS; threads++) {
            checks++;
            bool ok = run_node(c, k, threads, &many, &many_bytes, &tasks);
            if (ok && (many_bytes != one_bytes || memcmp(one, many, one_bytes) != 0)) {
                fprintf(stderr, "FAIL: %s: %d threads give other bytes than 1\n", c->what, threads);
                failures++;
            }
            if (ok && c->must_split && tasks != (size_t)threads) {
                fprintf(stderr, "FAIL: %s: %d threads ran %zu tasks\n", c->what, threads, tasks);
                failures++;
            }
            free(many);
        }
    }
    free(one);
    for (int i = 0; i < 3; i++) tensor_free(c->in[i]);
}

/* ---- cases ---- */

static void gemm_cases(void)
{
    static const struct {
        int64_t m, n, k;
        int trans_a, trans_b;
        bool bias, split;
    } shapes[] = {
        {1, 1000, 512, 0, 1, true, true},   {64, 300, 200, 0, 0, true, true}, {300, 20, 150, 1, 0, false, true},
        {7, 700, 90, 0, 0, true, true},     {130, 530, 270, 1, 1, true, true}, {3, 5, 7, 0, 0, true, false},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        node_case c = {.what = "Gemm", .n_out = 1, .must_split = shapes[i].split};
        int64_t a_shape[2] = {shapes[i].trans_a ? shapes[i].k : shapes[i].m, shapes[i].trans_a ? shapes[i].m : shapes[i].k};
        int64_t b_shape[2] = {shapes[i].trans_b ? shapes[i].n : shapes[i].k, shapes[i].trans_b ? shapes[i].k : shapes[i].n};
        int64_t c_shape[1] = {shapes[i].n};
        c.in[0] = tensor_new(2, a_shape);
        c.in[1] = tensor_new(2, b_shape);
        c.in[2] = shapes[i].bias ? tensor_new(1, c_shape) : NULL;
        c.node.n_inputs = shapes[i].bias ? 3 : 2;
        c.node.n_outputs = 1;
        attr_int(&c, "transA", shapes[i].trans_a);
        attr_int(&c, "transB", shapes[i].trans_b);
        check_node(&c, "Gemm");
    }
}

static void matmul_cases(void)
{
    static const int64_t a_shapes[][3] = {{12, 96, 64}, {1, 1, 2048}, {4, 50, 300}};
    static const int64_t b_shapes[][3] = {{12, 64, 96}, {1, 2048, 500}, {1, 300, 40}};
    for (size_t i = 0; i < 3; i++) {
        node_case c = {.what = "MatMul", .n_out = 1, .must_split = true};
        c.in[0] = tensor_new(3, a_shapes[i]);
        c.in[1] = i == 2 ? tensor_new(2, &b_shapes[i][1]) : tensor_new(3, b_shapes[i]);
        c.node.n_inputs = 2;
        c.node.n_outputs = 1;
        check_node(&c, "MatMul");
    }
}

static void conv_cases(void)
{
    static const struct {
        int64_t n, c, h, w, m, k, stride, pad, group;
    } shapes[] = {
        {1, 16, 40, 40, 32, 3, 1, 1, 1},  /* im2col, several blocks */
        {2, 64, 41, 39, 64, 3, 2, 1, 2},  /* grouped, strided */
        {1, 64, 28, 28, 48, 1, 1, 0, 1},  /* pointwise */
        {1, 64, 40, 40, 64, 3, 1, 1, 64}, /* depthwise */
        {1, 3, 64, 64, 16, 7, 2, 3, 1},   /* stem */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        node_case c = {.what = "Conv", .n_out = 1, .must_split = true};
        int64_t x_shape[4] = {shapes[i].n, shapes[i].c, shapes[i].h, shapes[i].w};
        int64_t w_shape[4] = {shapes[i].m, shapes[i].c / shapes[i].group, shapes[i].k, shapes[i].k};
        int64_t b_shape[1] = {shapes[i].m};
        c.in[0] = tensor_new(4, x_shape);
        c.in[1] = tensor_new(4, w_shape);
        c.in[2] = tensor_new(1, b_shape);
        c.node.n_inputs = 3;
        c.node.n_outputs = 1;
        int64_t *pads = malloc(4 * sizeof *pads), *strides = malloc(2 * sizeof *strides);
        for (int d = 0; d < 4; d++) pads[d] = shapes[i].pad;
        strides[0] = strides[1] = shapes[i].stride;
        attr_ints(&c, "pads", 4, pads);
        attr_ints(&c, "strides", 2, strides);
        attr_int(&c, "group", shapes[i].group);
        check_node(&c, "Conv");
        free(pads);
        free(strides);
    }
    node_case t = {.what = "ConvTranspose", .n_out = 1, .must_split = true};
    int64_t x_shape[4] = {1, 32, 20, 20}, w_shape[4] = {32, 16, 3, 3};
    static const int64_t strides[2] = {2, 2};
    t.in[0] = tensor_new(4, x_shape);
    t.in[1] = tensor_new(4, w_shape);
    t.node.n_inputs = 2;
    t.node.n_outputs = 1;
    attr_ints(&t, "strides", 2, strides);
    check_node(&t, "ConvTranspose");
}

static void pool_cases(void)
{
    static const int64_t kernel[2] = {3, 3}, strides[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    int64_t x_shape[4] = {1, 64, 56, 56};
    node_case m = {.what = "MaxPool", .n_out = 2, .must_split = true};
    m.in[0] = tensor_new(4, x_shape);
    m.node.n_inputs = 1;
    m.node.n_outputs = 2;
    attr_ints(&m, "kernel_shape", 2, kernel);
    attr_ints(&m, "strides", 2, strides);
    attr_ints(&m, "pads", 4, pads);
    check_node(&m, "MaxPool");
    node_case a = {.what = "AveragePool", .n_out = 1, .must_split = true};
    a.in[0] = tensor_new(4, x_shape);
    a.node.n_inputs = 1;
    a.node.n_outputs = 1;
    attr_ints(&a, "kernel_shape", 2, kernel);
    attr_ints(&a, "strides", 2, strides);
    attr_ints(&a, "pads", 4, pads);
    check_node(&a, "AveragePool");
    int64_t g_shape[4] = {2, 512, 14, 14};
    node_case g = {.what = "GlobalAveragePool", .n_out = 1, .must_split = true};
    g.in[0] = tensor_new(4, g_shape);
    g.node.n_inputs = 1;
    g.node.n_outputs = 1;
    check_node(&g, "GlobalAveragePool");
}

/* kiln.RMSNorm splits rows, kiln.Linear output columns. */
static void kiln_domain_cases(void)
{
    static const struct {
        int64_t rows, k, n; /* n 0: RMSNorm over rows x k */
        bool bias, split;
    } shapes[] = {
        {64, 1024, 0, false, true}, {3, 5, 0, false, false}, {6, 512, 96, true, true}, {1, 2048, 200, false, true},
        {2, 64, 3, true, false},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        bool linear = shapes[i].n > 0;
        node_case c = {.what = linear ? "kiln.Linear" : "kiln.RMSNorm", .n_out = 1, .must_split = shapes[i].split};
        c.node.domain = KILN_DOMAIN_KILN;
        int64_t x_shape[2] = {shapes[i].rows, shapes[i].k}, w_shape[2] = {shapes[i].n, shapes[i].k};
        int64_t b_shape[1] = {shapes[i].n};
        c.in[0] = tensor_new(2, x_shape);
        c.in[1] = linear ? tensor_new(2, w_shape) : tensor_new(1, &shapes[i].k);
        c.in[2] = shapes[i].bias ? tensor_new(1, b_shape) : NULL;
        c.node.n_inputs = shapes[i].bias ? 3 : 2;
        c.node.n_outputs = 1;
        check_node(&c, linear ? "Linear" : "RMSNorm");
    }
}

int main(void)
{
    if (kiln_threadpool_create(kiln_allocator_default(), MAX_THREADS, &pool) != KILN_OK) {
        fprintf(stderr, "FAIL: cannot create a thread pool\n");
        return 1;
    }
    gemm_cases();
    matmul_cases();
    conv_cases();
    pool_cases();
    kiln_domain_cases();
    kiln_threadpool_destroy(pool);
    printf("test_portable_threads: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
