/* vision.c — portable kernels of the vision family (see families.h): GridSample, RoiAlign and
 * MaxUnpool here, NonMaxSuppression in vision_nms.c. Layer: kernels/portable.
 *
 * GridSample and RoiAlign sample a feature map at fractional positions. GridSample follows the
 * ONNX definition (PyTorch's grid_sample): a grid coordinate outside the borders is clamped
 * (border) or mirrored (reflection) first, then every tap outside the input reads 0 (zeros),
 * the nearest edge (border) or its mirror image (reflection). RoiAlign's bilinear sampling is
 * the specification's (and ONNX Runtime's), including its rule that max mode keeps the largest
 * weighted corner of each sample. All three compute in f32.
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/interp.h"
#include "kernels/portable/shape_common.h"
#include "kernels/portable/vision_ops.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

/* ---- GridSample ---- */

#define GRID_MAX_DIMS 3 /* spatial dims: 4^3 taps at most per output element */

typedef enum { GRID_NEAREST, GRID_LINEAR, GRID_CUBIC } grid_mode;
typedef enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION } grid_padding;

typedef struct grid_params {
    grid_mode mode;
    grid_padding padding;
    bool align_corners;
    int n_dims;              /* spatial dims of X */
} grid_params;

static kiln_status grid_params_make(const kiln_node *node, const kiln_tensor *x, const kiln_tensor *grid,
                                    grid_params *p)
{
    KILN_CHECK(x && grid, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->dtype == KILN_DTYPE_F32 && grid->dtype == KILN_DTYPE_F32, KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(x->rank >= 3 && x->rank == grid->rank, KILN_ERROR_SHAPE_MISMATCH);
    p->n_dims = (int)x->rank - 2;
    KILN_CHECK(p->n_dims <= GRID_MAX_DIMS && (node->opset >= 20 || p->n_dims == 2), KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(grid->shape[0] == x->shape[0] && grid->shape[grid->rank - 1] == p->n_dims, KILN_ERROR_SHAPE_MISMATCH);
    /* Opset 20 renamed bilinear and bicubic to linear and cubic. */
    const char *mode = kiln_node_attr_string(node, "mode", node->opset >= 20 ? "linear" : "bilinear");
    if (strcmp(mode, "nearest") == 0) p->mode = GRID_NEAREST;
    else if (strcmp(mode, node->opset >= 20 ? "linear" : "bilinear") == 0) p->mode = GRID_LINEAR;
    else if (strcmp(mode, node->opset >= 20 ? "cubic" : "bicubic") == 0) p->mode = GRID_CUBIC;
    else return KILN_ERROR_INVALID_ARGUMENT;
    const char *padding = kiln_node_attr_string(node, "padding_mode", "zeros");
    if (strcmp(padding, "zeros") == 0) p->padding = PAD_ZEROS;
    else if (strcmp(padding, "border") == 0) p->padding = PAD_BORDER;
    else if (strcmp(padding, "reflection") == 0) p->padding = PAD_REFLECTION;
    else return KILN_ERROR_INVALID_ARGUMENT;
    p->align_corners = kiln_node_attr_int(node, "align_corners", 0) != 0;
    return KILN_OK;
}

static kiln_status grid_sample_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     size_t *scratch_size)
{
    const kiln_tensor *x = IN(0), *grid = IN(1);
    grid_params p;
    KILN_TRY(grid_params_make(node, x, grid, &p));
    int64_t shape[KILN_MAX_RANK] = {x->shape[0], x->shape[1]};
    for (int d = 0; d < p.n_dims; d++) shape[2 + d] = grid->shape[1 + d];
    KILN_TRY(kiln_shape_check_dims(shape, x->rank, x->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, x->rank, shape);
    return KILN_OK;
}

/* Mirrors v into [lo, hi] as often as it takes. */
static double reflect(double v, double lo, double hi)
{
    double range = hi - lo;
    if (range <= 0) return lo;
    if (v < lo) {
        double dx = lo - v, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2) == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        double dx = v - hi, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2) == 0 ? hi - r : lo + r;
    }
    return v;
}

