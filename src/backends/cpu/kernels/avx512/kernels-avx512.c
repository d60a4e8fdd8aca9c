/* kernels-avx512.c — the avx512 kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/avx512, compiled with the avx512 flags only. Its kit is the 12x32
 * GEMM microkernel and the AVX-512 row, window and packing kernels (kernels-avx512.h); softmax
 * and layer norm are whole AVX-512 steps; copy and transpose are the generic steps
 * (memory-bound or rare: no ISA variant). gemm_mr/gemm_nr: the 12x32 panel layout. The kit and
 * the table themselves are template/kernel-table.h.
 */
#include "backends/cpu/kernels/avx512/kernels-avx512.h"

#define KILN_CPU_KIT_FN(name) kiln_cpu_##name##__avx512
#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_avx512
#define KILN_CPU_TABLE_ISA "avx512"
#define KILN_CPU_TABLE_MR KILN_CPU_AVX512_MR
#define KILN_CPU_TABLE_NR KILN_CPU_AVX512_NR
#define KILN_CPU_TABLE_GEMM kiln_cpu_f32_gemm_ukernel_12x32__avx512
#include "backends/cpu/kernels/template/kernel-table.h"
