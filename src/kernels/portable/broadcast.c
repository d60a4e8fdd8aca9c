/* broadcast.c — ONNX multidirectional (numpy-style) broadcasting.
 * Layer: kernels/portable. */
#include "kernels/portable/kernel.h"

kiln_status kiln_broadcast_shapes(const kiln_tensor *const *ts, size_t n, int64_t *out, uint32_t *out_rank)
{
    uint32_t rank = 0;
    for (size_t k = 0; k < n; k++)
        if (ts[k] && ts[k]->rank > rank) rank = ts[k]->rank;
    for (uint32_t d = 0; d < rank; d++) out[d] = 1;
    for (size_t k = 0; k < n; k++) {
        if (!ts[k]) continue;
        uint32_t off = rank - ts[k]->rank;
        for (uint32_t d = 0; d < ts[k]->rank; d++) {
            int64_t dim = ts[k]->shape[d], *o = &out[off + d];
            if (dim == *o) continue;
            if (*o == 1) *o = dim;
            else if (dim != 1) return KILN_ERROR_SHAPE_MISMATCH;
        }
    }
    *out_rank = rank;
    return KILN_OK;
}

void kiln_broadcast_strides(const kiln_tensor *t, const int64_t *out_shape, uint32_t out_rank, int64_t *strides)
{
    int64_t stride = 1;
    for (int64_t d = (int64_t)out_rank - 1; d >= 0; d--) {
        int64_t td = d - (int64_t)(out_rank - t->rank);
        if (td < 0) {
            strides[d] = 0;
            continue;
        }
        int64_t dim = t->shape[td];
        strides[d] = (dim == 1 && out_shape[d] != 1) ? 0 : stride;
        stride *= dim;
    }
}
