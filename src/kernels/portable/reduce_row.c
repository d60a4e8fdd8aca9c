/* reduce_row.c — dense work rows for the reduce, softmax and norm families (see reduce_row.h).
 * Layer: kernels/portable.
 * Each function switches on the dtype once per row, never per element: the per-dtype loops are
 * spelled by the ROW_* macros below, which differ only in the element type and the index
 * expression (strided or offset list). */
#include <math.h>

#include "kernels/portable/reduce_row.h"

bool kiln_reduce_row_dtype_ok(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F32: case KILN_DTYPE_F64:
    case KILN_DTYPE_I8: case KILN_DTYPE_I16: case KILN_DTYPE_I32: case KILN_DTYPE_I64:
    case KILN_DTYPE_U8: case KILN_DTYPE_U16: case KILN_DTYPE_U32: case KILN_DTYPE_U64:
        return true;
    default:
        return false;
    }
}

bool kiln_reduce_row_is_float(kiln_dtype dtype) { return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F64; }

/* Read row elements of type T at index expression IDX(k) into dst (converted to DST_T). */
#define ROW_READ(T, DST_T, IDX)                                                         \
    do {                                                                                \
        const T *p_ = (const T *)t->data + base;                                        \
        for (int64_t k = 0; k < n; k++) dst[k] = (DST_T)p_[IDX];                         \
    } while (0)

/* Write src (of any arithmetic type) to row elements of type T at index IDX(k). */
#define ROW_WRITE(T, IDX)                                                               \
    do {                                                                                \
        T *p_ = (T *)t->data + base;                                                    \
        for (int64_t k = 0; k < n; k++) p_[IDX] = (T)src[k];                             \
    } while (0)

/* One switch over every supported dtype, applying OP(element type). */
#define ROW_SWITCH(OP)                                                                  \
    switch (t->dtype) {                                                                 \
    case KILN_DTYPE_F32: OP(float); break;                                              \
    case KILN_DTYPE_F64: OP(double); break;                                             \
    case KILN_DTYPE_I8: OP(int8_t); break;                                              \
    case KILN_DTYPE_I16: OP(int16_t); break;                                            \
    case KILN_DTYPE_I32: OP(int32_t); break;                                            \
    case KILN_DTYPE_I64: OP(int64_t); break;                                            \
    case KILN_DTYPE_U8: OP(uint8_t); break;                                             \
    case KILN_DTYPE_U16: OP(uint16_t); break;                                           \
    case KILN_DTYPE_U32: OP(uint32_t); break;                                           \
    case KILN_DTYPE_U64: OP(uint64_t); break;                                           \
    default: break;                                                                     \
    }

void kiln_reduce_row_load_f64(const kiln_tensor *t, int64_t base, int64_t stride, int64_t n, double *dst)
{
#define OP_(T) ROW_READ(T, double, k * stride)
    ROW_SWITCH(OP_)
#undef OP_
}

void kiln_reduce_row_load_i64(const kiln_tensor *t, int64_t base, int64_t stride, int64_t n, int64_t *dst)
{
#define OP_(T) ROW_READ(T, int64_t, k * stride)
    ROW_SWITCH(OP_)
#undef OP_
}

void kiln_reduce_row_gather_f64(const kiln_tensor *t, int64_t base, const int64_t *offsets, int64_t n, double *dst)
{
#define OP_(T) ROW_READ(T, double, offsets[k])
    ROW_SWITCH(OP_)
#undef OP_
}

void kiln_reduce_row_gather_i64(const kiln_tensor *t, int64_t base, const int64_t *offsets, int64_t n, int64_t *dst)
{
#define OP_(T) ROW_READ(T, int64_t, offsets[k])
    ROW_SWITCH(OP_)
#undef OP_
}

/* A double is never cast straight to an integer element (out-of-range casts are undefined):
   integer destinations go through kiln_reduce_f64_to_i64. The kernels keep integer data in int64
   rows, so this branch is a safety net rather than a hot path. */
void kiln_reduce_row_store_f64(kiln_tensor *t, int64_t base, int64_t stride, int64_t n, const double *src)
{
    if (!kiln_reduce_row_is_float(t->dtype)) {
        /* Integer destination: convert safely, element by element. */
        for (int64_t k = 0; k < n; k++) {
            int64_t v = kiln_reduce_f64_to_i64(src[k]);
            kiln_reduce_row_store_i64(t, base + k * stride, 1, 1, &v);
        }
        return;
    }
#define OP_(T) ROW_WRITE(T, k * stride)
    ROW_SWITCH(OP_)
#undef OP_
}

void kiln_reduce_row_store_i64(kiln_tensor *t, int64_t base, int64_t stride, int64_t n, const int64_t *src)
{
    /* Narrowing to a smaller signed type wraps on every compiler kiln supports (C11 leaves it
       implementation-defined, not undefined); unsigned targets wrap by definition. */
#define OP_(T) ROW_WRITE(T, k * stride)
    ROW_SWITCH(OP_)
#undef OP_
}

void kiln_reduce_row_scatter_f64(kiln_tensor *t, int64_t base, const int64_t *offsets, int64_t n, const double *src)
{
    if (!kiln_reduce_row_is_float(t->dtype)) {
        for (int64_t k = 0; k < n; k++) {
            int64_t v = kiln_reduce_f64_to_i64(src[k]);
            kiln_reduce_row_store_i64(t, base + offsets[k], 1, 1, &v);
        }
        return;
    }
#define OP_(T) ROW_WRITE(T, offsets[k])
    ROW_SWITCH(OP_)
#undef OP_
}

int64_t kiln_reduce_f64_to_i64(double v)
{
    if (isnan(v)) return 0;
    /* 2^63 is exactly representable; anything at or beyond it saturates. */
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
