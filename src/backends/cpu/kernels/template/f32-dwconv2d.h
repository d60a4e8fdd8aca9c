/* f32-dwconv2d.h — TEMPLATE: one plane of a depthwise convolution (kiln_cpu_dwconv_fn),
 * vectorised along the output width; defines KILN_CPU_ISA(f32_dwconv2d). Include after the
 * ISA's vector layer and template/window-lanes.h.
 *
 * Layer: backends/cpu/kernels (template). One vector of output columns at a time is summed in a
 * register over all its taps and stored once: the earlier form, which added one tap at a time
 * into the output row in memory, spent a load and a store per FMA and ran at a tenth of this.
 * Each lane starts as the bias and receives its taps in (kh, kw) order, skipping taps whose
 * input column lies in the padding, exactly as generic/f32-dwconv2d-generic.c adds them, so
 * the two differ only by FMA rounding: a vector that a tap reaches only in part (window-lanes.h)
 * updates only those lanes (vf_fmadd_lanes), so no lane adds w * 0.
 */

/* Output rows summed together: their accumulators are independent FMA chains, so the FMA
   latency (4 cycles) no longer bounds a vector's 9 taps, and one tap's lane range and weight
   serve all of them. */
#define DW_ROWS 4

/* acc + w * (input row xr seen through tap offset off) over the lanes l. */
static inline vf dw_tap(vf acc, vf vw, const float *xr, int64_t s, int64_t off, int64_t ow0, const win_lanes *l)
{
    if (l->a >= l->b) return acc;
    vf xv = win_load(xr + (ow0 + l->a) * s + off, s, l);
    return l->full ? vf_fmadd(vw, xv, acc) : vf_fmadd_lanes(l->m, vw, xv, acc);
}

/* Output rows [oh, oh + DW_ROWS), all of whose KH taps lie inside the input, at one vector. */
static void dw_rows(const kiln_cpu_conv_params *p, const float *x, const float *w, vf vb, const win_lanes *lanes,
                    int64_t oh, int64_t ow0, size_t t, float *y)
{
    const int64_t s = p->stride_w, step = p->stride_h * p->W;
    vf acc0 = vb, acc1 = vb, acc2 = vb, acc3 = vb;
    for (int64_t kh = 0; kh < p->KH; kh++) {
        const float *x0 = x + (oh * p->stride_h - p->pad_top + kh * p->dil_h) * p->W;
        for (int64_t kw = 0; kw < p->KW; kw++) {
            const vf vw = vf_set1(w[kh * p->KW + kw]);
            const int64_t off = kw * p->dil_w - p->pad_left;
            acc0 = dw_tap(acc0, vw, x0, s, off, ow0, &lanes[kw]);
            acc1 = dw_tap(acc1, vw, x0 + step, s, off, ow0, &lanes[kw]);
            acc2 = dw_tap(acc2, vw, x0 + 2 * step, s, off, ow0, &lanes[kw]);
            acc3 = dw_tap(acc3, vw, x0 + 3 * step, s, off, ow0, &lanes[kw]);
        }
    }
    win_store(y + oh * p->OW + ow0, acc0, t);
    win_store(y + (oh + 1) * p->OW + ow0, acc1, t);
    win_store(y + (oh + 2) * p->OW + ow0, acc2, t);
    win_store(y + (oh + 3) * p->OW + ow0, acc3, t);
}

/* Output row oh at one vector, any taps; lanes is NULL when KW is too wide to cache. */
static void dw_row(const kiln_cpu_conv_params *p, const float *x, const float *w, vf vb, const win_lanes *lanes,
                   int64_t oh, int64_t ow0, size_t t, float *y)
{
    int64_t ih0 = oh * p->stride_h - p->pad_top, kh_lo, kh_hi;
    kiln_window_taps(ih0, p->dil_h, p->KH, p->H, &kh_lo, &kh_hi);
    const win_geom g = {p->stride_w, p->dil_w, p->pad_left, p->W, p->OW, p->KW};
    vf acc = vb;
    win_taps runs;
    win_taps_for(&g, lanes != NULL, ow0, t, &runs);
    for (int64_t kh = kh_lo; kh < kh_hi; kh++) {
        const float *xr = x + (ih0 + kh * p->dil_h) * p->W;
        for (int r = 0; r < runs.n; r++) {
            for (int64_t kw = runs.lo[r]; kw < runs.hi[r]; kw++) {
                win_lanes own;
                acc = dw_tap(acc, vf_set1(w[kh * p->KW + kw]), xr, p->stride_w, kw * p->dil_w - p->pad_left, ow0,
                             win_lanes_at(&g, lanes, kw, ow0, t, &own));
            }
        }
    }
    win_store(y + oh * p->OW + ow0, acc, t);
}

void KILN_CPU_ISA(f32_dwconv2d)(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias, float *y)
{
    KILN_CONTRACT(p != NULL && x != NULL && w != NULL && y != NULL);
    const bool cached = p->KW <= WIN_CACHED_KW;
    int64_t lo[WIN_CACHED_KW], hi[WIN_CACHED_KW];
    for (int64_t kw = 0; cached && kw < p->KW; kw++)
        win_columns(kw * p->dil_w - p->pad_left, p->stride_w, p->W, p->OW, &lo[kw], &hi[kw]);
    /* Output rows [in_lo, in_hi) have all KH taps inside the input. */
    int64_t span = (p->KH - 1) * p->dil_h, in_lo = kiln_ceil_div_i64(p->pad_top, p->stride_h), in_hi = 0;
    if (p->H - 1 - span + p->pad_top >= 0) in_hi = (p->H - 1 - span + p->pad_top) / p->stride_h + 1;
    if (in_hi > p->OH) in_hi = p->OH;
    const vf vb = vf_set1(bias);
    win_lanes lanes[WIN_CACHED_KW];
    for (int64_t ow0 = 0; ow0 < p->OW; ow0 += VF_WIDTH) {
        size_t t = p->OW - ow0 < VF_WIDTH ? (size_t)(p->OW - ow0) : VF_WIDTH;
        for (int64_t kw = 0; cached && kw < p->KW; kw++) lanes[kw] = win_lanes_of(ow0, t, lo[kw], hi[kw]);
        for (int64_t oh = 0; oh < p->OH;) {
            if (cached && oh >= in_lo && oh + DW_ROWS <= in_hi) {
                dw_rows(p, x, w, vb, lanes, oh, ow0, t, y);
                oh += DW_ROWS;
            } else {
                dw_row(p, x, w, vb, cached ? lanes : NULL, oh, ow0, t, y);
                oh++;
            }
        }
    }
}
