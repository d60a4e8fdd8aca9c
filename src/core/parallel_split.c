/* parallel_split.c — task counts, output cuts and row runs shared by the kernel layers
 * (parallel_split.h).
 *
 * Layer: core (internal). Pure arithmetic plus one call through the given parallel_for.
 */
#include "core/parallel_split.h"

size_t kiln_split_task_count(int64_t work, int64_t grain, size_t slots)
{
    if (slots <= 1 || work <= 0) return 1;
    int64_t by_size = grain > 0 ? work / grain : work;
    if (by_size < 2) return 1;
    return (uint64_t)by_size < slots ? (size_t)by_size : slots;
}

void kiln_split_range(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    int64_t t = (int64_t)task, count = (int64_t)tasks;
    int64_t base = n / count, extra = n % count;
    *lo = t * base + (t < extra ? t : extra);
    *hi = *lo + base + (t < extra ? 1 : 0);
}

void kiln_split_range_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi)
{
    int64_t units = (n + unit - 1) / unit, a, b;
    kiln_split_range(units, tasks, task, &a, &b);
    *lo = a * unit < n ? a * unit : n;
    *hi = b * unit < n ? b * unit : n;
}

void kiln_split_run(kiln_split_parallel_for parallel_for, void *pool, size_t tasks, void (*fn)(void *arg, size_t task),
                    void *arg)
{
    if (tasks <= 1 || !parallel_for) {
        for (size_t t = 0; t < tasks; t++) fn(arg, t);
        return;
    }
    parallel_for(pool, tasks, fn, arg);
}

typedef struct rows_job {
    kiln_split_rows_fn fn;
    const void *arg;
    int64_t rows;
    size_t tasks;
} rows_job;

static void rows_task(void *arg, size_t task)
{
    const rows_job *j = arg;
    int64_t lo, hi;
    kiln_split_range(j->rows, j->tasks, task, &lo, &hi);
    if (hi > lo) j->fn(j->arg, lo, hi);
}

void kiln_split_rows(kiln_split_parallel_for parallel_for, void *pool, size_t slots, int64_t rows, int64_t row_work,
                     int64_t grain, kiln_split_rows_fn fn, const void *arg)
{
    if (rows <= 0) return;
    int64_t per_row = row_work > 0 ? row_work : 1;
    int64_t work = rows > INT64_MAX / per_row ? INT64_MAX : rows * per_row;
    rows_job j = {fn, arg, rows, kiln_split_task_count(work, grain, slots)};
    if ((int64_t)j.tasks > rows) j.tasks = (size_t)rows;
    kiln_split_run(parallel_for, pool, j.tasks, rows_task, &j);
}
