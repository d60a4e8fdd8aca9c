/* reduce_plan.c — axis sets and the kept/reduced split of a reduction (see reduce_plan.h).
 * Layer: kernels/portable. */
#include "kernels/portable/reduce_plan.h"

static kiln_status mask_add(int64_t axis, uint32_t rank, bool *mask)
{
    int64_t a;
    if (!kiln_axis_normalize(axis, rank, &a) || mask[a]) return KILN_ERROR_INVALID_ARGUMENT;
    mask[a] = true;
    return KILN_OK;
}

kiln_status kiln_reduce_axes_mask(const int64_t *axes, size_t n, uint32_t rank, bool *mask)
{
    for (uint32_t d = 0; d < rank; d++) mask[d] = false;
    for (size_t i = 0; i < n; i++) {
        kiln_status st = mask_add(axes[i], rank, mask);
        if (st != KILN_OK) return st;
    }
    return KILN_OK;
}

kiln_status kiln_reduce_axes_mask_tensor(const kiln_tensor *axes, uint32_t rank, bool *mask)
{
    for (uint32_t d = 0; d < rank; d++) mask[d] = false;
    int64_t n = kiln_numel(axes);
    for (int64_t i = 0; i < n; i++) {
        kiln_status st = mask_add(kiln_tensor_get_i64(axes, i), rank, mask);
        if (st != KILN_OK) return st;
    }
    return KILN_OK;
}

void kiln_reduce_out_shape(const kiln_tensor *x, const bool *mask, bool keepdims, int64_t *shape, uint32_t *rank)
{
    uint32_t r = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (!mask[d]) shape[r++] = x->shape[d];
        else if (keepdims) shape[r++] = 1;
    }
    *rank = r;
}

/* Appends dim (size, stride) to a side of the plan, merging it into the previous dim of that
   side when the two were adjacent in the input (then they are contiguous in memory). */
static void side_push(int64_t *shape, int64_t *stride, uint32_t *n, bool adjacent, int64_t size, int64_t elem_stride)
{
    if (adjacent && *n > 0) {
        shape[*n - 1] *= size;
        stride[*n - 1] = elem_stride;
        return;
    }
    shape[*n] = size;
    stride[*n] = elem_stride;
    (*n)++;
}

void kiln_reduce_plan_init(kiln_reduce_plan *plan, const kiln_tensor *x, const bool *mask)
{
    int64_t strides[KILN_MAX_RANK];
    int64_t s = 1;
    for (uint32_t d = x->rank; d-- > 0;) {
        strides[d] = s;
        s *= x->shape[d];
    }
    plan->n_kept = plan->n_reduced = 0;
    plan->n_outer = plan->n_inner = 1;
    for (uint32_t d = 0; d < x->rank; d++) {
        bool adjacent = d > 0 && mask[d - 1] == mask[d];
        if (mask[d]) {
            side_push(plan->reduced_shape, plan->reduced_stride, &plan->n_reduced, adjacent, x->shape[d], strides[d]);
            plan->n_inner *= x->shape[d];
        } else {
            side_push(plan->kept_shape, plan->kept_stride, &plan->n_kept, adjacent, x->shape[d], strides[d]);
            plan->n_outer *= x->shape[d];
        }
    }
}

/* Offset of the i-th element (row-major) of the sub-box (shape, stride, n). */
static int64_t box_offset(const int64_t *shape, const int64_t *stride, uint32_t n, int64_t i)
{
    int64_t off = 0;
    for (uint32_t d = n; d-- > 0;) {
        off += (i % shape[d]) * stride[d];
        i /= shape[d];
    }
    return off;
}

void kiln_reduce_plan_offsets(const kiln_reduce_plan *plan, int64_t *offsets)
{
    for (int64_t k = 0; k < plan->n_inner; k++)
        offsets[k] = box_offset(plan->reduced_shape, plan->reduced_stride, plan->n_reduced, k);
}

int64_t kiln_reduce_plan_base(const kiln_reduce_plan *plan, int64_t o)
{
    return box_offset(plan->kept_shape, plan->kept_stride, plan->n_kept, o);
}
