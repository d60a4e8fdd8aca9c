/* peak.c — FMA peak and read bandwidth measured on this machine (see bench_peak.h).
 *
 * Layer: bench. Depends on core/cpu_features.h for the ISA check, so the benchmark decides what
 * runs exactly as kiln's own target selection does.
 *
 * Both figures are the best of many short runs (a few milliseconds each): on a shared machine a
 * disturbance only makes a run slower, and a short run has a fair chance of fitting between two
 * preemptions, so the fastest run is the closest to what the hardware can do.
 */
#include <stdbool.h>

#include "bench_peak.h"
#include "bench_util.h"
#include "core/cpu_features.h"

#define PEAK_RUNS 60
#define READ_PASSES 4
#define READ_CHUNK_BYTES ((size_t)64 << 20)
#define MAX_THREADS 64

int bench_isa_available(bench_isa isa)
{
    uint64_t have = kiln_cpu_features();
    uint64_t need = KILN_CPU_BIT(AVX2) | KILN_CPU_BIT(FMA);
    if (isa == BENCH_ISA_AVX512) need |= KILN_CPU_BIT(AVX512F);
    return (have & need) == need;
}

const char *bench_isa_name(bench_isa isa) { return isa == BENCH_ISA_AVX512 ? "AVX-512" : "AVX2"; }

typedef struct fma_job {
    float (*loop)(uint64_t iterations);
    uint64_t iterations;
    volatile float sink[MAX_THREADS]; /* keeps every thread's result alive */
} fma_job;

static void fma_body(void *arg, int index, int n_threads)
{
    fma_job *job = arg;
    (void)n_threads;
    job->sink[index] = job->loop(job->iterations);
}

double bench_fma_peak(bench_isa isa, int n_threads, double run_seconds)
{
    if (!bench_isa_available(isa) || n_threads < 1 || n_threads > MAX_THREADS) return 0.0;
    fma_job job = {.loop = isa == BENCH_ISA_AVX512 ? bench_fma_loop_avx512 : bench_fma_loop_avx2};
    double flops_per_round = isa == BENCH_ISA_AVX512 ? BENCH_AVX512_FLOPS_PER_ROUND : BENCH_AVX2_FLOPS_PER_ROUND;
    /* Calibrate (a few rounds also bring the core to its FMA clock), then size the runs. */
    job.iterations = 1u << 16;
    double t = 0.0;
    for (int r = 0; r < 4; r++) t = bench_run_team(n_threads, fma_body, &job);
    if (t <= 0) return 0.0;
    double scaled = (double)job.iterations * run_seconds / t;
    job.iterations = scaled < 1e4 ? 10000u : (uint64_t)scaled;
    double best = 0.0;
    for (int r = 0; r < PEAK_RUNS; r++) {
        t = bench_run_team(n_threads, fma_body, &job);
        if (t <= 0) return 0.0;
        double gflops = (double)n_threads * (double)job.iterations * flops_per_round / t * 1e-9;
        if (gflops > best) best = gflops;
    }
    return best;
}

typedef struct read_job {
    const float *buf;
    size_t n;
    float (*read)(const float *x, size_t n);
    volatile float sink[MAX_THREADS];
} read_job;

static float read_scalar(const float *x, size_t n)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i += 16) s += x[i]; /* one float per cache line still moves the line */
    return s;
}

static void read_body(void *arg, int index, int n_threads)
{
    read_job *job = arg;
    size_t share = job->n / (size_t)n_threads / 64 * 64; /* what the vector loops take */
    job->sink[index] = job->read(job->buf + (size_t)index * share, share);
}

double bench_read_bandwidth(const float *buf, size_t n, int n_threads)
{
    size_t chunk = READ_CHUNK_BYTES / sizeof(float);
    if (n_threads < 1 || n_threads > MAX_THREADS || n < 2 * chunk) return 0.0;
    read_job job = {.n = chunk};
    job.read = bench_isa_available(BENCH_ISA_AVX512) ? bench_read_avx512
             : bench_isa_available(BENCH_ISA_AVX2)   ? bench_read_avx2
                                                     : read_scalar;
    double bytes = (double)(chunk / (size_t)n_threads / 64 * 64) * (double)n_threads * sizeof(float);
    double best = 0.0;
    for (int pass = 0; pass <= READ_PASSES; pass++) {
        /* Chunks in order: when chunk c is read, the cache holds the chunk before it, never c. */
        for (size_t c = 0; c + chunk <= n; c += chunk) {
            job.buf = buf + c;
            double t = bench_run_team(n_threads, read_body, &job);
            if (t <= 0) return 0.0;
            double gbs = bytes / t * 1e-9;
            if (pass > 0 && gbs > best) best = gbs; /* pass 0 warms the TLB and the page tables */
        }
    }
    return best;
}
