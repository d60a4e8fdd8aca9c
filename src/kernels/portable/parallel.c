/* parallel.c — task counts, output cuts and row runs for the portable kernels (parallel.h).
 *
 * Layer: kernels/portable (internal).
 */
#include "kernels/portable/parallel.h"

size_t kiln_par_tasks(const kiln_kernel_ctx *ctx, int64_t work, int64_t grain)
{
    if (!ctx || !ctx->parallel_for || ctx->n_threads <= 1 || work <= 0) return 1;
    int64_t by_size = grain > 0 ? work / grain : work;
    if (by_size < 2) return 1;
    return by_size < ctx->n_threads ? (size_t)by_size : (size_t)ctx->n_threads;
}

void kiln_par_split(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    int64_t t = (int64_t)task, count = (int64_t)tasks;
    int64_t base = n / count, extra = n % count;
    *lo = t * base + (t < extra ? t : extra);
    *hi = *lo + base + (t < extra ? 1 : 0);
}

void kiln_par_split_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    int64_t units = (n + unit - 1) / unit, a, b;
    kiln_par_split(units, tasks, task, &a, &b);
    *lo = a * unit < n ? a * unit : n;
    *hi = b * unit < n ? b * unit : n;
}

void kiln_par_run(const kiln_kernel_ctx *ctx, size_t tasks, void (*fn)(void *arg, size_t task), void *arg)
{
    if (tasks <= 1 || !ctx || !ctx->parallel_for) {
        for (size_t t = 0; t < tasks; t++) fn(arg, t);
        return;
    }
    ctx->parallel_for(ctx->pool, tasks, fn, arg);
}

typedef struct rows_job {
    kiln_par_rows_fn fn;
    const void *arg;
    int64_t rows;
    size_t tasks;
} rows_job;

static void rows_task(void *arg, size_t task)
{
    const rows_job *j = arg;
    int64_t lo, hi;
    kiln_par_split(j->rows, j->tasks, task, &lo, &hi);
    if (hi > lo) j->fn(j->arg, lo, hi);
}

void kiln_par_rows(const kiln_kernel_ctx *ctx, int64_t rows, int64_t row_work, int64_t grain, kiln_par_rows_fn fn,
                   const void *arg)
{
    if (rows <= 0) return;
    int64_t per_row = row_work > 0 ? row_work : 1;
    int64_t work = rows > INT64_MAX / per_row ? INT64_MAX : rows * per_row;
    rows_job j = {fn, arg, rows, kiln_par_tasks(ctx, work, grain)};
    if ((int64_t)j.tasks > rows) j.tasks = (size_t)rows;
    kiln_par_run(ctx, j.tasks, rows_task, &j);
}
