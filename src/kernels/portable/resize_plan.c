/* resize_plan.c — Resize's and Upsample's plan (resize_plan.h): attributes of every opset,
 * output sizes from scales or sizes (axes, keep_aspect_ratio_policy), and the per-axis taps of
 * each coordinate_transformation_mode, nearest_mode and filter. Layer: kernels/portable.
 * The rules are the ONNX specification's; see resize.c for how the taps are applied.
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/interp.h"
#include "kernels/portable/resize_plan.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))

static int string_index(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static kiln_status plan_attributes(const kiln_node *node, resize_plan *p)
{
    bool legacy = strcmp(node->op, "Upsample") == 0 || node->opset < 11;
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    const char *mode = kiln_node_attr_string(node, "mode", "nearest");
    int m = string_index(mode, modes, 3);
    if (m < 0 && legacy && strcmp(mode, "bilinear") == 0) m = MODE_LINEAR; /* Upsample-7 spelling */
    KILN_CHECK(m >= 0 && !(legacy && m == MODE_CUBIC), KILN_ERROR_INVALID_ARGUMENT);
    p->mode = (resize_mode)m;
    if (legacy) {
        p->coord = COORD_ASYMMETRIC;
        p->nearest = NEAREST_SIMPLE;
        return KILN_OK;
    }
    static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    int c = string_index(kiln_node_attr_string(node, "coordinate_transformation_mode", "half_pixel"), coords, 7);
    KILN_CHECK(c >= 0, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(c != COORD_HALF_PIXEL_SYMMETRIC || node->opset >= 19, KILN_ERROR_INVALID_ARGUMENT);
    p->coord = (resize_coord)c;
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int n = string_index(kiln_node_attr_string(node, "nearest_mode", "round_prefer_floor"), nearests, 4);
    KILN_CHECK(n >= 0, KILN_ERROR_INVALID_ARGUMENT);
    p->nearest = (resize_nearest)n;
    p->cubic_a = kiln_node_attr_float(node, "cubic_coeff_a", -0.75f);
    p->exclude_outside = kiln_node_attr_int(node, "exclude_outside", 0) != 0;
    p->extrapolation = kiln_node_attr_float(node, "extrapolation_value", 0.0f);
    p->antialias = node->opset >= 18 && kiln_node_attr_int(node, "antialias", 0) != 0 && p->mode != MODE_NEAREST;
    return KILN_OK;
}

/* An optional input that is present and not empty (ONNX writes "absent" both ways). */
static const kiln_tensor *given(const kiln_tensor *t)
{
    return t && !(t->rank == 1 && t->shape[0] == 0) ? t : NULL;
}

/* Output sizes from `sizes` (with keep_aspect_ratio_policy) or `scales`, on the axes of p. */
static kiln_status plan_sizes(const kiln_node *node, const kiln_tensor *scales, const float *scale_attr,
                              size_t n_scale_attr, const kiln_tensor *sizes, resize_plan *p)
{
    size_t n = p->n_axes;
    double s[KILN_MAX_RANK];
    if (sizes) {
        int64_t v[KILN_MAX_RANK];
        size_t nv;
        KILN_TRY(kiln_shape_read_ints(sizes, false, v, KILN_MAX_RANK, &nv));
        KILN_CHECK(nv == n, KILN_ERROR_SHAPE_MISMATCH);
        for (size_t k = 0; k < n; k++) {
            KILN_CHECK(v[k] >= 0 && p->in_dim[p->axes[k]] > 0, KILN_ERROR_INVALID_ARGUMENT);
            s[k] = (double)v[k] / (double)p->in_dim[p->axes[k]];
        }
        static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
        int policy = node->opset >= 18 ? string_index(kiln_node_attr_string(node, "keep_aspect_ratio_policy", "stretch"),
                                                      policies, 3) : 0;
        KILN_CHECK(policy >= 0, KILN_ERROR_INVALID_ARGUMENT);
        for (size_t k = 0; k < n && policy > 0; k++) {
            double one = s[0];
            for (size_t q = 1; q < n; q++) one = policy == 1 ? fmin(one, s[q]) : fmax(one, s[q]);
            s[k] = one;
        }
        for (size_t k = 0; k < n; k++) {
            int64_t a = p->axes[k];
            p->scale[a] = s[k];
            /* The kept aspect ratio rounds half up (ONNX); stretch keeps the sizes exactly. */
            p->out_dim[a] = policy > 0 ? (int64_t)(s[k] * (double)p->in_dim[a] + 0.5) : v[k];
        }
        return KILN_OK;
    }
    if (scales) {
        KILN_CHECK(scales->dtype == KILN_DTYPE_F32, KILN_ERROR_DTYPE_MISMATCH);
        KILN_CHECK(scales->rank == 1 && (size_t)scales->shape[0] == n, KILN_ERROR_SHAPE_MISMATCH);
        if (!scales->data) return KILN_ERROR_SHAPE_UNKNOWN;
        for (size_t k = 0; k < n; k++) s[k] = ((const float *)scales->data)[k];
    } else {
        KILN_CHECK(scale_attr && n_scale_attr == n, KILN_ERROR_INVALID_ARGUMENT);
        for (size_t k = 0; k < n; k++) s[k] = scale_attr[k];
    }
    for (size_t k = 0; k < n; k++) {
        int64_t a = p->axes[k];
        KILN_CHECK(s[k] > 0 && isfinite(s[k]), KILN_ERROR_INVALID_ARGUMENT);
        double size = s[k] * (double)p->in_dim[a];
        KILN_CHECK(size < 9.2e18, KILN_ERROR_LIMIT);
        p->scale[a] = s[k];
        p->out_dim[a] = (int64_t)size; /* floor: ONNX's output_dimension = floor(input_dimension * scale) */
    }
    return KILN_OK;
}

