/* compare.c — tolerance comparison of tensors for the conformance tests. */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double kiln_test_element(const kiln_tensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case KILN_DTYPE_F32: return ((const float *)d)[i];
    case KILN_DTYPE_F64: return ((const double *)d)[i];
    case KILN_DTYPE_I64: return (double)((const int64_t *)d)[i];
    case KILN_DTYPE_I32: return ((const int32_t *)d)[i];
    case KILN_DTYPE_I16: return ((const int16_t *)d)[i];
    case KILN_DTYPE_I8: return ((const int8_t *)d)[i];
    case KILN_DTYPE_U64: return (double)((const uint64_t *)d)[i];
    case KILN_DTYPE_U32: return ((const uint32_t *)d)[i];
    case KILN_DTYPE_U16: return ((const uint16_t *)d)[i];
    case KILN_DTYPE_U8: case KILN_DTYPE_BOOL: return ((const uint8_t *)d)[i];
    case KILN_DTYPE_F16: {
        uint16_t h = ((const uint16_t *)d)[i];
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        return (h & 0x8000) ? -v : v;
    }
    case KILN_DTYPE_BF16: {
        uint32_t bits = (uint32_t)((const uint16_t *)d)[i] << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    default: break; /* block-quantized: no element of its own */
    }
    return 0;
}

bool kiln_test_compare(const kiln_tensor *a, const kiln_tensor *e, double rtol, double atol, char *why, size_t n)
{
    if (a->dtype != e->dtype) {
        snprintf(why, n, "dtype %s, expected %s", kiln_dtype_name(a->dtype), kiln_dtype_name(e->dtype));
        return false;
    }
    bool same = a->rank == e->rank;
    for (uint32_t d = 0; same && d < a->rank; d++) same = a->shape[d] == e->shape[d];
    if (!same) {
        char sa[128] = "", se[128] = "";
        for (uint32_t d = 0; d < a->rank; d++) snprintf(sa + strlen(sa), sizeof sa - strlen(sa), "%lld,", (long long)a->shape[d]);
        for (uint32_t d = 0; d < e->rank; d++) snprintf(se + strlen(se), sizeof se - strlen(se), "%lld,", (long long)e->shape[d]);
        snprintf(why, n, "shape (%s), expected (%s)", sa, se);
        return false;
    }
    int64_t numel = kiln_tensor_numel(e);
    for (int64_t i = 0; i < numel; i++) {
        double x = kiln_test_element(a, i), y = kiln_test_element(e, i);
        if (isnan(x) && isnan(y)) continue;
        if (isinf(y) && x == y) continue;
        if (!(fabs(x - y) <= atol + rtol * fabs(y))) {
            snprintf(why, n, "element %lld is %.9g, expected %.9g", (long long)i, x, y);
            return false;
        }
    }
    return true;
}
