/* gemm_report.c — the GEMM benchmark's Markdown: peaks, figures, and the issue-5 goals with
 * PASS/FAIL beside each figure (see gemm_bench.h).
 *
 * Layer: bench. Fractions of peak: compute-bound shapes against the FMA peak measured at the
 * same thread count; M = 1 shapes against the read bandwidth at the same thread count, with the
 * bytes moved counted as the weights alone (K x N x 4), which is what bounds them.
 */
#include <stdio.h>
#include <string.h>

#include "gemm_bench.h"

#define GOAL_RATIO_VS_BLAS 1.10
#define GOAL_FRACTION_FMA 0.85
#define GOAL_FRACTION_READ 0.90

typedef struct goal_count {
    int passed, failed;
} goal_count;

static const gemm_peaks *peaks_for(const gemm_report *r, int threads)
{
    for (size_t i = 0; i < r->n_peaks; i++)
        if (r->peaks[i].threads == threads) return &r->peaks[i];
    return NULL;
}

static bool kiln_valid(const gemm_row *row)
{
    return row->kiln.ran && row->kiln.status == KILN_OK && row->rel_err <= GEMM_MAX_REL_ERR;
}

/* Why a kiln figure is missing, or "" when it is valid. */
static const char *kiln_missing(const gemm_row *row)
{
    if (!row->kiln.ran) return "no kernel";
    if (row->kiln.status != KILN_OK) return kiln_status_name(row->kiln.status);
    if (row->rel_err > GEMM_MAX_REL_ERR) return "wrong result";
    return "";
}

/* Fraction of the relevant peak a figure reaches; 0 when the peak is unknown. Compute-bound
   figures count the multiply-adds the library executed: 7/8 of 2·M·N·K for one Strassen level
   (the figure itself, 2·M·N·K / time, says how fast the product was). */
static double fraction_of_peak(const gemm_report *r, const gemm_row *row, const gemm_figure *f)
{
    double executed = row->strassen && f == &row->kiln ? 7.0 / 8.0 : 1.0;
    const gemm_peaks *p = peaks_for(r, row->threads);
    if (!p || !f->ran || f->status != KILN_OK || f->seconds <= 0) return 0.0;
    if (row->shape->kind == GEMM_DECODE) {
        double gbs = (double)row->shape->K * (double)row->shape->N * sizeof(float) / f->seconds * 1e-9;
        double read = row->read_gbs_near > 0 ? row->read_gbs_near : p->read_gbs;
        return read > 0 ? gbs / read : 0.0;
    }
    return p->fma > 0 ? executed * f->gflops / p->fma : 0.0;
}

static void print_header(const gemm_report *r)
{
    printf("## f32 GEMM: kiln against OpenBLAS\n\n");
    if (r->kiln_target)
        printf("- kiln: `cpu` target `%s` (kernel table `%s`, register tile %ux%u), weights (B) pre-packed as a "
               "compiled program holds them; the GEMM step is called directly.\n",
               r->kiln_target, r->kiln_isa, r->kiln_mr, r->kiln_nr);
    else
        printf("- kiln: **not measured** — %s.\n", r->kiln_note);
    if (r->kiln_target && r->kiln_note[0]) printf("- note: %s.\n", r->kiln_note);
    printf("- %s, `cblas_sgemm` row-major, threads set with `openblas_set_num_threads`; it packs B inside "
           "every call.\n",
           r->blas_desc);
    printf("- Each figure is the fastest of at least 3 calls and %.2f s of calls, after one untimed call; "
           "GFLOP/s = 2·M·N·K / time. \"check\" is max |kiln − OpenBLAS| / max |OpenBLAS| (a kiln figure "
           "counts only when it is at most %.0e).\n",
           r->min_time, GEMM_MAX_REL_ERR);
    printf("- M=1 shapes run with the weights out of cache, as in a model's decode: both libraries take "
           "copies of B in turn, with twice the last-level cache read between two reads of one copy. Their "
           "fraction is of the read bandwidth measured right after the shape at the same thread count (this "
           "machine's memory bandwidth changes over minutes); the peaks table keeps the run's highest.\n");
    printf("- kiln algorithm: as a compiled program runs the product. For large products "
           "(kiln_cpu_gemm_strassen_pays: M, N, K even, halves of at least 512, K/2 at most 1024) the compiler packs "
           "B as the seven quadrant sums of one level of Strassen's algorithm, and the step runs 7 half-size "
           "products: 7/8 of the multiply-adds. Those rows are marked \"S\"; their GFLOP/s still count 2·M·N·K "
           "(how fast the product was), their fraction of peak counts the multiply-adds executed, and the last "
           "column times kiln's classical GEMM on the same problem (its ratio to OpenBLAS, its check).\n");
    printf("- kiln threads: the GEMM step runs on a kiln thread pool of the row's size with a workspace slot per "
           "thread, as a loaded module gives the cpu backend; the \"kiln thr\" column says how many threads it "
           "had.\n\n");
}

static void print_peaks(const gemm_report *r)
{
    printf("### Machine peaks, measured in this run\n\n");
    printf("Register-only FMA loop (16 AVX-512 or 12 AVX2 independent chains, no memory operands): best of 60 "
           "runs of about 5 ms. Read bandwidth: a %zu MiB buffer streamed in 64 MiB chunks, best chunk of 4 passes. "
           "Both measured before and again after the GEMMs, the read bandwidth also right after each M=1 shape; the "
           "highest figure is kept.\n\n",
           r->read_buffer_bytes >> 20);
    printf("| threads | FMA peak AVX-512 (GFLOP/s) | FMA peak AVX2 (GFLOP/s) | read bandwidth (GB/s) |\n");
    printf("|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < r->n_peaks; i++) {
        const gemm_peaks *p = &r->peaks[i];
        char avx512[32];
        if (p->fma_avx512 > 0) snprintf(avx512, sizeof avx512, "%.1f", p->fma_avx512);
        else snprintf(avx512, sizeof avx512, "n/a");
        printf("| %d | %s | %.1f | %.1f |\n", p->threads, avx512, p->fma_avx2, p->read_gbs);
    }
    printf("\n");
}

