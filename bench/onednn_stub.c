/* onednn_stub.c — the oneDNN peer when CMake did not find oneDNN (see onednn_matmul.h).
 * Layer: bench. `make bench` installs Debian's libdnnl-dev; a plain build may lack it. */
#include "onednn_matmul.h"

#include <stdlib.h>

const char *bench_onednn_describe(void)
{
    return "not built: oneDNN (Debian libdnnl-dev) was not found when the benchmark was configured";
}

bool bench_onednn_available(void) { return false; }

bench_onednn_matmul *bench_onednn_prepare(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    return NULL;
}

void bench_onednn_set_threads(int n) { (void)n; }
bool bench_onednn_run(bench_onednn_matmul *m) { return m != NULL; }
void bench_onednn_release(bench_onednn_matmul *m) { (void)m; }
