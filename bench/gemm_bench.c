/* gemm_bench.c — f32 GEMM GFLOP/s of kiln against OpenBLAS cblas_sgemm, in one run, at 1 and 2
 * threads, with the machine's FMA peak and read bandwidth measured alongside (issue 5, (a) and
 * (c)). Prints Markdown (gemm_report.c); bench/run_all.sh puts it into bench/RESULTS.md.
 *
 * Layer: bench. kiln's side calls the `cpu` backend's GEMM step for the best runnable target
 * (kiln_gemm.c) with B pre-packed, as a compiled program runs it; OpenBLAS gets the same
 * row-major A and B and packs B inside every call — that is the difference between a library
 * and an ahead-of-time compiler, and the comparison the issue asks for.
 *
 * After the f32 report, gemm_bf16.c compares kiln's precision-bf16 GEMM with its f32 one.
 *
 * Every figure is the fastest of several calls (at least 3, and at least --min-time seconds of
 * calls): on a shared machine interference only slows a call down. Each kiln result is checked
 * against OpenBLAS's before its speed counts.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_peak.h"
#include "bench_util.h"
#include "core/cpu_features.h"
#include "gemm_bench.h"
#include "kiln_gemm.h"

#define MAX_CALLS 1000
#define MIN_CALLS 3
#define READ_BUFFER_MIN ((size_t)512 << 20)
#define READ_BUFFER_MAX ((size_t)2 << 30)

static const gemm_shape shapes[] = {
    {"256x256x256", 256, 256, 256, GEMM_SQUARE},
    {"512x512x512", 512, 512, 512, GEMM_SQUARE},
    {"1024x1024x1024", 1024, 1024, 1024, GEMM_SQUARE_GOAL},
    {"1536x1536x1536", 1536, 1536, 1536, GEMM_SQUARE_GOAL},
    {"2048x2048x2048", 2048, 2048, 2048, GEMM_SQUARE_GOAL},
    {"M=1 K=4096 N=4096", 1, 4096, 4096, GEMM_DECODE},
    {"M=64 K=4096 N=4096", 64, 4096, 4096, GEMM_PREFILL},
    {"M=1 K=4096 N=11008", 1, 4096, 11008, GEMM_DECODE},
    {"M=64 K=4096 N=11008", 64, 4096, 11008, GEMM_PREFILL},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

typedef struct options {
    int threads[GEMM_MAX_THREAD_COUNTS];
    size_t n_threads;
    double min_time;
    const char *target;
    bool quick, strict;
    bool peaks_only;                /* --peaks: the FMA peak and read bandwidth as JSON, no GEMMs */
    const char *only;               /* measure only shapes whose name contains this, or NULL */
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln_gemm_bench [options]\n"
            "\n"
            "f32 GEMM GFLOP/s of kiln's cpu backend against OpenBLAS cblas_sgemm for square sizes\n"
            "256-2048 and LLM shapes, with the FMA peak and read bandwidth of this machine measured in\n"
            "the same run; prints Markdown tables and the issue-5 goals with PASS/FAIL.\n"
            "\n"
            "options:\n"
            "  --threads LIST     thread counts, comma separated (default 1,2)\n"
            "  --min-time S       seconds of timed calls per figure, at least 3 calls (default 1)\n"
            "  --target NAME      benchmark this cpu target's kernels (default: best runnable)\n"
            "  --quick            shapes up to 1024^3 work only, --min-time 0.1 (a smoke test)\n"
            "  --only TEXT        only the shapes whose name contains TEXT (e.g. 'M=1 ')\n"
            "  --strict           exit 1 when any goal FAILS\n"
            "  --peaks            only the FMA peak and read bandwidth, one JSON object per thread\n"
            "                     count on stdout (for other benchmarks' fractions of peak)\n"
            "  -h, --help         show this help\n"
            "\n"
            "Exit status: 0 measured (goals may FAIL unless --strict), 1 failure, 2 usage error.\n");
}

