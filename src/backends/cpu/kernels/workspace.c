/* workspace.c — workspace sizes of steps per kernel table (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels. The workspace column of kiln_cpu_op_info (op_info.c): only the
 * GEMM (packing buffers for operands not packed ahead of time) and the convolution (one im2col
 * chunk, or the GEMM's B block for pointwise) need one; both are sized from l2 through the
 * drivers' own plan functions, and the drivers size their blocks back from whatever workspace
 * they get (kernel_kit.h). l1 does not enter: the K block follows from the table's NR alone, so
 * that results never depend on the cache sizes assumed. Params are expected to have passed
 * kiln_cpu_step_validate; nonsense gives 0, and then the step refuses to run rather than
 * overflow.
 */
#include "backends/cpu/kernels/kernel_kit.h"
#include "backends/cpu/kernels/op_info.h"

size_t kiln_cpu_gemm_step_workspace(const kiln_cpu_kernels *k, const void *params, size_t l2)
{
    const kiln_cpu_gemm_params *p = params;
    if (p->batch <= 0 || p->M <= 0 || p->N <= 0 || p->K <= 0) return 0;
    if (p->b_packed == KILN_CPU_PACKED_STRASSEN)
        return kiln_cpu_gemm_strassen_workspace(k->gemm_mr, k->gemm_nr, p->M, p->K, l2);
    size_t ws = kiln_cpu_gemm_workspace(k->gemm_mr, k->gemm_nr, p->M, p->N, p->K, false, p->b_packed != 0, l2);
    /* Precision bf16: one more MR panel of bf16 pairs, the row words f32-gemm-driver.c's
       pack_bf16_pairs uses when A's k are contiguous (a K block is at most kiln_cpu_gemm_kc). */
    if (p->b_packed == KILN_CPU_PACKED_BF16)
        ws += (size_t)k->gemm_mr * (size_t)((kiln_cpu_gemm_kc(k->gemm_nr) + 1) / 2) * sizeof(uint32_t);
    return ws;
}

size_t kiln_cpu_conv_step_workspace(const kiln_cpu_kernels *k, const void *params, size_t l2)
{
    const kiln_cpu_conv_params *p = params;
    if (p->group < 1 || p->C < 0 || p->M < 0 || p->KH < 1 || p->KW < 1 || p->OH < 0 || p->OW < 0 || p->H < 0 ||
        p->W < 0 || p->N < 0 || p->C % p->group != 0 || p->M % p->group != 0)
        return 0;
    return kiln_cpu_conv_workspace(k->gemm_mr, k->gemm_nr, p, l2);
}

size_t kiln_cpu_workspace_size(const kiln_cpu_kernels *k, uint32_t op, const void *params, size_t l1, size_t l2)
{
    (void)l1;
    if (!k || !params || k->gemm_mr == 0 || k->gemm_nr == 0) return 0;
    const kiln_cpu_op_descriptor *info = kiln_cpu_op_find(op);
    return info && info->workspace ? info->workspace(k, params, l2) : 0;
}
