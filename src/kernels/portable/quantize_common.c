/* quantize_common.c — scale layouts and the saturating store of the quantization kernels
 * (quantize_common.h). Layer: kernels/portable. */
#include "kernels/portable/quantize_common.h"

bool kiln_quant_is_scalar(const kiln_tensor *t)
{
    return t->rank == 0 || (t->rank == 1 && t->shape[0] == 1);
}

bool kiln_quant_vector_ok(const kiln_tensor *t, int64_t n)
{
    return kiln_quant_is_scalar(t) || (t->rank == 1 && t->shape[0] == n);
}

static bool same_shape(const kiln_tensor *a, const kiln_tensor *b)
{
    if (a->rank != b->rank) return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

kiln_status kiln_quant_axis_make(const kiln_node *node, const kiln_tensor *x, const kiln_tensor *scale,
                                 const kiln_tensor *zp, kiln_quant_axis *out)
{
    out->n_channels = out->inner = 1;
    if (zp && !same_shape(zp, scale) && !(kiln_quant_is_scalar(zp) && kiln_quant_is_scalar(scale)))
        return KILN_ERROR_SHAPE_MISMATCH;
    if (kiln_quant_is_scalar(scale)) return KILN_OK;
    if (scale->rank != 1) return KILN_ERROR_SHAPE_MISMATCH;
    int64_t axis;
    if (!kiln_axis_normalize(kiln_node_attr_int(node, "axis", 1), x->rank, &axis)) return KILN_ERROR_INVALID_ARGUMENT;
    if (scale->shape[0] != x->shape[axis]) return KILN_ERROR_SHAPE_MISMATCH;
    out->n_channels = x->shape[axis];
    for (uint32_t d = (uint32_t)axis + 1; d < x->rank; d++) out->inner *= x->shape[d];
    return KILN_OK;
}

void kiln_quant_store(kiln_tensor *t, int64_t i, double q)
{
    if (q != q) q = 0; /* NaN (a NaN input, a zero scale of a zero): converting it would be undefined */
    switch (t->dtype) {
    case KILN_DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q); break;
    case KILN_DTYPE_I8: ((int8_t *)t->data)[i] = (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q); break;
    case KILN_DTYPE_I32:
        ((int32_t *)t->data)[i] = (int32_t)(q < INT32_MIN ? INT32_MIN : q > INT32_MAX ? INT32_MAX : q);
        break;
    default: break;
    }
}
