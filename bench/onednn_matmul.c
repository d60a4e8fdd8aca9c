/* onednn_matmul.c — oneDNN's bf16 matmul through its C API (see onednn_matmul.h).
 * Layer: bench; compiled only when CMake found oneDNN. */
#include "onednn_matmul.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include <oneapi/dnnl/dnnl.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "bench_util.h"

struct bench_onednn_matmul {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_t matmul;
    dnnl_memory_t src, weights, dst;
    uint16_t *a16;                  /* A in bf16, row-major (the src memory's buffer) */
};

static char describe[160];

const char *bench_onednn_describe(void)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(describe, sizeof describe, "oneDNN %d.%d.%d (OpenMP runtime)", v->major, v->minor, v->patch);
    return describe;
}

bool bench_onednn_available(void) { return true; }

void bench_onednn_set_threads(int n) { omp_set_num_threads(n < 1 ? 1 : n); }

#define TRY(call)                                                                                \
    do {                                                                                         \
        dnnl_status_t s_ = (call);                                                               \
        if (s_ != dnnl_success) {                                                                \
            fprintf(stderr, "kiln_gemm_bench: oneDNN: %s failed (status %d)\n", #call, (int)s_);  \
            goto fail;                                                                           \
        }                                                                                        \
    } while (0)

static uint16_t *to_bf16(const float *x, size_t n)
{
    uint16_t *y = bench_alloc(n * sizeof(uint16_t));
    for (size_t i = 0; y && i < n; i++) y[i] = kiln_cpu_f32_to_bf16(x[i]);
    return y;
}

bench_onednn_matmul *bench_onednn_prepare(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C)
{
    bench_onednn_matmul *m = calloc(1, sizeof *m);
    uint16_t *b16 = NULL;
    dnnl_primitive_desc_t pd = NULL, reorder_pd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_memory_t b_user = NULL;
    if (!m) return NULL;
    m->a16 = to_bf16(A, (size_t)(M * K));
    b16 = to_bf16(B, (size_t)(K * N));
    if (!m->a16 || !b16) goto fail;
    TRY(dnnl_engine_create(&m->engine, dnnl_cpu, 0));
    TRY(dnnl_stream_create(&m->stream, m->engine, dnnl_stream_default_flags));
    dnnl_memory_desc_t src_md, wei_any, wei_user, dst_md;
    const dnnl_dims_t a_dims = {M, K}, b_dims = {K, N}, c_dims = {M, N};
    TRY(dnnl_memory_desc_init_by_tag(&src_md, 2, a_dims, dnnl_bf16, dnnl_ab));
    TRY(dnnl_memory_desc_init_by_tag(&wei_any, 2, b_dims, dnnl_bf16, dnnl_format_tag_any));
    TRY(dnnl_memory_desc_init_by_tag(&wei_user, 2, b_dims, dnnl_bf16, dnnl_ab));
    TRY(dnnl_memory_desc_init_by_tag(&dst_md, 2, c_dims, dnnl_f32, dnnl_ab));
    dnnl_matmul_desc_t desc;
    TRY(dnnl_matmul_desc_init(&desc, &src_md, &wei_any, NULL, &dst_md));
    TRY(dnnl_primitive_desc_create(&pd, &desc, NULL, m->engine, NULL));
    const dnnl_memory_desc_t *wei_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    TRY(dnnl_memory_create(&m->src, &src_md, m->engine, m->a16));
    TRY(dnnl_memory_create(&m->dst, &dst_md, m->engine, C));
    TRY(dnnl_memory_create(&m->weights, wei_md, m->engine, DNNL_MEMORY_ALLOCATE));
    TRY(dnnl_memory_create(&b_user, &wei_user, m->engine, b16));
    /* B into the matmul's own layout, once: the ahead-of-time packing kiln's weights get too. */
    TRY(dnnl_reorder_primitive_desc_create(&reorder_pd, &wei_user, m->engine, wei_md, m->engine, NULL));
    TRY(dnnl_primitive_create(&reorder, reorder_pd));
    dnnl_exec_arg_t reorder_args[2] = {{DNNL_ARG_FROM, b_user}, {DNNL_ARG_TO, m->weights}};
    TRY(dnnl_primitive_execute(reorder, m->stream, 2, reorder_args));
    TRY(dnnl_stream_wait(m->stream));
    TRY(dnnl_primitive_create(&m->matmul, pd));
    dnnl_primitive_destroy(reorder);
    dnnl_primitive_desc_destroy(reorder_pd);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(b_user);
    free(b16);
    return m;
fail:
    if (reorder) dnnl_primitive_destroy(reorder);
    if (reorder_pd) dnnl_primitive_desc_destroy(reorder_pd);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (b_user) dnnl_memory_destroy(b_user);
    free(b16);
    bench_onednn_release(m);
    return NULL;
}

bool bench_onednn_run(bench_onednn_matmul *m)
{
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, m->src}, {DNNL_ARG_WEIGHTS, m->weights}, {DNNL_ARG_DST, m->dst}};
    return dnnl_primitive_execute(m->matmul, m->stream, 3, args) == dnnl_success &&
           dnnl_stream_wait(m->stream) == dnnl_success;
}

void bench_onednn_release(bench_onednn_matmul *m)
{
    if (!m) return;
    if (m->matmul) dnnl_primitive_destroy(m->matmul);
    if (m->src) dnnl_memory_destroy(m->src);
    if (m->weights) dnnl_memory_destroy(m->weights);
    if (m->dst) dnnl_memory_destroy(m->dst);
    if (m->stream) dnnl_stream_destroy(m->stream);
    if (m->engine) dnnl_engine_destroy(m->engine);
    free(m->a16);
    free(m);
}
