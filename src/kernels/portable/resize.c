/* resize.c — portable kernels of the resize family (see families.h): Resize (opsets 10 to 19)
 * and Upsample (7, 9). Layer: kernels/portable.
 *
 * Every mode is separable: the value at an output index is a tensor product of one 1-D filter
 * per axis (nearest picks one tap, linear two, cubic four, antialiased filters are stretched by
 * 1/scale). So each axis gets a table of taps (source index and weight per output index),
 * built once per run by axis_taps(), and
 *  - nearest copies elements through the per-axis index tables, byte-wise for every dtype;
 *  - linear and cubic resize one axis at a time in f32, (outer, in_dim, inner) ->
 *    (outer, out_dim, inner), skipping axes whose table is the identity.
 * The coordinate rules follow the ONNX specification: a source coordinate x is taken between
 * taps base and base + 1 with ratio in (0, 1] (an integral x is base + 1 with ratio 1), taps
 * outside the input repeat its edge element unless exclude_outside drops them, and
 * tf_crop_and_resize writes extrapolation_value where x leaves the input.
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/families.h"
#include "kernels/portable/interp.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } resize_mode;
typedef enum {
    COORD_HALF_PIXEL, COORD_HALF_PIXEL_SYMMETRIC, COORD_PYTORCH_HALF_PIXEL, COORD_ALIGN_CORNERS,
    COORD_ASYMMETRIC, COORD_TF_HALF_PIXEL_FOR_NN, COORD_TF_CROP_AND_RESIZE,
} resize_coord;
/* NEAREST_SIMPLE is opset 10's and Upsample's rule: floor when upsampling, ceil when not. */
typedef enum { NEAREST_ROUND_PREFER_FLOOR, NEAREST_ROUND_PREFER_CEIL, NEAREST_FLOOR, NEAREST_CEIL, NEAREST_SIMPLE } resize_nearest;

typedef struct resize_plan {
    resize_mode mode;
    resize_coord coord;
    resize_nearest nearest;
    float cubic_a, extrapolation;
    bool exclude_outside, antialias;
    uint32_t rank;
    int64_t in_dim[KILN_MAX_RANK], out_dim[KILN_MAX_RANK];
    double scale[KILN_MAX_RANK];                   /* output / input, per axis */
    double roi_start[KILN_MAX_RANK], roi_end[KILN_MAX_RANK]; /* tf_crop_and_resize only */
    const kiln_tensor *roi;                        /* NULL or the roi input (read at run time) */
    int64_t axes[KILN_MAX_RANK];                   /* opset 18 `axes`: the axes scales/sizes name */
    size_t n_axes;
} resize_plan;

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
static kiln_status resize_plan_make(const kiln_node *node, const kiln_tensor *const *in, resize_plan *p)
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

/* ---- per-axis taps ---- */

/* The taps of one axis: for output index j, taps n_taps entries from j * n_taps, each a source
   index in [0, in_dim) and a weight; extrapolate[j] when tf_crop_and_resize left the input. */
typedef struct axis_taps {
    int64_t n_taps;
    int64_t *index;     /* (out_dim, n_taps) */
    float *weight;      /* (out_dim, n_taps) */
    uint8_t *extrapolate; /* (out_dim) */
} axis_taps;

/* The filter half-width in taps below base: taps run from base + first to base + 1 - first. */
static int64_t taps_first(const resize_plan *p, int axis)
{
    if (p->mode == MODE_NEAREST) return 0;
    double support = p->mode == MODE_LINEAR ? 1.0 : 2.0;
    double s = p->antialias && p->scale[axis] < 1.0 ? p->scale[axis] : 1.0;
    return (int64_t)floor(-support / s) + 1;
}

static int64_t taps_count(const resize_plan *p, int axis)
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

static void axis_taps_fill(const resize_plan *p, int a, axis_taps *t)
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

static bool axis_is_identity(const resize_plan *p, int a, const axis_taps *t)
{
    if (p->out_dim[a] != p->in_dim[a]) return false;
    for (int64_t j = 0; j < p->out_dim[a]; j++) {
        if (t->extrapolate[j]) return false;
        for (int64_t k = 0; k < t->n_taps; k++) {
            int64_t i = j * t->n_taps + k;
            if (t->weight[i] != 0 && (t->index[i] != j || t->weight[i] != 1)) return false;
        }
    }
    return true;
}

