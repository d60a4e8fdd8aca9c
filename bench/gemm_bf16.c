/* gemm_bf16.c — kiln's precision-bf16 GEMM against kiln's own f32 GEMM, in the same run (issue 5,
 * item 4 as far as this machine allows: AVX512-BF16, not AMX; see docs/targets.md).
 *
 * Layer: bench. For the goal squares and the LLM shapes: the bf16 step (target x86-64-v4-bf16,
 * B packed as bf16 pairs, A rounded as the step packs it) and the f32 step of the benchmark's
 * target, both called as a compiled program calls them, on the same A and B; GFLOP/s of both,
 * their ratio, the bf16 result's error against the f32 one, and for M = 1 the rate the bf16
 * weights stream at (they are half the bytes). Printed as Markdown after the f32 report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gemm_bench.h"
#include "kiln_gemm.h"
#include "onednn_matmul.h"

static kiln_status kiln_call(void *ctx) { return bench_kiln_gemm_run(ctx); }

typedef struct bf16_row {
    const gemm_shape *shape;
    int threads;
    gemm_figure bf16, f32, onednn;
    double rel_err, onednn_err;     /* max |x - kiln f32| / max |kiln f32| */
} bf16_row;

/* oneDNN problems on copies of B taken in turn, as kiln's (out of cache for M = 1). */
typedef struct onednn_copies {
    bench_onednn_matmul *m[BENCH_MAX_B_COPIES];
    int n, next;
} onednn_copies;

static kiln_status onednn_call(void *ctx)
{
    onednn_copies *c = ctx;
    bench_onednn_matmul *m = c->m[c->next];
    c->next = (c->next + 1) % c->n;
    return bench_onednn_run(m) ? KILN_OK : KILN_ERROR_BACKEND; /* a peer library failed */
}

static void onednn_release(onednn_copies *c)
{
    for (int i = 0; i < c->n; i++) bench_onednn_release(c->m[i]);
    c->n = 0;
}

/* Copies of the problem, or none (c->n = 0) when oneDNN is absent or failed. */
static void onednn_prepare(onednn_copies *c, const gemm_shape *s, int copies, const float *A, const float *B,
                           float *C)
{
    *c = (onednn_copies){.n = 0};
    for (int i = 0; bench_onednn_available() && i < copies; i++) {
        c->m[i] = bench_onednn_prepare(s->M, s->N, s->K, A, B, C);
        if (!c->m[i]) {
            onednn_release(c);
            return;
        }
        c->n = i + 1;
    }
}

/* Both steps at every thread count on one shape; false when out of memory. */
static bool measure(const gemm_shape *s, const int *threads, size_t n_threads, double min_time,
                    const kiln_cpu_target *bf16_target, const kiln_cpu_target *f32_target, bf16_row *rows)
{
    size_t mk = (size_t)(s->M * s->K), kn = (size_t)(s->K * s->N), mn = (size_t)(s->M * s->N);
    float *A = bench_alloc(mk * 4), *B = bench_alloc(kn * 4), *C16 = bench_alloc(mn * 4), *C32 = bench_alloc(mn * 4);
    float *Cd = bench_alloc(mn * 4);
    bool ok = A && B && C16 && C32 && Cd;
    if (ok) {
        bench_fill_random(A, mk, 1 + (uint64_t)s->M);
        bench_fill_random(B, kn, 2 + (uint64_t)s->N);
        int copies = gemm_weight_copies(s);
        bench_kiln_gemm g16, g32;
        kiln_status p16 = bench_kiln_gemm_prepare(&g16, bf16_target, s->M, s->N, s->K, A, B, C16, copies, BENCH_B_BF16);
        kiln_status p32 = bench_kiln_gemm_prepare(&g32, f32_target, s->M, s->N, s->K, A, B, C32, copies, BENCH_B_COMPILED);
        onednn_copies dnn;
        onednn_prepare(&dnn, s, copies, A, B, Cd);
        double flops = 2.0 * (double)s->M * (double)s->N * (double)s->K;
        for (size_t t = 0; t < n_threads; t++) {
            bf16_row *r = &rows[t];
            *r = (bf16_row){.shape = s, .threads = threads[t]};
            if (dnn.n) {
                bench_onednn_set_threads(threads[t]);
                r->onednn = gemm_time_calls(onednn_call, &dnn, flops, min_time);
            }
            r->bf16 = (gemm_figure){.ran = true, .status = p16};
            r->f32 = (gemm_figure){.ran = true, .status = p32};
            if (p16 == KILN_OK && (r->bf16.status = bench_kiln_gemm_set_threads(&g16, threads[t])) == KILN_OK)
                r->bf16 = gemm_time_calls(kiln_call, &g16, flops, min_time);
            if (p32 == KILN_OK && (r->f32.status = bench_kiln_gemm_set_threads(&g32, threads[t])) == KILN_OK)
                r->f32 = gemm_time_calls(kiln_call, &g32, flops, min_time);
            if (r->bf16.status == KILN_OK && r->f32.status == KILN_OK) r->rel_err = gemm_relative_error(C16, C32, mn);
            if (r->onednn.ran && r->onednn.status == KILN_OK && r->f32.status == KILN_OK)
                r->onednn_err = gemm_relative_error(Cd, C32, mn);
            fprintf(stderr, "  %-20s %dT  kiln bf16 %8.1f  kiln f32 %8.1f  oneDNN bf16 %8.1f GFLOP/s\n", s->name,
                    threads[t], r->bf16.gflops, r->f32.gflops, r->onednn.gflops);
        }
        onednn_release(&dnn);
        if (p16 == KILN_OK) bench_kiln_gemm_release(&g16);
        if (p32 == KILN_OK) bench_kiln_gemm_release(&g32);
    } else {
        fprintf(stderr, "kiln_gemm_bench: out of memory for the bf16 %s\n", s->name);
    }
    free(A);
    free(B);
    free(C16);
    free(C32);
    free(Cd);
    return ok;
}

