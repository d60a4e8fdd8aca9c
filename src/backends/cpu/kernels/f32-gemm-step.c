/* f32-gemm-step.c — the GEMM step of the kernel tables: a step's tensors and parameters
 * (kiln_cpu_gemm_params) turned into the problems of the GEMM family.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags (see kernel_kit.h). This is the
 * one file of the family that knows about steps and tensors: it hands a batch of products to
 * the parallel split (f32-gemm-parallel.c), or a Strassen-packed B to f32-gemm-strassen.c, so
 * the blocked driver (f32-gemm-driver.c) calls only the kit and never step-level code.
 */
#include "backends/cpu/kernels/kernel_kit.h"

typedef struct gemm_step_args {
    const kiln_cpu_gemm_params *p;
    const kiln_tensor *const *in;
    kiln_tensor *const *out;
} gemm_step_args;

/* Product `bi` of a GEMM step's batch. */
static void gemm_step_problem(const void *src, int64_t bi, kiln_cpu_gemm_problem *out)
{
    const gemm_step_args *args = src;
    const kiln_cpu_gemm_params *p = args->p;
    const kiln_tensor *const *in = args->in;
    kiln_tensor *const *outs = args->out;
    const float *A = in[0]->data, *B = in[1]->data;
    const float *bias = p->bias_kind != KILN_CPU_BIAS_NONE ? in[2]->data : NULL;
    /* Validation bounds a batch stride only where the operand is read: A and B not at all when K
       is 0, the bias only when FULL. Offsets are formed only for what is read. */
    if (p->bias_kind == KILN_CPU_BIAS_FULL) bias += bi * p->bias_batch_stride;
    if (p->K > 0) {
        A += bi * p->a_batch_stride;
        B += bi * p->b_batch_stride;
    }
    *out = (kiln_cpu_gemm_problem){
        .M = p->M, .N = p->N, .K = p->K,
        .a = {A, p->trans_a ? 1 : p->lda, p->trans_a ? p->lda : 1, false, 0},
        .b = {B, p->trans_b ? 1 : p->ldb, p->trans_b ? p->ldb : 1, p->b_packed, 0},
        .y = (float *)outs[0]->data + bi * p->y_batch_stride,
        .ldy = p->ldy,
        .e = {p->alpha, p->beta, p->bias_kind, bias, p->act, 0, 0},
    };
}

kiln_status kiln_cpu_gemm_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                               kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    gemm_step_args args = {params, in, out};
    if (args.p->b_packed == KILN_CPU_PACKED_STRASSEN)
        return kiln_cpu_gemm_strassen_step(kit, args.p, in[0]->data, in[1]->data,
                                           args.p->bias_kind != KILN_CPU_BIAS_NONE ? in[2]->data : NULL,
                                           out[0]->data, exec);
    return kiln_cpu_gemm_batch(kit, args.p->batch, gemm_step_problem, &args, exec);
}
