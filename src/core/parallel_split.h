/* parallel_split.h — how a step's work is cut into tasks and handed to a parallel_for.
 *
 * Layer: core (internal). Both kernel layers (kernels/portable and backends/cpu/kernels) spread
 * one step over the module's threads the same way: cut the *output* into at most `slots`
 * contiguous parts, each at least `grain` units of work, and keep a step that holds fewer than
 * two grains as one task run inline. The cut decides only which task computes an element, never
 * how, so results are bit-identical for any thread count. The layers keep their own entry points
 * (they read the thread fields from different context structs) and forward here.
 */
#ifndef KILN_CORE_PARALLEL_SPLIT_H
#define KILN_CORE_PARALLEL_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* The parallel_for of kiln_backend_init_args / kiln_kernel_ctx: fn(arg, i) for every i < n. */
typedef void (*kiln_split_parallel_for)(void *pool, size_t n, void (*fn)(void *arg, size_t i), void *arg);

/* Tasks for `work` units when each task should get at least `grain` of them (grain <= 0: one
   unit), between 1 and `slots`; 1 when slots <= 1 or there is no work. */
size_t kiln_split_task_count(int64_t work, int64_t grain, size_t slots);

/* Task `task`'s part [*lo, *hi) of n items cut into `tasks` contiguous parts differing by at most
   one item; _aligned cuts only at multiples of `unit` (the last part ends at n). */
void kiln_split_range(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi);
void kiln_split_range_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi);

/* fn(arg, t) for every t < tasks through parallel_for, or inline for one task or a NULL
   parallel_for. */
void kiln_split_run(kiln_split_parallel_for parallel_for, void *pool, size_t tasks, void (*fn)(void *arg, size_t task),
                    void *arg);

/* fn(arg, lo, hi) on contiguous runs of `rows` independent rows over at most `slots` tasks, when
   the rows hold at least two grains of work at row_work units a row (row_work <= 0: one). */
typedef void (*kiln_split_rows_fn)(const void *arg, int64_t lo, int64_t hi);
void kiln_split_rows(kiln_split_parallel_for parallel_for, void *pool, size_t slots, int64_t rows, int64_t row_work,
                     int64_t grain, kiln_split_rows_fn fn, const void *arg);

#endif /* KILN_CORE_PARALLEL_SPLIT_H */
