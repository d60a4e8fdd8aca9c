/* f32-dwconv2d.h — TEMPLATE: one plane of a depthwise convolution and its activation
 * (kiln_cpu_dwconv_fn), vectorised along the output width; defines KILN_CPU_ISA(f32_dwconv2d).
 * Include after the ISA's vector layer, f32-vmath.h, f32-vact-vec.h and window-lanes.h.
 *
 * Layer: backends/cpu/kernels (template). One vector of output columns at a time is summed in a
 * register over all its taps and stored once: the earlier form, which added one tap at a time
 * into the output row in memory, spent a load and a store per FMA and ran at a tenth of this.
 * Each lane starts as the bias and receives its taps in (kh, kw) order, skipping taps whose
 * input column lies in the padding, exactly as generic/f32-dwconv2d-generic.c adds them, so
 * the two differ only by FMA rounding: a vector that a tap reaches only in part (window-lanes.h)
 * updates only those lanes (vf_fmadd_lanes), so no lane adds w * 0. The activation is applied
 * to each vector before its one store, while it is in a register (a pass over the plane after
 * it cost a load and a store per element more).
 *
 * Square 3x3 and 5x5 windows at stride 1 or 2 without dilation (every depthwise layer of the
 * MobileNets and EfficientNets) take dw_fast: the window's size and stride are constants there,
 * so its loops unroll into straight code whose accumulators stay in registers, and each input
 * vector loaded serves every output row of the block that reads it (a 3x3 block of 4 rows at
 * stride 1 loads 18 vectors for 36 FMAs, not 36). The other shapes take dw_rows / dw_row.
 */

/* Output rows summed together: their accumulators are independent FMA chains, so the FMA
   latency (4 cycles) no longer bounds a vector's 9 taps, and one tap's lane range and weight
   serve all of them. */
#define DW_ROWS 4

/* The first t lanes of act(v) to y. */
static inline void dw_store(const kiln_cpu_act *act, float *y, vf v, size_t t)
{
    win_store(y, vact_kind(act->kind, v, vf_set1(act->alpha), vf_set1(act->beta)), t);
}

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
    dw_store(&p->act, y + oh * p->OW + ow0, acc0, t);
    dw_store(&p->act, y + (oh + 1) * p->OW + ow0, acc1, t);
    dw_store(&p->act, y + (oh + 2) * p->OW + ow0, acc2, t);
    dw_store(&p->act, y + (oh + 3) * p->OW + ow0, acc3, t);
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
    dw_store(&p->act, y + oh * p->OW + ow0, acc, t);
}

/* ---- dw_fast: K x K windows, stride S (1 or 2) both ways, unit dilation ---- */

/* Output rows of one dw_fast block. */
#define DW_FAST_ROWS 4
#define DW_FAST_MAX_K 5

/* One output vector's column geometry, the same for every row of the plane: tap kw's lanes
   are m[kw] (all of the t live lanes when not masked), whose first lane reads the input column
   (ow0 + a[kw]) * S + kw - pad_left; at stride 2 even[kw] are their source columns. */
typedef struct dw_cols {
    bool masked;
    int64_t a[DW_FAST_MAX_K];
    vm m[DW_FAST_MAX_K];
    vm_cols even[DW_FAST_MAX_K];
} dw_cols;

/* Tap kw of the input row xr (its column 0) for the output vector at ow0. */
static inline __attribute__((always_inline)) vf dw_fast_load(const float *xr, int64_t ow0, int64_t off, const int S,
                                                            const bool masked, const dw_cols *c, int kw)
{
    if (!masked) return S == 1 ? vf_loadu(xr + ow0 + off) : vf_load_even(xr + 2 * ow0 + off, VF_WIDTH);
    /* Where lane 0 would read: formed outside C's pointer arithmetic, as it may precede the
       row; only lanes m[kw], all inside the row, are read. */
    uintptr_t lane0 = (uintptr_t)xr + (uintptr_t)((ow0 * S + off) * (int64_t)sizeof(float));
    if (S == 1) return vf_load_lanes((const float *)(lane0 + (uintptr_t)c->a[kw] * sizeof(float)), 1, c->m[kw], (size_t)c->a[kw]);
    return vf_load_even_cols(lane0, c->even[kw]);
}

/* Output rows [oh, oh + DW_FAST_ROWS) at the vector ow0 (t live lanes). Input rows are walked
   once, top to bottom; each of its K tap vectors is added to every output row that reads it, so
   a row's taps still arrive in (kh, kw) order. Rows outside the input are skipped, as the
   generic kernel skips them. */
