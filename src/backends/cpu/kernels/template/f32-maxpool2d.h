/* f32-maxpool2d.h — TEMPLATE: output rows of one plane of a max pool (kiln_cpu_maxpool_fn),
 * vectorised along the output width; defines KILN_CPU_ISA(f32_maxpool2d). Include after the
 * ISA's vector layer and template/window-lanes.h.
 *
 * Layer: backends/cpu/kernels (template). Same result as generic/f32-pool2d-generic.c, bit for
 * bit: taps are visited in (kh, kw) order, a lane takes its first tap inside the input as is and
 * then best = vf_max(v, best), i.e. v > best ? v : best — so a NaN first tap stays and a later
 * NaN never wins — and a lane no tap reaches stays -FLT_MAX. Lanes a tap reaches only in part
 * (window-lanes.h) are updated through a mask, the others keep their value.
 */
#include <float.h>

/* One output vector (columns ow0.., t live lanes) of row oh; lanes is NULL when KW is too wide
   to cache. */
static vf maxpool_vector(const kiln_cpu_pool_params *p, const float *x, const win_lanes *lanes, int64_t oh,
                         int64_t ow0, size_t t)
{
    int64_t ih0 = oh * p->stride_h - p->pad_top, kh_lo, kh_hi;
    kiln_window_taps(ih0, p->dil_h, p->KH, p->H, &kh_lo, &kh_hi);
    const unsigned live = vm_bits(vm_first_mask(t));
    vf best = vf_set1(-FLT_MAX);
    vm seen = vm_first_mask(0);  /* lanes that have taken their first tap */
    bool all_seen = false;
    const win_geom g = {p->stride_w, p->dil_w, p->pad_left, p->W, p->OW, p->KW};
    win_taps runs;
    win_taps_for(&g, lanes != NULL, ow0, t, &runs);
    for (int64_t kh = kh_lo; kh < kh_hi; kh++) {
        const float *xr = x + (ih0 + kh * p->dil_h) * p->W;
        for (int r = 0; r < runs.n; r++) {
            for (int64_t kw = runs.lo[r]; kw < runs.hi[r]; kw++) {
                int64_t off = kw * p->dil_w - p->pad_left;
                win_lanes own;
                const win_lanes *l = win_lanes_at(&g, lanes, kw, ow0, t, &own);
                if (l->a >= l->b) continue;
                vf v = win_load(xr + (ow0 + l->a) * p->stride_w + off, p->stride_w, l);
                vm reach = l->full ? vm_first_mask(t) : l->m;
                if (all_seen) {
                    best = l->full ? vf_max(v, best) : vf_select(reach, best, vf_max(v, best));
                    continue;
                }
                best = vf_select(reach, best, vf_select(seen, v, vf_max(v, best)));
                seen = vm_or(seen, reach);
                all_seen = (vm_bits(seen) & live) == live;
            }
        }
    }
    return best;
}

/* The same vector when every tap along the width reaches all t lanes (the interior of a row):
   no masks, and each lane's first tap is the first tap of the first row that lands, so that
   load is taken as is and the rest go through vf_max, as maxpool_vector does. One loop per
   stride, so that the load is not chosen per tap. */
#define MAXPOOL_INSIDE(load)                                                                     \
    do {                                                                                         \
        for (int64_t kh = kh_lo; kh < kh_hi; kh++) {                                             \
            const float *at = x + (ih0 + kh * p->dil_h) * p->W + ow0 * s - p->pad_left;          \
            for (int64_t kw = 0; kw < p->KW; kw++, at += p->dil_w)                               \
                best = kh == kh_lo && kw == 0 ? (load) : vf_max((load), best);                   \
        }                                                                                        \
    } while (0)
static vf maxpool_vector_inside(const kiln_cpu_pool_params *p, const float *x, int64_t oh, int64_t ow0, size_t t)
{
    int64_t ih0 = oh * p->stride_h - p->pad_top, kh_lo, kh_hi;
    kiln_window_taps(ih0, p->dil_h, p->KH, p->H, &kh_lo, &kh_hi);
    const int64_t s = p->stride_w;
    vf best = vf_set1(-FLT_MAX);
    if (s == 1 && t == VF_WIDTH)
        MAXPOOL_INSIDE(vf_loadu(at));
    else if (s == 2 && t == VF_WIDTH)
        MAXPOOL_INSIDE(vf_load_even(at, VF_WIDTH));
    else
        MAXPOOL_INSIDE(s == 1 ? vf_load_part(at, t) : s == 2 ? vf_load_even(at, t) : vf_gather_part(at, (int32_t)s, t));
    return best;
}
#undef MAXPOOL_INSIDE

void KILN_CPU_ISA(f32_maxpool2d)(const kiln_cpu_pool_params *p, const float *x, float *y, int64_t oh_lo,
                                 int64_t oh_hi)
{
    KILN_CONTRACT(p != NULL && x != NULL && y != NULL);
    KILN_CONTRACT(0 <= oh_lo && oh_lo <= oh_hi && oh_hi <= p->OH);
    const bool cached = p->KW <= WIN_CACHED_KW;
    int64_t lo[WIN_CACHED_KW], hi[WIN_CACHED_KW];
    for (int64_t kw = 0; cached && kw < p->KW; kw++)
        win_columns(kw * p->dil_w - p->pad_left, p->stride_w, p->W, p->OW, &lo[kw], &hi[kw]);
    win_lanes lanes[WIN_CACHED_KW];
    for (int64_t ow0 = 0; ow0 < p->OW; ow0 += VF_WIDTH) {
        size_t t = p->OW - ow0 < VF_WIDTH ? (size_t)(p->OW - ow0) : VF_WIDTH;
        bool inside = cached;
        for (int64_t kw = 0; cached && kw < p->KW; kw++) {
            lanes[kw] = win_lanes_of(ow0, t, lo[kw], hi[kw]);
            inside = inside && lanes[kw].full;
        }
        for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
            vf v = inside ? maxpool_vector_inside(p, x, oh, ow0, t)
                          : maxpool_vector(p, x, cached ? lanes : NULL, oh, ow0, t);
            win_store(y + oh * p->OW + ow0, v, t);
        }
    }
}
