/* quantize.c — portable kernels of the linear quantization family: QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear.
 *
 * Layer: kernels/portable. Depends on kernel.h and quantize_common.h.
 *  - QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point), y of the zero
 *    point's dtype (u8 without one; u8 and i8 supported);
 *  - DequantizeLinear: y = (x - zero_point) * scale, in f32;
 *  - DynamicQuantizeLinear: the u8 scale and zero point that map [min(x, 0), max(x, 0)] onto
 *    [0, 255], then QuantizeLinear with them.
 * Scale and zero point are per tensor (one element) or, from opset 13, per slice along `axis`
 * (1-D of x.shape[axis] elements). The arithmetic is f32, as ONNX's reference does it, so the
 * integers produced match it exactly, ties included. Blocked quantization (opset 21) is beyond
 * KILN_PORTABLE_OPSET_MAX.
 */
#include <math.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/quantize_common.h"

static kiln_status quantize_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    (void)scratch_size;
    const kiln_tensor *x = in[0], *scale = in[1], *zp = node->n_inputs > 2 ? in[2] : NULL;
    if (!x || !scale || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->dtype != KILN_DTYPE_F32 && x->dtype != KILN_DTYPE_I32) return KILN_ERROR_NOT_SUPPORTED;
    if (scale->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    kiln_dtype y_dtype = zp ? zp->dtype : KILN_DTYPE_U8;
    if (!kiln_quant_is_8bit(y_dtype)) return KILN_ERROR_NOT_SUPPORTED;
    kiln_quant_axis qa;
    KILN_TRY(kiln_quant_axis_make(node, x, scale, zp, &qa));
    kiln_tensor_set_shape(out[0], y_dtype, x->rank, x->shape);
    return KILN_OK;
}

/* One loop for both directions: element i of x against its channel's scale and zero point. */
static kiln_status linear_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              bool dequantize)
{
    const kiln_tensor *x = in[0], *scale = in[1], *zp = node->n_inputs > 2 ? in[2] : NULL;
    kiln_quant_axis qa;
    KILN_TRY(kiln_quant_axis_make(node, x, scale, zp, &qa));
    int64_t n = kiln_numel(x);
    const float *s = scale->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = kiln_quant_axis_channel(&qa, i);
        int64_t z = zp ? kiln_tensor_get_i64(zp, c) : 0;
        if (dequantize) {
            ((float *)out[0]->data)[i] = ((float)kiln_tensor_get_i64(x, i) - (float)z) * s[c];
            continue;
        }
        /* f32 input divides in f32 (the reference's arithmetic); i32 input in double. */
        double q = x->dtype == KILN_DTYPE_F32 ? (double)nearbyintf(((const float *)x->data)[i] / s[c])
                                              : nearbyint((double)((const int32_t *)x->data)[i] / (double)s[c]);
        kiln_quant_store(out[0], i, q + (double)z);
    }
    return KILN_OK;
}

static kiln_status quantize_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    (void)ctx;
    return linear_run(node, in, out, false);
}

static kiln_status dequantize_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    size_t *scratch_size)
{
    (void)scratch_size;
    const kiln_tensor *x = in[0], *scale = in[1], *zp = node->n_inputs > 2 ? in[2] : NULL;
    if (!x || !scale || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_quant_is_8bit(x->dtype) && x->dtype != KILN_DTYPE_I32) return KILN_ERROR_NOT_SUPPORTED;
    if (scale->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (zp && zp->dtype != x->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    kiln_quant_axis qa;
    KILN_TRY(kiln_quant_axis_make(node, x, scale, zp, &qa));
    kiln_tensor_set_shape(out[0], scale->dtype, x->rank, x->shape);
    return KILN_OK;
}

static kiln_status dequantize_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  kiln_kernel_ctx *ctx)
{
    (void)ctx;
    return linear_run(node, in, out, true);
}

static kiln_status dynamic_quantize_infer(const kiln_node *node, const kiln_tensor *const *in,
                                          kiln_tensor *const *out, size_t *scratch_size)
{
    (void)scratch_size;
    const kiln_tensor *x = in[0];
    if (!x) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (out[0]) kiln_tensor_set_shape(out[0], KILN_DTYPE_U8, x->rank, x->shape);
    if (node->n_outputs > 1 && out[1]) kiln_tensor_set_shape(out[1], KILN_DTYPE_F32, 0, NULL);
    if (node->n_outputs > 2 && out[2]) kiln_tensor_set_shape(out[2], KILN_DTYPE_U8, 0, NULL);
    return KILN_OK;
}

static kiln_status dynamic_quantize_run(const kiln_node *node, const kiln_tensor *const *in,
                                        kiln_tensor *const *out, kiln_kernel_ctx *ctx)
{
    (void)ctx;
    const float *x = in[0]->data;
    int64_t n = kiln_numel(in[0]);
    float lo = 0.0f, hi = 0.0f; /* the range always holds 0, so that 0 is exact */
    for (int64_t i = 0; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    float scale = (hi - lo) / 255.0f;
    /* An all-zero x has scale 0: every value quantizes to the zero point 0. */
    float zp_f = scale > 0 ? nearbyintf(0.0f - lo / scale) : 0.0f;
    if (!(zp_f >= 0)) zp_f = 0; /* NaN too: an infinite x gives an infinite scale */
    uint8_t zp = (uint8_t)(zp_f > 255 ? 255 : zp_f);
    if (out[0])
        for (int64_t i = 0; i < n; i++)
            kiln_quant_store(out[0], i, scale > 0 ? (double)(nearbyintf(x[i] / scale) + (float)zp) : (double)zp);
    if (node->n_outputs > 1 && out[1]) *(float *)out[1]->data = scale;
    if (node->n_outputs > 2 && out[2]) *(uint8_t *)out[2]->data = zp;
    return KILN_OK;
}

const kiln_kernel kiln_kernels_quantize[] = {
    {"QuantizeLinear", 10, quantize_infer, quantize_run, {{0, 2, 3, 1, 1}}, "axis:i saturate:i"},
    {"DequantizeLinear", 10, dequantize_infer, dequantize_run, {{0, 2, 3, 1, 1}}, "axis:i"},
    {"DynamicQuantizeLinear", 11, dynamic_quantize_infer, dynamic_quantize_run, {{0, 1, 1, 3, 3}}, ""},
    {0},
};