/* Everything a run needs, from the node and its inputs; the same for infer() and run(). */
kiln_status kiln_resize_plan_make(const kiln_node *node, const kiln_tensor *const *in, resize_plan *p)
{
    *p = (resize_plan){0};
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank >= 1, KILN_ERROR_SHAPE_MISMATCH);
    KILN_TRY(plan_attributes(node, p));
    p->rank = x->rank;
    for (uint32_t d = 0; d < x->rank; d++) {
        p->in_dim[d] = p->out_dim[d] = x->shape[d];
        p->scale[d] = 1.0;
        p->roi_start[d] = 0.0;
        p->roi_end[d] = 1.0;
    }
    bool axes_present = false;
    if (node->opset >= 18 && strcmp(node->op, "Resize") == 0)
        KILN_TRY(kiln_shape_attr_ints(node, "axes", p->axes, KILN_MAX_RANK, &p->n_axes, &axes_present));
    if (axes_present) {
        uint32_t mask;
        KILN_TRY(kiln_shape_axes_mask(p->axes, p->n_axes, x->rank, &mask));
        for (size_t k = 0; k < p->n_axes; k++)
            if (p->axes[k] < 0) p->axes[k] += x->rank;
    } else {
        p->n_axes = x->rank;
        for (uint32_t d = 0; d < x->rank; d++) p->axes[d] = d;
    }
    if (strcmp(node->op, "Upsample") == 0 && node->opset < 9) {
        const float *s;
        size_t n = kiln_node_attr_floats(node, "scales", &s);
        return plan_sizes(node, NULL, s, n, NULL, p);
    }
    if (strcmp(node->op, "Upsample") == 0 || node->opset < 11) {
        KILN_CHECK(IN(1), KILN_ERROR_INVALID_ARGUMENT);
        return plan_sizes(node, IN(1), NULL, 0, NULL, p);
    }
    const kiln_tensor *roi = given(IN(1)), *scales = given(IN(2)), *sizes = given(IN(3));
    KILN_CHECK(!scales != !sizes, KILN_ERROR_INVALID_ARGUMENT); /* exactly one of them */
    if (p->coord == COORD_TF_CROP_AND_RESIZE) {
        KILN_CHECK(roi, KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(roi->rank == 1 && (size_t)roi->shape[0] == 2 * p->n_axes, KILN_ERROR_SHAPE_MISMATCH);
        KILN_CHECK(roi->dtype == KILN_DTYPE_F32 || roi->dtype == KILN_DTYPE_F64 || roi->dtype == KILN_DTYPE_F16,
                   KILN_ERROR_DTYPE_MISMATCH);
        p->roi = roi;
        if (roi->data)
            for (size_t k = 0; k < p->n_axes; k++) {
                p->roi_start[p->axes[k]] = kiln_ew_get_f64(roi, (int64_t)k);
                p->roi_end[p->axes[k]] = kiln_ew_get_f64(roi, (int64_t)(p->n_axes + k));
            }
    }
    return plan_sizes(node, scales, NULL, 0, sizes, p);
}


/* The filter half-width in taps below base: taps run from base + first to base + 1 - first. */
static int64_t taps_first(const resize_plan *p, int axis)
{
    if (p->mode == MODE_NEAREST) return 0;
    double support = p->mode == MODE_LINEAR ? 1.0 : 2.0;
    double s = p->antialias && p->scale[axis] < 1.0 ? p->scale[axis] : 1.0;
    return (int64_t)floor(-support / s) + 1;
}

