/* f32-pad-where-generic.c — PAD and WHERE on f32, plain C; every table uses them.
 *
 * Layer: backends/cpu/kernels/generic. Both are memory-bound walks over the output, one
 * innermost row at a time, threads taking runs of rows. Pad maps each output index of each dim
 * to an input index or "the constant" with the portable Pad's own rule (core/pad_index.h);
 * inside a row the in-range middle is one memcpy. Where reads its three operands at broadcast
 * strides.
 */
#include <string.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"
#include "core/pad_index.h"

/* Elements a task must have before waking a worker pays. */
#define ROW_GRAIN ((int64_t)1 << 15)

static int64_t pad_source(int64_t o, int64_t begin, int64_t dim, uint32_t mode)
{
    return kiln_pad_source_index(o, begin, dim, (kiln_pad_mode)mode);
}

typedef struct pad_job {
    const kiln_cpu_pad_params *p;
    const float *x;
    float *y;
    int64_t in_stride[KILN_CPU_MAX_RANK];
    int64_t rows;
    size_t tasks;
} pad_job;

static void pad_row(const kiln_cpu_pad_params *p, const float *src, float *dst)
{
    uint32_t last = p->rank - 1;
    int64_t n = p->out_shape[last], dim = p->in_shape[last], begin = p->begin[last];
    int64_t lo = begin > 0 ? begin : 0, hi = begin + dim < n ? begin + dim : n; /* outputs read in order */
    for (int64_t o = 0; o < lo && o < n; o++) {
        int64_t i = pad_source(o, begin, dim, p->mode);
        dst[o] = i < 0 ? p->value : src[i];
    }
    if (hi > lo) memcpy(dst + lo, src + (lo - begin), (size_t)(hi - lo) * sizeof(float));
    for (int64_t o = hi > lo ? hi : lo; o < n; o++) {
        int64_t i = pad_source(o, begin, dim, p->mode);
        dst[o] = i < 0 ? p->value : src[i];
    }
}

static void pad_task(void *arg, size_t task)
{
    const pad_job *j = arg;
    const kiln_cpu_pad_params *p = j->p;
    uint32_t last = p->rank - 1;
    int64_t n = p->out_shape[last], lo, hi;
    kiln_cpu_split(j->rows, j->tasks, task, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t rest = r, off = 0;
        bool constant = false;
        for (uint32_t d = last; d-- > 0;) {
            int64_t o = rest % p->out_shape[d], i = pad_source(o, p->begin[d], p->in_shape[d], p->mode);
            rest /= p->out_shape[d];
            constant |= i < 0;
            off += i * j->in_stride[d];
        }
        float *dst = j->y + r * n;
        if (constant) {
            for (int64_t o = 0; o < n; o++) dst[o] = p->value;
        } else {
            pad_row(p, j->x + off, dst);
        }
    }
}

kiln_status kiln_cpu_f32_pad__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec)
{
    const kiln_cpu_pad_params *p = params;
    pad_job j = {.p = p, .x = in[0]->data, .y = out[0]->data};
    int64_t total = 1, s = 1;
    for (uint32_t d = p->rank; d-- > 0;) {
        j.in_stride[d] = s;
        s *= p->in_shape[d];
        total *= p->out_shape[d];
    }
    if (total == 0) return KILN_OK;
    if (p->rank == 0) {
        j.y[0] = j.x[0];
        return KILN_OK;
    }
    j.rows = total / p->out_shape[p->rank - 1];
    j.tasks = kiln_cpu_task_count(exec, total, ROW_GRAIN, false);
    kiln_cpu_parallel(exec, j.tasks, pad_task, &j);
    return KILN_OK;
}

typedef struct where_job {
    const kiln_cpu_where_params *p;
    const uint8_t *c;
    const float *a, *b;
    float *y;
    int64_t rows;
    size_t tasks;
} where_job;

static void where_task(void *arg, size_t task)
{
    const where_job *j = arg;
    const kiln_cpu_where_params *p = j->p;
    uint32_t last = p->rank - 1;
    int64_t n = p->out_shape[last], lo, hi;
    int64_t cs = p->cond_strides[last], as = p->a_strides[last], bs = p->b_strides[last];
    kiln_cpu_split(j->rows, j->tasks, task, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t rest = r, co = 0, ao = 0, bo = 0;
        for (uint32_t d = last; d-- > 0;) {
            int64_t i = rest % p->out_shape[d];
            rest /= p->out_shape[d];
            co += i * p->cond_strides[d];
            ao += i * p->a_strides[d];
            bo += i * p->b_strides[d];
        }
        const uint8_t *c = j->c + co;
        const float *a = j->a + ao, *b = j->b + bo;
        float *y = j->y + r * n;
        for (int64_t i = 0; i < n; i++) y[i] = c[i * cs] ? a[i * as] : b[i * bs];
    }
}

kiln_status kiln_cpu_f32_where__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                        kiln_cpu_exec *exec)
{
    const kiln_cpu_where_params *p = params;
    where_job j = {.p = p, .c = in[0]->data, .a = in[1]->data, .b = in[2]->data, .y = out[0]->data};
    int64_t total = 1;
    for (uint32_t d = 0; d < p->rank; d++) total *= p->out_shape[d];
    if (total == 0 || p->rank == 0) return KILN_OK; /* the lowering gives a scalar rank 1 */
    j.rows = total / p->out_shape[p->rank - 1];
    j.tasks = kiln_cpu_task_count(exec, total, ROW_GRAIN, false);
    kiln_cpu_parallel(exec, j.tasks, where_task, &j);
    return KILN_OK;
}
