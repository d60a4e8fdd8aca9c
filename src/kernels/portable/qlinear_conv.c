/* qlinear_conv.c — portable reference kernels of the quantized convolutions: ConvInteger and
 * QLinearConv.
 *
 * Layer: kernels/portable. Depends on kernel.h, conv_geom.h and quantize_common.h.
 * The exact oracle for later int8 kernels, so one direct loop over the window (conv_geom.h's 3-D
 * normalisation; padding taps are skipped, i.e. read as the zero point):
 *   acc[n, m, o] = sum_{c, k} (X[n, g*Cin_g + c, o*s - p + k*d] - x_zero) * (W[m, c, k] - w_zero[m])
 * ConvInteger returns acc as i32; QLinearConv adds the i32 bias B[m] and requantizes:
 *   y = saturate(round_half_even((acc + B[m]) * (x_scale * w_scale[m] / y_scale)) + y_zero)
 * with the multiplier formed in f32 and applied in double, as ONNX's reference computes it.
 */
#include <math.h>

#include "core/check.h"
#include "kernels/portable/conv_geom.h"
#include "kernels/portable/families.h"
#include "kernels/portable/quantize_common.h"

typedef struct qconv_args {
    const kiln_tensor *x, *x_zero, *w, *w_zero;
    const kiln_tensor *x_scale, *w_scale, *y_scale, *y_zero, *bias; /* QLinearConv only */
} qconv_args;

typedef struct qconv_plan {
    int64_t batch, c_in, c_out, cin_g, cout_g;
    kiln_window win;
} qconv_plan;

static kiln_status plan_make(const kiln_node *node, const qconv_args *q, qconv_plan *p)
{
    const kiln_tensor *x = q->x, *w = q->w;
    if (!x || !w) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_quant_is_8bit(x->dtype) || !kiln_quant_is_8bit(w->dtype)) return KILN_ERROR_NOT_SUPPORTED;
    if ((q->x_zero && q->x_zero->dtype != x->dtype) || (q->w_zero && q->w_zero->dtype != w->dtype))
        return KILN_ERROR_DTYPE_MISMATCH;
    if (x->rank < 3 || w->rank != x->rank) return KILN_ERROR_SHAPE_MISMATCH;
    int n_spatial = (int)x->rank - 2;
    if (n_spatial > KILN_WINDOW_SPATIAL) return KILN_ERROR_NOT_SUPPORTED;
    int64_t group = kiln_node_attr_int(node, "group", 1);
    if (group < 1) return KILN_ERROR_INVALID_ARGUMENT;
    p->batch = x->shape[0];
    p->c_in = x->shape[1];
    p->c_out = w->shape[0];
    if (p->c_in % group != 0 || p->c_out % group != 0) return KILN_ERROR_SHAPE_MISMATCH;
    p->cin_g = p->c_in / group;
    p->cout_g = p->c_out / group;
    if (w->shape[1] != p->cin_g) return KILN_ERROR_SHAPE_MISMATCH;
    if (q->x_zero && !kiln_quant_is_scalar(q->x_zero)) return KILN_ERROR_SHAPE_MISMATCH;
    if (q->x_scale && (!kiln_quant_is_scalar(q->x_scale) || !kiln_quant_is_scalar(q->y_scale))) return KILN_ERROR_SHAPE_MISMATCH;
    if (q->y_zero && !kiln_quant_is_scalar(q->y_zero)) return KILN_ERROR_SHAPE_MISMATCH;
    if (q->w_zero && !kiln_quant_vector_ok(q->w_zero, p->c_out)) return KILN_ERROR_SHAPE_MISMATCH;
    if (q->w_scale && !kiln_quant_vector_ok(q->w_scale, p->c_out)) return KILN_ERROR_SHAPE_MISMATCH;
    const kiln_tensor *scales[] = {q->x_scale, q->w_scale, q->y_scale};
    for (size_t i = 0; i < 3; i++)
        if (scales[i] && scales[i]->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (q->y_zero && !kiln_quant_is_8bit(q->y_zero->dtype)) return KILN_ERROR_NOT_SUPPORTED;
    if (q->bias && (q->bias->dtype != KILN_DTYPE_I32 || q->bias->rank != 1 || q->bias->shape[0] != p->c_out))
        return KILN_ERROR_SHAPE_MISMATCH;
    int64_t kernel[KILN_WINDOW_SPATIAL];
    KILN_TRY(kiln_window_kernel_shape(node, n_spatial, &w->shape[2], kernel));
    for (int d = 0; d < n_spatial; d++)
        if (kernel[d] != w->shape[2 + d]) return KILN_ERROR_SHAPE_MISMATCH;
    KILN_TRY(kiln_window_read_attrs(node, n_spatial, &x->shape[2], kernel, &p->win));
    return kiln_window_forward_shape(&p->win, false);
}

