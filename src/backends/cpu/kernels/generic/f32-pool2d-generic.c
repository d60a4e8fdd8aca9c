/* f32-pool2d-generic.c — POOL2D (max, average, global) in plain C; every table uses it.
 *
 * Layer: backends/cpu/kernels/generic. As the portable pools (pool.c, pool_global.c): each
 * window keeps only its taps inside the input; max takes the first maximum (NaN never wins
 * after the first tap) and gives -FLT_MAX for an empty window; average sums in double and
 * divides by the taps present, or with count_include_pad by the taps inside the padded input
 * (never those past the pads, which ceil mode can add), and gives 0 for an empty window.
 */
#include <float.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

/* The taps of one output position along one axis. */
typedef struct axis_taps {
    int64_t start, lo, hi, padded;  /* padded: taps inside [-pad_begin, in + pad_end) */
} axis_taps;

static axis_taps axis_window(int64_t o, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dil, int64_t k,
                             int64_t in)
{
    axis_taps t = {.start = o * stride - pad_begin};
    kiln_cpu_window_taps(t.start, dil, k, in, &t.lo, &t.hi);
    int64_t plo, phi;
    kiln_cpu_window_taps(t.start + pad_begin, dil, k, in + pad_begin + pad_end, &plo, &phi);
    t.padded = phi - plo;
    return t;
}

static float pool_window(const kiln_cpu_pool_params *p, const float *x, const axis_taps *h, const axis_taps *w)
{
    if (p->kind == KILN_CPU_POOL_MAX) {
        float best = -FLT_MAX;
        bool any = false;
        for (int64_t kh = h->lo; kh < h->hi; kh++) {
            const float *row = x + (h->start + kh * p->dil_h) * p->W;
            for (int64_t kw = w->lo; kw < w->hi; kw++) {
                float v = row[w->start + kw * p->dil_w];
                if (!any || v > best) best = v;
                any = true;
            }
        }
        return best;
    }
    double sum = 0.0;
    for (int64_t kh = h->lo; kh < h->hi; kh++) {
        const float *row = x + (h->start + kh * p->dil_h) * p->W;
        for (int64_t kw = w->lo; kw < w->hi; kw++) sum += row[w->start + kw * p->dil_w];
    }
    int64_t count = p->count_include_pad ? h->padded * w->padded : (h->hi - h->lo) * (w->hi - w->lo);
    return count > 0 ? (float)(sum / (double)count) : 0.0f;
}

kiln_status kiln_cpu_f32_pool2d__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                         kiln_cpu_exec *exec)
{
    const kiln_cpu_pool_params *p = params;
    const float *x = in[0]->data;
    float *y = out[0]->data;
    int64_t planes = p->N * p->C, in_plane = p->H * p->W, out_plane = p->OH * p->OW;
    for (int64_t c = 0; c < planes; c++) {
        const float *xc = x + c * in_plane;
        float *yc = y + c * out_plane;
        for (int64_t oh = 0; oh < p->OH; oh++) {
            axis_taps h = axis_window(oh, p->stride_h, p->pad_top, p->pad_bottom, p->dil_h, p->KH, p->H);
            for (int64_t ow = 0; ow < p->OW; ow++) {
                axis_taps w = axis_window(ow, p->stride_w, p->pad_left, p->pad_right, p->dil_w, p->KW, p->W);
                yc[oh * p->OW + ow] = pool_window(p, xc, &h, &w);
            }
        }
    }
    return KILN_OK;
}