/* The index tap i reads on an axis of `size` pixels, or -1 for a zero. */
static int64_t grid_tap(const grid_params *p, int64_t i, int64_t size)
{
    if (i >= 0 && i < size) return i;
    if (p->padding == PAD_ZEROS) return -1;
    if (p->padding == PAD_BORDER) return i < 0 ? 0 : size - 1;
    double lo = p->align_corners ? 0 : -0.5, hi = p->align_corners ? (double)size - 1 : (double)size - 0.5;
    int64_t r = (int64_t)reflect((double)i, lo, hi);
    return r < 0 ? 0 : r >= size ? size - 1 : r;
}

/* The taps of one spatial axis for normalised coordinate g: up to 4 (index, weight) pairs. */
static int grid_axis_taps(const grid_params *p, double g, int64_t size, int64_t *index, double *weight)
{
    double x = p->align_corners ? (g + 1) / 2 * (double)(size - 1) : ((g + 1) * (double)size - 1) / 2;
    /* A NaN or far-off coordinate reads nothing (zeros) or the border: keep it castable. */
    if (isnan(x)) x = -2.0 - (double)size;
    x = fmax(-0x1p40, fmin(0x1p40, x));
    /* PyTorch rounds half to even in 2-D (nearbyint) and half away from zero in 3-D (round). */
    if (p->mode == GRID_NEAREST) x = p->n_dims == 3 ? round(x) : nearbyint(x);
    double lo = p->align_corners ? 0 : -0.5, hi = p->align_corners ? (double)size - 1 : (double)size - 0.5;
    if (x < lo || x > hi) {
        if (p->padding == PAD_BORDER) x = x < 0 ? 0 : x > (double)size - 1 ? (double)size - 1 : x;
        else if (p->padding == PAD_REFLECTION) x = reflect(x, lo, hi);
    }
    if (p->mode == GRID_NEAREST) {
        index[0] = grid_tap(p, (int64_t)x, size);
        weight[0] = 1;
        return 1;
    }
    double f = floor(x), t = x - f;
    int64_t base = (int64_t)f;
    if (p->mode == GRID_LINEAR) {
        index[0] = grid_tap(p, base, size), weight[0] = 1 - t;
        index[1] = grid_tap(p, base + 1, size), weight[1] = t;
        return 2;
    }
    for (int k = 0; k < 4; k++) {
        index[k] = grid_tap(p, base - 1 + k, size);
        weight[k] = kiln_interp_cubic_weight(t + 1 - k, -0.75);
    }
    return 4;
}

static kiln_status grid_sample_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    const kiln_tensor *x = in[0], *grid = in[1];
    grid_params p;
    KILN_TRY(grid_params_make(node, x, grid, &p));
    int64_t n_batch = x->shape[0], channels = x->shape[1], in_plane = 1, out_plane = 1;
    int64_t strides[GRID_MAX_DIMS];
    for (int d = p.n_dims - 1; d >= 0; d--) {
        strides[d] = in_plane;
        in_plane *= x->shape[2 + d];
        out_plane *= y->shape[2 + d];
    }
    const float *xs = x->data, *gs = grid->data;
    float *ys = y->data;
    for (int64_t n = 0; n < n_batch; n++)
        for (int64_t o = 0; o < out_plane; o++) {
            const float *g = gs + (n * out_plane + o) * p.n_dims;
            int64_t index[GRID_MAX_DIMS][4];
            double weight[GRID_MAX_DIMS][4];
            int n_taps[GRID_MAX_DIMS], pos[GRID_MAX_DIMS] = {0};
            /* The grid lists coordinates innermost axis first: (x, y[, z]). */
            for (int d = 0; d < p.n_dims; d++)
                n_taps[d] = grid_axis_taps(&p, g[p.n_dims - 1 - d], x->shape[2 + d], index[d], weight[d]);
            for (int64_t c = 0; c < channels; c++) {
                const float *plane = xs + (n * channels + c) * in_plane;
                double acc = 0;
                for (;;) {
                    double w = 1;
                    int64_t off = 0;
                    for (int d = 0; d < p.n_dims && off >= 0; d++) {
                        int64_t i = index[d][pos[d]];
                        w *= weight[d][pos[d]];
                        off = i < 0 ? -1 : off + i * strides[d];
                    }
                    if (off >= 0) acc += w * plane[off];
                    int d = p.n_dims - 1;
                    while (d >= 0 && ++pos[d] == n_taps[d]) pos[d--] = 0;
                    if (d < 0) break;
                }
                ys[(n * channels + c) * out_plane + o] = (float)acc;
            }
        }
    return KILN_OK;
}

