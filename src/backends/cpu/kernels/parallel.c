/* parallel.c — how the cpu kernels spread one step over the threads of kiln_cpu_exec.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags. Every driver splits the
 * *output* of its step into at most n_threads contiguous parts (tasks) and runs them with the
 * exec's parallel_for; task t uses workspace slot t. A step that is too small to pay for waking
 * a worker (fewer than two grains of work) runs inline as one task, so the thread count only
 * decides how the output is cut — each element is computed by the same code either way, which
 * is what keeps results bit-identical for any thread count.
 */
#include "backends/cpu/kernels/kernel_kit.h"

size_t kiln_cpu_task_slots(const kiln_cpu_exec *exec, bool needs_workspace)
{
    if (!exec || !exec->parallel_for || exec->n_threads <= 1) return 1;
    if (needs_workspace && exec->workspace_size > 0 && !exec->thread_workspace) return 1;
    return exec->n_threads;
}

size_t kiln_cpu_task_count(const kiln_cpu_exec *exec, int64_t work, int64_t grain, bool needs_workspace)
{
    size_t slots = kiln_cpu_task_slots(exec, needs_workspace);
    if (slots <= 1 || work <= 0) return 1;
    int64_t by_size = grain > 0 ? work / grain : work;
    if (by_size < 2) return 1;
    return (uint64_t)by_size < slots ? (size_t)by_size : slots;
}

void *kiln_cpu_task_workspace(const kiln_cpu_exec *exec, size_t task)
{
    if (task == 0) return exec->workspace;
    return exec->thread_workspace + (task - 1) * exec->thread_workspace_stride;
}

void kiln_cpu_split(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    int64_t t = (int64_t)task, count = (int64_t)tasks;
    int64_t base = n / count, extra = n % count;
    *lo = t * base + (t < extra ? t : extra);
    *hi = *lo + base + (t < extra ? 1 : 0);
}

void kiln_cpu_split_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    int64_t units = (n + unit - 1) / unit, a, b;
    kiln_cpu_split(units, tasks, task, &a, &b);
    *lo = a * unit < n ? a * unit : n;
    *hi = b * unit < n ? b * unit : n;
}

void kiln_cpu_parallel(const kiln_cpu_exec *exec, size_t tasks, void (*fn)(void *arg, size_t task), void *arg)
{
    if (tasks <= 1 || !exec->parallel_for) {
        for (size_t t = 0; t < tasks; t++) fn(arg, t);
        return;
    }
    exec->parallel_for(exec->pool, tasks, fn, arg);
}

typedef struct rows_job {
    kiln_cpu_rows_fn fn;
    const void *ctx;
    int64_t rows;
    size_t tasks;
} rows_job;

static void rows_task(void *arg, size_t task)
{
    const rows_job *j = arg;
    int64_t lo, hi;
    kiln_cpu_split(j->rows, j->tasks, task, &lo, &hi);
    if (hi > lo) j->fn(j->ctx, lo, hi);
}

void kiln_cpu_parallel_rows(const kiln_cpu_exec *exec, int64_t rows, int64_t row_work, int64_t grain,
                            kiln_cpu_rows_fn fn, const void *ctx)
{
    if (rows <= 0) return;
    int64_t work = row_work > 0 && rows > INT64_MAX / row_work ? INT64_MAX : rows * (row_work > 0 ? row_work : 1);
    rows_job j = {fn, ctx, rows, kiln_cpu_task_count(exec, work, grain, false)};
    if ((int64_t)j.tasks > rows) j.tasks = (size_t)rows;
    kiln_cpu_parallel(exec, j.tasks, rows_task, &j);
}
