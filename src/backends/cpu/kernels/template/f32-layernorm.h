/* f32-layernorm.h — TEMPLATE: the LAYERNORM step of an ISA, defining KILN_CPU_ISA(f32_layernorm);
 * include after the ISA's vector layer.
 *
 * Layer: backends/cpu/kernels (template). As generic/f32-layernorm-generic.c: per row the mean,
 * then the mean of squared deviations from it (two passes, population variance), epsilon added
 * under the square root (RMS normalisation: mean 0, one pass); the sums run in float lanes,
 * 1 / sqrt in double. x == y is allowed. With a residual r the row x + r (rounded to float, as
 * the Add it replaces) is formed in y first and normalised there.
 * The float sums overflow where the reference's double ones do not only for |x| past ~1e19.
 */
#include <math.h>

/* Sum of a row in float lanes. */
static float row_sum(const float *x, size_t n, float shift, bool square)
{
    const vf s = vf_set1(shift);
    vf acc = vf_zero();
    size_t i = 0;
    for (; i + VF_WIDTH <= n; i += VF_WIDTH) {
        vf d = vf_sub(vf_loadu(x + i), s);
        acc = square ? vf_fmadd(d, d, acc) : vf_add(acc, d);
    }
    if (i < n) {
        vf d = vf_select(vm_first_mask(n - i), vf_zero(), vf_sub(vf_load_part(x + i, n - i), s));
        acc = square ? vf_fmadd(d, d, acc) : vf_add(acc, d);
    }
    return vf_reduce_add(acc);
}

typedef struct layernorm_job {
    const kiln_cpu_layernorm_params *p;
    const float *x, *scale, *bias, *residual;
    float *y;
} layernorm_job;

/* y = x + r over a row of n. */
static void add_rows(const float *x, const float *r, float *y, size_t n)
{
    size_t i = 0;
    for (; i + VF_WIDTH <= n; i += VF_WIDTH) vf_storeu(y + i, vf_add(vf_loadu(x + i), vf_loadu(r + i)));
    if (i < n) vf_store_part(y + i, vf_add(vf_load_part(x + i, n - i), vf_load_part(r + i, n - i)), n - i);
}

/* Rows [lo, hi). */
static void layernorm_rows(const void *ctx, int64_t lo, int64_t hi)
{
    const layernorm_job *job = ctx;
    const kiln_cpu_layernorm_params *p = job->p;
    const float *x = job->x, *scale = job->scale, *bias = job->bias;
    float *y = job->y;
    size_t n = (size_t)p->n;
    for (int64_t r = lo; r < hi; r++) {
        const float *xr = x + (size_t)r * n;
        float *yr = y + (size_t)r * n;
        if (job->residual) {
            add_rows(xr, job->residual + (size_t)r * n, yr, n);
            xr = yr;
        }
        /* Two passes as the reference: the mean, then squares of deviations from it. The mean
           sums deviations from the row's first element: a row far from zero relative to its
           spread (x in [1000, 1001]) would otherwise lose the spread to float rounding of the
           large sum, which the reference's double sums keep. */
        float mean = p->rms ? 0.0f : xr[0] + row_sum(xr, n, xr[0], false) / (float)n;
        float var = row_sum(xr, n, mean, true) / (float)n;
        const vf vmean = vf_set1(mean), inv = vf_set1((float)(1.0 / sqrt((double)var + (double)p->epsilon)));
        size_t i = 0;
        for (; i + VF_WIDTH <= n; i += VF_WIDTH) {
            vf v = vf_mul(vf_sub(vf_loadu(xr + i), vmean), inv), b = bias ? vf_loadu(bias + i) : vf_zero();
            vf_storeu(yr + i, vf_fmadd(v, vf_loadu(scale + i), b));
        }
        if (i < n) {
            size_t t = n - i;
            vf v = vf_mul(vf_sub(vf_load_part(xr + i, t), vmean), inv), b = bias ? vf_load_part(bias + i, t) : vf_zero();
            vf_store_part(yr + i, vf_fmadd(v, vf_load_part(scale + i, t), b), t);
        }
    }
}

kiln_status KILN_CPU_ISA(f32_layernorm)(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                        kiln_cpu_exec *exec)
{
    const kiln_cpu_layernorm_params *p = params;
    if (p->n == 0 || p->outer == 0) return KILN_OK; /* empty: no row to read, however many */
    layernorm_job j = {p, in[0]->data, in[1]->data, p->has_bias ? in[2]->data : NULL,
                       p->has_residual ? in[3]->data : NULL, out[0]->data};
    kiln_cpu_parallel_rows(exec, p->outer, p->n, KILN_CPU_ROWS_GRAIN, layernorm_rows, &j);
    return KILN_OK;
}
