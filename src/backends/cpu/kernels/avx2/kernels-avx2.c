/* kernels-avx2.c — the avx2 kernel table of the cpu backend (see cpu_kernels.h).
 * Layer: backends/cpu/kernels/avx2, compiled with the avx2 flags only. */
#include "backends/cpu/kernels/cpu_kernels.h"

const kiln_cpu_kernels kiln_cpu_kernels_avx2 = {
    .isa = "avx2",
    .gemm_mr = 4,
    .gemm_nr = 8,
};
