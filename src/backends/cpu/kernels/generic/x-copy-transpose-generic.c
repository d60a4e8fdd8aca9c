/* x-copy-transpose-generic.c — COPY, TRANSPOSE, SLICE and CONCAT for elements of any size;
 * every table uses them.
 *
 * Layer: backends/cpu/kernels/generic. All only move bytes, so they have no ISA variants: the
 * library memcpy is already vectorised for the CPU it runs on. Transpose and slice are one
 * strided gather: walk the output in order and read the input at (permuted, stepped) strides,
 * one innermost output row at a time. Concat copies each input's rows into its band of the
 * output's rows. Threads take contiguous byte ranges (copy) or runs of output rows. A slice or
 * concat input the lowering laid out in place (its address already is its place in the
 * output) is not moved at all.
 */
#include <string.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

/* Bytes (copy) or elements (transpose) a task must have before waking a worker pays. */
#define COPY_GRAIN ((int64_t)1 << 17)
#define TRANSPOSE_GRAIN ((int64_t)1 << 15)

typedef struct copy_job {
    const char *x;
    char *y;
    int64_t bytes;
    size_t tasks;
} copy_job;

static void copy_task(void *arg, size_t task)
{
    const copy_job *j = arg;
    int64_t lo, hi;
    kiln_cpu_split_aligned(j->bytes, 64, j->tasks, task, &lo, &hi);
    if (hi > lo) memmove(j->y + lo, j->x + lo, (size_t)(hi - lo));
}

kiln_status kiln_cpu_x_copy__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     kiln_cpu_exec *exec)
{
    const kiln_cpu_copy_params *p = params;
    if (p->bytes <= 0 || in[0]->data == out[0]->data) return KILN_OK;
    /* Input and output are the same buffer or do not overlap (cpu_kernels.h): chunks are independent. */
    copy_job j = {in[0]->data, out[0]->data, p->bytes, kiln_cpu_task_count(exec, p->bytes, COPY_GRAIN, false)};
    kiln_cpu_parallel(exec, j.tasks, copy_task, &j);
    return KILN_OK;
}

