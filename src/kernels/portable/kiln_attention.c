/* kiln_attention.c — kiln.Attention (domain KILN_DOMAIN_KILN, opset 1): multi-head attention
 * with grouped KV heads over a KV cache and the new rows, under an additive mask.
 *
 * Layer: kernels/portable (kiln domain; registered in kiln_domain.c). Semantics: docs/llm.md
 * "kiln ops". Keys j run over the C cache rows and then the T new rows; a key whose mask is -inf
 * is skipped (neither its dot product nor its exp is computed), so a masked cache slot may hold
 * anything, even NaN; a query whose keys are all masked gives zeros.
 */
#include <math.h>
#include <string.h>

#include "core/diag.h"
#include "kernels/portable/kiln_domain_ops.h"

typedef struct attention_params {
    int64_t heads, kv_heads, head_dim;
    int64_t t, c;               /* new rows, cache rows */
    float scale;
} attention_params;

static kiln_status attention_parse(const kiln_node *node, const kiln_tensor *q, const kiln_tensor *kc,
                                   attention_params *p, char *why, size_t why_size)
{
    if (!kiln_domain_attr_int(node, "num_heads", &p->heads) || p->heads <= 0 ||
        !kiln_domain_attr_int(node, "num_kv_heads", &p->kv_heads) || p->kv_heads <= 0)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "num_heads and num_kv_heads must be given, INTs > 0");
    if (p->heads % p->kv_heads != 0)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size,
                           "num_heads %lld is not a multiple of num_kv_heads %lld", (long long)p->heads,
                           (long long)p->kv_heads);
    if (q->shape[1] % p->heads != 0 || q->shape[1] == 0)
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "Q has shape %s, not %lld heads of one size > 0",
                           kiln_domain_shape_of(q).text, (long long)p->heads);
    p->head_dim = q->shape[1] / p->heads;
    p->t = q->shape[0];
    p->c = kc->shape[0];
    p->scale = kiln_node_attr_float(node, "scale", (float)(1.0 / sqrt((double)p->head_dim)));
    if (!isfinite(p->scale))
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "scale is %g, expected a finite value", p->scale);
    return KILN_OK;
}

/* KILN_OK when t is [rows, cols]; else KILN_ERROR_SHAPE_MISMATCH naming it. */
static kiln_status expect_shape(const kiln_tensor *t, const char *what, int64_t rows, int64_t cols, char *why,
                                size_t why_size)
{
    if (t->shape[0] == rows && t->shape[1] == cols) return KILN_OK;
    return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "%s has shape %s, expected [%lld, %lld]", what,
                       kiln_domain_shape_of(t).text, (long long)rows, (long long)cols);
}

static kiln_status attention_check(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size, char *why, size_t why_size)
{
    static const char *const names[6] = {"Q", "K", "V", "KCache", "VCache", "Mask"};
    if (node->n_inputs != 6 || !out[0])
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size,
                           "expected inputs Q, K, V, KCache, VCache, Mask and output Y");
    for (int i = 0; i < 6; i++) {
        kiln_status st = kiln_domain_check_f32(in[i], 2, names[i], why, why_size);
        if (st != KILN_OK) return st;
    }
    const kiln_tensor *q = in[0];
    attention_params p;
    kiln_status st = attention_parse(node, q, in[3], &p, why, why_size);
    if (st != KILN_OK) return st;
    int64_t kv_width = p.kv_heads * p.head_dim;
    const int64_t rows[6] = {p.t, p.t, p.t, p.c, p.c, p.t}, cols[6] = {0, kv_width, kv_width, kv_width, kv_width, p.c + p.t};
    for (int i = 1; i < 6 && st == KILN_OK; i++) st = expect_shape(in[i], names[i], rows[i], cols[i], why, why_size);
    if (st != KILN_OK) return st;
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, 2, q->shape);
    *scratch_size = (size_t)(p.c + p.t) * sizeof(float); /* the scores of one query */
    return KILN_OK;
}

KILN_DOMAIN_INFER_AND_EXPLAIN(attention)

kiln_status kiln_attention_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    attention_params p;
    kiln_status st = attention_parse(node, in[0], in[3], &p, NULL, 0);
    if (st != KILN_OK) return st;
    const float *q = in[0]->data, *k = in[1]->data, *v = in[2]->data, *kc = in[3]->data, *vc = in[4]->data;
    const float *mask = in[5]->data;
    float *y = out[0]->data, *scores = ctx->scratch; /* (c + t) */
    int64_t width = p.heads * p.head_dim, kv_width = p.kv_heads * p.head_dim, group = p.heads / p.kv_heads;
    int64_t n_keys = p.c + p.t;

    for (int64_t t = 0; t < p.t; t++) {
        const float *mask_row = mask + t * n_keys;
        for (int64_t h = 0; h < p.heads; h++) {
            const float *qh = q + t * width + h * p.head_dim;
            float *yh = y + t * width + h * p.head_dim;
            int64_t kv_offset = (h / group) * p.head_dim;
            float max = -INFINITY;
            for (int64_t j = 0; j < n_keys; j++) {
                if (mask_row[j] == -INFINITY) continue;
                const float *key = j < p.c ? kc + j * kv_width : k + (j - p.c) * kv_width;
                scores[j] = p.scale * kiln_domain_dot(qh, key + kv_offset, p.head_dim) + mask_row[j];
                if (scores[j] > max) max = scores[j];
            }
            memset(yh, 0, (size_t)p.head_dim * sizeof(float));
            if (max == -INFINITY) continue; /* every key masked (or every score -inf): zeros */
            double sum = 0.0;
            for (int64_t j = 0; j < n_keys; j++) {
                if (mask_row[j] == -INFINITY) continue;
                float e = expf(scores[j] - max);
                sum += e;
                const float *value = (j < p.c ? vc + j * kv_width : v + (j - p.c) * kv_width) + kv_offset;
                for (int64_t i = 0; i < p.head_dim; i++) yh[i] += e * value[i];
            }
            float inv = (float)(1.0 / sum);
            for (int64_t i = 0; i < p.head_dim; i++) yh[i] *= inv;
        }
    }
    return KILN_OK;
}
