/* kernels-avx512.c — the avx512 kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/avx512, compiled with the avx512 flags only. The kit feeds the
 * shared drivers (kernel_kit.h) with the 12x32 GEMM microkernel and the AVX-512 row kernels;
 * softmax and layernorm are whole AVX-512 steps; pooling runs the kit's max-pool rows (average pools
 * plain C); copy and transpose are the generic steps (memory-bound or rare: no ISA variant). gemm_mr/gemm_nr: the 12x32 panel layout.
 * The table itself (step wrappers and slot layout) is template/kernel-table.h.
 */
#include "backends/cpu/kernels/avx512/kernels-avx512.h"

static const kiln_cpu_kit kit = {
    .mr = KILN_CPU_AVX512_MR,
    .nr = KILN_CPU_AVX512_NR,
    .gemm = kiln_cpu_f32_gemm_ukernel_12x32__avx512,
    .act = kiln_cpu_f32_vact__avx512,
    .binary = kiln_cpu_f32_vbinary__avx512,
    .scale_shift = kiln_cpu_f32_vscaleshift__avx512,
    .dwconv = kiln_cpu_f32_dwconv2d__avx512,
    .maxpool = kiln_cpu_f32_maxpool2d__avx512,
    .im2col = kiln_cpu_f32_im2col__avx512,
    .pack_rows = kiln_cpu_f32_pack_rows__avx512,
};

#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_avx512
#define KILN_CPU_TABLE_ISA "avx512"
#define KILN_CPU_TABLE_MR KILN_CPU_AVX512_MR
#define KILN_CPU_TABLE_NR KILN_CPU_AVX512_NR
#define KILN_CPU_TABLE_SOFTMAX kiln_cpu_f32_softmax__avx512
#define KILN_CPU_TABLE_LAYERNORM kiln_cpu_f32_layernorm__avx512
#include "backends/cpu/kernels/template/kernel-table.h"
