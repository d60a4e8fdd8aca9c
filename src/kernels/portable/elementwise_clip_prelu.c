/* elementwise_clip_prelu.c — Clip and PRelu for the activation family.
 *
 * Layer: kernels/portable. Both changed form across opsets:
 *  - Clip below opset 11 reads float `min`/`max` attributes; from 11 optional scalar inputs
 *    min (1) and max (2), an absent one meaning no bound; from 12 integer tensors too. The
 *    result is min(max(x, lo), hi), as numpy's clip: hi wins when lo > hi, NaN passes through.
 *  - PRelu from opset 7 broadcasts slope unidirectionally to X; before, a slope of more than one
 *    element holds one value per channel (axis 1), whatever its own rank.
 */
#include <float.h>
#include <math.h>

#include "core/check.h"
#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/elementwise_ops.h"

/* ---- Clip: bounds in p->alpha/beta (floats) or p->ilow/ihigh (integers) ---- */

#define DEFINE_CLIP_FN(op, sfx, T, W, DT)                                                        \
    static inline T bound_##sfx(T x, T lo, T hi)                                                 \
    {                                                                                            \
        T v = x < lo ? lo : x;                                                                   \
        return v > hi ? hi : v;                                                                  \
    }
#define DEFINE_CLIP_F(op, sfx, T, W, DT) KILN_EW_LOOP1(op##_##sfx, T, T, bound_##sfx(x, (T)p->alpha, (T)p->beta))
#define DEFINE_CLIP_I(op, sfx, T, W, DT) KILN_EW_LOOP1(op##_##sfx, T, T, bound_##sfx(x, (T)p->ilow, (T)p->ihigh))
KILN_EW_NUMERIC_TYPES(DEFINE_CLIP_FN, unused)
KILN_EW_FLOAT_TYPES(DEFINE_CLIP_F, clip)
KILN_EW_INT_TYPES(DEFINE_CLIP_I, clip)
static const kiln_ew_loop clip_loops[KILN_DTYPE_COUNT] = {KILN_EW_NUMERIC_TYPES(KILN_EW_ENTRY, clip)};

static bool is_float(kiln_dtype t)
{
    return t == KILN_DTYPE_F32 || t == KILN_DTYPE_F64 || t == KILN_DTYPE_F16 || t == KILN_DTYPE_BF16;
}

/* The widest range of a dtype, as integer bounds (floats use +-infinity instead). */
static void dtype_int_range(kiln_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case KILN_DTYPE_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case KILN_DTYPE_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case KILN_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case KILN_DTYPE_U8: *lo = 0, *hi = UINT8_MAX; break;
    case KILN_DTYPE_U16: *lo = 0, *hi = UINT16_MAX; break;
    case KILN_DTYPE_U32: *lo = 0, *hi = UINT32_MAX; break;
    /* uint64 beyond INT64_MAX reads as negative through int64; it is cast back to uint64 in
       the loop, so -1 stands for UINT64_MAX. */
    case KILN_DTYPE_U64: *lo = 0, *hi = -1; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* Checks the optional bound input i (opset >= 11): absent, or one element of X's dtype. */
static kiln_status clip_bound_check(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    const kiln_tensor *bound = kiln_ew_input(node, in, i);
    if (!bound) return KILN_OK;
    if (bound->dtype != in[0]->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    kiln_status st = kiln_ew_check_shape(bound);
    if (st != KILN_OK) return st;
    return kiln_numel(bound) == 1 ? KILN_OK : KILN_ERROR_SHAPE_MISMATCH;
}

kiln_status kiln_ew_clip_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               size_t *scratch_size)
{
    (void)scratch_size;
    if (!kiln_ew_input(node, in, 0)) return KILN_ERROR_INVALID_ARGUMENT;
    /* Integer inputs arrived with opset 12. */
    if (node->opset < 12 && !is_float(in[0]->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    if (node->opset >= 11) {
        KILN_TRY(clip_bound_check(node, in, 1));
        KILN_TRY(clip_bound_check(node, in, 2));
    }
    return kiln_ew_unary_infer(node, in, out, clip_loops, false);
}

kiln_status kiln_ew_clip_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    (void)ctx;
    kiln_ew_params p = {.alpha = -INFINITY, .beta = INFINITY};
    dtype_int_range(in[0]->dtype, &p.ilow, &p.ihigh);
    if (node->opset < 11) {
        p.alpha = kiln_node_attr_float(node, "min", -FLT_MAX);
        p.beta = kiln_node_attr_float(node, "max", FLT_MAX);
    } else {
        const kiln_tensor *lo = kiln_ew_input(node, in, 1), *hi = kiln_ew_input(node, in, 2);
        if (lo) p.alpha = kiln_ew_get_f64(lo, 0), p.ilow = kiln_tensor_get_i64(lo, 0);
        if (hi) p.beta = kiln_ew_get_f64(hi, 0), p.ihigh = kiln_tensor_get_i64(hi, 0);
    }
    kiln_ew_unary_run(in, out, clip_loops, &p);
    return KILN_OK;
}

/* ---- PRelu(X, slope) ---- */

#define DEFINE_PRELU(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, T, T, x < 0 ? y * x : x)
KILN_EW_SIGNED_TYPES(DEFINE_PRELU, prelu)
static const kiln_ew_loop prelu_loops[KILN_DTYPE_COUNT] = {KILN_EW_SIGNED_TYPES(KILN_EW_ENTRY, prelu)};

/* The slope as a tensor numpy-broadcastable to X, after checking it is one for this opset. */
static kiln_status prelu_slope(const kiln_node *node, const kiln_tensor *x, const kiln_tensor *slope,
                               kiln_tensor *view)
{
    KILN_TRY(kiln_ew_check_shape(x));
    KILN_TRY(kiln_ew_check_shape(slope));
    *view = *slope;
    if (node->opset >= 7) {
        const kiln_tensor *pair[2] = {x, slope};
        kiln_tensor result;
        KILN_TRY(kiln_ew_broadcast_infer(pair, 2, x->dtype, &result));
        return kiln_ew_same_shape(&result, x) ? KILN_OK : KILN_ERROR_SHAPE_MISMATCH;
    }
    int64_t n = kiln_numel(slope);
    if (n == 1) {
        view->rank = 0;
        return KILN_OK;
    }
    if (x->rank < 2 || n != x->shape[1]) return KILN_ERROR_SHAPE_MISMATCH;
    view->rank = x->rank;
    for (uint32_t d = 0; d < x->rank; d++) view->shape[d] = d == 1 ? n : 1;
    return KILN_OK;
}

kiln_status kiln_ew_prelu_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    (void)scratch_size;
    const kiln_tensor *x = kiln_ew_input(node, in, 0), *slope = kiln_ew_input(node, in, 1);
    if (!x || !slope) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->dtype != slope->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    if (!kiln_ew_loop_for(prelu_loops, x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    kiln_tensor view;
    KILN_TRY(prelu_slope(node, x, slope, &view));
    if (out[0]) kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    return KILN_OK;
}

kiln_status kiln_ew_prelu_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    (void)ctx;
    if (!out[0]) return KILN_OK;
    kiln_tensor view;
    KILN_TRY(prelu_slope(node, in[0], in[1], &view));
    const kiln_tensor *operands[2] = {in[0], &view};
    kiln_ew_apply(operands, 2, out[0], kiln_ew_loop_for(prelu_loops, in[0]->dtype), NULL);
    return KILN_OK;
}