static int64_t scalar_or_zero(const kiln_tensor *t, int64_t i)
{
    return t ? kiln_tensor_get_i64(t, kiln_quant_vector_index(t, i)) : 0;
}

/* The exact sum for output channel m at output position o (3-D) of batch entry n. */
static int64_t conv_point(const qconv_args *q, const qconv_plan *p, int64_t n, int64_t m, const int64_t *o)
{
    const kiln_window *win = &p->win;
    int64_t x_zero = scalar_or_zero(q->x_zero, 0), w_zero = scalar_or_zero(q->w_zero, m);
    int64_t g = m / p->cout_g, taps = kiln_window_kernel_size(win), in_size = kiln_window_in_size(win), acc = 0;
    for (int64_t c = 0; c < p->cin_g; c++) {
        int64_t x_base = (n * p->c_in + g * p->cin_g + c) * in_size, w_base = (m * p->cin_g + c) * taps;
        for (int64_t k0 = 0; k0 < win->kernel[0]; k0++) {
            int64_t i0 = o[0] * win->stride[0] - win->pad_begin[0] + k0 * win->dilation[0];
            if (i0 < 0 || i0 >= win->in[0]) continue;
            for (int64_t k1 = 0; k1 < win->kernel[1]; k1++) {
                int64_t i1 = o[1] * win->stride[1] - win->pad_begin[1] + k1 * win->dilation[1];
                if (i1 < 0 || i1 >= win->in[1]) continue;
                for (int64_t k2 = 0; k2 < win->kernel[2]; k2++) {
                    int64_t i2 = o[2] * win->stride[2] - win->pad_begin[2] + k2 * win->dilation[2];
                    if (i2 < 0 || i2 >= win->in[2]) continue;
                    int64_t xv = kiln_tensor_get_i64(q->x, x_base + (i0 * win->in[1] + i1) * win->in[2] + i2);
                    int64_t wv = kiln_tensor_get_i64(q->w, w_base + (k0 * win->kernel[1] + k1) * win->kernel[2] + k2);
                    acc += (xv - x_zero) * (wv - w_zero);
                }
            }
        }
    }
    return acc;
}