static bool parse_threads(const char *s, options *o)
{
    o->n_threads = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 64 || o->n_threads == GEMM_MAX_THREAD_COUNTS) return false;
        o->threads[o->n_threads++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return false;
    }
    return o->n_threads > 0;
}

/* 0 to go on, -1 after --help, else an exit status. */
static int parse(int argc, char **argv, options *o)
{
    *o = (options){.threads = {1, 2}, .n_threads = 2, .min_time = 1.0};
    bool min_time_given = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--threads") == 0 && v) {
            if (!parse_threads(argv[++i], o)) {
                fprintf(stderr, "kiln_gemm_bench: --threads wants up to %d counts 1..64, e.g. 1,2\n",
                        GEMM_MAX_THREAD_COUNTS);
                return 2;
            }
        } else if (strcmp(a, "--min-time") == 0 && v) {
            char *end;
            o->min_time = strtod(argv[++i], &end);
            if (*end || !(o->min_time >= 0.0 && o->min_time <= 60.0)) {
                fprintf(stderr, "kiln_gemm_bench: --min-time wants seconds 0..60, got '%s'\n", argv[i]);
                return 2;
            }
            min_time_given = true;
        } else if (strcmp(a, "--target") == 0 && v) o->target = argv[++i];
        else if (strcmp(a, "--quick") == 0) o->quick = true;
        else if (strcmp(a, "--only") == 0 && v) o->only = argv[++i];
        else if (strcmp(a, "--strict") == 0) o->strict = true;
        else if (strcmp(a, "--peaks") == 0) o->peaks_only = true;
        else {
            fprintf(stderr, "kiln_gemm_bench: unknown or incomplete option '%s' (try --help)\n", a);
            return 2;
        }
    }
    if (o->quick && !min_time_given) o->min_time = 0.1;
    return 0;
}

/* ---- timing ------------------------------------------------------------------------------ */

/* One untimed call (page faults, packing buffers, clocks), then the fastest timed call. */
gemm_figure gemm_time_calls(gemm_call_fn call, void *ctx, double flops, double min_time)
{
    gemm_figure f = {.ran = true, .status = call(ctx)};
    if (f.status != KILN_OK) return f;
    double best = INFINITY, total = 0.0;
    for (int n = 0; n < MAX_CALLS && (n < MIN_CALLS || total < min_time); n++) {
        double t0 = bench_now();
        f.status = call(ctx);
        double dt = bench_now() - t0;
        if (f.status != KILN_OK) return f;
        best = dt < best ? dt : best;
        total += dt;
    }
    f.seconds = best;
    f.gflops = flops / best * 1e-9;
    return f;
}

typedef struct blas_problem {
    int M, N, K;
    const float *A, *B[BENCH_MAX_B_COPIES];
    int n_b, next_b;                /* calls take the copies of B in turn, as kiln's do */
    float *C;
} blas_problem;

static kiln_status blas_call(void *ctx)
{
    blas_problem *p = ctx;
    const float *B = p->B[p->next_b];
    p->next_b = (p->next_b + 1) % p->n_b;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p->M, p->N, p->K, 1.0f, p->A, p->K, B, p->N, 0.0f, p->C,
                p->N);
    return KILN_OK;
}

static kiln_status kiln_call(void *ctx) { return bench_kiln_gemm_run(ctx); }

double gemm_relative_error(const float *y, const float *ref, size_t n)
{
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - (double)ref[i]);
        worst = d > worst || isnan(d) ? d : worst;
        scale = fabs((double)ref[i]) > scale ? fabs((double)ref[i]) : scale;
    }
    return scale > 0.0 ? worst / scale : worst;
}

/* ---- one shape at every thread count -------------------------------------------------- */

typedef struct shape_buffers {
    float *A, *B[BENCH_MAX_B_COPIES], *Ck, *Cb; /* A (M x K), copies of B (K x N), kiln's and OpenBLAS's C */
    int n_b;
} shape_buffers;

