/* signal_dft.c — portable kernels of the signal family's transforms: DFT and STFT.
 *
 * Layer: kernels/portable. Depends on kernel.h and the row helpers.
 * Signals end in a dim of 1 (real) or 2 (complex: re, im); outputs are always complex. Both ops
 * run the same direct transform of one lane (dft_lane): O(n^2) in double with twiddles taken at
 * the exact angle 2 pi (j k mod n) / n, a reference rather than an FFT. A lane shorter than the
 * transform is zero-padded, a longer one truncated (DFT's dft_length); onesided keeps the
 * n / 2 + 1 bins a real signal determines.
 *  - DFT: along `axis` (an attribute until opset 20, the third input from 20), inverse scales by
 *    1 / n and turns the sign of the exponent;
 *  - STFT: frames of frame_length every frame_step samples, each times the window, one
 *    transform each: output (batch, frames, bins, 2).
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/reduce_row.h"

#define SIGNAL_PI 3.14159265358979323846

/* out (n_out, 2) = the transform of length n of lane (n, 2), zero-padded already. */
static void dft_lane(const double *lane, int64_t n, int64_t n_out, bool inverse, double *out)
{
    double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < n_out; k++) {
        double re = 0.0, im = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double angle = sign * 2.0 * SIGNAL_PI * (double)((j * k) % n) / (double)n;
            double c = cos(angle), s = sin(angle);
            re += lane[2 * j] * c - lane[2 * j + 1] * s;
            im += lane[2 * j] * s + lane[2 * j + 1] * c;
        }
        out[2 * k] = inverse ? re / (double)n : re;
        out[2 * k + 1] = inverse ? im / (double)n : im;
    }
}

