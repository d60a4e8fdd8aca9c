/* kernels-generic.c — the generic kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/generic, compiled with the generic flags only: runs on any CPU.
 * Its kit is the plain-C kernels of this directory (kernels-generic.h); gemm_mr/gemm_nr are
 * the 6x16 microkernel's panel widths, the same as the avx2 table's, so generic and x86-64-v3
 * records of one binary share every packed weight block. The kit and the table themselves
 * are template/kernel-table.h.
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

#define KILN_CPU_KIT_FN(name) kiln_cpu_##name##__generic
#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_generic
#define KILN_CPU_TABLE_ISA "generic"
#define KILN_CPU_TABLE_MR KILN_CPU_GENERIC_MR
#define KILN_CPU_TABLE_NR KILN_CPU_GENERIC_NR
#define KILN_CPU_TABLE_GEMM kiln_cpu_f32_gemm_ukernel_6x16__generic
#include "backends/cpu/kernels/template/kernel-table.h"
