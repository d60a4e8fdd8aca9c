/* elementwise_pow.c — Pow for the binary family: base ^ exponent, output dtype = base dtype.
 *
 * Layer: kernels/portable. From opset 12 base and exponent may have different dtypes (f32 ^ i64,
 * i32 ^ f32 ...); rather than one loop per dtype pair, an exponent of another dtype is first
 * widened into scratch (int64 when both are integers, else double), so only these loops exist:
 *   float base ^ same float   (the common case, no conversion)
 *   float base ^ double       (then rounded to the base dtype)
 *   int base   ^ int64        (exact, by squaring, wrapping like the other integer ops)
 *   int base   ^ double       (truncated toward zero, as numpy's astype does)
 * A scalar float exponent of 2 — LayerNorm and RMSNorm decompositions square this way — is
 * done as x * x.
 */
#include <math.h>

#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/elementwise_ops.h"

/* base^exp modulo 2^64. A negative exponent truncates 1/base^|exp| toward zero. */
static inline int64_t int_pow(int64_t base, int64_t exp)
{
    if (exp < 0) {
        if (base == 1) return 1;
        if (base == -1) return (exp & 1) ? -1 : 1;
        return 0;
    }
    uint64_t result = 1, factor = (uint64_t)base, e = (uint64_t)exp;
    while (e) {
        if (e & 1) result *= factor;
        factor *= factor;
        e >>= 1;
    }
    return (int64_t)result;
}

/* double -> int64 truncating; NaN and out-of-range values (undefined in C) saturate or give 0. */
static inline int64_t truncate_to_i64(double v)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

#define DEFINE_SAME(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, T, T, (T)pow(x, y))
#define DEFINE_SQUARE(op, sfx, T, W, DT) KILN_EW_LOOP1(op##_##sfx, T, T, x * x)
#define DEFINE_FLOAT_F64(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, double, T, (T)pow((double)x, y))
#define DEFINE_INT_I64(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, int64_t, T, (T)int_pow((int64_t)x, y))
#define DEFINE_INT_F64(op, sfx, T, W, DT)                                                        \
    KILN_EW_LOOP2(op##_##sfx, T, double, T, (T)truncate_to_i64(pow((double)x, y)))
KILN_EW_FLOAT_TYPES(DEFINE_SAME, same)
KILN_EW_FLOAT_TYPES(DEFINE_SQUARE, square)
KILN_EW_FLOAT_TYPES(DEFINE_FLOAT_F64, by_f64)
KILN_EW_INT_TYPES(DEFINE_INT_I64, by_i64)
KILN_EW_INT_TYPES(DEFINE_INT_F64, by_f64)

static const kiln_ew_loop same_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, same)};
static const kiln_ew_loop square_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, square)};
static const kiln_ew_loop by_f64_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, by_f64) KILN_EW_INT_TYPES(KILN_EW_ENTRY, by_f64)};
static const kiln_ew_loop by_i64_loops[KILN_DTYPE_COUNT] = {KILN_EW_INT_TYPES(KILN_EW_ENTRY, by_i64)};

static bool is_half(kiln_dtype t) { return t == KILN_DTYPE_F16 || t == KILN_DTYPE_BF16; }
static bool is_float(kiln_dtype t) { return t == KILN_DTYPE_F32 || t == KILN_DTYPE_F64 || is_half(t); }
static bool is_int(kiln_dtype t) { return t >= KILN_DTYPE_I8 && t <= KILN_DTYPE_U64; }

/* How a (base, exponent) dtype pair is computed: the exponent dtype the loop reads and its loop. */
typedef struct pow_plan {
    kiln_dtype exponent_dtype;
    kiln_ew_loop loop;
} pow_plan;