static void free_buffers(shape_buffers *b)
{
    free(b->A);
    for (int i = 0; i < b->n_b; i++) free(b->B[i]);
    free(b->Ck);
    free(b->Cb);
}

/* Copies of the weights calls take in turn. A decode step (M = 1) reads its weights once and,
   in a model, the other layers' weights evict them before the next token: enough copies that
   twice the last-level cache lies between two reads of one copy, so each call streams its
   weights from memory as the read-bandwidth figure does. Other shapes reuse B within the call
   and keep one copy, as the usual GEMM benchmarks do. */
int gemm_weight_copies(const gemm_shape *s)
{
    if (s->M != 1) return 1;
    size_t l1, l2, l3;
    kiln_cpu_cache_sizes(&l1, &l2, &l3);
    double bytes = (double)s->K * (double)s->N * sizeof(float);
    int n = 1 + (int)ceil(2.0 * (double)l3 / bytes);
    return n < 2 ? 2 : n > BENCH_MAX_B_COPIES ? BENCH_MAX_B_COPIES : n;
}

static bool alloc_buffers(const gemm_shape *s, shape_buffers *b)
{
    size_t mk = (size_t)(s->M * s->K), kn = (size_t)(s->K * s->N), mn = (size_t)(s->M * s->N);
    *b = (shape_buffers){.A = bench_alloc(mk * 4), .Ck = bench_alloc(mn * 4), .Cb = bench_alloc(mn * 4)};
    if (!b->A || !b->Ck || !b->Cb) return false;
    bench_fill_random(b->A, mk, 1 + (uint64_t)s->M);
    for (int copies = gemm_weight_copies(s); b->n_b < copies; b->n_b++) {
        b->B[b->n_b] = bench_alloc(kn * 4);
        if (!b->B[b->n_b]) return false;
        bench_fill_random(b->B[b->n_b], kn, 2 + (uint64_t)s->N); /* the same values in every copy */
    }
    return true;
}

/* Lets OpenBLAS's workers, which spin for a while after a call, go to sleep before kiln runs. */
static void settle(void)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static bool measure_shape(const gemm_shape *s, const kiln_cpu_target *target, const options *o, gemm_row *rows)
{
    shape_buffers b;
    if (!alloc_buffers(s, &b)) {
        free_buffers(&b);
        fprintf(stderr, "kiln_gemm_bench: out of memory for %s\n", s->name);
        return false;
    }
    bench_kiln_gemm g, gc;
    kiln_status prep = target ? bench_kiln_gemm_prepare(&g, target, s->M, s->N, s->K, b.A, b.B[0], b.Ck, b.n_b,
                                                        BENCH_B_COMPILED)
                              : KILN_OK;
    /* Where the compiler takes one Strassen level, the classical GEMM is timed too. */
    bool strassen = target && prep == KILN_OK && g.params.b_packed == KILN_CPU_PACKED_STRASSEN;
    float *Cc = strassen ? bench_alloc((size_t)(s->M * s->N) * sizeof(float)) : NULL;
    kiln_status prep_c = !strassen ? KILN_OK
                         : Cc      ? bench_kiln_gemm_prepare(&gc, target, s->M, s->N, s->K, b.A, b.B[0], Cc, b.n_b,
                                                             BENCH_B_CLASSICAL)
                                   : KILN_ERROR_OUT_OF_MEMORY;
    blas_problem bp = {.M = (int)s->M, .N = (int)s->N, .K = (int)s->K, .A = b.A, .n_b = b.n_b, .C = b.Cb};
    memcpy(bp.B, b.B, sizeof bp.B);
    double flops = 2.0 * (double)s->M * (double)s->N * (double)s->K;
    for (size_t t = 0; t < o->n_threads; t++) {
        gemm_row *r = &rows[t];
        *r = (gemm_row){.shape = s, .threads = o->threads[t], .kiln_threads = bench_kiln_threads_used(o->threads[t]),
                        .strassen = strassen};
        if (strassen) {
            kiln_status st = prep_c == KILN_OK ? bench_kiln_gemm_set_threads(&gc, o->threads[t]) : prep_c;
            r->classical = st == KILN_OK ? gemm_time_calls(kiln_call, &gc, flops, o->min_time)
                                         : (gemm_figure){.ran = true, .status = st};
            if (st == KILN_OK) bench_kiln_gemm_set_threads(&gc, 1); /* its pool's threads go before g's start */
        }
        kiln_status threads_st = target && prep == KILN_OK ? bench_kiln_gemm_set_threads(&g, o->threads[t]) : prep;
        if (target && threads_st != KILN_OK) r->kiln = (gemm_figure){.ran = true, .status = threads_st};
        else if (target) r->kiln = gemm_time_calls(kiln_call, &g, flops, o->min_time);
        openblas_set_num_threads(o->threads[t]);
        r->blas = gemm_time_calls(blas_call, &bp, flops, o->min_time);
        settle();
        if (r->kiln.ran && r->kiln.status == KILN_OK)
            r->rel_err = gemm_relative_error(b.Ck, b.Cb, (size_t)(s->M * s->N));
        if (strassen && r->classical.status == KILN_OK)
            r->classical_rel_err = gemm_relative_error(Cc, b.Cb, (size_t)(s->M * s->N));
        fprintf(stderr, "  %-20s %dT  kiln %8.1f  OpenBLAS %8.1f GFLOP/s", s->name, o->threads[t], r->kiln.gflops,
                r->blas.gflops);
        if (strassen) fprintf(stderr, "  (kiln one Strassen level; classical %.1f)", r->classical.gflops);
        fprintf(stderr, "\n");
    }
    if (target && prep == KILN_OK) bench_kiln_gemm_release(&g);
    if (strassen && prep_c == KILN_OK) bench_kiln_gemm_release(&gc);
    free(Cc);
    free_buffers(&b);
    return true;
}

