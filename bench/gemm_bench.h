/* gemm_bench.h — the records the GEMM benchmark measures and its report prints.
 *
 * Layer: bench. gemm_bench.c measures (peaks, kiln, OpenBLAS); gemm_report.c turns the records
 * into the Markdown tables and the PASS/FAIL goal list of issue 5.
 */
#ifndef KILN_BENCH_GEMM_BENCH_H
#define KILN_BENCH_GEMM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/targets.h"
#include "kiln/kiln.h"

#define GEMM_MAX_THREAD_COUNTS 4

typedef enum gemm_kind {
    GEMM_SQUARE,            /* compute-bound, no goal */
    GEMM_SQUARE_GOAL,       /* compute-bound, goal: >= 1.1x OpenBLAS and >= 85% of FMA peak */
    GEMM_PREFILL,           /* M = 64 LLM shapes: compute-bound, no goal */
    GEMM_DECODE,            /* M = 1 LLM shapes: memory-bound, goal: >= 90% of read bandwidth */
} gemm_kind;

typedef struct gemm_shape {
    const char *name;
    int64_t M, K, N;
    gemm_kind kind;
} gemm_shape;

/* One library's timing of one (shape, threads): the fastest of the timed calls. */
typedef struct gemm_figure {
    bool ran;               /* false: not measured (no kernel, or an earlier failure) */
    kiln_status status;     /* KILN_OK, or why the call failed */
    double seconds, gflops;
} gemm_figure;

typedef struct gemm_row {
    const gemm_shape *shape;
    int threads;            /* asked for */
    int kiln_threads;       /* kiln's kernel really used (see bench_kiln_threads_used) */
    gemm_figure kiln, blas;
    double rel_err;         /* max |kiln - OpenBLAS| / max |OpenBLAS|, when both ran */
    bool strassen;          /* kiln ran one Strassen level (B packed as the compiler packs it) */
    gemm_figure classical;  /* with strassen: kiln's classical GEMM on the same problem */
    double classical_rel_err;
    double read_gbs_near;   /* decode rows: the read bandwidth at this thread count measured
                               right after the shape (0: not measured, use the run's) */
} gemm_row;

/* Peaks measured at one thread count. */
typedef struct gemm_peaks {
    int threads;
    double fma_avx512, fma_avx2;    /* GFLOP/s, 0 when the ISA is not available */
    double fma;                     /* the higher of the two: the machine's FMA peak */
    double read_gbs;                /* GB/s streaming from DRAM */
} gemm_peaks;

typedef struct gemm_report {
    const char *kiln_target;        /* NULL: no runnable table has a GEMM */
    const char *kiln_isa;
    unsigned kiln_mr, kiln_nr;
    const char *kiln_note;          /* "" or why the target is not simply the best */
    const char *blas_desc;          /* OpenBLAS build configuration and core */
    double min_time;
    size_t read_buffer_bytes;
    const gemm_peaks *peaks;
    size_t n_peaks;
    const gemm_row *rows;
    size_t n_rows;
} gemm_report;

/* Relative error above which a kiln result counts as wrong: far above any difference in
   summation order at K = 4096 (about 1e-6 here), far below a wrong tile. */
#define GEMM_MAX_REL_ERR 1e-4

/* Prints the report as Markdown on stdout; returns the number of goals that FAILED. */
int gemm_print_report(const gemm_report *r);

/* Shared by the f32 and the bf16 measurements (gemm_bench.c). */
typedef kiln_status (*gemm_call_fn)(void *ctx);
/* One untimed call, then the fastest of at least 3 calls and min_time seconds of calls. */
gemm_figure gemm_time_calls(gemm_call_fn call, void *ctx, double flops, double min_time);
/* max |y - ref| / max |ref| (NaN counts as the worst). */
double gemm_relative_error(const float *y, const float *ref, size_t n);
/* Copies of the weights a shape's calls take in turn (out of cache for M = 1, as in a decode). */
int gemm_weight_copies(const gemm_shape *s);

/* The precision-bf16 section (gemm_bf16.c): kiln's bf16 GEMM (target x86-64-v4-bf16) against
   kiln's f32 GEMM (f32_target) on the goal and LLM shapes of `shapes` at every thread count, with
   its error against f32; printed as Markdown on stdout after the f32 report, or why it was not
   measured. `only`: as --only. */
void gemm_bf16_section(const gemm_shape *shapes, size_t n_shapes, const int *threads, size_t n_threads,
                       double min_time, const kiln_cpu_target *f32_target, const char *only);

#endif
