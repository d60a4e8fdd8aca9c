/* f32-softmax-generic.c — the SOFTMAX step in plain C.
 *
 * Layer: backends/cpu/kernels/generic. As the portable kernel (softmax.c): the row maximum
 * (NaN never wins it) is subtracted before exp, and the sum is kept in double. Each lane is
 * walked at its stride and every element read before it is written, so x == y is allowed.
 */
#include <math.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

/* One softmax lane: n elements at stride s. */
static void softmax_lane(const float *x, float *y, int64_t n, int64_t s, bool log_softmax)
{
    float m = -INFINITY;
    for (int64_t j = 0; j < n; j++) m = x[j * s] > m ? x[j * s] : m;
    double sum = 0.0;
    if (log_softmax) {
        for (int64_t j = 0; j < n; j++) sum += expf(x[j * s] - m);
        float log_sum = (float)log(sum);
        for (int64_t j = 0; j < n; j++) y[j * s] = x[j * s] - m - log_sum;
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        float e = expf(x[j * s] - m);
        y[j * s] = e;
        sum += e;
    }
    for (int64_t j = 0; j < n; j++) y[j * s] = (float)(y[j * s] / sum);
}

typedef struct softmax_job {
    const kiln_cpu_softmax_params *p;
    const float *x;
    float *y;
} softmax_job;

/* Lanes [lo, hi) of the outer x inner lanes, lane (o, i) at o * n * inner + i. */
static void softmax_lanes(const void *ctx, int64_t lo, int64_t hi)
{
    const softmax_job *j = ctx;
    const kiln_cpu_softmax_params *p = j->p;
    for (int64_t lane = lo; lane < hi; lane++) {
        int64_t base = lane / p->inner * p->n * p->inner + lane % p->inner;
        softmax_lane(j->x + base, j->y + base, p->n, p->inner, p->log != 0);
    }
}

kiln_status kiln_cpu_f32_softmax__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                          kiln_cpu_exec *exec)
{
    const kiln_cpu_softmax_params *p = params;
    /* An empty tensor: nothing to do, however large the other two counts (validation bounds only
       their product, so lanes without elements must not be walked). */
    if (p->n == 0 || p->inner == 0 || p->outer == 0) return KILN_OK;
    softmax_job j = {p, in[0]->data, out[0]->data};
    kiln_cpu_parallel_rows(exec, p->outer * p->inner, p->n, KILN_CPU_ROWS_GRAIN, softmax_lanes, &j);
    return KILN_OK;
}
