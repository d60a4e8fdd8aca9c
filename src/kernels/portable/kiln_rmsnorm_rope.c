/* kiln_rmsnorm_rope.c — kiln.RMSNorm and kiln.RoPE (domain KILN_DOMAIN_KILN, opset 1).
 *
 * Layer: kernels/portable (kiln domain; registered in kiln_domain.c). Semantics: docs/llm.md
 * "kiln ops". RMSNorm sums squares in double; RoPE computes each angle in double from the
 * position (no running product over pairs, so a pair's angle does not depend on the others).
 */
#include <math.h>

#include "core/diag.h"
#include "kernels/portable/kiln_domain_ops.h"
#include "kernels/portable/parallel.h"

#define RMSNORM_GRAIN ((int64_t)1 << 14)

/* ---- RMSNorm(X [..., D], W [D]) -> Y [..., D] ---- */

static kiln_status rmsnorm_epsilon(const kiln_node *node, double *epsilon, char *why, size_t why_size)
{
    *epsilon = kiln_node_attr_float(node, "epsilon", 1e-5f);
    if (*epsilon >= 0.0 && isfinite(*epsilon)) return KILN_OK;
    return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "epsilon is %g, expected a finite value >= 0",
                       *epsilon);
}

static kiln_status rmsnorm_check(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size, char *why, size_t why_size)
{
    (void)scratch_size;
    if (node->n_inputs != 2 || !out[0])
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "expected inputs X, W and output Y");
    const kiln_tensor *x = in[0], *w = in[1];
    kiln_status st = kiln_domain_check_f32(x, 0, "X", why, why_size);
    if (st == KILN_OK) st = kiln_domain_check_f32(w, 1, "W", why, why_size);
    if (st != KILN_OK) return st;
    if (w->shape[0] != x->shape[x->rank - 1])
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "W has shape %s, expected [%lld] (X is %s)",
                           kiln_domain_shape_of(w).text, (long long)x->shape[x->rank - 1], kiln_domain_shape_of(x).text);
    double epsilon;
    st = rmsnorm_epsilon(node, &epsilon, why, why_size);
    if (st != KILN_OK) return st;
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, x->rank, x->shape);
    return KILN_OK;
}

KILN_DOMAIN_INFER_AND_EXPLAIN(rmsnorm)

typedef struct rmsnorm_job {
    const float *x, *w;
    float *y;
    int64_t d;
    double epsilon;
} rmsnorm_job;

static void rmsnorm_rows(const void *arg, int64_t lo, int64_t hi)
{
    const rmsnorm_job *j = arg;
    for (int64_t r = lo; r < hi; r++) {
        const float *x = j->x + r * j->d;
        float *y = j->y + r * j->d;
        double sum = 0.0;
        for (int64_t i = 0; i < j->d; i++) sum += (double)x[i] * x[i];
        float inv = (float)(1.0 / sqrt(sum / (double)j->d + j->epsilon));
        for (int64_t i = 0; i < j->d; i++) y[i] = x[i] * inv * j->w[i];
    }
}

kiln_status kiln_rmsnorm_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    rmsnorm_job job = {.x = x->data, .w = in[1]->data, .y = out[0]->data, .d = x->shape[x->rank - 1]};
    kiln_status st = rmsnorm_epsilon(node, &job.epsilon, NULL, 0);
    if (st != KILN_OK) return st;
    if (job.d == 0) return KILN_OK;
    kiln_par_rows(ctx, kiln_numel(x) / job.d, job.d, RMSNORM_GRAIN, rmsnorm_rows, &job);
    return KILN_OK;
}

/* ---- RoPE(X [T, H * head_dim], P i32 [T]) -> Y [T, H * head_dim] ---- */

typedef struct rope_params {
    int64_t head_dim, rope_dim;
    double base, freq_scale;
    bool neox;
} rope_params;