/* ---- peaks -------------------------------------------------------------------------------- */

/* Floats of the read buffer: 16x the last-level cache, at least 512 MiB, at most 2 GiB. */
static size_t read_buffer_floats(void)
{
    size_t l1, l2, l3;
    kiln_cpu_cache_sizes(&l1, &l2, &l3);
    size_t bytes = 16 * l3 > READ_BUFFER_MAX ? READ_BUFFER_MAX : 16 * l3;
    bytes = bytes < READ_BUFFER_MIN ? READ_BUFFER_MIN : bytes;
    return bytes / sizeof(float) / 64 * 64;
}

/* Measures the peaks at every thread count into peaks (the read bandwidth only, unless
   with_fma), keeping the higher of each figure and what peaks already holds (zeroed before the
   first call): the benchmark measures once before and once after the GEMMs, so a burst of other
   work on a shared machine has to hit both, and the read bandwidth again right after each
   decode shape (into latest_read, per thread count, when not NULL): the memory bandwidth of
   this virtual machine changes between two levels over minutes (at two threads about 34 or 55
   GB/s), so a decode figure is stated against the bandwidth measured next to it. */
static bool measure_peaks(const options *o, gemm_peaks *peaks, size_t *read_bytes, bool with_fma, double *latest_read)
{
    double run_seconds = 0.005;
    size_t n = read_buffer_floats();
    float *buf = bench_alloc(n * sizeof(float));
    if (!buf) {
        fprintf(stderr, "kiln_gemm_bench: cannot allocate the %zu MiB read buffer\n", (n * sizeof(float)) >> 20);
        return false;
    }
    bench_fill_random(buf, n, 3);
    *read_bytes = n * sizeof(float);
    for (size_t t = 0; t < o->n_threads; t++) {
        gemm_peaks *p = &peaks[t];
        p->threads = o->threads[t];
        if (with_fma) {
            p->fma_avx512 = fmax(p->fma_avx512, bench_fma_peak(BENCH_ISA_AVX512, p->threads, run_seconds));
            p->fma_avx2 = fmax(p->fma_avx2, bench_fma_peak(BENCH_ISA_AVX2, p->threads, run_seconds));
            p->fma = fmax(p->fma_avx512, p->fma_avx2);
        }
        double read = bench_read_bandwidth(buf, n, p->threads);
        if (latest_read) latest_read[t] = read;
        p->read_gbs = fmax(p->read_gbs, read);
        fprintf(stderr, "  peak %dT so far: FMA %.1f GFLOP/s (AVX-512 %.1f, AVX2 %.1f), read %.1f GB/s\n", p->threads,
                p->fma, p->fma_avx512, p->fma_avx2, p->read_gbs);
    }
    free(buf);
    return true;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    char note[256], blas_desc[256];
    const kiln_cpu_target *target = bench_kiln_pick_target(o.target, note, sizeof note);
    snprintf(blas_desc, sizeof blas_desc, "%s (core %s)", openblas_get_config(), openblas_get_corename());

    gemm_peaks peaks[GEMM_MAX_THREAD_COUNTS] = {{0}};
    gemm_row rows[N_SHAPES * GEMM_MAX_THREAD_COUNTS];
    size_t n_rows = 0, read_bytes = 0;
    fprintf(stderr, "kiln_gemm_bench: measuring peaks\n");
    if (!measure_peaks(&o, peaks, &read_bytes, true, NULL)) return 1;
    if (o.peaks_only) {
        for (size_t t = 0; t < o.n_threads; t++)
            printf("{\"threads\": %d, \"fma_gflops\": %.2f, \"fma_avx512_gflops\": %.2f, \"fma_avx2_gflops\": %.2f, "
                   "\"read_gbs\": %.2f}\n",
                   peaks[t].threads, peaks[t].fma, peaks[t].fma_avx512, peaks[t].fma_avx2, peaks[t].read_gbs);
        return 0;
    }
    fprintf(stderr, "kiln_gemm_bench: measuring GEMM (kiln target %s)\n", target ? target->name : "none");
    for (size_t i = 0; i < N_SHAPES; i++) {
        const gemm_shape *s = &shapes[i];
        if (o.quick && (double)s->M * (double)s->N * (double)s->K > 1024.0 * 1024 * 1024) continue;
        if (o.only && !strstr(s->name, o.only)) continue;
        if (!measure_shape(s, target, &o, &rows[n_rows])) return 1;
        n_rows += o.n_threads;
        if (s->M == 1) {
            double near[GEMM_MAX_THREAD_COUNTS] = {0};
            if (!measure_peaks(&o, peaks, &read_bytes, false, near)) return 1;
            for (size_t t = 0; t < o.n_threads; t++) rows[n_rows - o.n_threads + t].read_gbs_near = near[t];
        }
    }
    fprintf(stderr, "kiln_gemm_bench: measuring peaks again\n");
    if (!measure_peaks(&o, peaks, &read_bytes, true, NULL)) return 1;
    gemm_report r = {.kiln_target = target ? target->name : NULL,
                     .kiln_isa = target ? target->kernels->isa : NULL,
                     .kiln_mr = target ? target->kernels->gemm_mr : 0,
                     .kiln_nr = target ? target->kernels->gemm_nr : 0,
                     .kiln_note = note,
                     .blas_desc = blas_desc,
                     .min_time = o.min_time,
                     .read_buffer_bytes = read_bytes,
                     .peaks = peaks,
                     .n_peaks = o.n_threads,
                     .rows = rows,
                     .n_rows = n_rows};
    int failed = gemm_print_report(&r);
    if (!o.quick) {
        fprintf(stderr, "kiln_gemm_bench: measuring bf16 against f32 (kiln)\n");
        gemm_bf16_section(shapes, N_SHAPES, o.threads, o.n_threads, o.min_time, target, o.only);
    }
    return o.strict && failed ? 1 : 0;
}