static void print_figure(const gemm_figure *f)
{
    if (f->status == KILN_OK) printf(" %.1f |", f->gflops);
    else printf(" — (%s) |", kiln_status_name(f->status));
}

void gemm_bf16_section(const gemm_shape *shapes, size_t n_shapes, const int *threads, size_t n_threads,
                       double min_time, const kiln_cpu_target *f32_target, const char *only)
{
    printf("## bf16 GEMM (precision bf16): kiln bf16 against kiln f32 and oneDNN bf16\n\n");
    const kiln_cpu_target *bf16_target = kiln_cpu_target_find("x86-64-v4-bf16");
    if (!bf16_target || !kiln_cpu_target_runnable(bf16_target) || !f32_target) {
        printf("Not measured: %s.\n\n", !f32_target ? "no f32 target to compare with"
                                                    : "this CPU lacks AVX512-BF16 (target x86-64-v4-bf16)");
        return;
    }
    printf("- bf16: target `x86-64-v4-bf16` (table `%s`): B packed as bf16 pairs, A rounded to bf16 as the step "
           "packs it, `vdpbf16ps` into f32 accumulators. f32: target `%s`, as in the table above. The same A and B, "
           "figures as above (fastest call, M=1 with the weights out of cache).\n",
           bf16_target->kernels->isa, f32_target->name);
    printf("- \"error vs f32\" is max |bf16 result - f32 result| / max |f32 result|: the cost of bf16 operands "
           "(8 bits of mantissa). M=1 rows also give the rate the bf16 weights (K·N·2 bytes) stream at.\n");
    printf("- oneDNN: %s, its bf16 matmul (`dnnl_matmul`, src and weights bf16, dst f32); A converted to bf16 "
           "and B converted and reordered into the layout the matmul asks for before timing (as kiln's weights are "
           "packed at compile time), threads set with omp_set_num_threads, copies of B in turn as for kiln. Its error "
           "is against kiln's f32 result too. It runs on the same AVX512-BF16 instructions here.\n",
           bench_onednn_describe());
    printf("- AMX is not used by either (this VM exposes none); the issue's AMX goal stays unmeasured.\n\n");
    printf("| shape (M x K x N) | threads | kiln bf16 GFLOP/s | kiln f32 GFLOP/s | bf16 / f32 | error vs f32 | bf16 "
           "weights GB/s | oneDNN bf16 GFLOP/s | kiln bf16 / oneDNN | oneDNN error vs f32 |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    bf16_row rows[GEMM_MAX_THREAD_COUNTS];
    for (size_t i = 0; i < n_shapes; i++) {
        const gemm_shape *s = &shapes[i];
        if (s->kind == GEMM_SQUARE || (only && !strstr(s->name, only))) continue;
        if (!measure(s, threads, n_threads, min_time, bf16_target, f32_target, rows)) continue;
        for (size_t t = 0; t < n_threads; t++) {
            const bf16_row *r = &rows[t];
            printf("| %s | %d |", s->name, r->threads);
            print_figure(&r->bf16);
            print_figure(&r->f32);
            bool both = r->bf16.status == KILN_OK && r->f32.status == KILN_OK;
            if (both) printf(" %.2fx | %.1e |", r->bf16.gflops / r->f32.gflops, r->rel_err);
            else printf(" — | — |");
            if (s->M == 1 && r->bf16.status == KILN_OK)
                printf(" %.1f |", (double)s->K * (double)s->N * 2.0 / r->bf16.seconds * 1e-9);
            else printf(" |");
            if (r->onednn.ran && r->onednn.status == KILN_OK) {
                printf(" %.1f |", r->onednn.gflops);
                if (r->bf16.status == KILN_OK) printf(" %.2fx |", r->bf16.gflops / r->onednn.gflops);
                else printf(" — |");
                printf(" %.1e |\n", r->onednn_err);
            } else {
                printf(" — | — | — |\n");
            }
        }
    }
    printf("\n");
}
