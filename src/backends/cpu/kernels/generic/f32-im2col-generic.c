/* f32-im2col-generic.c — the generic table's im2col panel (kiln_cpu_im2col_fn) in plain C.
 *
 * Layer: backends/cpu/kernels/generic. The vector tables have their own
 * (template/f32-im2col.h); all write the same panel, bit for bit.
 */
#include <string.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"
#include "core/check.h"

/* im2col of output pixels [pix0, pix0 + live) of one group into one NR panel: row k =
   (c, kh, kw) of the K rows holds nr floats, the input value each pixel sees through tap k (0 in
   the padding, and in the columns past `live`). Pixels are taken in runs along one output row,
   so each run of a tap is a strided (usually contiguous) copy with zeroed ends. */
void kiln_cpu_f32_im2col__generic(const kiln_cpu_conv_params *p, const float *x, int64_t pix0, int64_t live, uint32_t nr,
                                  float *dst)
{
    int64_t cin = p->C / p->group, K = cin * p->KH * p->KW;
    if (live < (int64_t)nr) memset(dst, 0, (size_t)(K * nr) * sizeof(float));
    for (int64_t j = 0; j < live;) {
        int64_t oh = (pix0 + j) / p->OW, ow0 = (pix0 + j) % p->OW;
        int64_t run = kiln_min_i64(live - j, p->OW - ow0);
        for (int64_t c = 0; c < cin; c++) {
            for (int64_t kh = 0; kh < p->KH; kh++) {
                int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
                for (int64_t kw = 0; kw < p->KW; kw++) {
                    float *d = dst + ((c * p->KH + kh) * p->KW + kw) * nr + j;
                    if (ih < 0 || ih >= p->H) {
                        memset(d, 0, (size_t)run * sizeof(float));
                        continue;
                    }
                    const float *row = x + (c * p->H + ih) * p->W;
                    int64_t iw0 = ow0 * p->stride_w - p->pad_left + kw * p->dil_w;
                    /* Taps t with 0 <= iw0 + t * stride < W. Both bounds stay within the run:
                       past it, d[t] is the next run's cell or, at a panel's last run, the next
                       tap row's first cell, which a left pad wider than the run would zero. */
                    int64_t lo = iw0 >= 0 ? 0 : kiln_min_i64(run, kiln_ceil_div_i64(-iw0, p->stride_w));
                    int64_t hi = kiln_min_i64(run, kiln_floor_div(p->W - 1 - iw0, p->stride_w) + 1);
                    if (hi < lo) hi = lo;
                    for (int64_t t = 0; t < lo; t++) d[t] = 0.0f;
                    if (p->stride_w == 1) {
                        if (hi > lo) memcpy(d + lo, row + iw0 + lo, (size_t)(hi - lo) * sizeof(float));
                    } else {
                        for (int64_t t = lo; t < hi; t++) d[t] = row[iw0 + t * p->stride_w];
                    }
                    for (int64_t t = hi; t < run; t++) d[t] = 0.0f;
                }
            }
        }
        j += run;
    }
}

