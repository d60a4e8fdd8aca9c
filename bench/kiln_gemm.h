/* kiln_gemm.h — kiln's side of the GEMM benchmark: one f32 GEMM step of the `cpu` backend,
 * called through a target's kernel table exactly as the runtime calls it.
 *
 * Layer: bench. Uses the cpu backend's internal contracts (targets.h, cpu_kernels.h): the step
 * gets B pre-packed with kiln_cpu_pack_b and the table's NR, as the lowering packs weights at
 * compile time, and a workspace of the size kiln_cpu_workspace_size asks for.
 */
#ifndef KILN_BENCH_KILN_GEMM_H
#define KILN_BENCH_KILN_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/targets.h"
#include "core/threadpool.h"

/* The target to benchmark: `forced` by name (NULL when it is unknown or not runnable here), or
 * the best runnable target; when that table has no GEMM step yet, the best runnable one that
 * has. Writes a one-line note when the choice is not simply the best target (or "" ). NULL when
 * no runnable table has a GEMM step. */
const kiln_cpu_target *bench_kiln_pick_target(const char *forced, char *note, size_t note_size);

/* Threads kiln's GEMM step runs on when the benchmark asks for `requested`: all of them — the
 * step gets a kiln thread pool of that size through kiln_cpu_exec (bench_kiln_gemm_set_threads),
 * as the runtime hands a module's pool to the cpu backend. */
int bench_kiln_threads_used(int requested);

/* Copies of the weights a problem may rotate through (see bench_kiln_gemm_prepare). */
#define BENCH_MAX_B_COPIES 8

/* One prepared problem Y (M x N) = A (M x K) . B (K x N), all row-major. */
typedef struct bench_kiln_gemm {
    const kiln_cpu_target *target;
    kiln_cpu_gemm_params params;
    float *b_packed[BENCH_MAX_B_COPIES]; /* B packed for the table's NR, each alike */
    int n_b_copies, next_b;         /* executions use the copies in turn */
    void *workspace;                /* (workspace_size) 64-byte aligned, or NULL when 0 */
    size_t workspace_size;
    kiln_tensor a, b, y;            /* step tensors; y->data is the caller's Y */
    kiln_threadpool *pool;          /* NULL for one thread */
    kiln_cpu_exec exec;             /* workspace slot 0 above, slots 1..n-1 in extra_workspace */
    void *extra_workspace;
} bench_kiln_gemm;

/* How B is packed: as the compiler packs an f32 weight (one Strassen level's seven sums when
 * kiln_cpu_gemm_strassen_pays, else panels), always as panels (the classical GEMM, for
 * comparison), or as bf16 pairs (precision bf16, a table with a bf16 GEMM). */
typedef enum bench_b_form { BENCH_B_COMPILED, BENCH_B_CLASSICAL, BENCH_B_BF16 } bench_b_form;

/* Packs B into b_copies (1..BENCH_MAX_B_COPIES) separate buffers that executions take in turn
 * — more than one keeps the weights of an execution out of the cache, as the other layers'
 * weights keep them out in an LLM's decode — sizes the workspace and validates the step as the
 * runtime does at load; B packed as `form` says (params.b_packed tells which it became).
 * A and Y must outlive the problem; B is not retained. KILN_OK,
 * KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_INVALID_ARGUMENT (b_copies) or KILN_ERROR_INCOMPATIBLE
 * (the table rejects the step); on failure nothing is left to release. */
kiln_status bench_kiln_gemm_prepare(bench_kiln_gemm *g, const kiln_cpu_target *target, int64_t M, int64_t N,
                                    int64_t K, const float *A, const float *B, float *Y, int b_copies, bench_b_form form);
/* Runs the following executions on n_threads threads (a kiln thread pool, created here, and a
 * workspace slot per thread, as the runtime gives a delegate handle). KILN_OK,
 * KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_THREAD (then the problem stays single-threaded). */
kiln_status bench_kiln_gemm_set_threads(bench_kiln_gemm *g, int n_threads);
/* One execution of the step; its status. */
kiln_status bench_kiln_gemm_run(bench_kiln_gemm *g);
void bench_kiln_gemm_release(bench_kiln_gemm *g);

#endif
