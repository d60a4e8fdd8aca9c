/* f32-layernorm-generic.c — the LAYERNORM step in plain C.
 *
 * Layer: backends/cpu/kernels/generic. As the portable kernel (norm_layer.c): statistics in
 * double, the population variance of the two-pass form, epsilon added to it under the square
 * root: y = (x - mean) / sqrt(var + epsilon) * scale + bias. x == y is allowed.
 */
#include <math.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

kiln_status kiln_cpu_f32_layernorm__generic(const void *params, const kiln_tensor *const *in,
                                            kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_layernorm_params *p = params;
    const float *x = in[0]->data, *scale = in[1]->data, *bias = p->has_bias ? in[2]->data : NULL;
    float *y = out[0]->data;
    for (int64_t r = 0; r < p->outer; r++) {
        const float *xr = x + r * p->n;
        float *yr = y + r * p->n;
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < p->n; j++) mean += xr[j];
        mean /= (double)p->n;
        for (int64_t j = 0; j < p->n; j++) var += (xr[j] - mean) * (xr[j] - mean);
        var /= (double)p->n;
        double inv_std = 1.0 / sqrt(var + (double)p->epsilon);
        for (int64_t j = 0; j < p->n; j++)
            yr[j] = (float)((xr[j] - mean) * inv_std * scale[j] + (bias ? bias[j] : 0.0f));
    }
    return KILN_OK;
}
