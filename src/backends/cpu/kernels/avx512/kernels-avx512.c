/* kernels-avx512.c — the avx512 kernel table of the cpu backend (see cpu_kernels.h).
 * Layer: backends/cpu/kernels/avx512, compiled with the avx512 flags only. */
#include "backends/cpu/kernels/cpu_kernels.h"

const kiln_cpu_kernels kiln_cpu_kernels_avx512 = {
    .isa = "avx512",
    .gemm_mr = 4,
    .gemm_nr = 8,
};