/* One output row: n elements of `size` bytes read at input stride s (elements). */
static void gather_row(const char *x, int64_t s, char *y, int64_t n, uint32_t size)
{
    switch (size) {
    case 1: for (int64_t i = 0; i < n; i++) y[i] = x[i * s]; break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(y + 2 * i, x + 2 * i * s, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(y + 4 * i, x + 4 * i * s, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(y + 8 * i, x + 8 * i * s, 8); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(y + (size_t)i * size, x + (size_t)(i * s) * size, size); break;
    }
}

typedef struct transpose_job {
    uint32_t rank, elem_size;
    const char *x;
    char *y;
    int64_t shape[KILN_CPU_MAX_RANK], stride[KILN_CPU_MAX_RANK]; /* output dims, input strides */
    int64_t rows;
    size_t tasks;
} transpose_job;

/* Output rows [lo, hi): the odometer starts at row lo's index. */
static void transpose_task(void *arg, size_t task)
{
    const transpose_job *j = arg;
    uint32_t rank = j->rank, size = j->elem_size;
    int64_t n = j->shape[rank - 1], lo, hi;
    kiln_cpu_split(j->rows, j->tasks, task, &lo, &hi);
    int64_t idx[KILN_CPU_MAX_RANK] = {0}, off = 0, rest = lo;
    for (uint32_t d = rank - 1; d-- > 0;) {
        idx[d] = rest % j->shape[d];
        rest /= j->shape[d];
        off += idx[d] * j->stride[d];
    }
    for (int64_t r = lo; r < hi; r++) {
        gather_row(j->x + (size_t)off * size, j->stride[rank - 1], j->y + (size_t)(r * n) * size, n, size);
        for (uint32_t d = rank - 1; d-- > 0;) {
            off += j->stride[d];
            if (++idx[d] < j->shape[d]) break;
            off -= j->stride[d] * j->shape[d];
            idx[d] = 0;
        }
    }
}

kiln_status kiln_cpu_x_transpose__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                          kiln_cpu_exec *exec)
{
    const kiln_cpu_transpose_params *p = params;
    transpose_job j = {.rank = p->rank, .elem_size = p->elem_size, .x = in[0]->data, .y = out[0]->data};
    uint32_t rank = p->rank;
    int64_t in_stride[KILN_CPU_MAX_RANK], total = 1;
    for (uint32_t d = rank; d-- > 0;) {
        in_stride[d] = total;
        total *= p->in_shape[d];
    }
    if (total == 0) return KILN_OK;
    if (rank == 0) {
        memcpy(j.y, j.x, p->elem_size);
        return KILN_OK;
    }
    for (uint32_t d = 0; d < rank; d++) {
        j.shape[d] = p->in_shape[p->perm[d]];
        j.stride[d] = in_stride[p->perm[d]];
    }
    j.rows = total / j.shape[rank - 1];
    j.tasks = kiln_cpu_task_count(exec, total, TRANSPOSE_GRAIN, false);
    kiln_cpu_parallel(exec, j.tasks, transpose_task, &j);
    return KILN_OK;
}

kiln_status kiln_cpu_x_slice__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec)
{
    const kiln_cpu_slice_params *p = params;
    const char *x = (const char *)in[0]->data + (size_t)p->offset * p->elem_size;
    if (x == out[0]->data) return KILN_OK; /* laid out in place by the lowering */
    transpose_job j = {.rank = p->rank, .elem_size = p->elem_size, .x = x, .y = out[0]->data};
    int64_t total = 1;
    for (uint32_t d = 0; d < p->rank; d++) {
        j.shape[d] = p->out_shape[d];
        j.stride[d] = p->strides[d];
        total *= p->out_shape[d];
    }
    if (total == 0) return KILN_OK;
    if (p->rank == 0) {
        memcpy(j.y, j.x, p->elem_size);
        return KILN_OK;
    }
    j.rows = total / j.shape[p->rank - 1];
    j.tasks = kiln_cpu_task_count(exec, total, TRANSPOSE_GRAIN, false);
    kiln_cpu_parallel(exec, j.tasks, transpose_task, &j);
    return KILN_OK;
}

typedef struct concat_job {
    const kiln_cpu_concat_params *p;
    const char *x[KILN_CPU_CONCAT_MAX_INPUTS]; /* NULL: in place, nothing to copy */
    char *y;
    size_t tasks;
} concat_job;

/* Rows [lo, hi) of the output, every input's band of each. */
static void concat_task(void *arg, size_t task)
{
    const concat_job *j = arg;
    const kiln_cpu_concat_params *p = j->p;
    size_t es = p->elem_size;
    int64_t lo, hi;
    kiln_cpu_split(p->outer, j->tasks, task, &lo, &hi);
    for (int64_t r = lo; r < hi; r++)
        for (uint32_t i = 0; i < p->n; i++)
            if (j->x[i])
                memcpy(j->y + (size_t)(r * p->out_row + p->offset[i]) * es, j->x[i] + (size_t)(r * p->in_row[i]) * es,
                       (size_t)p->row[i] * es);
}

kiln_status kiln_cpu_x_concat__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                       kiln_cpu_exec *exec)
{
    const kiln_cpu_concat_params *p = params;
    concat_job j = {.p = p, .y = out[0]->data};
    bool any = false;
    for (uint32_t i = 0; i < p->n; i++) {
        const char *x = in[i]->data;
        bool in_place = x == j.y + (size_t)p->offset[i] * p->elem_size && (p->in_row[i] == p->out_row || p->outer == 1);
        j.x[i] = in_place || p->row[i] == 0 ? NULL : x;
        any |= j.x[i] != NULL;
    }
    if (!any || p->outer == 0) return KILN_OK;
    j.tasks = kiln_cpu_task_count(exec, p->outer * p->out_row * (int64_t)p->elem_size, COPY_GRAIN, false);
    if (j.tasks > (size_t)p->outer) j.tasks = (size_t)p->outer; /* tasks take whole rows */
    kiln_cpu_parallel(exec, j.tasks, concat_task, &j);
    return KILN_OK;
}
