/* parallel.c — how the cpu kernels spread one step over the threads of kiln_cpu_exec.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags. Every driver splits the
 * *output* of its step into at most n_threads contiguous parts (tasks) and runs them with the
 * exec's parallel_for; task t uses workspace slot t. A step that is too small to pay for waking
 * a worker (fewer than two grains of work) runs inline as one task, so the thread count only
 * decides how the output is cut — each element is computed by the same code either way, which
 * is what keeps results bit-identical for any thread count. The cutting arithmetic is core's
 * (core/parallel_split.h), shared with the portable kernels; this file reads kiln_cpu_exec.
 */
#include "backends/cpu/kernels/kernel_kit.h"

#include "core/parallel_split.h"

size_t kiln_cpu_task_slots(const kiln_cpu_exec *exec, bool needs_workspace)
{
    if (!exec || !exec->parallel_for || exec->n_threads <= 1) return 1;
    if (needs_workspace && exec->workspace_size > 0 && !exec->thread_workspace) return 1;
    return exec->n_threads;
}

size_t kiln_cpu_task_count(const kiln_cpu_exec *exec, int64_t work, int64_t grain, bool needs_workspace)
{
    return kiln_split_task_count(work, grain, kiln_cpu_task_slots(exec, needs_workspace));
}

void *kiln_cpu_task_workspace(const kiln_cpu_exec *exec, size_t task)
{
    if (task == 0) return exec->workspace;
    /* Without slots (a step needing no workspace runs threaded without them) there is no
       pointer to offset: NULL + 0 is undefined too. */
    if (!exec->thread_workspace) return NULL;
    return exec->thread_workspace + (task - 1) * exec->thread_workspace_stride;
}

void kiln_cpu_split(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    kiln_split_range(n, tasks, task, lo, hi);
}

void kiln_cpu_split_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    kiln_split_range_aligned(n, unit, tasks, task, lo, hi);
}

void kiln_cpu_parallel(const kiln_cpu_exec *exec, size_t tasks, void (*fn)(void *arg, size_t task), void *arg)
{
    kiln_split_run(exec ? exec->parallel_for : NULL, exec ? exec->pool : NULL, tasks, fn, arg);
}

/* Rows never use workspace slots, so every thread may take a part. */
void kiln_cpu_parallel_rows(const kiln_cpu_exec *exec, int64_t rows, int64_t row_work, int64_t grain,
                            kiln_cpu_rows_fn fn, const void *ctx)
{
    kiln_split_rows(exec ? exec->parallel_for : NULL, exec ? exec->pool : NULL, kiln_cpu_task_slots(exec, false), rows,
                    row_work, grain, fn, ctx);
}