int64_t kiln_resize_taps_count(const resize_plan *p, int axis)
{
    return p->mode == MODE_NEAREST ? 1 : 2 - 2 * taps_first(p, axis);
}

/* The source coordinate of output index j on axis a, or NAN when it is to be extrapolated. */
static double source_coordinate(const resize_plan *p, int a, int64_t j)
{
    double in = (double)p->in_dim[a], out = (double)p->out_dim[a], scale = p->scale[a], x = (double)j;
    /* The output length the scale implies, before rounding: the specification's length in
       every formula (align_corners of a downscale by 0.6 divides by 0.6 * in - 1). */
    double out_f = scale * in;
    switch (p->coord) {
    case COORD_HALF_PIXEL: return (x + 0.5) / scale - 0.5;
    case COORD_HALF_PIXEL_SYMMETRIC: {
        double offset = in / 2 * (1 - out / out_f);
        return offset + (x + 0.5) / scale - 0.5;
    }
    case COORD_PYTORCH_HALF_PIXEL: return out_f != 1 ? (x + 0.5) / scale - 0.5 : -0.5;
    case COORD_ALIGN_CORNERS: return out_f != 1 ? x * (in - 1) / (out_f - 1) : 0.0;
    case COORD_ASYMMETRIC: return x / scale;
    case COORD_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / scale;
    case COORD_TF_CROP_AND_RESIZE: {
        double start = p->roi_start[a], end = p->roi_end[a];
        double v = out_f != 1 ? x * (end - start) * (in - 1) / (out_f - 1) : (end - start) * (in - 1) / 2;
        v += start * (in - 1);
        return v < 0 || v > in - 1 ? NAN : v;
    }
    }
    return NAN;
}

static int64_t nearest_index(const resize_plan *p, int a, double x)
{
    double f = floor(x);
    if (x == f) return (int64_t)f;
    double ratio = x - f;
    bool up;
    switch (p->nearest) {
    case NEAREST_ROUND_PREFER_FLOOR: up = ratio > 0.5; break;
    case NEAREST_ROUND_PREFER_CEIL: up = ratio >= 0.5; break;
    case NEAREST_FLOOR: up = false; break;
    case NEAREST_CEIL: up = true; break;
    default: up = p->scale[a] < 1.0; break; /* NEAREST_SIMPLE */
    }
    return (int64_t)f + up;
}

static int64_t clamp_index(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

void kiln_resize_taps_fill(const resize_plan *p, int a, axis_taps *t)
{
    int64_t n = t->n_taps, first = taps_first(p, a), in_dim = p->in_dim[a];
    double s = p->antialias && p->scale[a] < 1.0 ? p->scale[a] : 1.0;
    for (int64_t j = 0; j < p->out_dim[a]; j++) {
        int64_t *idx = t->index + j * n;
        float *w = t->weight + j * n;
        double x = source_coordinate(p, a, j);
        t->extrapolate[j] = isnan(x);
        if (isnan(x)) {
            for (int64_t k = 0; k < n; k++) idx[k] = 0, w[k] = 0;
            continue;
        }
        if (p->mode == MODE_NEAREST) {
            idx[0] = clamp_index(nearest_index(p, a, x), in_dim);
            w[0] = 1;
            continue;
        }
        /* base and ratio in (0, 1]: an integral x sits at base + 1 with ratio 1. */
        double f = floor(x);
        int64_t base = x == f ? (int64_t)f - 1 : (int64_t)f;
        double ratio = x - (double)base, sum = 0;
        for (int64_t k = 0; k < n; k++) {
            int64_t i = first + k, pos = base + i;
            double arg = s * ((double)i - ratio);
            double wk = p->mode == MODE_LINEAR ? fmax(0.0, 1.0 - fabs(arg)) : kiln_interp_cubic_weight(arg, p->cubic_a);
            if (p->exclude_outside && (pos < 0 || pos >= in_dim)) wk = 0;
            sum += wk;
            w[k] = (float)wk;
            idx[k] = clamp_index(pos, in_dim);
        }
        /* Antialiased and exclude_outside filters are normalised to sum 1; the plain ones
           already do, and are left as the specification computes them. */
        if ((p->antialias || p->exclude_outside) && sum != 0)
            for (int64_t k = 0; k < n; k++) w[k] = (float)(w[k] / sum);
    }
}

