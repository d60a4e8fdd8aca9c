/* resize.c — portable kernels of the resize family (see families.h): Resize (opsets 10 to 19)
 * and Upsample (7, 9). Layer: kernels/portable.
 *
 * Every mode is separable: the value at an output index is a tensor product of one 1-D filter
 * per axis (nearest picks one tap, linear two, cubic four, antialiased filters are stretched by
 * 1/scale). So each axis gets a table of taps (source index and weight per output index),
 * built once per run by kiln_resize_taps_fill() (resize_plan.c), and
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
#include "kernels/portable/resize_plan.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

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
        size_t n = (size_t)(p->out_dim[a] * kiln_resize_taps_count(p, (int)a));
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
    KILN_TRY(kiln_resize_plan_make(node, in, &p));
    const kiln_tensor *x = IN(0);
    bool is_float = x->dtype == KILN_DTYPE_F32 || x->dtype == KILN_DTYPE_F16 || x->dtype == KILN_DTYPE_BF16 ||
                    x->dtype == KILN_DTYPE_F64;
    KILN_CHECK(is_float || p.mode == MODE_NEAREST, KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(!kiln_dtype_is_quantized(x->dtype), KILN_ERROR_DTYPE_MISMATCH);
    KILN_TRY(kiln_shape_check_dims(p.out_dim, p.rank, x->dtype));
    KILN_TRY(kiln_shape_check_dims(p.out_dim, p.rank, KILN_DTYPE_F32));
    for (uint32_t a = 0; a < p.rank; a++) { /* tap tables stay addressable */
        /* An antialiased filter spans 4 / scale taps: a scale below 2^-20 is refused before
           that count is taken. */
        KILN_CHECK(!p.antialias || p.scale[a] >= 0x1p-20, KILN_ERROR_LIMIT);
        KILN_CHECK(p.out_dim[a] <= (INT64_MAX / 16) / kiln_resize_taps_count(&p, (int)a), KILN_ERROR_LIMIT);
    }
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
    KILN_TRY(kiln_resize_plan_make(node, in, &p));
    for (size_t k = 0; p.roi && k < p.n_axes; k++)
        KILN_CHECK(isfinite(p.roi_start[p.axes[k]]) && isfinite(p.roi_end[p.axes[k]]), KILN_ERROR_INVALID_VALUE);
    const kiln_tensor *x = in[0];
    KILN_CHECK(kiln_numel(x) > 0, KILN_ERROR_INVALID_VALUE); /* nothing to interpolate from */
    char *scratch = ctx->scratch;
    axis_taps taps[KILN_MAX_RANK];
    for (uint32_t a = 0; a < p.rank; a++) {
        size_t n = (size_t)(p.out_dim[a] * kiln_resize_taps_count(&p, (int)a));
        taps[a].n_taps = kiln_resize_taps_count(&p, (int)a);
        taps[a].index = (int64_t *)scratch;
        scratch += align64(n * sizeof(int64_t));
        taps[a].weight = (float *)scratch;
        scratch += align64(n * sizeof(float));
        taps[a].extrapolate = (uint8_t *)scratch;
        scratch += align64((size_t)p.out_dim[a]);
        kiln_resize_taps_fill(&p, (int)a, &taps[a]);
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
