/* matmul_plan.c — numpy matmul shapes: batch broadcast and per-batch offsets (matmul_plan.h).
 * Layer: kernels/portable. */
#include <string.h>

#include "kernels/portable/matmul_plan.h"

/* The batch dims of t: all but its last two (none for rank <= 2). */
static uint32_t batch_rank_of(const kiln_tensor *t) { return t->rank > 2 ? t->rank - 2 : 0; }

/* Right-aligned broadcast of the batch dims of a and b with each operand's matrix strides. */
static kiln_status broadcast_batch(const kiln_tensor *a, const kiln_tensor *b, kiln_matmul_plan *p)
{
    uint32_t ra = batch_rank_of(a), rb = batch_rank_of(b);
    p->batch_rank = ra > rb ? ra : rb;
    int64_t a_step = p->m * p->k, b_step = p->k * p->n;
    p->batch_count = 1;
    for (int64_t i = (int64_t)p->batch_rank - 1; i >= 0; i--) {
        int64_t ia = i - (int64_t)(p->batch_rank - ra), ib = i - (int64_t)(p->batch_rank - rb);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) return KILN_ERROR_SHAPE_MISMATCH;
        p->batch[i] = da == 1 ? db : da;
        p->a_stride[i] = da == 1 ? 0 : a_step;
        p->b_stride[i] = db == 1 ? 0 : b_step;
        a_step *= da;
        b_step *= db;
        p->batch_count *= p->batch[i];
    }
    /* Folding needs B shared by every batch and A dense over the whole output batch. */
    bool b_shared = true, a_full = true;
    for (uint32_t i = 0; i < p->batch_rank; i++) {
        if (p->b_stride[i] != 0 && p->batch[i] != 1) b_shared = false;
        if (p->a_stride[i] == 0 && p->batch[i] != 1) a_full = false;
    }
    p->fold_batch = b_shared && a_full;
    return KILN_OK;
}

kiln_status kiln_matmul_plan_make(const kiln_tensor *a, const kiln_tensor *b, kiln_matmul_plan *p)
{
    if (a->rank < 1 || b->rank < 1) return KILN_ERROR_SHAPE_MISMATCH;
    p->m = a->rank == 1 ? 1 : a->shape[a->rank - 2];
    p->k = a->shape[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
    p->n = b->rank == 1 ? 1 : b->shape[b->rank - 1];
    if (kb != p->k) return KILN_ERROR_SHAPE_MISMATCH;
    return broadcast_batch(a, b, p);
}

/* Element offsets of batch entry `index` (row-major over p->batch) in A and B. */
void kiln_matmul_batch_offsets(const kiln_matmul_plan *p, int64_t index, int64_t *a_off, int64_t *b_off)
{
    *a_off = *b_off = 0;
    for (int64_t i = (int64_t)p->batch_rank - 1; i >= 0; i--) {
        int64_t coord = index % p->batch[i];
        index /= p->batch[i];
        *a_off += coord * p->a_stride[i];
        *b_off += coord * p->b_stride[i];
    }
}


void kiln_matmul_output_shape(const kiln_matmul_plan *p, const kiln_tensor *a, const kiln_tensor *b, kiln_dtype dtype,
                              kiln_tensor *out)
{
    int64_t shape[KILN_MAX_RANK];
    uint32_t rank = p->batch_rank;
    memcpy(shape, p->batch, rank * sizeof *shape);
    if (a->rank > 1) shape[rank++] = p->m;
    if (b->rank > 1) shape[rank++] = p->n;
    kiln_tensor_set_shape(out, dtype, rank, shape);
}
