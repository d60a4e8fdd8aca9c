/* parallel.h — how portable kernels spread one run() over the module's threads.
 *
 * Layer: kernels/portable (internal). A kernel cuts its *output* into at most ctx->n_threads
 * contiguous parts (tasks) and runs them with ctx->parallel_for; a run too small to pay for
 * waking a worker (fewer than two grains of work) stays one task. Each output element is
 * computed by the same code whatever the cut, so results are bit-identical for any thread
 * count. Scratch: infer() cannot know the thread count, so the scratch it reports is for one
 * thread; a kernel that needs scratch per task divides that one buffer into disjoint slices
 * (see gemm_f32.h) — the same bytes, never more.
 */
#ifndef KILN_KERNELS_PORTABLE_PARALLEL_H
#define KILN_KERNELS_PORTABLE_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/portable/kernel.h"

/* Tasks for `work` units when each task should get at least `grain` of them: 1 .. n_threads
   (1 when ctx is NULL). */
size_t kiln_par_tasks(const kiln_kernel_ctx *ctx, int64_t work, int64_t grain);

/* Task t's part [*lo, *hi) of n items cut into `tasks` contiguous parts differing by at most one
   item; _aligned cuts only at multiples of `unit` (the last part ends at n). */
void kiln_par_split(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi);
void kiln_par_split_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi);

/* fn(arg, t) for every t < tasks on ctx's threads (inline for one task or a NULL ctx). */
void kiln_par_run(const kiln_kernel_ctx *ctx, size_t tasks, void (*fn)(void *arg, size_t task), void *arg);

/* fn(arg, lo, hi) on contiguous runs of `rows` independent rows spread over ctx's threads, when
   the rows hold at least two grains of work at row_work units a row. */
typedef void (*kiln_par_rows_fn)(const void *arg, int64_t lo, int64_t hi);
void kiln_par_rows(const kiln_kernel_ctx *ctx, int64_t rows, int64_t row_work, int64_t grain, kiln_par_rows_fn fn,
                   const void *arg);

#endif /* KILN_KERNELS_PORTABLE_PARALLEL_H */
