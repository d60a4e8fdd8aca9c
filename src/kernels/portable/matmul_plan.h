/* matmul_plan.h — the shapes of a numpy-semantics matrix product (MatMul, MatMulInteger,
 * QLinearMatMul): M, N, K, the broadcast batch dims and each operand's batch strides.
 *
 * Layer: kernels/portable (internal to linalg.c and qlinear_matmul.c). Depends on kernel.h.
 */
#ifndef KILN_KERNELS_PORTABLE_MATMUL_PLAN_H
#define KILN_KERNELS_PORTABLE_MATMUL_PLAN_H

#include "kernels/portable/kernel.h"

#define KILN_MATMUL_MAX_BATCH (KILN_MAX_RANK - 2)

typedef struct kiln_matmul_plan {
    int64_t m, n, k;
    uint32_t batch_rank;
    int64_t batch[KILN_MATMUL_MAX_BATCH];      /* broadcast batch shape */
    int64_t a_stride[KILN_MATMUL_MAX_BATCH];   /* element stride of A per batch dim, 0 when broadcast */
    int64_t b_stride[KILN_MATMUL_MAX_BATCH];
    int64_t batch_count;
    bool fold_batch;                      /* B has no batch: run one (batch * m, k) x (k, n) GEMM */
} kiln_matmul_plan;

/* The plan of A (..., M, K) times B (..., K, N), either of rank 1 as numpy promotes it.
   KILN_ERROR_SHAPE_MISMATCH when K differs or the batch dims do not broadcast. */
kiln_status kiln_matmul_plan_make(const kiln_tensor *a, const kiln_tensor *b, kiln_matmul_plan *p);

/* Element offsets of batch entry `index` (row-major over p->batch) in A and B. */
void kiln_matmul_batch_offsets(const kiln_matmul_plan *p, int64_t index, int64_t *a_off, int64_t *b_off);

/* Sets out to the product's dtype and shape: the batch dims, then M unless A is 1-D and N
   unless B is 1-D. */
void kiln_matmul_output_shape(const kiln_matmul_plan *p, const kiln_tensor *a, const kiln_tensor *b, kiln_dtype dtype,
                              kiln_tensor *out);

#endif /* KILN_KERNELS_PORTABLE_MATMUL_PLAN_H */
