/* window_taps.h — which taps of a sliding window land inside its input, for every window op.
 *
 * Layer: core (internal). Depends on core/check.h only. The portable kernels (conv_geom.h),
 * the cpu backend's ahead-of-time pool lowering and its kernels (direct, depthwise, pool,
 * im2col, Winograd) all clip a window against the input's edges; one definition keeps their
 * padding behaviour the same, bit for bit.
 */
#ifndef KILN_CORE_WINDOW_TAPS_H
#define KILN_CORE_WINDOW_TAPS_H

#include <stdint.h>

#include "core/check.h"

/* The taps [*lo, *hi) of a kernel of size k whose input position start + tap * dilation falls in
   [0, in). Empty (lo == hi) when none does. dilation >= 1; start may be negative (padding).
   Read with the window's roles swapped (start an offset, dilation a stride, k the output size),
   it gives the output positions whose input lands in [0, in). */
static inline void kiln_window_taps(int64_t start, int64_t dilation, int64_t k, int64_t in, int64_t *lo,
                                    int64_t *hi)
{
    int64_t first = start >= 0 ? 0 : kiln_ceil_div(-start, dilation);
    int64_t last = kiln_floor_div(in - 1 - start, dilation) + 1;
    if (last > k) last = k;
    *lo = first;
    *hi = last < first ? first : last;
}

#endif /* KILN_CORE_WINDOW_TAPS_H */
