/* data_cast.c — Cast and CastLike (listed in kiln_kernels_data, data.c) and the element
 * conversion they share with Pad. Layer: kernels/portable.
 *
 * Every element is loaded into the widest value of its class (double for floats, int64 for
 * signed, uint64 for unsigned and bool), so an int64 -> int64 or uint64 -> float32 conversion
 * never passes through a type that loses bits, then stored with the destination's rule:
 *  - floats to f16/bf16 round to nearest even straight from the double (no double rounding);
 *  - floats to integers truncate toward zero and saturate (NaN gives 0): ONNX leaves
 *    out-of-range values undefined, and saturation is the defined choice that never traps;
 *  - integers to narrower integers wrap (two's complement), as numpy does;
 *  - anything to bool is "nonzero" (NaN is true).
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

/* ---- f16 / bf16 ---- */

static double half_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0) v = ldexp(mant, -24);
    else if (exp == 31) v = mant ? NAN : INFINITY;
    else v = ldexp(mant | 0x400, exp - 25);
    return (h & 0x8000) ? -v : v;
}

static double bf16_to_double(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Encodes x into a 16-bit IEEE-style float with mant_bits explicit mantissa bits and
   exp_bits exponent bits (f16: 10/5, bf16: 7/8), rounding to nearest even. Scaling by a power
   of two is exact in double, so nearbyint() does the rounding exactly once. */
static uint16_t encode_small_float(double x, int mant_bits, int exp_bits)
{
    int bias = (1 << (exp_bits - 1)) - 1, exp_all = (1 << exp_bits) - 1;
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (isnan(x)) return (uint16_t)(sign | exp_all << mant_bits | 1 << (mant_bits - 1));
    double a = fabs(x);
    if (isinf(a)) return (uint16_t)(sign | exp_all << mant_bits);
    int e;
    frexp(a, &e);
    int exp = e - 1, min_exp = 1 - bias;
    /* Subnormals share the quantum of the smallest normal exponent. */
    if (exp < min_exp) exp = min_exp;
    double m = nearbyint(ldexp(a, mant_bits - exp));
    double implicit = ldexp(1.0, mant_bits);
    if (m >= 2 * implicit) { /* rounding carried into the next binade */
        m /= 2;
        exp++;
    }
    if (m < implicit) return (uint16_t)(sign | (uint16_t)m); /* subnormal or zero */
    int biased = exp + bias;
    if (biased >= exp_all) return (uint16_t)(sign | exp_all << mant_bits);
    return (uint16_t)(sign | biased << mant_bits | (uint16_t)(m - implicit));
}

/* ---- element load / store ---- */

typedef enum value_kind { KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED } value_kind;

typedef struct scalar {
    value_kind kind;
    double f;       /* KIND_FLOAT */
    int64_t i;      /* KIND_SIGNED */
    uint64_t u;     /* KIND_UNSIGNED */
} scalar;

static scalar load(kiln_dtype dtype, const void *base, int64_t i)
{
    scalar v = {0};
    switch (dtype) {
    case KILN_DTYPE_F32: v.kind = KIND_FLOAT; v.f = ((const float *)base)[i]; break;
    case KILN_DTYPE_F64: v.kind = KIND_FLOAT; v.f = ((const double *)base)[i]; break;
    case KILN_DTYPE_F16: v.kind = KIND_FLOAT; v.f = half_to_double(((const uint16_t *)base)[i]); break;
    case KILN_DTYPE_BF16: v.kind = KIND_FLOAT; v.f = bf16_to_double(((const uint16_t *)base)[i]); break;
    case KILN_DTYPE_I8: v.kind = KIND_SIGNED; v.i = ((const int8_t *)base)[i]; break;
    case KILN_DTYPE_I16: v.kind = KIND_SIGNED; v.i = ((const int16_t *)base)[i]; break;
    case KILN_DTYPE_I32: v.kind = KIND_SIGNED; v.i = ((const int32_t *)base)[i]; break;
    case KILN_DTYPE_I64: v.kind = KIND_SIGNED; v.i = ((const int64_t *)base)[i]; break;
    case KILN_DTYPE_U8: v.kind = KIND_UNSIGNED; v.u = ((const uint8_t *)base)[i]; break;
    case KILN_DTYPE_U16: v.kind = KIND_UNSIGNED; v.u = ((const uint16_t *)base)[i]; break;
    case KILN_DTYPE_U32: v.kind = KIND_UNSIGNED; v.u = ((const uint32_t *)base)[i]; break;
    case KILN_DTYPE_U64: v.kind = KIND_UNSIGNED; v.u = ((const uint64_t *)base)[i]; break;
    case KILN_DTYPE_BOOL: v.kind = KIND_UNSIGNED; v.u = ((const uint8_t *)base)[i] != 0; break;
    default: break; /* block-quantized: no ONNX kernel sees one (kiln_kernel_quantized_input) */
    }
    return v;
}

static double as_double(scalar v)
{
    return v.kind == KIND_FLOAT ? v.f : v.kind == KIND_SIGNED ? (double)v.i : (double)v.u;
}

static float as_float(scalar v)
{
    /* Integers convert to float directly: through double they could round twice. */
    return v.kind == KIND_FLOAT ? (float)v.f : v.kind == KIND_SIGNED ? (float)v.i : (float)v.u;
}

static bool is_nonzero(scalar v)
{
    return v.kind == KIND_FLOAT ? v.f != 0.0 : v.kind == KIND_SIGNED ? v.i != 0 : v.u != 0;
}

static bool is_signed_int(kiln_dtype dtype)
{
    return dtype == KILN_DTYPE_I8 || dtype == KILN_DTYPE_I16 || dtype == KILN_DTYPE_I32 || dtype == KILN_DTYPE_I64;
}

/* The two's-complement bits of v for an integer destination of `bits` width: wrap for
   integers, truncate and saturate for floats. */
static uint64_t integer_bits(scalar v, bool dst_signed, unsigned bits)
{
    if (v.kind == KIND_SIGNED) return (uint64_t)v.i;
    if (v.kind == KIND_UNSIGNED) return v.u;
    double f = v.f;
    if (isnan(f)) return 0;
    if (dst_signed) {
        /* |f| < 2^(bits-1) truncates into range; the limits themselves are exact doubles. */
        int64_t hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
        double limit = ldexp(1.0, (int)bits - 1);
        if (f >= limit) return (uint64_t)hi;
        if (f <= -limit) return (uint64_t)(-hi - 1);
        return (uint64_t)(int64_t)f;
    }
    double limit = ldexp(1.0, (int)bits);
    if (f <= 0) return 0;
    if (f >= limit) return bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    return (uint64_t)f;
}

static void store(kiln_dtype dtype, void *base, int64_t i, scalar v)
{
    size_t es = kiln_dtype_size(dtype);
    switch (dtype) {
    case KILN_DTYPE_F32: ((float *)base)[i] = as_float(v); return;
    case KILN_DTYPE_F64: ((double *)base)[i] = as_double(v); return;
    case KILN_DTYPE_F16: ((uint16_t *)base)[i] = encode_small_float(as_double(v), 10, 5); return;
    case KILN_DTYPE_BF16: ((uint16_t *)base)[i] = encode_small_float(as_double(v), 7, 8); return;
    case KILN_DTYPE_BOOL: ((uint8_t *)base)[i] = is_nonzero(v); return;
    default: break;
    }
    uint64_t bits = integer_bits(v, is_signed_int(dtype), (unsigned)(es * 8));
    switch (es) {
    case 1: ((uint8_t *)base)[i] = (uint8_t)bits; break;
    case 2: ((uint16_t *)base)[i] = (uint16_t)bits; break;
    case 4: ((uint32_t *)base)[i] = (uint32_t)bits; break;
    default: ((uint64_t *)base)[i] = bits; break;
    }
}

void kiln_data_store_f64(kiln_dtype dtype, void *dst, double v)
{
    store(dtype, dst, 0, (scalar){.kind = KIND_FLOAT, .f = v});
}

/* ---- Cast / CastLike ---- */

/* ONNX TensorProto.DataType codes and names of the types kiln holds. */
static const struct {
    int64_t code;
    const char *name;
    kiln_dtype dtype;
} onnx_types[] = {
    {1, "FLOAT", KILN_DTYPE_F32},   {2, "UINT8", KILN_DTYPE_U8},        {3, "INT8", KILN_DTYPE_I8},
    {4, "UINT16", KILN_DTYPE_U16},  {5, "INT16", KILN_DTYPE_I16},       {6, "INT32", KILN_DTYPE_I32},
    {7, "INT64", KILN_DTYPE_I64},   {9, "BOOL", KILN_DTYPE_BOOL},       {10, "FLOAT16", KILN_DTYPE_F16},
    {11, "DOUBLE", KILN_DTYPE_F64}, {12, "UINT32", KILN_DTYPE_U32},     {13, "UINT64", KILN_DTYPE_U64},
    {16, "BFLOAT16", KILN_DTYPE_BF16},
};

kiln_status kiln_data_dtype_of_onnx(int64_t code, kiln_dtype *dtype)
{
    for (size_t k = 0; k < sizeof onnx_types / sizeof onnx_types[0]; k++) {
        if (code == onnx_types[k].code) {
            *dtype = onnx_types[k].dtype;
            return KILN_OK;
        }
    }
    return code < 1 || code > 23 ? KILN_ERROR_INVALID_ARGUMENT : KILN_ERROR_NOT_SUPPORTED;
}

static bool name_equals_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return false;
    return *a == *b;
}