/* ---- RoiAlign ---- */

typedef struct roi_params {
    int64_t out_h, out_w, sampling_ratio;
    float spatial_scale;
    bool half_pixel, max_mode;
} roi_params;

static kiln_status roi_params_make(const kiln_node *node, const kiln_tensor *const *in, roi_params *p)
{
    const kiln_tensor *x = IN(0), *rois = IN(1), *batch = IN(2);
    KILN_CHECK(x && rois && batch, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->dtype == KILN_DTYPE_F32 && rois->dtype == KILN_DTYPE_F32, KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(kiln_shape_is_index_dtype(batch->dtype), KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(x->rank == 4 && rois->rank == 2 && rois->shape[1] == 4 && batch->rank == 1 &&
                   batch->shape[0] == rois->shape[0],
               KILN_ERROR_SHAPE_MISMATCH);
    p->out_h = kiln_node_attr_int(node, "output_height", 1);
    p->out_w = kiln_node_attr_int(node, "output_width", 1);
    p->sampling_ratio = kiln_node_attr_int(node, "sampling_ratio", 0);
    p->spatial_scale = kiln_node_attr_float(node, "spatial_scale", 1.0f);
    KILN_CHECK(p->out_h >= 1 && p->out_w >= 1 && p->sampling_ratio >= 0, KILN_ERROR_INVALID_ARGUMENT);
    const char *mode = kiln_node_attr_string(node, "mode", "avg");
    KILN_CHECK(strcmp(mode, "avg") == 0 || strcmp(mode, "max") == 0, KILN_ERROR_INVALID_ARGUMENT);
    p->max_mode = strcmp(mode, "max") == 0;
    /* Opset 16 added the mode and made half_pixel the default; opset 10 is output_half_pixel. */
    const char *coord = node->opset >= 16 ? kiln_node_attr_string(node, "coordinate_transformation_mode", "half_pixel")
                                          : "output_half_pixel";
    KILN_CHECK(strcmp(coord, "half_pixel") == 0 || strcmp(coord, "output_half_pixel") == 0,
               KILN_ERROR_INVALID_ARGUMENT);
    p->half_pixel = strcmp(coord, "half_pixel") == 0;
    return KILN_OK;
}

static kiln_status roi_align_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size)
{
    roi_params p;
    KILN_TRY(roi_params_make(node, in, &p));
    int64_t shape[4] = {IN(1)->shape[0], IN(0)->shape[1], p.out_h, p.out_w};
    KILN_TRY(kiln_shape_check_dims(shape, 4, KILN_DTYPE_F32));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), KILN_DTYPE_F32, 4, shape);
    return KILN_OK;
}

/* The four weighted corners of a bilinear sample at (y, x) of an h x w plane; false when the
   sample lies more than a pixel outside the plane (it contributes nothing). */
static bool roi_sample(const float *plane, int64_t h, int64_t w, double y, double x, double corner[4])
{
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) return false;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= h - 1) y1 = y0 = h - 1, y = (double)y0;
    else y1 = y0 + 1;
    if (x0 >= w - 1) x1 = x0 = w - 1, x = (double)x0;
    else x1 = x0 + 1;
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
    corner[0] = hy * hx * plane[y0 * w + x0];
    corner[1] = hy * lx * plane[y0 * w + x1];
    corner[2] = ly * hx * plane[y1 * w + x0];
    corner[3] = ly * lx * plane[y1 * w + x1];
    return true;
}