/* ---- scratch ---- */

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The largest element count of the tensor between passes (axes resized in order). */
static int64_t largest_intermediate(const resize_plan *p)
{
    int64_t best = 0, shape[KILN_MAX_RANK];
    memcpy(shape, p->in_dim, sizeof shape);
    for (uint32_t a = 0; a <= p->rank; a++) {
        int64_t numel = 1;
        for (uint32_t d = 0; d < p->rank; d++) numel *= shape[d];
        if (numel > best) best = numel;
        if (a < p->rank) shape[a] = p->out_dim[a];
    }
    return best;
}

static size_t taps_bytes(const resize_plan *p)
{
    size_t total = 0;
    for (uint32_t a = 0; a < p->rank; a++) {
        size_t n = (size_t)(p->out_dim[a] * taps_count(p, (int)a));
        total += align64(n * sizeof(int64_t)) + align64(n * sizeof(float)) + align64((size_t)p->out_dim[a]);
    }
    return total;
}

static size_t float_buffers_bytes(const resize_plan *p, kiln_dtype dtype)
{
    if (p->mode == MODE_NEAREST) return 0;
    size_t big = align64((size_t)largest_intermediate(p) * sizeof(float));
    return 2 * big + (dtype == KILN_DTYPE_F32 ? 0 : big);
}

static kiln_status resize_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    resize_plan p;
    KILN_TRY(resize_plan_make(node, in, &p));
    const kiln_tensor *x = IN(0);
    bool is_float = x->dtype == KILN_DTYPE_F32 || x->dtype == KILN_DTYPE_F16 || x->dtype == KILN_DTYPE_BF16 ||
                    x->dtype == KILN_DTYPE_F64;
    KILN_CHECK(is_float || p.mode == MODE_NEAREST, KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(!kiln_dtype_is_quantized(x->dtype), KILN_ERROR_DTYPE_MISMATCH);
    KILN_TRY(kiln_shape_check_dims(p.out_dim, p.rank, x->dtype));
    KILN_TRY(kiln_shape_check_dims(p.out_dim, p.rank, KILN_DTYPE_F32));
    for (uint32_t a = 0; a < p.rank; a++) /* tap tables stay addressable */
        KILN_CHECK(p.out_dim[a] <= (INT64_MAX / 16) / taps_count(&p, (int)a), KILN_ERROR_LIMIT);
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, p.rank, p.out_dim);
    *scratch_size = taps_bytes(&p) + float_buffers_bytes(&p, x->dtype);
    return KILN_OK;
}

/* ---- run ---- */

/* Nearest: every output element is one input element (or the extrapolation value). */
static void run_nearest(const resize_plan *p, const axis_taps *taps, const kiln_tensor *x, kiln_tensor *y)
{
    size_t es = kiln_dtype_size(x->dtype);
    int64_t in_strides[KILN_MAX_RANK], pos[KILN_MAX_RANK] = {0}, n = kiln_numel(y);
    kiln_shape_dense_strides(p->in_dim, p->rank, in_strides);
    unsigned char extrapolated[16];
    kiln_data_store_f64(x->dtype, extrapolated, p->extrapolation);
    char *dst = y->data;
    for (int64_t e = 0; e < n; e++) {
        int64_t src = 0;
        bool outside = false;
        for (uint32_t a = 0; a < p->rank; a++) {
            outside |= taps[a].extrapolate[pos[a]] != 0;
            src += taps[a].index[pos[a]] * in_strides[a];
        }
        memcpy(dst + (size_t)e * es, outside ? (const void *)extrapolated : (const char *)x->data + (size_t)src * es,
               es);
        for (int a = (int)p->rank - 1; a >= 0 && ++pos[a] == p->out_dim[a]; a--) pos[a] = 0;
    }
}

typedef struct axis_pass {
    const float *src;   /* (outer, in_dim, inner) */
    float *dst;         /* (outer, out_dim, inner) */
    int64_t in_dim, out_dim, inner;
    const axis_taps *taps;
    float extrapolation;
} axis_pass;

static void axis_pass_slice(void *arg, size_t o)
{
    const axis_pass *ps = arg;
    const axis_taps *t = ps->taps;
    const float *src = ps->src + (int64_t)o * ps->in_dim * ps->inner;
    float *dst = ps->dst + (int64_t)o * ps->out_dim * ps->inner;
    for (int64_t j = 0; j < ps->out_dim; j++) {
        float *row = dst + j * ps->inner;
        if (t->extrapolate[j]) {
            for (int64_t q = 0; q < ps->inner; q++) row[q] = ps->extrapolation;
            continue;
        }
        const int64_t *idx = t->index + j * t->n_taps;
        const float *w = t->weight + j * t->n_taps;
        if (ps->inner == 1) {
            float acc = 0;
            for (int64_t k = 0; k < t->n_taps; k++) acc += w[k] * src[idx[k]];
            row[0] = acc;
            continue;
        }
        for (int64_t q = 0; q < ps->inner; q++) row[q] = 0;
        for (int64_t k = 0; k < t->n_taps; k++) {
            if (w[k] == 0) continue;
            const float *in_row = src + idx[k] * ps->inner;
            for (int64_t q = 0; q < ps->inner; q++) row[q] += w[k] * in_row[q];
        }
    }
}

