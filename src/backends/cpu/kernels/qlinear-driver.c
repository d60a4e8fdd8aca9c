/* qlinear-driver.c — QLINEAR steps: kiln.Linear over weights kept in their ggml blocks.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags; it calls only the kit it is
 * given (kernel_kit.h). The output columns (weight rows) are cut into contiguous runs, one per
 * thread, at multiples of KILN_CPU_QDOT_ROWS; each run walks its weight rows KILN_CPU_QDOT_ROWS
 * at a time, and for each such group the X rows KILN_CPU_QDOT_M at a time, the kit's block dot
 * product covering all of K. So a decode step (M = 1) streams every weight byte exactly once,
 * from memory, while the group's few KiB of blocks stay in L1 for the other X rows of a prefill.
 * An output is one kernel call's sum whatever the thread count: the bits never depend on it.
 */
#include "backends/cpu/kernels/kernel_kit.h"

/* Multiply-adds a task should get before a worker pays: the GEMM family's grain
   (gemm-blocking.h). A 15M model's decode then splits only its logits (9.2M multiply-adds); its
   layers' products (83K to 221K) cost little more than waking the other thread. */
#define QLINEAR_GRAIN ((int64_t)1 << 18)

typedef struct qlinear_job {
    kiln_cpu_qdot_fn dot;
    const kiln_cpu_qlinear_params *p;
    const float *x;             /* (M, K) */
    const uint8_t *w;           /* (N) rows of row_size bytes */
    const float *bias;          /* (N) or NULL */
    float *y;                   /* (M, N) */
} qlinear_job;

/* Weight-row groups [lo, hi) of KILN_CPU_QDOT_ROWS rows (the last may be short). */
static void qlinear_groups(const void *arg, int64_t lo, int64_t hi)
{
    const qlinear_job *j = arg;
    const kiln_cpu_qlinear_params *p = j->p;
    size_t n_blocks = (size_t)(p->K / 32), row_size = (size_t)p->row_size;
    for (int64_t g = lo; g < hi; g++) {
        int64_t n0 = g * KILN_CPU_QDOT_ROWS;
        size_t rows = (size_t)(p->N - n0 < KILN_CPU_QDOT_ROWS ? p->N - n0 : KILN_CPU_QDOT_ROWS);
        const uint8_t *w = j->w + (size_t)n0 * row_size;
        const float *bias = j->bias ? j->bias + n0 : NULL;
        for (int64_t m0 = 0; m0 < p->M; m0 += KILN_CPU_QDOT_M) {
            size_t m = (size_t)(p->M - m0 < KILN_CPU_QDOT_M ? p->M - m0 : KILN_CPU_QDOT_M);
            j->dot(w, row_size, rows, n_blocks, j->x + m0 * p->K, (size_t)p->K, m, bias, j->y + m0 * p->N + n0,
                   (size_t)p->N);
        }
    }
}

kiln_status kiln_cpu_qlinear_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                  kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_qlinear_params *p = params;
    qlinear_job job = {
        .dot = p->dtype == KILN_DTYPE_Q8_0 ? kit->q8_0_dot : p->dtype == KILN_DTYPE_Q4_0 ? kit->q4_0_dot : NULL,
        .p = p, .x = in[0]->data, .w = in[1]->data,
        .bias = p->has_bias ? in[2]->data : NULL, .y = out[0]->data,
    };
    if (KILN_NEVER(!job.dot)) return KILN_ERROR_NOT_SUPPORTED; /* validation admits these dtypes only */
    if (p->M == 0 || p->N == 0) return KILN_OK;
    if (p->K == 0) { /* no blocks: Y is the bias, or zero */
        for (int64_t i = 0; i < p->M; i++)
            for (int64_t n = 0; n < p->N; n++) job.y[i * p->N + n] = job.bias ? job.bias[n] : 0.0f;
        return KILN_OK;
    }
    int64_t groups = (p->N + KILN_CPU_QDOT_ROWS - 1) / KILN_CPU_QDOT_ROWS;
    kiln_cpu_parallel_rows(exec, groups, kiln_cpu_work_units((double)p->M * (double)p->K * KILN_CPU_QDOT_ROWS),
                           QLINEAR_GRAIN, qlinear_groups, &job);
    return KILN_OK;
}