static inline __attribute__((always_inline)) void dw_fast_block(const kiln_cpu_conv_params *p, const float *x,
                                                               const vf *vw, vf vb, const dw_cols *c, int64_t oh,
                                                               int64_t ow0, size_t t, float *y, const int K,
                                                               const int S, const bool masked)
{
    vf acc[DW_FAST_ROWS];
#pragma GCC unroll 8
    for (int i = 0; i < DW_FAST_ROWS; i++) acc[i] = vb;
    const int64_t ih0 = oh * S - p->pad_top;
#pragma GCC unroll 16
    for (int ir = 0; ir < (DW_FAST_ROWS - 1) * S + K; ir++) {
        if (ih0 + ir < 0 || ih0 + ir >= p->H) continue;
        const float *xr = x + (ih0 + ir) * p->W;
        vf xv[DW_FAST_MAX_K];
#pragma GCC unroll 8
        for (int kw = 0; kw < K; kw++) {
            if (S == 2 && !masked && kw % 2 == 0 && kw + 1 < K) {
                /* Taps kw and kw + 1 read the even and the odd columns of the same 2 x VF_WIDTH
                   (both wholly inside the row): two loads for the two, not four. */
                const float *first = xr + 2 * ow0 + kw - p->pad_left;
                vf_deinterleave(vf_loadu(first), vf_loadu(first + VF_WIDTH), &xv[kw], &xv[kw + 1]);
            } else if (!(S == 2 && !masked && kw % 2 == 1)) {
                xv[kw] = dw_fast_load(xr, ow0, kw - p->pad_left, S, masked, c, kw);
            }
        }
#pragma GCC unroll 8
        for (int kw = 0; kw < K; kw++) {
#pragma GCC unroll 8
            for (int i = 0; i < DW_FAST_ROWS; i++) {
                const int kh = ir - i * S;
                if (kh < 0 || kh >= K) continue;
                acc[i] = masked ? vf_fmadd_lanes(c->m[kw], vw[kh * K + kw], xv[kw], acc[i])
                                : vf_fmadd(vw[kh * K + kw], xv[kw], acc[i]);
            }
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < DW_FAST_ROWS; i++) dw_store(&p->act, y + (oh + i) * p->OW + ow0, acc[i], t);
}

/* Every output row at the vector ow0 in blocks; the last block ends at OH, overlapping the one
   before (its rows are computed again, to the same bits). */
static inline __attribute__((always_inline)) void dw_fast_column(const kiln_cpu_conv_params *p, const float *x,
                                                                const vf *vw, vf vb, const dw_cols *c, int64_t ow0,
                                                                size_t t, float *y, const int K, const int S)
{
    for (int64_t oh = 0;; oh += DW_FAST_ROWS) {
        if (oh + DW_FAST_ROWS > p->OH) oh = p->OH - DW_FAST_ROWS;
        if (c->masked)
            dw_fast_block(p, x, vw, vb, c, oh, ow0, t, y, K, S, true);
        else
            dw_fast_block(p, x, vw, vb, c, oh, ow0, t, y, K, S, false);
        if (oh + DW_FAST_ROWS >= p->OH) break;
    }
}

/* The vector ow0's geometry into c; false when some tap reaches none of its lanes (a plane
   narrower than the window), which dw_fast leaves to dw_row. */
static bool dw_fast_cols(const kiln_cpu_conv_params *p, int64_t ow0, size_t t, dw_cols *c)
{
    c->masked = t < VF_WIDTH;
    for (int64_t kw = 0; kw < p->KW; kw++) {
        int64_t lo, hi;
        win_columns(kw - p->pad_left, p->stride_w, p->W, p->OW, &lo, &hi);
        win_lanes l = win_lanes_of(ow0, t, lo, hi);
        if (l.a >= l.b) return false;
        c->a[kw] = l.a;
        c->m[kw] = vm_lanes((size_t)l.a, (size_t)l.b);
        c->even[kw] = vm_even_cols(c->m[kw]);
        c->masked |= !l.full;
    }
    return true;
}

static inline __attribute__((always_inline)) void dw_fast(const kiln_cpu_conv_params *p, const float *x,
                                                         const float *w, float bias, float *y, const int K,
                                                         const int S)
{
    vf vw[DW_FAST_MAX_K * DW_FAST_MAX_K];
    for (int i = 0; i < K * K; i++) vw[i] = vf_set1(w[i]);
    const vf vb = vf_set1(bias);
    for (int64_t ow0 = 0; ow0 < p->OW; ow0 += VF_WIDTH) {
        size_t t = p->OW - ow0 < VF_WIDTH ? (size_t)(p->OW - ow0) : VF_WIDTH;
        dw_cols c;
        if (dw_fast_cols(p, ow0, t, &c)) {
            dw_fast_column(p, x, vw, vb, &c, ow0, t, y, K, S);
        } else {
            for (int64_t oh = 0; oh < p->OH; oh++) dw_row(p, x, w, vb, NULL, oh, ow0, t, y);
        }
    }
}

/* The window size and stride dw_fast has a copy for, or 0. */
static int dw_fast_shape(const kiln_cpu_conv_params *p)
{
    bool square = p->KH == p->KW && p->stride_h == p->stride_w && p->dil_h == 1 && p->dil_w == 1;
    if (!square || p->OH < DW_FAST_ROWS || (p->KW != 3 && p->KW != 5) || (p->stride_w != 1 && p->stride_w != 2))
        return 0;
    return (int)(p->KW * 10 + p->stride_w);
}

void KILN_CPU_ISA(f32_dwconv2d)(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias, float *y)
{
    KILN_CONTRACT(p != NULL && x != NULL && w != NULL && y != NULL);
    switch (dw_fast_shape(p)) {
    case 31: dw_fast(p, x, w, bias, y, 3, 1); return;
    case 32: dw_fast(p, x, w, bias, y, 3, 2); return;
    case 51: dw_fast(p, x, w, bias, y, 5, 1); return;
    case 52: dw_fast(p, x, w, bias, y, 5, 2); return;
    default: break;
    }
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
