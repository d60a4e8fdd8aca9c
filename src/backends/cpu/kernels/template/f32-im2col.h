/* f32-im2col.h — TEMPLATE: one im2col panel (kiln_cpu_im2col_fn), written a vector at a time;
 * defines KILN_CPU_ISA(f32_im2col). Include after the ISA's vector layer and
 * template/window-lanes.h.
 *
 * Layer: backends/cpu/kernels (template). Pixels are taken in runs along one output row; in a
 * run, tap (c, kh, kw) is input row ih seen through the tap's column offset, i.e. the lanes
 * window-lanes.h computes for a depthwise or pooling window: loaded where inside the row, zero
 * elsewhere, stored whole. The earlier copy loop (memcpy per run and scalar zeroing, still the
 * generic table's) spent most of its time in call overhead on runs of at most NR floats.
 */
#include <string.h>

void KILN_CPU_ISA(f32_im2col)(const kiln_cpu_conv_params *p, const float *x, int64_t pix0, int64_t live, uint32_t nr,
                              float *dst)
{
    KILN_CONTRACT(p != NULL && x != NULL && dst != NULL);
    KILN_CONTRACT(pix0 >= 0 && live >= 0 && live <= (int64_t)nr);
    const int64_t cin = p->C / p->group, K = cin * p->KH * p->KW, s = p->stride_w;
    if (live < (int64_t)nr) memset(dst, 0, (size_t)(K * nr) * sizeof(float));
    const bool cached = p->KW <= WIN_CACHED_KW;
    int64_t lo[WIN_CACHED_KW], hi[WIN_CACHED_KW];
    for (int64_t kw = 0; cached && kw < p->KW; kw++)
        win_columns(kw * p->dil_w - p->pad_left, s, p->W, p->OW, &lo[kw], &hi[kw]);
    for (int64_t j = 0; j < live;) {
        int64_t oh = (pix0 + j) / p->OW, ow0 = (pix0 + j) % p->OW;
        int64_t run = live - j < p->OW - ow0 ? live - j : p->OW - ow0;
        for (int64_t c = 0; c < cin; c++) {
            for (int64_t kh = 0; kh < p->KH; kh++) {
                int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
                bool inside = ih >= 0 && ih < p->H;
                const float *xr = x + (c * p->H + (inside ? ih : 0)) * p->W;
                float *d = dst + (c * p->KH + kh) * p->KW * (int64_t)nr + j;
                for (int64_t kw = 0; kw < p->KW; kw++, d += nr) {
                    int64_t off = kw * p->dil_w - p->pad_left, l = 0, h = 0;
                    if (cached) {
                        l = lo[kw];
                        h = hi[kw];
                    } else {
                        win_columns(off, s, p->W, p->OW, &l, &h);
                    }
                    if (inside && l <= ow0 && ow0 + run <= h) {
                        /* The whole run sees the input (the interior of a row): a copy, or at
                           stride 2 two loads and a shuffle a vector, with no lane masks to work
                           out (ResNet-18's 7x7 stride-2 stem: im2col 0.49 -> 0.32 ms). */
                        const float *from = xr + ow0 * s + off;
                        for (int64_t v0 = 0; v0 < run; v0 += VF_WIDTH) {
                            size_t t = run - v0 < VF_WIDTH ? (size_t)(run - v0) : VF_WIDTH;
                            win_store(d + v0, win_load_all(from + v0 * s, s, t), t);
                        }
                        continue;
                    }
                    for (int64_t v0 = 0; v0 < run; v0 += VF_WIDTH) {
                        size_t t = run - v0 < VF_WIDTH ? (size_t)(run - v0) : VF_WIDTH;
                        win_lanes ln = win_lanes_of(ow0 + v0, t, l, h);
                        vf v = vf_zero();
                        if (inside && ln.a < ln.b) v = win_load(xr + (ow0 + v0 + ln.a) * s + off, s, &ln);
                        win_store(d + v0, v, t);
                    }
                }
            }
        }
        j += run;
    }
}