static bool pow_plan_make(kiln_dtype base, kiln_dtype exponent, pow_plan *plan)
{
    if (!(is_float(base) || is_int(base)) || !(is_float(exponent) || is_int(exponent))) return false;
    /* f16/bf16 bases run the f32 loops; kiln_ew_apply widens them and rounds the result. */
    if (is_float(base) && exponent == base) {
        *plan = (pow_plan){base, kiln_ew_loop_for(same_loops, base)};
    } else if (is_int(base) && is_int(exponent)) {
        *plan = (pow_plan){KILN_DTYPE_I64, by_i64_loops[base]};
    } else {
        *plan = (pow_plan){KILN_DTYPE_F64, kiln_ew_loop_for(by_f64_loops, base)};
    }
    return true;
}

kiln_status kiln_ew_pow_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size)
{
    const kiln_tensor *base = kiln_ew_input(node, in, 0), *exponent = kiln_ew_input(node, in, 1);
    if (!base || !exponent) return KILN_ERROR_INVALID_ARGUMENT;
    pow_plan plan;
    if (!pow_plan_make(base->dtype, exponent->dtype, &plan)) return KILN_ERROR_DTYPE_MISMATCH;
    /* Before opset 12 both inputs had to share one type. */
    if (node->opset < 12 && base->dtype != exponent->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    kiln_tensor exponent_view, result;
    kiln_status st = kiln_ew_binary_operands(node, base, exponent, &exponent_view, &result);
    if (st != KILN_OK) return st;
    if (plan.exponent_dtype != exponent->dtype) *scratch_size = (size_t)kiln_numel(exponent) * sizeof(double);
    if (out[0]) kiln_tensor_set_shape(out[0], base->dtype, result.rank, result.shape);
    return KILN_OK;
}

/* True when the exponent is a single float equal to 2, so that x * x can replace pow. */
static bool is_square(const kiln_tensor *base, const kiln_tensor *exponent, const kiln_tensor *result)
{
    return exponent->dtype == base->dtype && (base->dtype == KILN_DTYPE_F32 || base->dtype == KILN_DTYPE_F64) &&
           kiln_numel(exponent) == 1 &&
           kiln_numel(base) == kiln_numel(result) && kiln_tensor_get_f64(exponent, 0) == 2.0;
}

/* Widens the exponent into dst (numel elements of dtype I64 or F64). */
static void widen_exponent(const kiln_tensor *exponent, kiln_dtype dtype, void *dst)
{
    int64_t n = kiln_numel(exponent);
    if (dtype == KILN_DTYPE_I64) {
        int64_t *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = kiln_tensor_get_i64(exponent, i);
    } else {
        double *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = kiln_ew_get_f64(exponent, i);
    }
}

kiln_status kiln_ew_pow_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    const kiln_tensor *base = in[0], *exponent = in[1];
    if (!out[0]) return KILN_OK;
    pow_plan plan;
    kiln_tensor exponent_view, result;
    if (!pow_plan_make(base->dtype, exponent->dtype, &plan)) return KILN_ERROR_DTYPE_MISMATCH;
    kiln_status st = kiln_ew_binary_operands(node, base, exponent, &exponent_view, &result);
    if (st != KILN_OK) return st;

    if (is_square(base, exponent, out[0])) {
        static const int64_t contiguous = 1;
        const void *src = base->data;
        square_loops[base->dtype](kiln_numel(base), &src, &contiguous, out[0]->data, NULL);
        return KILN_OK;
    }
    if (plan.exponent_dtype != exponent->dtype) {
        if (ctx->scratch_size < (size_t)kiln_numel(exponent) * sizeof(double)) return KILN_ERROR_INVALID_STATE;
        widen_exponent(exponent, plan.exponent_dtype, ctx->scratch);
        exponent_view.dtype = plan.exponent_dtype;
        exponent_view.data = ctx->scratch;
    }
    const kiln_tensor *operands[2] = {base, &exponent_view};
    kiln_ew_apply(operands, 2, out[0], plan.loop, NULL);
    return KILN_OK;
}
