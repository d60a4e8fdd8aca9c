/* onednn_matmul.h — oneDNN's bf16 matmul as a peer for kiln's precision-bf16 GEMM.
 *
 * Layer: bench. Built with oneDNN (Debian libdnnl-dev) when CMake finds it (onednn_matmul.c),
 * else as a stub that says why nothing was measured (onednn_stub.c). oneDNN gets the advantages
 * a user of it would give it: A converted to bf16 before timing, B converted to bf16 and
 * reordered into the layout its matmul asks for (format `any`) once, ahead of time — as kiln's
 * weights are packed at compile time; C in f32. Its CPU runtime is OpenMP: the thread count is
 * set with omp_set_num_threads before each measurement.
 */
#ifndef KILN_BENCH_ONEDNN_MATMUL_H
#define KILN_BENCH_ONEDNN_MATMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bench_onednn_matmul bench_onednn_matmul;

/* "oneDNN 2.6.3 (OpenMP runtime)", or why there is no peer ("not built: ..."). */
const char *bench_onednn_describe(void);
bool bench_onednn_available(void);

/* C (M x N, f32) = A (M x K) . B (K x N), both given in f32, row-major; A, B are converted as said
 * above and need not outlive the call; C must outlive the problem. NULL on any failure (a line on
 * stderr says why). */
bench_onednn_matmul *bench_onednn_prepare(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);
void bench_onednn_set_threads(int n);
/* One execution; false on failure. */
bool bench_onednn_run(bench_onednn_matmul *m);
void bench_onednn_release(bench_onednn_matmul *m);

#endif
