/* parallel.c — task counts, output cuts and row runs for the portable kernels (parallel.h).
 *
 * Layer: kernels/portable (internal). The arithmetic is core's (core/parallel_split.h), shared
 * with the cpu backend's kernels; this file only reads the thread fields of kiln_kernel_ctx.
 */
#include "kernels/portable/parallel.h"

#include "core/parallel_split.h"

/* Tasks a run may use: one per thread, or 1 without a ctx or a parallel_for. */
static size_t task_slots(const kiln_kernel_ctx *ctx)
{
    if (!ctx || !ctx->parallel_for || ctx->n_threads <= 1) return 1;
    return (size_t)ctx->n_threads;
}

size_t kiln_par_tasks(const kiln_kernel_ctx *ctx, int64_t work, int64_t grain)
{
    return kiln_split_task_count(work, grain, task_slots(ctx));
}

void kiln_par_split(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    kiln_split_range(n, tasks, task, lo, hi);
}

void kiln_par_split_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    kiln_split_range_aligned(n, unit, tasks, task, lo, hi);
}

void kiln_par_run(const kiln_kernel_ctx *ctx, size_t tasks, void (*fn)(void *arg, size_t task), void *arg)
{
    kiln_split_run(ctx ? ctx->parallel_for : NULL, ctx ? ctx->pool : NULL, tasks, fn, arg);
}

void kiln_par_rows(const kiln_kernel_ctx *ctx, int64_t rows, int64_t row_work, int64_t grain, kiln_par_rows_fn fn,
                   const void *arg)
{
    kiln_split_rows(ctx ? ctx->parallel_for : NULL, ctx ? ctx->pool : NULL, task_slots(ctx), rows, row_work, grain, fn,
                    arg);
}
