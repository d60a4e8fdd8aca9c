/* binary.c — portable kernels of the binary family (see families.h): the arithmetic ops
 * Add Sub Mul Div Mod BitShift here, and the table that also lists Pow, the comparisons, bool logic,
 * Where and the variadic Sum/Mean/Max/Min from their elementwise_*.c files.
 *
 * Layer: kernels/portable. Broadcasting (numpy from opset 7, the legacy `broadcast`/`axis`
 * attributes below it) is handled once in elementwise_iter.c. Integer arithmetic wraps (done
 * in the unsigned type of the same width); integer division and Mod by zero give 0 and
 * INT_MIN / -1 gives INT_MIN, so that no input can trap the process.
 */
#include <math.h>
#include <string.h>

#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/elementwise_ops.h"
#include "kernels/portable/families.h"

#define DEFINE_LOOP(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, T, T, EXPR_##op(T, W))

/* `1u *` keeps the product unsigned: a bare uint16_t * uint16_t promotes to (signed) int and
   could overflow. */
#define EXPR_add_f(T, W) (x + y)
#define EXPR_add_i(T, W) (T)((W)x + (W)y)
#define EXPR_sub_f(T, W) (x - y)
#define EXPR_sub_i(T, W) (T)((W)x - (W)y)
#define EXPR_mul_f(T, W) (x * y)
#define EXPR_mul_i(T, W) (T)(1u * (W)x * (W)y)
#define EXPR_div_f(T, W) (x / y)
#define EXPR_div_s(T, W) (y == 0 ? (T)0 : y == -1 ? (T)((W)0 - (W)x) : (T)(x / y))
#define EXPR_div_u(T, W) (y == 0 ? (T)0 : (T)(x / y))
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, add_f)
KILN_EW_INT_TYPES(DEFINE_LOOP, add_i)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, sub_f)
KILN_EW_INT_TYPES(DEFINE_LOOP, sub_i)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, mul_f)
KILN_EW_INT_TYPES(DEFINE_LOOP, mul_i)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, div_f)
KILN_EW_SINT_TYPES(DEFINE_LOOP, div_s)
KILN_EW_UINT_TYPES(DEFINE_LOOP, div_u)

/* Mod: fmod=1 is C's remainder (sign of the dividend), fmod=0 the floored modulo of Python
   (sign of the divisor), which ONNX allows for integers only. */
#define DEFINE_FLOOR_MOD(op, sfx, T, W, DT)                                                      \
    static inline T floor_mod_##sfx(T x, T y)                                                    \
    {                                                                                            \
        if (y == 0 || y == -1) return 0;                                                         \
        T r = (T)(x % y);                                                                        \
        return r != 0 && ((r < 0) != (y < 0)) ? (T)(r + y) : r;                                 \
    }
KILN_EW_SINT_TYPES(DEFINE_FLOOR_MOD, unused)
#define EXPR_fmod_f(T, W) fmod(x, y)
#define EXPR_fmod_s(T, W) (y == 0 || y == -1 ? (T)0 : (T)(x % y))
#define EXPR_fmod_u(T, W) (y == 0 ? (T)0 : (T)(x % y))
#define LOOP_FLOOR_MOD(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, T, T, floor_mod_##sfx(x, y))
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, fmod_f)
KILN_EW_SINT_TYPES(DEFINE_LOOP, fmod_s)
KILN_EW_UINT_TYPES(DEFINE_LOOP, fmod_u)
KILN_EW_SINT_TYPES(LOOP_FLOOR_MOD, mod_s)

static const kiln_ew_loop add_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, add_f) KILN_EW_INT_TYPES(KILN_EW_ENTRY, add_i)};
static const kiln_ew_loop sub_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, sub_f) KILN_EW_INT_TYPES(KILN_EW_ENTRY, sub_i)};
static const kiln_ew_loop mul_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, mul_f) KILN_EW_INT_TYPES(KILN_EW_ENTRY, mul_i)};
static const kiln_ew_loop div_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, div_f) KILN_EW_SINT_TYPES(KILN_EW_ENTRY, div_s)
    KILN_EW_UINT_TYPES(KILN_EW_ENTRY, div_u)};
static const kiln_ew_loop fmod_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, fmod_f) KILN_EW_SINT_TYPES(KILN_EW_ENTRY, fmod_s)
    KILN_EW_UINT_TYPES(KILN_EW_ENTRY, fmod_u)};
/* Unsigned operands have no sign to disagree, so floored and truncated modulo coincide. */
static const kiln_ew_loop floor_mod_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_SINT_TYPES(KILN_EW_ENTRY, mod_s) KILN_EW_UINT_TYPES(KILN_EW_ENTRY, fmod_u)};

static const kiln_ew_binary_op add_op = {add_loops, false};
static const kiln_ew_binary_op sub_op = {sub_loops, false};
static const kiln_ew_binary_op mul_op = {mul_loops, false};
static const kiln_ew_binary_op div_op = {div_loops, false};
KILN_EW_BINARY_KERNEL(add)
KILN_EW_BINARY_KERNEL(sub)
KILN_EW_BINARY_KERNEL(mul)
KILN_EW_BINARY_KERNEL(div)

/* BitShift (unsigned only): shifting by the bit width or more is undefined in C; the bits are
   gone, so the result is 0. */
