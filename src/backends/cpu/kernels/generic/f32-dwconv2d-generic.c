/* f32-dwconv2d-generic.c — one plane of a depthwise convolution in plain C (kiln_cpu_dwconv_fn).
 *
 * Layer: backends/cpu/kernels/generic. Each output row starts as the bias and receives its taps
 * in (kh, kw) order — the order the vector versions (template/f32-dwconv2d.h) keep, so they
 * differ only by FMA rounding. Per tap, the output columns whose input column lies inside the
 * row are a range computed up front, so the inner loop has no test and, at unit stride, is a
 * plain axpy the compiler vectorises. Each finished row goes through p->act (the generic
 * activation rows) while it is in cache.
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

void kiln_cpu_f32_dwconv2d__generic(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias,
                                    float *y)
{
    for (int64_t oh = 0; oh < p->OH; oh++) {
        float *yr = y + oh * p->OW;
        for (int64_t ow = 0; ow < p->OW; ow++) yr[ow] = bias;
        int64_t ih0 = oh * p->stride_h - p->pad_top, kh_lo, kh_hi;
        kiln_window_taps(ih0, p->dil_h, p->KH, p->H, &kh_lo, &kh_hi);
        for (int64_t kh = kh_lo; kh < kh_hi; kh++) {
            const float *xr = x + (ih0 + kh * p->dil_h) * p->W;
            for (int64_t kw = 0; kw < p->KW; kw++) {
                /* Columns ow with 0 <= ow * stride + off < W. */
                int64_t off = kw * p->dil_w - p->pad_left, s = p->stride_w, lo, hi;
                kiln_window_taps(off, s, p->OW, p->W, &lo, &hi);
                float wv = w[kh * p->KW + kw];
                if (s == 1)
                    for (int64_t ow = lo; ow < hi; ow++) yr[ow] += wv * xr[ow + off];
                else
                    for (int64_t ow = lo; ow < hi; ow++) yr[ow] += wv * xr[ow * s + off];
            }
        }
        if (!kiln_cpu_act_is_identity(&p->act)) kiln_cpu_f32_vact__generic(&p->act, yr, yr, (size_t)p->OW);
    }
}
