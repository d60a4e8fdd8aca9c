/* window-lanes.h — TEMPLATE helpers shared by the sliding-window kernels (f32-dwconv2d.h,
 * f32-maxpool2d.h): which lanes of an output vector one tap of the window reaches, and the load
 * of those lanes. Include after the ISA's vector layer.
 *
 * Layer: backends/cpu/kernels (template). Along the width, tap kw of a window (offset off =
 * kw * dil - pad_left, stride s) sees the input for the output columns [lo, hi) of
 * win_columns, the same for every row; an output vector of columns [ow0, ow0 + t) meets it in
 * lanes [a, b). A vector wholly inside is a plain load (unit stride), two loads and a shuffle
 * (stride 2) or a gather; one that straddles an end loads only the lanes inside, zero elsewhere.
 */

/* Kernel widths whose column ranges a kernel computes once per plane; wider ones (rare)
   recompute them per vector. */
#define WIN_CACHED_KW 16

/* Output columns ow with 0 <= ow * s + off < W: [*lo, *hi) within [0, OW) — the taps of an
   OW-tap window with step s starting at off. */
static void win_columns(int64_t off, int64_t s, int64_t W, int64_t OW, int64_t *lo, int64_t *hi)
{
    kiln_window_taps(off, s, OW, W, lo, hi);
}

/* The taps along the width that reach any of the output columns [ow0, ow0 + t), as ascending
   disjoint runs [lo[r], hi[r]) for r < n. Kernels walk only these when the window is too wide
   to cache, so a window far wider than the input (a pool may be 2^30 wide, its columns' taps
   2^29 apart) costs only the taps that land. A column's taps [first, last) both move left as
   the column moves right, so taking the columns right to left gives runs in ascending order,
   merged where they touch. */
typedef struct win_taps {
    int n;
    int64_t lo[VF_WIDTH], hi[VF_WIDTH];
} win_taps;

static inline void win_tap_runs(int64_t pad_left, int64_t dil, int64_t s, int64_t KW, int64_t W, int64_t ow0,
                                size_t t, win_taps *runs)
{
    runs->n = 0;
    for (size_t i = t; i-- > 0;) {
        int64_t first, last;
        kiln_window_taps((ow0 + (int64_t)i) * s - pad_left, dil, KW, W, &first, &last);
        if (first >= last) continue;
        if (runs->n > 0 && first <= runs->hi[runs->n - 1]) {
            if (last > runs->hi[runs->n - 1]) runs->hi[runs->n - 1] = last;
            continue;
        }
        runs->lo[runs->n] = first;
        runs->hi[runs->n] = last;
        runs->n++;
    }
}

/* All KW taps as one run (the kernels' path for windows narrow enough to cache). */
static inline void win_all_taps(int64_t KW, win_taps *runs)
{
    runs->n = 1;
    runs->lo[0] = 0;
    runs->hi[0] = KW;
}

/* Which lanes of the output vector at ow0 (t live lanes) one tap reaches, the tap seeing
   output columns [lo, hi): lanes [a, b); all live lanes (full: the lanes past t are loaded as
   zero and never stored), or none (a >= b). m is the mask of [a, b) when not full. */
typedef struct win_lanes {
    int64_t a, b;
    size_t t;
    bool full;
    vm m;
} win_lanes;

static inline win_lanes win_lanes_of(int64_t ow0, size_t t, int64_t lo, int64_t hi)
{
    win_lanes l = {lo - ow0 > 0 ? lo - ow0 : 0, hi - ow0 < (int64_t)t ? hi - ow0 : (int64_t)t, t, false,
                   vm_first_mask(0)};
    l.full = l.a == 0 && l.b == (int64_t)t;
    if (l.a < l.b && !l.full) l.m = vm_lanes((size_t)l.a, (size_t)l.b);
    return l;
}

/* The lanes l (a < b) from first (what lane a reads), first + s, ...; zero elsewhere. */
/* t (<= VF_WIDTH) elements at stride s from first, all inside the row. */
static inline vf win_load_all(const float *first, int64_t s, size_t t)
{
    if (t == VF_WIDTH)
        return s == 1 ? vf_loadu(first) : s == 2 ? vf_load_even(first, VF_WIDTH) : vf_gather_part(first, (int32_t)s, VF_WIDTH);
    return s == 1 ? vf_load_part(first, t) : s == 2 ? vf_load_even(first, t) : vf_gather_part(first, (int32_t)s, t);
}

static inline vf win_load(const float *first, int64_t s, const win_lanes *l)
{
    if (!l->full) return vf_load_lanes(first, s, l->m, (size_t)l->a);
    return win_load_all(first, s, l->t);
}

/* The width geometry of a window, from conv or pool params. */
typedef struct win_geom {
    int64_t stride, dil, pad_left, W, OW, KW;
} win_geom;

/* The taps a kernel walks for the output vector at ow0 (t lanes): all KW when their lanes are
   cached (narrow windows), else only the runs that land. */
static inline void win_taps_for(const win_geom *g, bool cached, int64_t ow0, size_t t, win_taps *runs)
{
    if (cached)
        win_all_taps(g->KW, runs);
    else
        win_tap_runs(g->pad_left, g->dil, g->stride, g->KW, g->W, ow0, t, runs);
}

/* Tap kw's lanes of the output vector at ow0: from the per-plane cache, or computed into own
   when the window is too wide to cache (cached == NULL). */
static inline const win_lanes *win_lanes_at(const win_geom *g, const win_lanes *cached, int64_t kw, int64_t ow0,
                                            size_t t, win_lanes *own)
{
    if (cached) return &cached[kw];
    int64_t lo, hi;
    win_columns(kw * g->dil - g->pad_left, g->stride, g->W, g->OW, &lo, &hi);
    *own = win_lanes_of(ow0, t, lo, hi);
    return own;
}

/* The first t lanes of v to y. */
static inline void win_store(float *y, vf v, size_t t)
{
    if (t == VF_WIDTH)
        vf_storeu(y, v);
    else
        vf_store_part(y, v, t);
}