/* A scalar integer input's value: KILN_ERROR_SHAPE_UNKNOWN until known. */
static kiln_status int_scalar(const kiln_tensor *t, int64_t *out)
{
    if (t->dtype != KILN_DTYPE_I32 && t->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
    if (t->rank > 1 || (t->rank == 1 && t->shape[0] != 1)) return KILN_ERROR_SHAPE_MISMATCH;
    if (!t->data) return KILN_ERROR_SHAPE_UNKNOWN;
    *out = kiln_tensor_get_i64(t, 0);
    return KILN_OK;
}

static bool is_signal(const kiln_tensor *x)
{
    return x && x->rank >= 2 && (x->shape[x->rank - 1] == 1 || x->shape[x->rank - 1] == 2);
}

/* ---- DFT ---- */

typedef struct dft_plan {
    int64_t outer, len_in, inner, channels; /* input (outer, len_in, inner, channels) */
    int64_t n, n_out;                       /* transform length, bins kept */
    int64_t axis;
    bool inverse;
} dft_plan;

static kiln_status dft_plan_make(const kiln_node *node, const kiln_tensor *const *in, dft_plan *p)
{
    const kiln_tensor *x = in[0], *length = node->n_inputs > 1 ? in[1] : NULL;
    const kiln_tensor *axis_in = node->opset >= 20 && node->n_inputs > 2 ? in[2] : NULL;
    if (!is_signal(x)) return KILN_ERROR_SHAPE_MISMATCH;
    if (!kiln_reduce_row_is_float(x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    int64_t rank = x->rank, axis = node->opset >= 20 ? -2 : kiln_node_attr_int(node, "axis", 1);
    if (axis_in) KILN_TRY(int_scalar(axis_in, &axis));
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank - 2) return KILN_ERROR_INVALID_ARGUMENT;
    p->axis = axis;
    p->outer = p->inner = 1;
    for (int64_t d = 0; d < rank - 1; d++) {
        if (d < axis) p->outer *= x->shape[d];
        else if (d > axis) p->inner *= x->shape[d];
    }
    p->len_in = x->shape[axis];
    p->channels = x->shape[rank - 1];
    p->n = p->len_in;
    if (length) KILN_TRY(int_scalar(length, &p->n));
    if (p->n < 1 || p->n > ((int64_t)1 << 30)) return KILN_ERROR_INVALID_VALUE;
    p->inverse = kiln_node_attr_int(node, "inverse", 0) != 0;
    p->n_out = kiln_node_attr_int(node, "onesided", 0) ? p->n / 2 + 1 : p->n;
    return KILN_OK;
}

static kiln_status dft_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             size_t *scratch_size)
{
    if (!out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    dft_plan p;
    KILN_TRY(dft_plan_make(node, in, &p));
    int64_t shape[KILN_MAX_RANK];
    memcpy(shape, in[0]->shape, in[0]->rank * sizeof *shape);
    shape[p.axis] = p.n_out;
    shape[in[0]->rank - 1] = 2;
    kiln_tensor_set_shape(out[0], in[0]->dtype, in[0]->rank, shape);
    *scratch_size = (size_t)(2 * p.n + 2 * p.n_out) * sizeof(double);
    return kiln_tensor_numel(out[0]) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

static kiln_status dft_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                           kiln_kernel_ctx *ctx)
{
    dft_plan p;
    KILN_TRY(dft_plan_make(node, in, &p));
    double *lane = ctx->scratch, *bins = lane + 2 * p.n; /* (n, 2), (n_out, 2) */
    int64_t copied = p.len_in < p.n ? p.len_in : p.n;
    for (int64_t o = 0; o < p.outer; o++) {
        for (int64_t i = 0; i < p.inner; i++) {
            memset(lane, 0, (size_t)(2 * p.n) * sizeof *lane);
            for (int64_t j = 0; j < copied; j++)
                kiln_reduce_row_load_f64(in[0], ((o * p.len_in + j) * p.inner + i) * p.channels, 1, p.channels, lane + 2 * j);
            dft_lane(lane, p.n, p.n_out, p.inverse, bins);
            for (int64_t k = 0; k < p.n_out; k++)
                kiln_reduce_row_store_f64(out[0], ((o * p.n_out + k) * p.inner + i) * 2, 1, 2, bins + 2 * k);
        }
    }
    return KILN_OK;
}

/* ---- STFT ---- */

typedef struct stft_plan {
    int64_t batch, length, channels;
    int64_t step, frame_length, frames, bins;
} stft_plan;

static kiln_status stft_plan_make(const kiln_node *node, const kiln_tensor *const *in, stft_plan *p)
{
    const kiln_tensor *x = in[0], *step = node->n_inputs > 1 ? in[1] : NULL;
    const kiln_tensor *window = node->n_inputs > 2 ? in[2] : NULL, *frame_length = node->n_inputs > 3 ? in[3] : NULL;
    if (!is_signal(x) || x->rank != 3 || !step) return KILN_ERROR_SHAPE_MISMATCH;
    if (!kiln_reduce_row_is_float(x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    p->batch = x->shape[0];
    p->length = x->shape[1];
    p->channels = x->shape[2];
    if (window && (window->dtype != x->dtype || window->rank != 1)) return KILN_ERROR_SHAPE_MISMATCH;
    if (!window && !frame_length) return KILN_ERROR_INVALID_ARGUMENT;
    p->frame_length = window ? window->shape[0] : 0;
    if (frame_length) {
        int64_t n;
        KILN_TRY(int_scalar(frame_length, &n));
        if (window && n != p->frame_length) return KILN_ERROR_SHAPE_MISMATCH;
        p->frame_length = n;
    }
    KILN_TRY(int_scalar(step, &p->step));
    if (p->step < 1 || p->frame_length < 1 || p->frame_length > p->length) return KILN_ERROR_INVALID_VALUE;
    p->frames = (p->length - p->frame_length) / p->step + 1;
    p->bins = kiln_node_attr_int(node, "onesided", 1) ? p->frame_length / 2 + 1 : p->frame_length;
    return KILN_OK;
}

static kiln_status stft_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size)
{
    if (!out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    stft_plan p;
    KILN_TRY(stft_plan_make(node, in, &p));
    int64_t shape[4] = {p.batch, p.frames, p.bins, 2};
    kiln_tensor_set_shape(out[0], in[0]->dtype, 4, shape);
    *scratch_size = (size_t)(2 * p.frame_length + 2 * p.bins) * sizeof(double);
    return kiln_tensor_numel(out[0]) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

static kiln_status stft_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    stft_plan p;
    KILN_TRY(stft_plan_make(node, in, &p));
    const kiln_tensor *window = node->n_inputs > 2 ? in[2] : NULL;
    double *lane = ctx->scratch, *bins = lane + 2 * p.frame_length; /* (frame_length, 2), (bins, 2) */
    for (int64_t b = 0; b < p.batch; b++) {
        for (int64_t f = 0; f < p.frames; f++) {
            memset(lane, 0, (size_t)(2 * p.frame_length) * sizeof *lane);
            for (int64_t j = 0; j < p.frame_length; j++) {
                double w = window ? kiln_tensor_get_f64(window, j) : 1.0;
                kiln_reduce_row_load_f64(in[0], (b * p.length + f * p.step + j) * p.channels, 1, p.channels, lane + 2 * j);
                lane[2 * j] *= w;
                lane[2 * j + 1] *= w;
            }
            dft_lane(lane, p.frame_length, p.bins, false, bins);
            kiln_reduce_row_store_f64(out[0], (b * p.frames + f) * p.bins * 2, 1, 2 * p.bins, bins);
        }
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_signal_dft[] = {
    {"DFT", 17, dft_infer, dft_run, {{0, 1, 2, 1, 1}, {20, 1, 3, 1, 1}}, "axis:i inverse:i onesided:i"},
    {"STFT", 17, stft_infer, stft_run, {{0, 2, 4, 1, 1}}, "onesided:i"},
    {0},
};
