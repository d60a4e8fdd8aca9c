/* bench_peak.h — what this machine can do at best: the FMA peak of a register-only loop and
 * the read bandwidth of a buffer far larger than the last-level cache. The GEMM benchmark
 * states every kiln figure as a fraction of these, measured in the same run.
 *
 * Layer: bench. The ISA loops live in peak-avx512.c and peak-avx2.c, each compiled with its own
 * flags and called only when kiln_cpu_features() says the CPU and the OS support that ISA.
 */
#ifndef KILN_BENCH_BENCH_PEAK_H
#define KILN_BENCH_BENCH_PEAK_H

#include <stddef.h>
#include <stdint.h>

/* ISA loops. fma_loop: `iterations` rounds of independent FMA chains kept in registers (no
 * memory operand), returning a value derived from every chain so nothing is dead code; one
 * round is *_FLOPS_PER_ROUND floating-point operations (an FMA counts 2). read: the sum of x[0..n)
 * with aligned vector loads (x 64-byte aligned, n a multiple of 64). */
#define BENCH_AVX512_FLOPS_PER_ROUND (16 * 16 * 2)
#define BENCH_AVX2_FLOPS_PER_ROUND (12 * 8 * 2)
float bench_fma_loop_avx512(uint64_t iterations);
float bench_fma_loop_avx2(uint64_t iterations);
float bench_read_avx512(const float *x, size_t n);
float bench_read_avx2(const float *x, size_t n);

typedef enum bench_isa { BENCH_ISA_AVX2 = 0, BENCH_ISA_AVX512 = 1 } bench_isa;

/* true when the CPU and OS can run the ISA's loops. */
int bench_isa_available(bench_isa isa);
const char *bench_isa_name(bench_isa isa);

/* GFLOP/s of the register-only FMA loop on n_threads threads started together: the best of 60
 * runs of about run_seconds each (a few milliseconds). 0 when the ISA is not available or a
 * thread cannot start. */
double bench_fma_peak(bench_isa isa, int n_threads, double run_seconds);

/* GB/s (1e9 bytes) reading buf (n floats, 64-byte aligned, n at least 128 MiB) with n_threads
 * threads: the buffer is read in 64 MiB chunks, in order, each chunk split among the threads
 * into contiguous shares; the best chunk of 4 passes (after a warm-up pass). The buffer should be
 * many times the last-level cache, so that every chunk comes from DRAM. 0 on failure. */
double bench_read_bandwidth(const float *buf, size_t n, int n_threads);

#endif