/* Linear and cubic: one f32 pass per axis that is not the identity. */
static void run_filtered(const resize_plan *p, const axis_taps *taps, const kiln_tensor *x, kiln_tensor *y,
                         char *buffers, kiln_kernel_ctx *ctx)
{
    size_t big = align64((size_t)largest_intermediate(p) * sizeof(float));
    float *ping = (float *)buffers, *pong = (float *)(buffers + big);
    const float *src = x->data;
    if (x->dtype != KILN_DTYPE_F32) {
        float *conv = (float *)(buffers + 2 * big);
        for (int64_t e = 0, n = kiln_numel(x); e < n; e++) conv[e] = (float)kiln_ew_get_f64(x, e);
        src = conv;
    }
    int active[KILN_MAX_RANK], n_active = 0;
    for (uint32_t a = 0; a < p->rank; a++)
        if (!axis_is_identity(p, (int)a, &taps[a])) active[n_active++] = (int)a;
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, p->in_dim, sizeof shape);
    bool direct = x->dtype == KILN_DTYPE_F32;
    if (n_active == 0) {
        if (direct) memcpy(y->data, src, (size_t)kiln_numel(y) * sizeof(float));
        else memcpy(ping, src, (size_t)kiln_numel(y) * sizeof(float));
        src = ping;
    }
    for (int k = 0; k < n_active; k++) {
        int a = active[k];
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < (int)p->rank; d++) {
            if (d < a) outer *= shape[d];
            else if (d > a) inner *= shape[d];
        }
        float *dst = k == n_active - 1 && direct ? y->data : (k % 2 ? pong : ping);
        axis_pass ps = {src, dst, p->in_dim[a], p->out_dim[a], inner, &taps[a], p->extrapolation};
        if (outer > 0) ctx->parallel_for(ctx->pool, (size_t)outer, axis_pass_slice, &ps);
        shape[a] = p->out_dim[a];
        src = dst;
    }
    if (!direct)
        for (int64_t e = 0, n = kiln_numel(y); e < n; e++)
            kiln_data_store_f64(y->dtype, (char *)y->data + (size_t)e * kiln_dtype_size(y->dtype), src[e]);
}

static kiln_status resize_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    resize_plan p;
    KILN_TRY(resize_plan_make(node, in, &p));
    for (size_t k = 0; p.roi && k < p.n_axes; k++)
        KILN_CHECK(isfinite(p.roi_start[p.axes[k]]) && isfinite(p.roi_end[p.axes[k]]), KILN_ERROR_INVALID_VALUE);
    const kiln_tensor *x = in[0];
    KILN_CHECK(kiln_numel(x) > 0, KILN_ERROR_INVALID_VALUE); /* nothing to interpolate from */
    char *scratch = ctx->scratch;
    axis_taps taps[KILN_MAX_RANK];
    for (uint32_t a = 0; a < p.rank; a++) {
        size_t n = (size_t)(p.out_dim[a] * taps_count(&p, (int)a));
        taps[a].n_taps = taps_count(&p, (int)a);
        taps[a].index = (int64_t *)scratch;
        scratch += align64(n * sizeof(int64_t));
        taps[a].weight = (float *)scratch;
        scratch += align64(n * sizeof(float));
        taps[a].extrapolate = (uint8_t *)scratch;
        scratch += align64((size_t)p.out_dim[a]);
        axis_taps_fill(&p, (int)a, &taps[a]);
    }
    if (p.mode == MODE_NEAREST) run_nearest(&p, taps, x, y);
    else run_filtered(&p, taps, x, y, scratch, ctx);
    return KILN_OK;
}

const kiln_kernel kiln_kernels_resize[] = {
    {"Upsample", 7, resize_infer, resize_run, {{0, 1, 1, 1, 1}, {9, 2, 2, 1, 1}}, "mode:s scales:F"},
    {"Resize", 10, resize_infer, resize_run, {{0, 2, 2, 1, 1}, {11, 3, 4, 1, 1}, {13, 1, 4, 1, 1}},
     "antialias:i axes:I coordinate_transformation_mode:s cubic_coeff_a:f exclude_outside:i extrapolation_value:f "
     "keep_aspect_ratio_policy:s mode:s nearest_mode:s"},
    {0},
};