static kiln_status roi_align_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y || kiln_numel(y) == 0) return KILN_OK;
    roi_params p;
    KILN_TRY(roi_params_make(node, in, &p));
    const kiln_tensor *x = in[0], *rois = in[1], *batch = in[2];
    int64_t channels = x->shape[1], h = x->shape[2], w = x->shape[3];
    double offset = p.half_pixel ? 0.5 : 0.0;
    float *dst = y->data;
    for (int64_t r = 0; r < rois->shape[0]; r++) {
        int64_t b = kiln_tensor_get_i64(batch, r);
        KILN_CHECK(b >= 0 && b < x->shape[0], KILN_ERROR_INVALID_VALUE);
        const float *roi = (const float *)rois->data + 4 * r;
        double x0 = roi[0] * p.spatial_scale - offset, y0 = roi[1] * p.spatial_scale - offset;
        double roi_w = roi[2] * p.spatial_scale - offset - x0, roi_h = roi[3] * p.spatial_scale - offset - y0;
        if (!p.half_pixel) roi_w = fmax(roi_w, 1.0), roi_h = fmax(roi_h, 1.0);
        /* A box beyond 2^24 pixels (or not finite) would take that many samples per bin. */
        KILN_CHECK(isfinite(x0) && isfinite(y0) && fabs(roi_w) < 0x1p24 && fabs(roi_h) < 0x1p24, KILN_ERROR_INVALID_VALUE);
        double bin_h = roi_h / (double)p.out_h, bin_w = roi_w / (double)p.out_w;
        int64_t grid_h = p.sampling_ratio ? p.sampling_ratio : (int64_t)ceil(roi_h / (double)p.out_h);
        int64_t grid_w = p.sampling_ratio ? p.sampling_ratio : (int64_t)ceil(roi_w / (double)p.out_w);
        double count = (double)(grid_h * grid_w > 1 ? grid_h * grid_w : 1);
        for (int64_t c = 0; c < channels; c++) {
            const float *plane = (const float *)x->data + (b * channels + c) * h * w;
            for (int64_t ph = 0; ph < p.out_h; ph++)
                for (int64_t pw = 0; pw < p.out_w; pw++) {
                    double acc = 0;
                    bool first = true;
                    for (int64_t iy = 0; iy < grid_h; iy++) {
                        double sy = y0 + (double)ph * bin_h + ((double)iy + 0.5) * bin_h / (double)grid_h;
                        for (int64_t ix = 0; ix < grid_w; ix++) {
                            double sx = x0 + (double)pw * bin_w + ((double)ix + 0.5) * bin_w / (double)grid_w;
                            double corner[4] = {0, 0, 0, 0};
                            bool inside = roi_sample(plane, h, w, sy, sx, corner);
                            if (!p.max_mode) {
                                acc += corner[0] + corner[1] + corner[2] + corner[3];
                                continue;
                            }
                            double m = fmax(fmax(corner[0], corner[1]), fmax(corner[2], corner[3]));
                            if (!inside) m = 0;
                            acc = first ? m : fmax(acc, m);
                            first = false;
                        }
                    }
                    *dst++ = (float)(p.max_mode ? acc : acc / count);
                }
        }
    }
    return KILN_OK;
}

/* ---- MaxUnpool ---- */

