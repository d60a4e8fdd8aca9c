/* kernels-generic.c — the generic kernel table of the cpu backend (see cpu_kernels.h).
 * Layer: backends/cpu/kernels/generic, compiled with the generic flags only. */
#include "backends/cpu/kernels/cpu_kernels.h"

const kiln_cpu_kernels kiln_cpu_kernels_generic = {
    .isa = "generic",
    .gemm_mr = 4,
    .gemm_nr = 8,
};