#define EXPR_shl(T, W) (y >= sizeof(T) * 8 ? (T)0 : (T)(1u * x << y))
#define EXPR_shr(T, W) (y >= sizeof(T) * 8 ? (T)0 : (T)(x >> y))
KILN_EW_UINT_TYPES(DEFINE_LOOP, shl)
KILN_EW_UINT_TYPES(DEFINE_LOOP, shr)
static const kiln_ew_loop shl_loops[KILN_DTYPE_COUNT] = {KILN_EW_UINT_TYPES(KILN_EW_ENTRY, shl)};
static const kiln_ew_loop shr_loops[KILN_DTYPE_COUNT] = {KILN_EW_UINT_TYPES(KILN_EW_ENTRY, shr)};

/* The BitShift variant the direction attribute selects, or NULL when it is not LEFT or RIGHT. */
static const kiln_ew_binary_op *bit_shift_variant(const kiln_node *node)
{
    static const kiln_ew_binary_op left_op = {shl_loops, false};
    static const kiln_ew_binary_op right_op = {shr_loops, false};
    const char *direction = kiln_node_attr_string(node, "direction", "");
    if (strcmp(direction, "LEFT") == 0) return &left_op;
    if (strcmp(direction, "RIGHT") == 0) return &right_op;
    return NULL;
}

static kiln_status bit_shift_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size)
{
    (void)scratch_size;
    const kiln_ew_binary_op *op = bit_shift_variant(node);
    return op ? kiln_ew_binary_infer(node, in, out, op) : KILN_ERROR_INVALID_ARGUMENT;
}

static kiln_status bit_shift_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx)
{
    (void)ctx;
    const kiln_ew_binary_op *op = bit_shift_variant(node);
    return op ? kiln_ew_binary_run(node, in, out, op, NULL) : KILN_ERROR_INVALID_ARGUMENT;
}

/* The Mod variant the fmod attribute selects, or NULL when the attribute is not 0 or 1. */
static const kiln_ew_binary_op *mod_variant(const kiln_node *node)
{
    static const kiln_ew_binary_op fmod_op = {fmod_loops, false};
    static const kiln_ew_binary_op floor_mod_op = {floor_mod_loops, false};
    int64_t fmod_attr = kiln_node_attr_int(node, "fmod", 0);
    if (fmod_attr != 0 && fmod_attr != 1) return NULL;
    return fmod_attr ? &fmod_op : &floor_mod_op;
}

static kiln_status mod_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             size_t *scratch_size)
{
    (void)scratch_size;
    const kiln_ew_binary_op *op = mod_variant(node);
    /* A float Mod without fmod=1 lands on a NULL loop and is refused as a dtype mismatch. */
    return op ? kiln_ew_binary_infer(node, in, out, op) : KILN_ERROR_INVALID_ARGUMENT;
}

static kiln_status mod_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                           kiln_kernel_ctx *ctx)
{
    (void)ctx;
    const kiln_ew_binary_op *op = mod_variant(node);
    return op ? kiln_ew_binary_run(node, in, out, op, NULL) : KILN_ERROR_INVALID_ARGUMENT;
}

/* min_opset is the ONNX version that introduced each op; the opset-7 change from legacy to numpy
   broadcasting is handled inside, by node->opset. */
const kiln_kernel kiln_kernels_binary[] = {
    {"Add", 1, add_infer, add_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i consumed_inputs:I"},
    {"Sub", 1, sub_infer, sub_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i consumed_inputs:I"},
    {"Mul", 1, mul_infer, mul_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i consumed_inputs:I"},
    {"Div", 1, div_infer, div_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i consumed_inputs:I"},
    {"Mod", 10, mod_infer, mod_run, {{0, 2, 2, 1, 1}}, "fmod:i"},
    {"BitShift", 11, bit_shift_infer, bit_shift_run, {{0, 2, 2, 1, 1}}, "direction:s"},
    {"Pow", 1, kiln_ew_pow_infer, kiln_ew_pow_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i"},
    {"Equal", 1, kiln_ew_equal_infer, kiln_ew_equal_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i"},
    {"Less", 1, kiln_ew_less_infer, kiln_ew_less_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i"},
    {"Greater", 1, kiln_ew_greater_infer, kiln_ew_greater_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i"},
    {"LessOrEqual", 12, kiln_ew_less_or_equal_infer, kiln_ew_less_or_equal_run, {{0, 2, 2, 1, 1}}, ""},
    {"GreaterOrEqual", 12, kiln_ew_greater_or_equal_infer, kiln_ew_greater_or_equal_run, {{0, 2, 2, 1, 1}}, ""},
    {"And", 1, kiln_ew_and_infer, kiln_ew_and_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i"},
    {"Or", 1, kiln_ew_or_infer, kiln_ew_or_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i"},
    {"Xor", 1, kiln_ew_xor_infer, kiln_ew_xor_run, {{0, 2, 2, 1, 1}}, "axis:i broadcast:i"},
    {"Where", 9, kiln_ew_where_infer, kiln_ew_where_run, {{0, 3, 3, 1, 1}}, ""},
    {"Sum", 1, kiln_ew_sum_infer, kiln_ew_sum_run, {{0, 1, KILN_ARITY_ANY, 1, 1}}, "consumed_inputs:I"},
    {"Mean", 1, kiln_ew_mean_infer, kiln_ew_mean_run, {{0, 1, KILN_ARITY_ANY, 1, 1}}, "consumed_inputs:I"},
    {"Max", 1, kiln_ew_max_infer, kiln_ew_max_run, {{0, 1, KILN_ARITY_ANY, 1, 1}}, "consumed_inputs:I"},
    {"Min", 1, kiln_ew_min_infer, kiln_ew_min_run, {{0, 1, KILN_ARITY_ANY, 1, 1}}, "consumed_inputs:I"},
    {0},
};
