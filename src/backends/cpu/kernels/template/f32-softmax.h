/* f32-softmax.h — TEMPLATE: the SOFTMAX step of an ISA, defining KILN_CPU_ISA(f32_softmax);
 * include after the ISA's vector layer and f32-vmath.h.
 *
 * Layer: backends/cpu/kernels (template). Softmax vectorises along the row when the row is
 * contiguous (inner == 1) and across `inner` neighbouring rows otherwise (element (o, j, i) is
 * at (o n + j) inner + i, so VF_WIDTH rows side by side are contiguous). Semantics as
 * generic/f32-softmax-generic.c: max subtracted first, NaN ignored by the max, sums in float
 * lanes. Every pass reads an element before writing it, so x == y is allowed.
 */
#include <math.h>

static void softmax_row(const float *x, float *y, size_t n, bool log_softmax)
{
    const vf neg_inf = vf_set1(-INFINITY);
    vf m = neg_inf;
    size_t i = 0;
    for (; i + VF_WIDTH <= n; i += VF_WIDTH) m = vf_max(vf_loadu(x + i), m);
    if (i < n) m = vf_max(vf_load_part_or(x + i, n - i, neg_inf), m);
    const vf vmax = vf_set1(vf_reduce_max(m));
    vf sum = vf_zero();
    for (i = 0; i + VF_WIDTH <= n; i += VF_WIDTH) {
        vf e = vmath_exp(vf_sub(vf_loadu(x + i), vmax));
        if (!log_softmax) vf_storeu(y + i, e);
        sum = vf_add(sum, e);
    }
    if (i < n) {
        vf e = vmath_exp(vf_sub(vf_load_part(x + i, n - i), vmax));
        if (!log_softmax) vf_store_part(y + i, e, n - i);
        sum = vf_add(sum, vf_select(vm_first_mask(n - i), vf_zero(), e));
    }
    float total = vf_reduce_add(sum);
    if (log_softmax) {
        const vf shift = vf_add(vmax, vf_set1(logf(total)));
        for (i = 0; i + VF_WIDTH <= n; i += VF_WIDTH) vf_storeu(y + i, vf_sub(vf_loadu(x + i), shift));
        if (i < n) vf_store_part(y + i, vf_sub(vf_load_part(x + i, n - i), shift), n - i);
        return;
    }
    const vf inv = vf_set1(1.0f / total);
    for (i = 0; i + VF_WIDTH <= n; i += VF_WIDTH) vf_storeu(y + i, vf_mul(vf_loadu(y + i), inv));
    if (i < n) vf_store_part(y + i, vf_mul(vf_load_part(y + i, n - i), inv), n - i);
}

/* `lanes` (<= VF_WIDTH) neighbouring rows of n elements at stride `inner`. */
static void softmax_lanes(const float *x, float *y, size_t n, size_t inner, size_t lanes, bool log_softmax)
{
    const vf neg_inf = vf_set1(-INFINITY);
    vf m = neg_inf, sum = vf_zero();
    for (size_t j = 0; j < n; j++) m = vf_max(vf_load_part_or(x + j * inner, lanes, neg_inf), m);
    for (size_t j = 0; j < n; j++) {
        vf e = vmath_exp(vf_sub(vf_load_part(x + j * inner, lanes), m));
        if (!log_softmax) vf_store_part(y + j * inner, e, lanes);
        sum = vf_add(sum, e);
    }
    if (log_softmax) {
        const vf shift = vf_add(m, vmath_log(sum));
        for (size_t j = 0; j < n; j++)
            vf_store_part(y + j * inner, vf_sub(vf_load_part(x + j * inner, lanes), shift), lanes);
        return;
    }
    const vf inv = vf_div(vf_set1(1.0f), sum);
    for (size_t j = 0; j < n; j++) vf_store_part(y + j * inner, vf_mul(vf_load_part(y + j * inner, lanes), inv), lanes);
}

kiln_status KILN_CPU_ISA(f32_softmax)(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec)
{
    const kiln_cpu_softmax_params *p = params;
    const float *x = in[0]->data;
    float *y = out[0]->data;
    size_t n = (size_t)p->n, inner = (size_t)p->inner;
    if (n == 0) return KILN_OK;
    for (int64_t o = 0; o < p->outer; o++) {
        const float *xo = x + (size_t)o * n * inner;
        float *yo = y + (size_t)o * n * inner;
        if (inner == 1) {
            softmax_row(xo, yo, n, p->log != 0);
            continue;
        }
        for (size_t i = 0; i < inner; i += VF_WIDTH)
            softmax_lanes(xo + i, yo + i, n, inner, inner - i < VF_WIDTH ? inner - i : VF_WIDTH, p->log != 0);
    }
    return KILN_OK;
}
