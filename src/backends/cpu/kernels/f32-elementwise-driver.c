/* f32-elementwise-driver.c — UNARY, BINARY and CHANNEL_AFFINE over the kit's row functions.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags. Binary broadcasting first
 * coalesces the dims (drops size-1 dims, merges neighbours both operands walk contiguously),
 * so the common cases — same shape, a scalar, a per-channel vector — become one long row or a
 * few long rows for the kit's vector loop; the odometer below only walks what is left.
 * Threads take contiguous runs of output elements (cut at cache lines) once a step has more
 * than two grains of them; every element is computed by the same row function either way.
 */
#include <string.h>

#include "backends/cpu/kernels/kernel_kit.h"

/* Elements a task must have before waking a worker pays: steps of more than 64K elements
   (some tens of microseconds of memory traffic) are split. */
#define ELEMENTWISE_GRAIN ((int64_t)1 << 15)
/* Tasks cut at multiples of 16 floats: one cache line, so no two tasks write the same line. */
#define CHUNK_ALIGN 16

typedef struct unary_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_unary_params *p;
    const float *x;
    float *y;
    size_t tasks;
} unary_job;

static void unary_task(void *arg, size_t task)
{
    const unary_job *j = arg;
    int64_t lo, hi;
    kiln_cpu_split_aligned(j->p->count, CHUNK_ALIGN, j->tasks, task, &lo, &hi);
    if (hi <= lo) return;
    if (!kiln_cpu_act_is_identity(&j->p->act)) j->kit->act(&j->p->act, j->x + lo, j->y + lo, (size_t)(hi - lo));
    else if (j->x != j->y) memmove(j->y + lo, j->x + lo, (size_t)(hi - lo) * sizeof(float));
}

kiln_status kiln_cpu_unary_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_unary_params *p = params;
    if (p->count <= 0) return KILN_OK;
    unary_job j = {kit, p, in[0]->data, out[0]->data, kiln_cpu_task_count(exec, p->count, ELEMENTWISE_GRAIN, false)};
    kiln_cpu_parallel(exec, j.tasks, unary_task, &j);
    return KILN_OK;
}

/* The binary iteration space after coalescing: rank >= 1, out dense. */
typedef struct bin_space {
    int rank;
    int64_t shape[KILN_CPU_MAX_RANK], sa[KILN_CPU_MAX_RANK], sb[KILN_CPU_MAX_RANK];
} bin_space;

static void bin_coalesce(const kiln_cpu_binary_params *p, bin_space *s)
{
    int r = 0;
    for (uint32_t d = 0; d < p->rank; d++) {
        if (p->out_shape[d] == 1) continue;
        int64_t n = p->out_shape[d], a = p->a_strides[d], b = p->b_strides[d];
        if (r > 0 && s->sa[r - 1] == a * n && s->sb[r - 1] == b * n) {
            s->shape[r - 1] *= n;
            s->sa[r - 1] = a;
            s->sb[r - 1] = b;
            continue;
        }
        s->shape[r] = n;
        s->sa[r] = a;
        s->sb[r] = b;
        r++;
    }
    if (r == 0) {
        s->shape[0] = 1;
        s->sa[0] = s->sb[0] = 0;
        r = 1;
    }
    s->rank = r;
}

typedef struct binary_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_binary_params *p;
    bin_space s;
    const float *a, *b;
    float *y;
    int64_t total;
    size_t tasks;
} binary_job;

/* Output elements [lo, hi) (in row-major order): the rows of the innermost dim they cover, the
   first and last possibly in part, with the odometer started at the first row. */
static void binary_task(void *arg, size_t task)
{
    const binary_job *j = arg;
    const bin_space *s = &j->s;
    int inner = s->rank - 1;
    int64_t n = s->shape[inner], lo, hi;
    kiln_cpu_split_aligned(j->total, CHUNK_ALIGN, j->tasks, task, &lo, &hi);
    if (hi <= lo) return;
    int64_t idx[KILN_CPU_MAX_RANK] = {0}, a_off = 0, b_off = 0, row = lo / n, col = lo % n;
    for (int d = inner - 1; d >= 0; d--) {
        idx[d] = row % s->shape[d];
        row /= s->shape[d];
        a_off += idx[d] * s->sa[d];
        b_off += idx[d] * s->sb[d];
    }
    while (lo < hi) {
        int64_t len = n - col < hi - lo ? n - col : hi - lo;
        float *yr = j->y + lo;
        j->kit->binary(j->p->kind, j->a + a_off + col * s->sa[inner], s->sa[inner], j->b + b_off + col * s->sb[inner],
                       s->sb[inner], yr, (size_t)len);
        if (!kiln_cpu_act_is_identity(&j->p->act)) j->kit->act(&j->p->act, yr, yr, (size_t)len);
        lo += len;
        col = 0;
        /* Odometer over the outer dims, innermost first. */
        for (int d = inner - 1; d >= 0; d--) {
            a_off += s->sa[d];
            b_off += s->sb[d];
            if (++idx[d] < s->shape[d]) break;
            a_off -= s->sa[d] * s->shape[d];
            b_off -= s->sb[d] * s->shape[d];
            idx[d] = 0;
        }
    }
}

kiln_status kiln_cpu_binary_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_binary_params *p = params;
    for (uint32_t d = 0; d < p->rank; d++)
        if (p->out_shape[d] == 0) return KILN_OK;
    binary_job j = {.kit = kit, .p = p, .a = in[0]->data, .b = in[1]->data, .y = out[0]->data, .total = 1};
    bin_coalesce(p, &j.s);
    for (int d = 0; d < j.s.rank; d++) j.total *= j.s.shape[d];
    j.tasks = kiln_cpu_task_count(exec, j.total, ELEMENTWISE_GRAIN, false);
    kiln_cpu_parallel(exec, j.tasks, binary_task, &j);
    return KILN_OK;
}

typedef struct affine_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_affine_params *p;
    const float *x, *scale, *shift;
    float *y;
    size_t tasks;
} affine_job;

/* Elements [lo, hi) of the N x C x inner output, plane by plane. */
static void affine_task(void *arg, size_t task)
{
    const affine_job *j = arg;
    const kiln_cpu_affine_params *p = j->p;
    int64_t lo, hi;
    kiln_cpu_split_aligned(p->N * p->C * p->inner, CHUNK_ALIGN, j->tasks, task, &lo, &hi);
    while (lo < hi) {
        int64_t c = lo / p->inner % p->C, col = lo % p->inner;
        int64_t len = p->inner - col < hi - lo ? p->inner - col : hi - lo;
        j->kit->scale_shift(j->x + lo, j->scale[c], j->shift[c], j->y + lo, (size_t)len);
        if (!kiln_cpu_act_is_identity(&p->act)) j->kit->act(&p->act, j->y + lo, j->y + lo, (size_t)len);
        lo += len;
    }
}

kiln_status kiln_cpu_affine_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_affine_params *p = params;
    if (p->N <= 0 || p->C <= 0 || p->inner <= 0) return KILN_OK;
    affine_job j = {kit, p, in[0]->data, in[1]->data, in[2]->data, out[0]->data, 1};
    j.tasks = kiln_cpu_task_count(exec, p->N * p->C * p->inner, ELEMENTWISE_GRAIN, false);
    kiln_cpu_parallel(exec, j.tasks, affine_task, &j);
    return KILN_OK;
}
