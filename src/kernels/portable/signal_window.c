/* signal_window.c — portable kernels of the signal family that generate tensors from scalars:
 * HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (DFT and STFT: signal_dft.c).
 *
 * Layer: kernels/portable. Depends on kernel.h and data_ops.h (the ONNX dtype codes of
 * output_datatype and Cast's store).
 * The output shape comes from input values, so infer() needs them (KILN_ERROR_SHAPE_UNKNOWN
 * without). The windows are the generalized cosine windows
 *   w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),  N = size (periodic) or size - 1,
 * computed in double and stored in output_datatype (f32 by default).
 */
#include <math.h>

#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/families.h"

#define SIGNAL_PI 3.14159265358979323846

/* A scalar (one-element) input's value, when known. */
static kiln_status scalar_input(const kiln_tensor *t, double *out)
{
    if (!t) return KILN_ERROR_INVALID_ARGUMENT;
    if (t->rank > 1 || (t->rank == 1 && t->shape[0] != 1)) return KILN_ERROR_SHAPE_MISMATCH;
    if (kiln_dtype_size(t->dtype) == 0 || t->dtype == KILN_DTYPE_F16 || t->dtype == KILN_DTYPE_BF16)
        return KILN_ERROR_NOT_SUPPORTED;
    if (!t->data) return KILN_ERROR_SHAPE_UNKNOWN;
    *out = kiln_tensor_get_f64(t, 0);
    return KILN_OK;
}

static kiln_status output_dtype(const kiln_node *node, kiln_dtype *dtype)
{
    KILN_TRY(kiln_data_dtype_of_onnx(kiln_node_attr_int(node, "output_datatype", 1), dtype));
    return *dtype == KILN_DTYPE_BOOL ? KILN_ERROR_NOT_SUPPORTED : KILN_OK;
}

static void store(kiln_tensor *t, int64_t i, double v)
{
    kiln_data_store_f64(t->dtype, (char *)t->data + (size_t)i * kiln_dtype_size(t->dtype), v);
}

/* ---- the cosine windows ---- */

typedef struct cosine_window {
    double a0, a1, a2;
} cosine_window;

static kiln_status window_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    (void)scratch_size;
    if (!out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    double size;
    kiln_dtype dtype;
    KILN_TRY(output_dtype(node, &dtype));
    if (in[0] && in[0]->dtype != KILN_DTYPE_I32 && in[0]->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
    KILN_TRY(scalar_input(in[0], &size));
    int64_t shape[1] = {kiln_tensor_get_i64(in[0], 0)}; /* exactly, not through the double */
    if (shape[0] < 0) return KILN_ERROR_INVALID_VALUE;
    kiln_tensor_set_shape(out[0], dtype, 1, shape);
    return kiln_tensor_numel(out[0]) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

static kiln_status window_run(const kiln_node *node, kiln_tensor *y, cosine_window c)
{
    int64_t size = y->shape[0];
    double n_div = kiln_node_attr_int(node, "periodic", 1) ? (double)size : (double)(size - 1);
    for (int64_t n = 0; n < size; n++) {
        /* A symmetric window of one sample divides by 0: that sample is the window's peak. */
        double phase = n_div > 0 ? 2.0 * SIGNAL_PI * (double)n / n_div : 0.0;
        store(y, n, c.a0 - c.a1 * cos(phase) + c.a2 * cos(2.0 * phase));
    }
    return KILN_OK;
}

static kiln_status hann_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    (void)in, (void)ctx;
    return window_run(node, out[0], (cosine_window){0.5, 0.5, 0.0});
}

static kiln_status hamming_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    (void)in, (void)ctx;
    return window_run(node, out[0], (cosine_window){25.0 / 46.0, 21.0 / 46.0, 0.0});
}

static kiln_status blackman_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    (void)in, (void)ctx;
    return window_run(node, out[0], (cosine_window){0.42, 0.5, 0.08});
}

/* ---- MelWeightMatrix ---- */

/* The five scalar inputs: num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz. */
typedef struct mel_args {
    int64_t n_mel, dft_length, sample_rate;
    double lower_hz, upper_hz;
} mel_args;

