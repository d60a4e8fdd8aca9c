/* kiln_linear_embed.c — kiln.Linear and kiln.Embed (domain KILN_DOMAIN_KILN, opset 1): the two
 * ops that read weight matrices stored as F32, F16, BF16 or ggml blocks (Q8_0, Q4_0, Q4_K, Q6_K).
 *
 * Layer: kernels/portable (kiln domain; registered in kiln_domain.c). Semantics: docs/llm.md
 * "kiln ops". Linear walks each weight row once, a chunk of whole blocks at a time: the chunks of
 * 8 rows are decoded into a small buffer on the stack (8 KiB) and dotted with the same columns of
 * every X row, the partial sums accumulating in Y itself. So a weight is read once per call
 * whatever the number of X rows, each X chunk once per 8 outputs, no scratch is needed, and
 * output columns split over the threads with no shared state. An output's sum is the same
 * sequence of chunk dots whatever the grouping or split, so its bits never depend on threads.
 */
#include <string.h>

#include "core/diag.h"
#include "kernels/portable/kiln_domain_ops.h"
#include "kernels/portable/parallel.h"
#include "kernels/portable/quant/quant_rows.h"

#define LINEAR_CHUNK 256 /* elements decoded at once: one Q4_K/Q6_K super-block, 8 Q8_0/Q4_0 blocks */
#define LINEAR_GROUP 8    /* weight rows decoded side by side, so each X chunk is read once per 8 outputs */
#define LINEAR_GRAIN ((int64_t)1 << 16)

/* ---- Linear(X [..., K], W [N, K] [, B f32 [N]]) -> Y f32 [..., N] ---- */

static kiln_status linear_check(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size, char *why, size_t why_size)
{
    (void)scratch_size;
    if (node->n_inputs < 2 || node->n_inputs > 3 || !out[0])
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "expected inputs X, W [, B] and output Y");
    const kiln_tensor *x = in[0], *w = in[1], *b = node->n_inputs > 2 ? in[2] : NULL;
    size_t row_size;
    kiln_status st = kiln_domain_check_f32(x, 0, "X", why, why_size);
    if (st == KILN_OK) st = kiln_domain_check_weight(w, &row_size, why, why_size);
    if (st == KILN_OK && b) st = kiln_domain_check_f32(b, 1, "B", why, why_size);
    if (st != KILN_OK) return st;
    if (w->shape[1] != x->shape[x->rank - 1])
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "W has shape %s, expected [N, %lld] (X is %s)",
                           kiln_domain_shape_of(w).text, (long long)x->shape[x->rank - 1], kiln_domain_shape_of(x).text);
    if (b && b->shape[0] != w->shape[0])
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "B has shape %s, expected [%lld] (W is %s)",
                           kiln_domain_shape_of(b).text, (long long)w->shape[0], kiln_domain_shape_of(w).text);
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->rank - 1] = w->shape[0];
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, x->rank, shape);
    return KILN_OK;
}

KILN_DOMAIN_INFER_AND_EXPLAIN(linear)

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
    float w[LINEAR_GROUP][LINEAR_CHUNK];
    for (int64_t c0 = lo; c0 < hi; c0 += LINEAR_GROUP) {
        int64_t group = hi - c0 < LINEAR_GROUP ? hi - c0 : LINEAR_GROUP;
        for (int64_t r = 0; r < j->m; r++)
            for (int64_t g = 0; g < group; g++) j->y[r * j->n + c0 + g] = j->bias ? j->bias[c0 + g] : 0.0f;
        for (int64_t k0 = 0, chunk = 0; k0 < j->k; k0 += j->chunk, chunk++) {
            int64_t len = j->k - k0 < j->chunk ? j->k - k0 : j->chunk;
            for (int64_t g = 0; g < group; g++) /* cannot fail: infer checked dtype and K */
                kiln_dequantize_row(j->dtype, j->w + (size_t)(c0 + g) * j->row_size + (size_t)chunk * j->chunk_bytes,
                                    w[g], len);
            for (int64_t r = 0; r < j->m; r++) {
                const float *x = j->x + r * j->k + k0;
                float *y = j->y + r * j->n + c0;
                for (int64_t g = 0; g < group; g++) y[g] += kiln_domain_dot(x, w[g], len);
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

static kiln_status embed_check(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               size_t *scratch_size, char *why, size_t why_size)
{
    (void)scratch_size;
    if (node->n_inputs != 2 || !out[0] || !in[1])
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "expected inputs W, I and output Y");
    const kiln_tensor *w = in[0], *ids = in[1];
    size_t row_size;
    kiln_status st = kiln_domain_check_weight(w, &row_size, why, why_size);
    if (st != KILN_OK) return st;
    if (ids->dtype != KILN_DTYPE_I32 && ids->dtype != KILN_DTYPE_I64)
        return kiln_reject(KILN_ERROR_DTYPE_MISMATCH, why, why_size, "I is %s, expected i32 or i64",
                           kiln_dtype_name(ids->dtype));
    if (ids->rank + 1 > KILN_MAX_RANK)
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "I has rank %u: Y would have more than %d dims",
                           ids->rank, KILN_MAX_RANK);
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, ids->shape, ids->rank * sizeof shape[0]);
    shape[ids->rank] = w->shape[1];
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, ids->rank + 1, shape);
    return KILN_OK;
}

KILN_DOMAIN_INFER_AND_EXPLAIN(embed)

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
