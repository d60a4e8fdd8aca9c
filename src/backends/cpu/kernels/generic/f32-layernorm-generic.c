/* f32-layernorm-generic.c — the LAYERNORM step in plain C.
 *
 * Layer: backends/cpu/kernels/generic. As the portable kernel (norm_layer.c): statistics in
 * double, the population variance of the two-pass form, epsilon added to it under the square
 * root: y = (x - mean) / sqrt(var + epsilon) * scale + bias; RMS normalisation is the same with
 * mean 0. x == y is allowed. With a residual r the row x + r (rounded to float, as the Add it
 * replaces) is formed in y first and normalised there.
 */
#include <math.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

typedef struct layernorm_job {
    const kiln_cpu_layernorm_params *p;
    const float *x, *scale, *bias, *residual;
    float *y;
} layernorm_job;

/* Rows [lo, hi). */
static void layernorm_rows(const void *ctx, int64_t lo, int64_t hi)
{
    const layernorm_job *job = ctx;
    const kiln_cpu_layernorm_params *p = job->p;
    const float *x = job->x, *scale = job->scale, *bias = job->bias;
    float *y = job->y;
    for (int64_t r = lo; r < hi; r++) {
        const float *xr = x + r * p->n;
        float *yr = y + r * p->n;
        if (job->residual) {
            for (int64_t j = 0; j < p->n; j++) yr[j] = xr[j] + job->residual[r * p->n + j];
            xr = yr;
        }
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < p->n && !p->rms; j++) mean += xr[j];
        mean /= (double)p->n;
        for (int64_t j = 0; j < p->n; j++) var += (xr[j] - mean) * (xr[j] - mean);
        var /= (double)p->n;
        double inv_std = 1.0 / sqrt(var + (double)p->epsilon);
        for (int64_t j = 0; j < p->n; j++)
            yr[j] = (float)((xr[j] - mean) * inv_std * scale[j] + (bias ? bias[j] : 0.0f));
    }
}

kiln_status kiln_cpu_f32_layernorm__generic(const void *params, const kiln_tensor *const *in,
                                            kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_layernorm_params *p = params;
    if (p->n == 0 || p->outer == 0) return KILN_OK; /* empty: no row to read, however many */
    layernorm_job j = {p, in[0]->data, in[1]->data, p->has_bias ? in[2]->data : NULL,
                       p->has_residual ? in[3]->data : NULL, out[0]->data};
    kiln_cpu_parallel_rows(exec, p->outer, p->n, KILN_CPU_ROWS_GRAIN, layernorm_rows, &j);
    return KILN_OK;
}