/* "61% FMA" or "72% BW (11.6 of 16.1 GB/s)" for a figure, or "-" when there is none. */
static void format_fraction(const gemm_report *r, const gemm_row *row, const gemm_figure *f, char *buf, size_t size)
{
    double frac = fraction_of_peak(r, row, f);
    if (frac <= 0) {
        snprintf(buf, size, "-");
    } else if (row->shape->kind == GEMM_DECODE) {
        double gbs = (double)row->shape->K * (double)row->shape->N * sizeof(float) / f->seconds * 1e-9;
        snprintf(buf, size, "%.0f%% BW (%.1f of %.1f GB/s)", 100 * frac, gbs, gbs / frac);
    } else {
        snprintf(buf, size, "%.0f%% FMA", 100 * frac);
    }
}

static void print_figures(const gemm_report *r)
{
    printf("### GEMM figures\n\n");
    printf("| shape (M x K x N) | threads | kiln thr | kiln GFLOP/s | OpenBLAS GFLOP/s | kiln / OpenBLAS | kiln of peak "
           "| OpenBLAS of peak | check | kiln classical |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const gemm_row *row = &r->rows[i];
        char kiln[32], ratio[32], kfrac[48], bfrac[48], check[32], classical[64];
        if (kiln_valid(row)) {
            snprintf(kiln, sizeof kiln, "%.1f%s", row->kiln.gflops, row->strassen ? " S" : "");
            snprintf(ratio, sizeof ratio, "%.2fx", row->kiln.gflops / row->blas.gflops);
        } else {
            snprintf(kiln, sizeof kiln, "n/a (%s)", kiln_missing(row));
            snprintf(ratio, sizeof ratio, "-");
        }
        format_fraction(r, row, &row->kiln, kfrac, sizeof kfrac);
        if (!kiln_valid(row)) snprintf(kfrac, sizeof kfrac, "-");
        format_fraction(r, row, &row->blas, bfrac, sizeof bfrac);
        if (row->kiln.ran && row->kiln.status == KILN_OK) snprintf(check, sizeof check, "%.1e", row->rel_err);
        else snprintf(check, sizeof check, "-");
        const gemm_figure *c = &row->classical;
        if (!row->strassen) snprintf(classical, sizeof classical, "-");
        else if (c->ran && c->status == KILN_OK)
            snprintf(classical, sizeof classical, "%.1f (%.2fx, %.1e)", c->gflops, c->gflops / row->blas.gflops,
                     row->classical_rel_err);
        else snprintf(classical, sizeof classical, "n/a (%s)", c->ran ? kiln_status_name(c->status) : "not run");
        printf("| %s | %d | %d | %s | %.1f | %s | %s | %s | %s | %s |\n", row->shape->name, row->threads,
               row->kiln_threads, kiln, row->blas.gflops, ratio, kfrac, bfrac, check, classical);
    }
    printf("\n");
}

/* One goal line: the figure as text, whether it passed. */
static void print_goal(goal_count *c, const char *goal, const gemm_row *row, const char *figure, const char *needed,
                       bool pass)
{
    printf("| %s | %s | %d | %s | %s | %s |\n", goal, row->shape->name, row->threads, figure, needed,
           pass ? "PASS" : "FAIL");
    if (pass) c->passed++;
    else c->failed++;
}

static void print_row_goals(const gemm_report *r, const gemm_row *row, goal_count *c)
{
    char figure[64];
    bool valid = kiln_valid(row);
    double frac = valid ? fraction_of_peak(r, row, &row->kiln) : 0.0;
    if (row->shape->kind == GEMM_SQUARE_GOAL) {
        double ratio = valid ? row->kiln.gflops / row->blas.gflops : 0.0;
        if (valid) snprintf(figure, sizeof figure, "%.2fx", ratio);
        else snprintf(figure, sizeof figure, "n/a (%s)", kiln_missing(row));
        print_goal(c, "f32 GEMM vs OpenBLAS", row, figure, ">= 1.10x", valid && ratio >= GOAL_RATIO_VS_BLAS);
        if (valid) snprintf(figure, sizeof figure, "%.0f%%", 100 * frac);
        print_goal(c, "f32 GEMM of FMA peak", row, figure, ">= 85%", valid && frac >= GOAL_FRACTION_FMA);
    } else if (row->shape->kind == GEMM_DECODE) {
        if (valid) snprintf(figure, sizeof figure, "%.0f%%", 100 * frac);
        else snprintf(figure, sizeof figure, "n/a (%s)", kiln_missing(row));
        print_goal(c, "M=1 decode of read bandwidth", row, figure, ">= 90%", valid && frac >= GOAL_FRACTION_READ);
    }
}

int gemm_print_report(const gemm_report *r)
{
    print_header(r);
    print_peaks(r);
    print_figures(r);
    printf("### GEMM goals (issue 5)\n\n");
    printf("| goal | shape | threads | kiln figure | needed | result |\n");
    printf("|---|---|---:|---:|---:|---|\n");
    goal_count c = {0, 0};
    for (size_t i = 0; i < r->n_rows; i++) print_row_goals(r, &r->rows[i], &c);
    printf("\nGEMM goals: %d PASS, %d FAIL\n\n", c.passed, c.failed);
    fflush(stdout);
    return c.failed;
}
