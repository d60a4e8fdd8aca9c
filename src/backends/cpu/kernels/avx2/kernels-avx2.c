/* kernels-avx2.c — the avx2 kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/avx2, compiled with the avx2 flags only. The kit feeds the
 * shared drivers (kernel_kit.h) with the 6x16 GEMM microkernel and the AVX2 row kernels;
 * softmax and layernorm are whole AVX2 steps; pooling runs the kit's max-pool rows (average pools
 * plain C); copy and transpose are the generic steps (memory-bound or rare: no ISA variant). gemm_mr/gemm_nr: the 6x16 panel layout.
 * The table itself (step wrappers and slot layout) is template/kernel-table.h.
 */
#include "backends/cpu/kernels/avx2/kernels-avx2.h"

static const kiln_cpu_kit kit = {
    .mr = KILN_CPU_AVX2_MR,
    .nr = KILN_CPU_AVX2_NR,
    .gemm = kiln_cpu_f32_gemm_ukernel_6x16__avx2,
    .act = kiln_cpu_f32_vact__avx2,
    .binary = kiln_cpu_f32_vbinary__avx2,
    .scale_shift = kiln_cpu_f32_vscaleshift__avx2,
    .dwconv = kiln_cpu_f32_dwconv2d__avx2,
    .maxpool = kiln_cpu_f32_maxpool2d__avx2,
    .im2col = kiln_cpu_f32_im2col__avx2,
    .pack_rows = kiln_cpu_f32_pack_rows__avx2,
};

#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_avx2
#define KILN_CPU_TABLE_ISA "avx2"
#define KILN_CPU_TABLE_MR KILN_CPU_AVX2_MR
#define KILN_CPU_TABLE_NR KILN_CPU_AVX2_NR
#define KILN_CPU_TABLE_SOFTMAX kiln_cpu_f32_softmax__avx2
#define KILN_CPU_TABLE_LAYERNORM kiln_cpu_f32_layernorm__avx2
#include "backends/cpu/kernels/template/kernel-table.h"
