/* unary.c — portable kernels of the unary family (see families.h): elementwise math on one
 * tensor, output shaped like the input.
 *
 * Layer: kernels/portable. Each op is an expression EXPR_<op>(T, W) over the element x, expanded
 * into one loop per dtype by elementwise_iter.h; <tgmath.h> makes exp(x) call expf for float
 * and exp for double, so one expression serves both precisions. Transcendental ops take
 * f32/f64; Abs, Neg and Sign also take integers, where arithmetic wraps rather than being
 * undefined (|INT_MIN| is INT_MIN, as in two's-complement hardware and numpy).
 */
#include <tgmath.h>

#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/families.h"

#define DEFINE_LOOP(op, sfx, T, W, DT) KILN_EW_LOOP1(op##_##sfx, T, T, EXPR_##op(T, W))
#define DEFINE_BOOL_LOOP(op, sfx, T, W, DT) KILN_EW_LOOP1(op##_##sfx, T, uint8_t, EXPR_##op(T, W))

/* Loops for the float types and the table <op>_loops indexed by dtype. */
#define FLOAT_OP(op)                                                                             \
    KILN_EW_FLOAT_TYPES(DEFINE_LOOP, op)                                                         \
    static const kiln_ew_loop op##_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, op)};

#define EXPR_exp(T, W) exp(x)
#define EXPR_log(T, W) log(x)
#define EXPR_sqrt(T, W) sqrt(x)
#define EXPR_reciprocal(T, W) ((T)1 / x)
#define EXPR_sin(T, W) sin(x)
#define EXPR_cos(T, W) cos(x)
#define EXPR_tan(T, W) tan(x)
#define EXPR_asin(T, W) asin(x)
#define EXPR_acos(T, W) acos(x)
#define EXPR_atan(T, W) atan(x)
#define EXPR_sinh(T, W) sinh(x)
#define EXPR_cosh(T, W) cosh(x)
#define EXPR_asinh(T, W) asinh(x)
#define EXPR_acosh(T, W) acosh(x)
#define EXPR_atanh(T, W) atanh(x)
#define EXPR_erf(T, W) erf(x)
#define EXPR_floor(T, W) floor(x)
#define EXPR_ceil(T, W) ceil(x)
/* ONNX Round rounds halves to even, which is rint under the default rounding mode. */
#define EXPR_round(T, W) rint(x)
FLOAT_OP(exp)
FLOAT_OP(log)
FLOAT_OP(sqrt)
FLOAT_OP(reciprocal)
FLOAT_OP(sin)
FLOAT_OP(cos)
FLOAT_OP(tan)
FLOAT_OP(asin)
FLOAT_OP(acos)
FLOAT_OP(atan)
FLOAT_OP(sinh)
FLOAT_OP(cosh)
FLOAT_OP(asinh)
FLOAT_OP(acosh)
FLOAT_OP(atanh)
FLOAT_OP(erf)
FLOAT_OP(floor)
FLOAT_OP(ceil)
FLOAT_OP(round)

/* Abs, Neg and Sign: floats, signed integers (wrapping) and, for Abs and Sign, unsigned. */
#define EXPR_abs_f(T, W) fabs(x)
#define EXPR_abs_s(T, W) (x < 0 ? (T)((W)0 - (W)x) : x)
#define EXPR_abs_u(T, W) x
#define EXPR_neg_f(T, W) (-x)
#define EXPR_neg_s(T, W) (T)((W)0 - (W)x)
/* NaN keeps its sign-less NaN, as numpy's sign does. */
#define EXPR_sign_f(T, W) (x > 0 ? (T)1 : x < 0 ? (T)-1 : x)
#define EXPR_sign_s(T, W) ((x > 0) - (x < 0))
#define EXPR_sign_u(T, W) (x > 0)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, abs_f)
KILN_EW_SINT_TYPES(DEFINE_LOOP, abs_s)
KILN_EW_UINT_TYPES(DEFINE_LOOP, abs_u)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, neg_f)
KILN_EW_SINT_TYPES(DEFINE_LOOP, neg_s)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, sign_f)
KILN_EW_SINT_TYPES(DEFINE_LOOP, sign_s)
KILN_EW_UINT_TYPES(DEFINE_LOOP, sign_u)
static const kiln_ew_loop abs_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, abs_f) KILN_EW_SINT_TYPES(KILN_EW_ENTRY, abs_s)
    KILN_EW_UINT_TYPES(KILN_EW_ENTRY, abs_u)};
static const kiln_ew_loop neg_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, neg_f) KILN_EW_SINT_TYPES(KILN_EW_ENTRY, neg_s)};
static const kiln_ew_loop sign_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, sign_f) KILN_EW_SINT_TYPES(KILN_EW_ENTRY, sign_s)
    KILN_EW_UINT_TYPES(KILN_EW_ENTRY, sign_u)};

/* Not works on bool tensors, whose bytes are 0 or 1. */
KILN_EW_LOOP1(not_bool, uint8_t, uint8_t, !x)
static const kiln_ew_loop not_loops[KILN_DTYPE_COUNT] = {[KILN_DTYPE_BOOL] = not_bool};

/* IsNaN and IsInf map floats to bool. IsInf's params: flag_a = detect_positive,
   flag_b = detect_negative. */