static kiln_status rope_parse(const kiln_node *node, rope_params *p, char *why, size_t why_size)
{
    int64_t neox = 0;
    if (!kiln_domain_attr_int(node, "head_dim", &p->head_dim) || p->head_dim <= 0)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "head_dim must be given, an INT > 0");
    if (!kiln_domain_attr_int(node, "rope_dim", &p->rope_dim)) p->rope_dim = p->head_dim;
    if (p->rope_dim < 0 || p->rope_dim % 2 != 0 || p->rope_dim > p->head_dim)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size,
                           "rope_dim is %lld, expected an even number from 0 to head_dim %lld", (long long)p->rope_dim,
                           (long long)p->head_dim);
    kiln_domain_attr_int(node, "neox", &neox);
    if (neox != 0 && neox != 1)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "neox is %lld, expected 0 or 1", (long long)neox);
    p->neox = neox == 1;
    p->base = kiln_node_attr_float(node, "base", 10000.0f);
    p->freq_scale = kiln_node_attr_float(node, "freq_scale", 1.0f);
    if (!(p->base > 0.0) || !isfinite(p->base) || !isfinite(p->freq_scale))
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size,
                           "base %g and freq_scale %g: expected a finite base > 0 and a finite freq_scale", p->base,
                           p->freq_scale);
    return KILN_OK;
}

static kiln_status rope_check(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size, char *why, size_t why_size)
{
    if (node->n_inputs != 2 || !out[0] || !in[1])
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "expected inputs X, P and output Y");
    const kiln_tensor *x = in[0], *pos = in[1];
    kiln_status st = kiln_domain_check_f32(x, 2, "X", why, why_size);
    if (st != KILN_OK) return st;
    if (pos->dtype != KILN_DTYPE_I32 && pos->dtype != KILN_DTYPE_I64)
        return kiln_reject(KILN_ERROR_DTYPE_MISMATCH, why, why_size, "P is %s, expected i32 or i64",
                           kiln_dtype_name(pos->dtype));
    if (pos->rank != 1 || pos->shape[0] != x->shape[0])
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "P has shape %s, expected [%lld] (X is %s)",
                           kiln_domain_shape_of(pos).text, (long long)x->shape[0], kiln_domain_shape_of(x).text);
    rope_params p;
    st = rope_parse(node, &p, why, why_size);
    if (st != KILN_OK) return st;
    if (x->shape[1] % p.head_dim != 0)
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "X has shape %s, not heads of head_dim %lld",
                           kiln_domain_shape_of(x).text, (long long)p.head_dim);
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, 2, x->shape);
    *scratch_size = (size_t)p.rope_dim * sizeof(float); /* cos and sin of each pair of a row */
    return KILN_OK;
}

KILN_DOMAIN_INFER_AND_EXPLAIN(rope)

kiln_status kiln_rope_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                          kiln_kernel_ctx *ctx)
{
    rope_params p;
    kiln_status st = rope_parse(node, &p, NULL, 0);
    if (st != KILN_OK) return st;
    const kiln_tensor *x = in[0];
    int64_t rows = x->shape[0], width = x->shape[1], half = p.rope_dim / 2;
    float *cos_sin = ctx->scratch; /* (half, 2) */
    for (int64_t t = 0; t < rows; t++) {
        double position = (double)kiln_tensor_get_i64(in[1], t) * p.freq_scale;
        for (int64_t i = 0; i < half; i++) {
            double theta = position * pow(p.base, -2.0 * (double)i / (double)p.rope_dim);
            cos_sin[2 * i] = (float)cos(theta);
            cos_sin[2 * i + 1] = (float)sin(theta);
        }
        const float *xr = (const float *)x->data + t * width;
        float *yr = (float *)out[0]->data + t * width;
        for (int64_t h = 0; h < width; h += p.head_dim) {
            const float *xh = xr + h;
            float *yh = yr + h;
            for (int64_t i = 0; i < half; i++) {
                int64_t ia = p.neox ? i : 2 * i, ib = p.neox ? i + half : 2 * i + 1;
                float a = xh[ia], b = xh[ib], c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
                yh[ia] = a * c - b * s;
                yh[ib] = a * s + b * c;
            }
            for (int64_t i = p.rope_dim; i < p.head_dim; i++) yh[i] = xh[i];
        }
    }
    return KILN_OK;
}
