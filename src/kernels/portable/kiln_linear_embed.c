/* kiln_linear_embed.c — kiln.Linear and kiln.Embed (domain KILN_DOMAIN_KILN, opset 1): the two
 * ops that read weight matrices stored as F32, F16, BF16 or ggml blocks (Q8_0, Q4_0, Q4_K, Q6_K).
 *
 * Layer: kernels/portable (kiln domain; registered in kiln_domain.c). Semantics: docs/llm.md
 * "kiln ops". Linear walks each weight row once, a chunk of whole blocks at a time: the chunk is
 * decoded into a small buffer on the stack and dotted with the same columns of every X row, the
 * partial sums accumulating in Y itself. So a weight is read once per call whatever the number
 * of X rows, needs no scratch, and output columns split over the threads with no shared state.
 */
#include <string.h>

#include "kernels/portable/kiln_domain_ops.h"
#include "kernels/portable/parallel.h"
#include "kernels/portable/quant/quant_rows.h"

#define LINEAR_CHUNK 256 /* elements decoded at once: one Q4_K/Q6_K super-block, 8 Q8_0/Q4_0 blocks */
#define LINEAR_GRAIN ((int64_t)1 << 16)

/* ---- Linear(X [..., K], W [N, K] [, B f32 [N]]) -> Y f32 [..., N] ---- */

kiln_status kiln_linear_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size)
{
    (void)scratch_size;
    if (node->n_inputs < 2 || node->n_inputs > 3 || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    const kiln_tensor *x = in[0], *w = in[1], *b = node->n_inputs > 2 ? in[2] : NULL;
    size_t row_size;
    kiln_status st = kiln_domain_check_f32(x, 0);
    if (st == KILN_OK) st = kiln_domain_check_weight(w, &row_size);
    if (st == KILN_OK && b) st = kiln_domain_check_f32(b, 1);
    if (st != KILN_OK) return st;
    if (w->shape[1] != x->shape[x->rank - 1] || (b && b->shape[0] != w->shape[0])) return KILN_ERROR_SHAPE_MISMATCH;
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->rank - 1] = w->shape[0];
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, x->rank, shape);
    return KILN_OK;
}

typedef struct linear_job {
    const float *x, *bias;      /* x (m, k); bias (n) or NULL */
    const uint8_t *w;           /* (n) rows of row_size bytes */
    float *y;                   /* (m, n) */
    kiln_dtype dtype;
    int64_t m, n, k;
    size_t row_size;
    int64_t chunk;              /* elements decoded at once, whole blocks */
    size_t chunk_bytes;
} linear_job;

static void linear_columns(const void *arg, int64_t lo, int64_t hi)
{
    const linear_job *j = arg;
    float w[LINEAR_CHUNK];
    for (int64_t col = lo; col < hi; col++) {
        float init = j->bias ? j->bias[col] : 0.0f;
        for (int64_t r = 0; r < j->m; r++) j->y[r * j->n + col] = init;
        const uint8_t *src = j->w + (size_t)col * j->row_size;
        for (int64_t k0 = 0; k0 < j->k; k0 += j->chunk, src += j->chunk_bytes) {
            int64_t len = j->k - k0 < j->chunk ? j->k - k0 : j->chunk;
            kiln_dequantize_row(j->dtype, src, w, len); /* cannot fail: infer checked dtype and K */
            for (int64_t r = 0; r < j->m; r++) {
                const float *x = j->x + r * j->k + k0;
                float sum = 0.0f;
                for (int64_t i = 0; i < len; i++) sum += x[i] * w[i];
                j->y[r * j->n + col] += sum;
            }
        }
    }
}

kiln_status kiln_linear_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0], *w = in[1];
    uint32_t block_elements, block_bytes;
    kiln_status st = kiln_dtype_block(w->dtype, &block_elements, &block_bytes);
    if (st != KILN_OK) return st;
    linear_job job = {
        .x = x->data, .bias = node->n_inputs > 2 && in[2] ? in[2]->data : NULL, .w = w->data, .y = out[0]->data,
        .dtype = w->dtype, .n = w->shape[0], .k = w->shape[1],
        .chunk = LINEAR_CHUNK / block_elements * block_elements,
    };
    st = kiln_dtype_row_size(w->dtype, w->shape[1], &job.row_size);
    if (st != KILN_OK) return st;
    job.chunk_bytes = (size_t)(job.chunk / block_elements) * block_bytes;
    job.m = job.k ? kiln_numel(x) / job.k : kiln_numel(out[0]) / (job.n ? job.n : 1);
    if (job.m == 0 || job.n == 0) return KILN_OK;
    kiln_par_rows(ctx, job.n, job.m * (job.k ? job.k : 1), LINEAR_GRAIN, linear_columns, &job);
    return KILN_OK;
}

/* ---- Embed(W [V, D], I i32/i64 [...]) -> Y f32 [..., D] ---- */

kiln_status kiln_embed_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             size_t *scratch_size)
{
    (void)scratch_size;
    if (node->n_inputs != 2 || !out[0] || !in[1]) return KILN_ERROR_INVALID_ARGUMENT;
    const kiln_tensor *w = in[0], *ids = in[1];
    size_t row_size;
    kiln_status st = kiln_domain_check_weight(w, &row_size);
    if (st != KILN_OK) return st;
    if (ids->dtype != KILN_DTYPE_I32 && ids->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
    if (ids->rank + 1 > KILN_MAX_RANK) return KILN_ERROR_SHAPE_MISMATCH;
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, ids->shape, ids->rank * sizeof shape[0]);
    shape[ids->rank] = w->shape[1];
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, ids->rank + 1, shape);
    return KILN_OK;
}

kiln_status kiln_embed_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                           kiln_kernel_ctx *ctx)
{
    (void)node;
    (void)ctx;
    const kiln_tensor *w = in[0], *ids = in[1];
    size_t row_size;
    kiln_status st = kiln_dtype_row_size(w->dtype, w->shape[1], &row_size);
    if (st != KILN_OK) return st;
    int64_t n = kiln_numel(ids), d = w->shape[1];
    for (int64_t t = 0; t < n; t++) {
        int64_t id = kiln_tensor_get_i64(ids, t);
        if (id < 0 || id >= w->shape[0]) return KILN_ERROR_INVALID_VALUE;
        st = kiln_dequantize_row(w->dtype, (const uint8_t *)w->data + (size_t)id * row_size,
                                 (float *)out[0]->data + t * d, d);
        if (st != KILN_OK) return st;
    }
    return KILN_OK;
}
