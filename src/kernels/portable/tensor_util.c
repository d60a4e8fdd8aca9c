/* tensor_util.c — element access and shape helpers shared by the portable kernels.
 * Layer: kernels/portable. */
#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/kernel.h"

int64_t kiln_numel(const kiln_tensor *t)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < t->rank; i++) n *= t->shape[i];
    return n;
}

size_t kiln_tensor_bytes(const kiln_tensor *t)
{
    size_t n;
    return kiln_tensor_size(t, &n) == KILN_OK ? n : 0;
}

bool kiln_tensor_bytes_checked(const kiln_tensor *t, size_t *out)
{
    return kiln_tensor_size(t, out) == KILN_OK;
}

void kiln_tensor_shape_text(const kiln_tensor *t, char *buf, size_t size)
{
    if (!size) return;
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d <= t->rank && d <= KILN_MAX_RANK && used < size; d++) {
        int n = d == t->rank ? snprintf(buf + used, size - used, "]")
                             : snprintf(buf + used, size - used, "%s%lld", d ? ", " : "[", (long long)t->shape[d]);
        if (n < 0) return;
        used += (size_t)n;
    }
    if (t->rank == 0) snprintf(buf, size, "[] (a scalar)");
}

void kiln_tensor_set_shape(kiln_tensor *dst, kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    dst->dtype = dtype;
    dst->rank = rank;
    for (uint32_t i = 0; i < KILN_MAX_RANK; i++) dst->shape[i] = i < rank ? shape[i] : 0;
}

int64_t kiln_tensor_get_i64(const kiln_tensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case KILN_DTYPE_I64: return ((const int64_t *)d)[i];
    case KILN_DTYPE_I32: return ((const int32_t *)d)[i];
    case KILN_DTYPE_I16: return ((const int16_t *)d)[i];
    case KILN_DTYPE_I8: return ((const int8_t *)d)[i];
    case KILN_DTYPE_U64: return (int64_t)((const uint64_t *)d)[i];
    case KILN_DTYPE_U32: return ((const uint32_t *)d)[i];
    case KILN_DTYPE_U16: return ((const uint16_t *)d)[i];
    case KILN_DTYPE_U8: case KILN_DTYPE_BOOL: return ((const uint8_t *)d)[i];
    case KILN_DTYPE_F32: return (int64_t)((const float *)d)[i];
    case KILN_DTYPE_F64: return (int64_t)((const double *)d)[i];
    default: return 0;
    }
}

double kiln_tensor_get_f64(const kiln_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case KILN_DTYPE_F32: return ((const float *)t->data)[i];
    case KILN_DTYPE_F64: return ((const double *)t->data)[i];
    default: return (double)kiln_tensor_get_i64(t, i);
    }
}

bool kiln_axis_normalize(int64_t axis, int64_t rank, int64_t *out)
{
    if (axis < -rank || axis >= rank) return false;
    *out = axis < 0 ? axis + rank : axis;
    return true;
}