static kiln_status mel_read(const kiln_tensor *const *in, mel_args *a)
{
    double v[5];
    for (size_t i = 0; i < 5; i++) {
        if (in[i] && i < 3 && in[i]->dtype != KILN_DTYPE_I32 && in[i]->dtype != KILN_DTYPE_I64)
            return KILN_ERROR_DTYPE_MISMATCH;
        KILN_TRY(scalar_input(in[i], &v[i]));
    }
    /* The integers read exactly, not through the double of scalar_input. */
    a->n_mel = kiln_tensor_get_i64(in[0], 0);
    a->dft_length = kiln_tensor_get_i64(in[1], 0);
    a->sample_rate = kiln_tensor_get_i64(in[2], 0);
    a->lower_hz = v[3];
    a->upper_hz = v[4];
    int64_t limit = (int64_t)1 << 40;
    if (a->n_mel < 0 || a->dft_length < 0 || a->sample_rate <= 0 || a->n_mel > limit || a->dft_length > limit)
        return KILN_ERROR_INVALID_VALUE;
    return KILN_OK;
}

static kiln_status mel_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             size_t *scratch_size)
{
    if (!out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    mel_args a;
    kiln_dtype dtype;
    KILN_TRY(output_dtype(node, &dtype));
    KILN_TRY(mel_read(in, &a));
    int64_t shape[2] = {a.dft_length / 2 + 1, a.n_mel};
    kiln_tensor_set_shape(out[0], dtype, 2, shape);
    *scratch_size = (size_t)(a.n_mel + 2) * sizeof(int64_t);
    return kiln_tensor_numel(out[0]) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

static double hz_to_mel(double hz) { return 2595.0 * log10(1.0 + hz / 700.0); }
static double mel_to_hz(double mel) { return 700.0 * (pow(10.0, mel / 2595.0) - 1.0); }

/* Triangular filters between n_mel + 2 points evenly spaced in mel from lower to upper edge,
   each mapped to the DFT bin floor((dft_length + 1) * hz / sample_rate) (ONNX's definition). */
static kiln_status mel_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                           kiln_kernel_ctx *ctx)
{
    (void)node;
    mel_args a;
    KILN_TRY(mel_read(in, &a));
    kiln_tensor *y = out[0];
    int64_t n_bins = y->shape[0], *points = ctx->scratch; /* (n_mel + 2) DFT bins */
    double low = hz_to_mel(a.lower_hz), step = (hz_to_mel(a.upper_hz) - low) / (double)(a.n_mel + 2);
    for (int64_t i = 0; i < a.n_mel + 2; i++) {
        double bin = floor((double)(a.dft_length + 1) * mel_to_hz((double)i * step + low) / (double)a.sample_rate);
        if (!(bin >= 0 && bin <= (double)n_bins)) return KILN_ERROR_INVALID_VALUE; /* NaN edges too */
        points[i] = (int64_t)bin;
    }
    for (int64_t i = 0; i < n_bins * a.n_mel; i++) store(y, i, 0.0);
    for (int64_t m = 0; m < a.n_mel; m++) {
        int64_t left = points[m], center = points[m + 1], right = points[m + 2];
        if (left < 0 || right >= n_bins + 1 || center >= n_bins) return KILN_ERROR_INVALID_VALUE;
        if (center == left) store(y, center * a.n_mel + m, 1.0);
        for (int64_t j = left; j <= center && center > left; j++)
            store(y, j * a.n_mel + m, (double)(j - left) / (double)(center - left));
        for (int64_t j = center; j < right; j++) store(y, j * a.n_mel + m, (double)(right - j) / (double)(right - center));
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_signal_window[] = {
    {"HannWindow", 17, window_infer, hann_run, {{0, 1, 1, 1, 1}}, "output_datatype:i periodic:i"},
    {"HammingWindow", 17, window_infer, hamming_run, {{0, 1, 1, 1, 1}}, "output_datatype:i periodic:i"},
    {"BlackmanWindow", 17, window_infer, blackman_run, {{0, 1, 1, 1, 1}}, "output_datatype:i periodic:i"},
    {"MelWeightMatrix", 17, mel_infer, mel_run, {{0, 5, 5, 1, 1}}, "output_datatype:i"},
    {0},
};