/* The output shape: the default (the input un-pooled) in *natural, output_shape's in *shape. */
static kiln_status unpool_shape(const kiln_node *node, const kiln_tensor *const *in, int64_t *natural, int64_t *shape)
{
    const kiln_tensor *x = IN(0), *idx = IN(1), *given = IN(2);
    KILN_CHECK(x && idx, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(idx->dtype == KILN_DTYPE_I64, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(x->rank >= 3 && idx->rank == x->rank, KILN_ERROR_SHAPE_MISMATCH);
    for (uint32_t d = 0; d < x->rank; d++) KILN_CHECK(idx->shape[d] == x->shape[d], KILN_ERROR_SHAPE_MISMATCH);
    size_t n_spatial = x->rank - 2, n_kernel, n_strides, n_pads;
    int64_t kernel[KILN_MAX_RANK], strides[KILN_MAX_RANK], pads[2 * KILN_MAX_RANK];
    bool has_kernel, has_strides, has_pads;
    KILN_TRY(kiln_shape_attr_ints(node, "kernel_shape", kernel, KILN_MAX_RANK, &n_kernel, &has_kernel));
    KILN_TRY(kiln_shape_attr_ints(node, "strides", strides, KILN_MAX_RANK, &n_strides, &has_strides));
    KILN_TRY(kiln_shape_attr_ints(node, "pads", pads, 2 * KILN_MAX_RANK, &n_pads, &has_pads));
    KILN_CHECK(has_kernel && n_kernel == n_spatial, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(!has_strides || n_strides == n_spatial, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(!has_pads || n_pads == 2 * n_spatial, KILN_ERROR_INVALID_ARGUMENT);
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (size_t d = 0; d < n_spatial; d++) {
        int64_t s = has_strides ? strides[d] : 1, pb = has_pads ? pads[d] : 0, pe = has_pads ? pads[n_spatial + d] : 0;
        KILN_CHECK(s >= 1 && kernel[d] >= 1 && pb >= 0 && pe >= 0, KILN_ERROR_INVALID_ARGUMENT);
        int64_t span;
        KILN_CHECK(x->shape[2 + d] >= 1, KILN_ERROR_SHAPE_MISMATCH);
        KILN_CHECK(!__builtin_mul_overflow(x->shape[2 + d] - 1, s, &span) &&
                       !__builtin_add_overflow(span, kernel[d], &span),
                   KILN_ERROR_LIMIT);
        shape[2 + d] = span - pb - pe;
        KILN_CHECK(shape[2 + d] >= 1, KILN_ERROR_SHAPE_MISMATCH);
    }
    memcpy(natural, shape, x->rank * sizeof *shape);
    if (given && kiln_numel(given) > 0) {
        int64_t v[KILN_MAX_RANK];
        size_t n;
        KILN_TRY(kiln_shape_read_ints(given, false, v, KILN_MAX_RANK, &n));
        KILN_CHECK(n == x->rank, KILN_ERROR_SHAPE_MISMATCH);
        for (size_t d = 0; d < n; d++) {
            KILN_CHECK(d >= 2 || v[d] == shape[d], KILN_ERROR_SHAPE_MISMATCH);
            KILN_CHECK(v[d] >= shape[d], KILN_ERROR_INVALID_VALUE); /* it may only pad the default */
            shape[d] = v[d];
        }
    }
    return KILN_OK;
}

static kiln_status max_unpool_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    size_t *scratch_size)
{
    int64_t natural[KILN_MAX_RANK], shape[KILN_MAX_RANK];
    KILN_TRY(unpool_shape(node, in, natural, shape));
    KILN_TRY(kiln_shape_check_dims(shape, IN(0)->rank, IN(0)->dtype));
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), IN(0)->dtype, IN(0)->rank, shape);
    return KILN_OK;
}

static kiln_status max_unpool_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    const kiln_tensor *x = in[0], *idx = in[1];
    int64_t natural[KILN_MAX_RANK], shape[KILN_MAX_RANK], strides[KILN_MAX_RANK], total = 1;
    KILN_TRY(unpool_shape(node, in, natural, shape));
    kiln_shape_dense_strides(y->shape, y->rank, strides);
    for (uint32_t d = 0; d < y->rank; d++) total *= natural[d];
    size_t es = kiln_dtype_size(x->dtype);
    memset(y->data, 0, kiln_tensor_bytes(y));
    /* Indices are MaxPool's: offsets into the whole default-shaped output, flattened; a larger
       output_shape keeps each element at the same coordinates (it pads at the end). */
    for (int64_t i = 0, n = kiln_numel(x); i < n; i++) {
        int64_t at = ((const int64_t *)idx->data)[i], off = 0;
        KILN_CHECK(at >= 0 && at < total, KILN_ERROR_INVALID_VALUE);
        for (int d = (int)y->rank - 1; d >= 0; d--) {
            off += (at % natural[d]) * strides[d];
            at /= natural[d];
        }
        memcpy((char *)y->data + (size_t)off * es, (const char *)x->data + (size_t)i * es, es);
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_vision[] = {
    {"GridSample", 16, grid_sample_infer, grid_sample_run, {{0, 2, 2, 1, 1}}, "align_corners:i mode:s padding_mode:s"},
    {"RoiAlign", 10, roi_align_infer, roi_align_run, {{0, 3, 3, 1, 1}},
     "coordinate_transformation_mode:s mode:s output_height:i output_width:i sampling_ratio:i spatial_scale:f"},
    {"MaxUnpool", 9, max_unpool_infer, max_unpool_run, {{0, 2, 3, 1, 1}},
     "kernel_shape:I pads:I strides:I"},
    {"NonMaxSuppression", 10, kiln_vision_nms_infer, kiln_vision_nms_run, {{0, 2, 5, 1, 1}}, "center_point_box:i"},
    {0},
};
