/* reduce_plan.h — a reduction over an arbitrary set of axes, as n_outer independent reductions.
 *
 * Layer: kernels/portable (internal to the reduce and norm families).
 * The dims of the input split into kept dims and reduced dims. Enumerating the kept dims in
 * row-major order enumerates the outputs in the order of the dense output tensor (keepdims only
 * inserts 1s, which does not change that order); enumerating the reduced dims enumerates the
 * elements of one reduction. Consecutive dims of the same kind are merged, so the common cases
 * (reduce the trailing dims, reduce one axis) have one or two dims per side.
 *
 *   input element offset = kiln_reduce_plan_base(plan, o) + offsets[k]
 *   for output o < n_outer and reduced element k < n_inner
 */
#ifndef KILN_KERNELS_PORTABLE_REDUCE_PLAN_H
#define KILN_KERNELS_PORTABLE_REDUCE_PLAN_H

#include "kernels/portable/kernel.h"

typedef struct kiln_reduce_plan {
    uint32_t n_kept, n_reduced;
    int64_t kept_shape[KILN_MAX_RANK];      /* (n_kept) */
    int64_t kept_stride[KILN_MAX_RANK];     /* (n_kept) input element strides */
    int64_t reduced_shape[KILN_MAX_RANK];   /* (n_reduced) */
    int64_t reduced_stride[KILN_MAX_RANK];  /* (n_reduced) input element strides */
    int64_t n_outer;                        /* number of reductions = output elements */
    int64_t n_inner;                        /* elements per reduction */
} kiln_reduce_plan;

/* Marks each axis of axes (n values, each in [-rank, rank)) in mask (rank entries, cleared
   first). KILN_ERROR_INVALID_ARGUMENT when an axis is out of range or repeated. */
kiln_status kiln_reduce_axes_mask(const int64_t *axes, size_t n, uint32_t rank, bool *mask);
/* The same for axes given as an integer tensor with known data (any rank, any int dtype). */
kiln_status kiln_reduce_axes_mask_tensor(const kiln_tensor *axes, uint32_t rank, bool *mask);

/* Shape of x reduced over mask: reduced dims become 1 (keepdims) or disappear. */
void kiln_reduce_out_shape(const kiln_tensor *x, const bool *mask, bool keepdims, int64_t *shape, uint32_t *rank);

void kiln_reduce_plan_init(kiln_reduce_plan *plan, const kiln_tensor *x, const bool *mask);
/* Offsets (n_inner of them) of one reduction's elements relative to its base. */
void kiln_reduce_plan_offsets(const kiln_reduce_plan *plan, int64_t *offsets);
/* Input offset of the first element of reduction o (o < n_outer). */
int64_t kiln_reduce_plan_base(const kiln_reduce_plan *plan, int64_t o);

#endif /* KILN_KERNELS_PORTABLE_REDUCE_PLAN_H */