/* A dtype attribute: a DataType code, or a type name ("FLOAT") as Cast-1 writes `to`. Known
   ONNX types kiln has no dtype for (string, complex, float8) are NOT_SUPPORTED. */
kiln_status kiln_data_dtype_attr(const kiln_node *node, const char *name, kiln_dtype *dtype)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    KILN_CHECK(a && (a->type == KILN_ATTR_INT || a->type == KILN_ATTR_STRING), KILN_ERROR_INVALID_ARGUMENT);
    if (a->type == KILN_ATTR_INT) return kiln_data_dtype_of_onnx(a->i, dtype);
    for (size_t k = 0; k < sizeof onnx_types / sizeof onnx_types[0]; k++) {
        if (name_equals_nocase(a->s, onnx_types[k].name)) {
            *dtype = onnx_types[k].dtype;
            return KILN_OK;
        }
    }
    return KILN_ERROR_NOT_SUPPORTED;
}

static kiln_status cast_target(const kiln_node *node, kiln_dtype *dtype)
{
    return kiln_data_dtype_attr(node, "to", dtype);
}

static kiln_status cast_set_output(const kiln_tensor *x, kiln_tensor *y, kiln_dtype dtype)
{
    KILN_CHECK(kiln_dtype_size(x->dtype) > 0, KILN_ERROR_DTYPE_MISMATCH);
    KILN_TRY(kiln_shape_check_dims(x->shape, x->rank, dtype));
    if (y) kiln_tensor_set_shape(y, dtype, x->rank, x->shape);
    return KILN_OK;
}

static void convert(const kiln_tensor *x, kiln_tensor *y)
{
    int64_t n = kiln_numel(x);
    if (n == 0) return;
    if (x->dtype == y->dtype) {
        memcpy(y->data, x->data, kiln_tensor_bytes(x));
        return;
    }
    for (int64_t i = 0; i < n; i++) store(y->dtype, y->data, i, load(x->dtype, x->data, i));
}

kiln_status kiln_data_cast_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    kiln_dtype dtype;
    KILN_TRY(cast_target(node, &dtype));
    return cast_set_output(x, OUT(0), dtype);
}

kiln_status kiln_data_cast_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    if (OUT(0)) convert(in[0], OUT(0));
    return KILN_OK;
}

kiln_status kiln_data_cast_like_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      size_t *scratch_size)
{
    const kiln_tensor *x = IN(0), *like = IN(1);
    KILN_CHECK(x && like, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(kiln_dtype_size(like->dtype) > 0, KILN_ERROR_DTYPE_MISMATCH);
    return cast_set_output(x, OUT(0), like->dtype);
}

kiln_status kiln_data_cast_like_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    kiln_kernel_ctx *ctx)
{
    if (OUT(0)) convert(in[0], OUT(0));
    return KILN_OK;
}
