/* elementwise_compare.c — Equal Less Greater LessOrEqual GreaterOrEqual (numeric in, bool out),
 * And Or Xor (bool), and Where, for the binary family table in binary.c.
 *
 * Layer: kernels/portable. Bool tensors hold one byte per element, 0 or 1; logic ops test
 * bytes for non-zero anyway so that a stray value cannot produce a non-bool output. Where is
 * dtype-agnostic: it only moves elements, so its loops are chosen by element size.
 */
#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/elementwise_ops.h"

#define DEFINE_CMP_LOOP(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, T, uint8_t, EXPR_##op)
#define EXPR_eq (x == y)
#define EXPR_lt (x < y)
#define EXPR_gt (x > y)
#define EXPR_le (x <= y)
#define EXPR_ge (x >= y)
KILN_EW_NUMERIC_TYPES(DEFINE_CMP_LOOP, eq)
KILN_EW_NUMERIC_TYPES(DEFINE_CMP_LOOP, lt)
KILN_EW_NUMERIC_TYPES(DEFINE_CMP_LOOP, gt)
KILN_EW_NUMERIC_TYPES(DEFINE_CMP_LOOP, le)
KILN_EW_NUMERIC_TYPES(DEFINE_CMP_LOOP, ge)
KILN_EW_LOOP2(eq_bool, uint8_t, uint8_t, uint8_t, !x == !y)
KILN_EW_LOOP2(and_bool, uint8_t, uint8_t, uint8_t, x && y)
KILN_EW_LOOP2(or_bool, uint8_t, uint8_t, uint8_t, x || y)
KILN_EW_LOOP2(xor_bool, uint8_t, uint8_t, uint8_t, !x != !y)

static const kiln_ew_loop eq_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_NUMERIC_TYPES(KILN_EW_ENTRY, eq)[KILN_DTYPE_BOOL] = eq_bool};
static const kiln_ew_loop lt_loops[KILN_DTYPE_COUNT] = {KILN_EW_NUMERIC_TYPES(KILN_EW_ENTRY, lt)};
static const kiln_ew_loop gt_loops[KILN_DTYPE_COUNT] = {KILN_EW_NUMERIC_TYPES(KILN_EW_ENTRY, gt)};
static const kiln_ew_loop le_loops[KILN_DTYPE_COUNT] = {KILN_EW_NUMERIC_TYPES(KILN_EW_ENTRY, le)};
static const kiln_ew_loop ge_loops[KILN_DTYPE_COUNT] = {KILN_EW_NUMERIC_TYPES(KILN_EW_ENTRY, ge)};
static const kiln_ew_loop and_loops[KILN_DTYPE_COUNT] = {[KILN_DTYPE_BOOL] = and_bool};
static const kiln_ew_loop or_loops[KILN_DTYPE_COUNT] = {[KILN_DTYPE_BOOL] = or_bool};
static const kiln_ew_loop xor_loops[KILN_DTYPE_COUNT] = {[KILN_DTYPE_BOOL] = xor_bool};

static const kiln_ew_binary_op equal_op = {eq_loops, true};
static const kiln_ew_binary_op less_op = {lt_loops, true};
static const kiln_ew_binary_op greater_op = {gt_loops, true};
static const kiln_ew_binary_op less_or_equal_op = {le_loops, true};
static const kiln_ew_binary_op greater_or_equal_op = {ge_loops, true};
static const kiln_ew_binary_op and_op = {and_loops, true};
static const kiln_ew_binary_op or_op = {or_loops, true};
static const kiln_ew_binary_op xor_op = {xor_loops, true};

/* Public infer/run pairs named kiln_ew_<op>_{infer,run} around <op>_op. */
#define EXPORT_BINARY_KERNEL(op)                                                                 \
    kiln_status kiln_ew_##op##_infer(const kiln_node *node, const kiln_tensor *const *in,       \
                                     kiln_tensor *const *out, size_t *scratch_size)              \
    {                                                                                            \
        (void)scratch_size;                                                                      \
        return kiln_ew_binary_infer(node, in, out, &op##_op);                                    \
    }                                                                                            \
    kiln_status kiln_ew_##op##_run(const kiln_node *node, const kiln_tensor *const *in,         \
                                   kiln_tensor *const *out, kiln_kernel_ctx *ctx)                \
    {                                                                                            \
        (void)ctx;                                                                               \
        return kiln_ew_binary_run(node, in, out, &op##_op, NULL);                                \
    }
EXPORT_BINARY_KERNEL(equal)
EXPORT_BINARY_KERNEL(less)
EXPORT_BINARY_KERNEL(greater)
EXPORT_BINARY_KERNEL(less_or_equal)
EXPORT_BINARY_KERNEL(greater_or_equal)
EXPORT_BINARY_KERNEL(and)
EXPORT_BINARY_KERNEL(or)
EXPORT_BINARY_KERNEL(xor)

/* ---- Where(condition, X, Y) ---- */

#define DEFINE_WHERE_LOOP(bits)                                                                  \
    static void where_##bits(int64_t n, const void *const *in, const int64_t *step, void *out, \
                             const kiln_ew_params *p)                                            \
    {                                                                                            \
        const uint8_t *cond = in[0];                                                             \
        const uint##bits##_t *x = in[1], *y = in[2];                                             \
        uint##bits##_t *o = out;                                                                 \
        (void)p;                                                                                 \
        for (int64_t i = 0; i < n; i++) o[i] = cond[i * step[0]] ? x[i * step[1]] : y[i * step[2]]; \
    }
DEFINE_WHERE_LOOP(8)
DEFINE_WHERE_LOOP(16)
DEFINE_WHERE_LOOP(32)
DEFINE_WHERE_LOOP(64)

static kiln_ew_loop where_loop(kiln_dtype dtype)
{
    switch (kiln_dtype_size(dtype)) {
    case 1: return where_8;
    case 2: return where_16;
    case 4: return where_32;
    case 8: return where_64;
    default: return NULL;
    }
}

kiln_status kiln_ew_where_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    (void)scratch_size;
    for (size_t i = 0; i < 3; i++)
        if (!kiln_ew_input(node, in, i)) return KILN_ERROR_INVALID_ARGUMENT;
    if (in[0]->dtype != KILN_DTYPE_BOOL || in[1]->dtype != in[2]->dtype || !where_loop(in[1]->dtype))
        return KILN_ERROR_DTYPE_MISMATCH;
    return kiln_ew_broadcast_infer(in, 3, in[1]->dtype, out[0]);
}

kiln_status kiln_ew_where_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    (void)node;
    (void)ctx;
    if (out[0]) kiln_ew_apply_stored(in, 3, out[0], where_loop(in[1]->dtype), NULL);
    return KILN_OK;
}
