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

typedef struct softmax_job {
    const kiln_cpu_softmax_params *p;
    const float *x;
    float *y;
    int64_t groups;                 /* groups of up to VF_WIDTH neighbouring lanes per outer index */
} softmax_job;

/* Lane groups [lo, hi) of the outer x groups: group (o, g) holds lanes g * VF_WIDTH.. of o. */
static void softmax_groups(const void *ctx, int64_t lo, int64_t hi)
{
    const softmax_job *j = ctx;
    size_t n = (size_t)j->p->n, inner = (size_t)j->p->inner;
    for (int64_t item = lo; item < hi; item++) {
        size_t o = (size_t)(item / j->groups), i = (size_t)(item % j->groups) * VF_WIDTH;
        const float *xo = j->x + o * n * inner;
        float *yo = j->y + o * n * inner;
        if (inner == 1) softmax_row(xo, yo, n, j->p->log != 0);
        else softmax_lanes(xo + i, yo + i, n, inner, inner - i < VF_WIDTH ? inner - i : VF_WIDTH, j->p->log != 0);
    }
}

kiln_status KILN_CPU_ISA(f32_softmax)(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec)
{
    const kiln_cpu_softmax_params *p = params;
    if (p->n == 0 || p->inner == 0 || p->outer == 0) return KILN_OK; /* empty: see the generic step */
    softmax_job j = {p, in[0]->data, out[0]->data, (p->inner + VF_WIDTH - 1) / VF_WIDTH};
    int64_t group_work = p->n * (p->inner < VF_WIDTH ? p->inner : VF_WIDTH);
    kiln_cpu_parallel_rows(exec, p->outer * j.groups, group_work, KILN_CPU_ROWS_GRAIN, softmax_groups, &j);
    return KILN_OK;
}
