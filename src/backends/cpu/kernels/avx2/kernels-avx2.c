/* kernels-avx2.c — the avx2 kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/avx2, compiled with the avx2 flags only. Its kit is the 6x16 GEMM
 * microkernel and the AVX2 row, window and packing kernels (kernels-avx2.h); softmax and layer
 * norm are whole AVX2 steps; copy and transpose are the generic steps (memory-bound or rare: no
 * ISA variant). gemm_mr/gemm_nr: the 6x16 panel layout. The kit and the table themselves are
 * template/kernel-table.h.
 */
#include "backends/cpu/kernels/avx2/kernels-avx2.h"

#define KILN_CPU_KIT_FN(name) kiln_cpu_##name##__avx2
#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_avx2
#define KILN_CPU_TABLE_ISA "avx2"
#define KILN_CPU_TABLE_MR KILN_CPU_AVX2_MR
#define KILN_CPU_TABLE_NR KILN_CPU_AVX2_NR
#define KILN_CPU_TABLE_GEMM kiln_cpu_f32_gemm_ukernel_6x16__avx2
#include "backends/cpu/kernels/template/kernel-table.h"
