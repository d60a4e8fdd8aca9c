/* f32-dwconv2d.h — TEMPLATE: one plane of a depthwise convolution (kiln_cpu_dwconv_fn),
 * vectorised along the output width; defines KILN_CPU_ISA(f32_dwconv2d). Include after the
 * ISA's vector layer.
 *
 * Layer: backends/cpu/kernels (template). Each output row starts as the bias and receives its
 * taps in (kh, kw) order, as generic/f32-dwconv2d-generic.c adds them, so the two differ only
 * by FMA rounding. For one tap the outputs whose input column lies inside the row form a range
 * [lo, hi) computed up front; inside it a unit stride is a plain vector load, stride 2 two loads
 * and a shuffle, other strides a gather, and the row (in L1) is updated in place.
 */

/* Output columns ow with 0 <= ow * s + off < W: [*lo, *hi) within [0, OW). */
static void dw_columns(int64_t off, int64_t s, int64_t W, int64_t OW, int64_t *lo, int64_t *hi)
{
    int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t last = W - 1 - off < 0 ? 0 : (W - 1 - off) / s + 1;
    if (last > OW) last = OW;
    *lo = first;
    *hi = last < first ? first : last;
}

/* y[ow] += w * x[ow * s + off] for ow in [lo, hi). */
static void dw_tap(const float *x, int64_t s, int64_t off, float w, float *y, int64_t lo, int64_t hi)
{
    const vf vw = vf_set1(w);
    int64_t ow = lo;
    if (s == 1) {
        for (; ow + VF_WIDTH <= hi; ow += VF_WIDTH)
            vf_storeu(y + ow, vf_fmadd(vw, vf_loadu(x + ow + off), vf_loadu(y + ow)));
        if (ow < hi) {
            size_t t = (size_t)(hi - ow);
            vf_store_part(y + ow, vf_fmadd(vw, vf_load_part(x + ow + off, t), vf_load_part(y + ow, t)), t);
        }
        return;
    }
    for (; ow + VF_WIDTH <= hi; ow += VF_WIDTH) {
        const float *xs = x + ow * s + off;
        vf xv = s == 2 ? vf_load_even(xs, VF_WIDTH) : vf_gather_part(xs, (int32_t)s, VF_WIDTH);
        vf_storeu(y + ow, vf_fmadd(vw, xv, vf_loadu(y + ow)));
    }
    if (ow < hi) {
        size_t t = (size_t)(hi - ow);
        const float *xs = x + ow * s + off;
        vf xv = s == 2 ? vf_load_even(xs, t) : vf_gather_part(xs, (int32_t)s, t);
        vf_store_part(y + ow, vf_fmadd(vw, xv, vf_load_part(y + ow, t)), t);
    }
}

void KILN_CPU_ISA(f32_dwconv2d)(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias, float *y)
{
    const vf vb = vf_set1(bias);
    for (int64_t oh = 0; oh < p->OH; oh++) {
        float *yr = y + oh * p->OW;
        int64_t ow = 0;
        for (; ow + VF_WIDTH <= p->OW; ow += VF_WIDTH) vf_storeu(yr + ow, vb);
        if (ow < p->OW) vf_store_part(yr + ow, vb, (size_t)(p->OW - ow));
        int64_t ih0 = oh * p->stride_h - p->pad_top, kh_lo, kh_hi;
        kiln_cpu_window_taps(ih0, p->dil_h, p->KH, p->H, &kh_lo, &kh_hi);
        for (int64_t kh = kh_lo; kh < kh_hi; kh++) {
            const float *xr = x + (ih0 + kh * p->dil_h) * p->W;
            for (int64_t kw = 0; kw < p->KW; kw++) {
                int64_t off = kw * p->dil_w - p->pad_left, lo, hi;
                dw_columns(off, p->stride_w, p->W, p->OW, &lo, &hi);
                dw_tap(xr, p->stride_w, off, w[kh * p->KW + kw], yr, lo, hi);
            }
        }
    }
}
