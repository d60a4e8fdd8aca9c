/* kernels-avx512bf16.c — the avx512bf16 kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/avx512bf16, compiled with the avx512 and avx512bf16 flags. Its kit
 * is the avx512 table's (the same functions, the same 12x32 tile and weight layout) plus the bf16
 * GEMM microkernel, which runs GEMM steps whose B was packed as bf16 pairs (precision bf16).
 */
#include "backends/cpu/kernels/avx512bf16/kernels-avx512bf16.h"

#define KILN_CPU_KIT_FN(name) kiln_cpu_##name##__avx512
#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_avx512bf16
#define KILN_CPU_TABLE_ISA "avx512bf16"
#define KILN_CPU_TABLE_MR KILN_CPU_AVX512_MR
#define KILN_CPU_TABLE_NR KILN_CPU_AVX512_NR
#define KILN_CPU_TABLE_GEMM kiln_cpu_f32_gemm_ukernel_12x32__avx512
#define KILN_CPU_TABLE_GEMM_BF16 kiln_cpu_bf16_gemm_ukernel_12x32__avx512bf16
#define KILN_CPU_TABLE_BF16_PAIRS kiln_cpu_bf16_pairs__avx512bf16
#define KILN_CPU_TABLE_BF16_ROW kiln_cpu_bf16_row__avx512bf16
#include "backends/cpu/kernels/template/kernel-table.h"