static kiln_status qconv_infer(const kiln_node *node, const qconv_args *q, kiln_tensor *out)
{
    if (!out) return KILN_ERROR_INVALID_ARGUMENT;
    if (q->y_scale && (!q->x_scale || !q->w_scale || !q->y_zero)) return KILN_ERROR_INVALID_ARGUMENT;
    qconv_plan p;
    KILN_TRY(plan_make(node, q, &p));
    int64_t shape[2 + KILN_WINDOW_SPATIAL] = {p.batch, p.c_out};
    int n_spatial = p.win.n_spatial;
    for (int d = 0; d < n_spatial; d++) shape[2 + d] = p.win.out[KILN_WINDOW_SPATIAL - n_spatial + d];
    kiln_tensor_set_shape(out, q->y_zero ? q->y_zero->dtype : KILN_DTYPE_I32, (uint32_t)(2 + n_spatial), shape);
    return kiln_tensor_numel(out) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

static kiln_status qconv_run(const kiln_node *node, const qconv_args *q, kiln_tensor *out)
{
    qconv_plan p;
    KILN_TRY(plan_make(node, q, &p));
    const kiln_window *win = &p.win;
    int64_t out_size = kiln_window_out_size(win), i = 0;
    for (int64_t n = 0; n < p.batch; n++) {
        for (int64_t m = 0; m < p.c_out; m++) {
            float multiplier = 0.0f;
            if (q->y_scale)
                multiplier = *(const float *)q->x_scale->data
                             * ((const float *)q->w_scale->data)[kiln_quant_vector_index(q->w_scale, m)]
                             / *(const float *)q->y_scale->data;
            int64_t bias = q->bias ? kiln_tensor_get_i64(q->bias, m) : 0;
            for (int64_t s = 0; s < out_size; s++, i++) {
                int64_t o[KILN_WINDOW_SPATIAL] = {s / (win->out[1] * win->out[2]), s / win->out[2] % win->out[1],
                                                  s % win->out[2]};
                int64_t acc = conv_point(q, &p, n, m, o) + bias;
                if (!q->y_scale) ((int32_t *)out->data)[i] = (int32_t)(uint32_t)acc; /* wraps as i32 would */
                else
                    kiln_quant_store(out, i, nearbyint((double)acc * (double)multiplier) + (double)scalar_or_zero(q->y_zero, 0));
            }
        }
    }
    return KILN_OK;
}

static const kiln_tensor *input_of(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    return i < node->n_inputs ? in[i] : NULL;
}

static qconv_args conv_integer_args(const kiln_node *node, const kiln_tensor *const *in)
{
    return (qconv_args){.x = in[0], .w = input_of(node, in, 1), .x_zero = input_of(node, in, 2),
                        .w_zero = input_of(node, in, 3)};
}

static qconv_args qlinear_conv_args(const kiln_node *node, const kiln_tensor *const *in)
{
    return (qconv_args){.x = in[0], .x_scale = input_of(node, in, 1), .x_zero = input_of(node, in, 2),
                        .w = input_of(node, in, 3), .w_scale = input_of(node, in, 4), .w_zero = input_of(node, in, 5),
                        .y_scale = input_of(node, in, 6), .y_zero = input_of(node, in, 7), .bias = input_of(node, in, 8)};
}

static kiln_status conv_integer_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      size_t *scratch_size)
{
    (void)scratch_size;
    qconv_args q = conv_integer_args(node, in);
    return qconv_infer(node, &q, out[0]);
}

static kiln_status conv_integer_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    kiln_kernel_ctx *ctx)
{
    (void)ctx;
    qconv_args q = conv_integer_args(node, in);
    return qconv_run(node, &q, out[0]);
}

static kiln_status qlinear_conv_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      size_t *scratch_size)
{
    (void)scratch_size;
    qconv_args q = qlinear_conv_args(node, in);
    return qconv_infer(node, &q, out[0]);
}

static kiln_status qlinear_conv_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    kiln_kernel_ctx *ctx)
{
    (void)ctx;
    qconv_args q = qlinear_conv_args(node, in);
    return qconv_run(node, &q, out[0]);
}

#define QCONV_ATTRS "auto_pad:s dilations:I group:i kernel_shape:I pads:I strides:I"

const kiln_kernel kiln_kernels_qlinear_conv[] = {
    {"ConvInteger", 10, conv_integer_infer, conv_integer_run, {{0, 2, 4, 1, 1}}, QCONV_ATTRS},
    {"QLinearConv", 10, qlinear_conv_infer, qlinear_conv_run, {{0, 8, 9, 1, 1}}, QCONV_ATTRS},
    {0},
};