#define EXPR_isnan(T, W) (isnan(x) != 0)
#define EXPR_isinf(T, W) (isinf(x) && (x > 0 ? p->flag_a : p->flag_b))
KILN_EW_FLOAT_TYPES(DEFINE_BOOL_LOOP, isnan)
KILN_EW_FLOAT_TYPES(DEFINE_BOOL_LOOP, isinf)
static const kiln_ew_loop isnan_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, isnan)};
static const kiln_ew_loop isinf_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, isinf)};

/* infer/run with the kernel signature for an op without attributes. */
#define UNARY_KERNEL(op, bool_output)                                                            \
    static kiln_status op##_infer(const kiln_node *node, const kiln_tensor *const *in,          \
                                  kiln_tensor *const *out, size_t *scratch_size)                 \
    {                                                                                            \
        (void)scratch_size;                                                                      \
        return kiln_ew_unary_infer(node, in, out, op##_loops, bool_output);                      \
    }                                                                                            \
    static kiln_status op##_run(const kiln_node *node, const kiln_tensor *const *in,            \
                                kiln_tensor *const *out, kiln_kernel_ctx *ctx)                   \
    {                                                                                            \
        (void)node;                                                                              \
        (void)ctx;                                                                               \
        kiln_ew_unary_run(in, out, op##_loops, NULL);                                            \
        return KILN_OK;                                                                          \
    }

UNARY_KERNEL(abs, false)
UNARY_KERNEL(neg, false)
UNARY_KERNEL(sign, false)
UNARY_KERNEL(exp, false)
UNARY_KERNEL(log, false)
UNARY_KERNEL(sqrt, false)
UNARY_KERNEL(reciprocal, false)
UNARY_KERNEL(sin, false)
UNARY_KERNEL(cos, false)
UNARY_KERNEL(tan, false)
UNARY_KERNEL(asin, false)
UNARY_KERNEL(acos, false)
UNARY_KERNEL(atan, false)
UNARY_KERNEL(sinh, false)
UNARY_KERNEL(cosh, false)
UNARY_KERNEL(asinh, false)
UNARY_KERNEL(acosh, false)
UNARY_KERNEL(atanh, false)
UNARY_KERNEL(erf, false)
UNARY_KERNEL(floor, false)
UNARY_KERNEL(ceil, false)
UNARY_KERNEL(round, false)
UNARY_KERNEL(not, false)
UNARY_KERNEL(isnan, true)

static kiln_status isinf_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               size_t *scratch_size)
{
    (void)scratch_size;
    return kiln_ew_unary_infer(node, in, out, isinf_loops, true);
}

static kiln_status isinf_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    (void)ctx;
    kiln_ew_params params = {
        .flag_a = kiln_node_attr_int(node, "detect_positive", 1) != 0,
        .flag_b = kiln_node_attr_int(node, "detect_negative", 1) != 0,
    };
    kiln_ew_unary_run(in, out, isinf_loops, &params);
    return KILN_OK;
}

/* min_opset is the ONNX version that introduced each op; later versions only widened types. */
const kiln_kernel kiln_kernels_unary[] = {
    {"Abs", 1, abs_infer, abs_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Neg", 1, neg_infer, neg_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Sign", 9, sign_infer, sign_run, {{0, 1, 1, 1, 1}}, ""},
    {"Exp", 1, exp_infer, exp_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Log", 1, log_infer, log_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Sqrt", 1, sqrt_infer, sqrt_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Reciprocal", 1, reciprocal_infer, reciprocal_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Sin", 7, sin_infer, sin_run, {{0, 1, 1, 1, 1}}, ""},
    {"Cos", 7, cos_infer, cos_run, {{0, 1, 1, 1, 1}}, ""},
    {"Tan", 7, tan_infer, tan_run, {{0, 1, 1, 1, 1}}, ""},
    {"Asin", 7, asin_infer, asin_run, {{0, 1, 1, 1, 1}}, ""},
    {"Acos", 7, acos_infer, acos_run, {{0, 1, 1, 1, 1}}, ""},
    {"Atan", 7, atan_infer, atan_run, {{0, 1, 1, 1, 1}}, ""},
    {"Sinh", 9, sinh_infer, sinh_run, {{0, 1, 1, 1, 1}}, ""},
    {"Cosh", 9, cosh_infer, cosh_run, {{0, 1, 1, 1, 1}}, ""},
    {"Asinh", 9, asinh_infer, asinh_run, {{0, 1, 1, 1, 1}}, ""},
    {"Acosh", 9, acosh_infer, acosh_run, {{0, 1, 1, 1, 1}}, ""},
    {"Atanh", 9, atanh_infer, atanh_run, {{0, 1, 1, 1, 1}}, ""},
    {"Erf", 9, erf_infer, erf_run, {{0, 1, 1, 1, 1}}, ""},
    {"Floor", 1, floor_infer, floor_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Ceil", 1, ceil_infer, ceil_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Round", 11, round_infer, round_run, {{0, 1, 1, 1, 1}}, ""},
    {"Not", 1, not_infer, not_run, {{0, 1, 1, 1, 1}}, ""},
    {"IsNaN", 9, isnan_infer, isnan_run, {{0, 1, 1, 1, 1}}, ""},
    {"IsInf", 10, isinf_infer, isinf_run, {{0, 1, 1, 1, 1}}, "detect_negative:i detect_positive:i"},
    {0},
};
