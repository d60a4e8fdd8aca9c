/* kernels-generic.c — the generic kernel table of the cpu backend (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels/generic, compiled with the generic flags only: runs on any CPU.
 * The kit feeds the shared drivers (kernel_kit.h) with the plain-C microkernels of this
 * directory; gemm_mr/gemm_nr are the 6x16 microkernel's panel widths, the same as the avx2
 * table's, so generic and x86-64-v3 records of one binary share every packed weight block.
 * The table itself (step wrappers and slot layout) is template/kernel-table.h.
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

static const kiln_cpu_kit kit = {
    .mr = KILN_CPU_GENERIC_MR,
    .nr = KILN_CPU_GENERIC_NR,
    .gemm = kiln_cpu_f32_gemm_ukernel_6x16__generic,
    .act = kiln_cpu_f32_vact__generic,
    .binary = kiln_cpu_f32_vbinary__generic,
    .scale_shift = kiln_cpu_f32_vscaleshift__generic,
    .dwconv = kiln_cpu_f32_dwconv2d__generic,
    .maxpool = kiln_cpu_f32_maxpool2d__generic,
    .im2col = kiln_cpu_f32_im2col__generic,
    .pack_rows = kiln_cpu_f32_pack_rows__generic,
};

#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_generic
#define KILN_CPU_TABLE_ISA "generic"
#define KILN_CPU_TABLE_MR KILN_CPU_GENERIC_MR
#define KILN_CPU_TABLE_NR KILN_CPU_GENERIC_NR
#define KILN_CPU_TABLE_SOFTMAX kiln_cpu_f32_softmax__generic
#define KILN_CPU_TABLE_LAYERNORM kiln_cpu_f32_layernorm__generic
#include "backends/cpu/kernels/template/kernel-table.h"
