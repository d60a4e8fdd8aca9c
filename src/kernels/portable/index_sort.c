/* index_sort.c — the stable merge sort of index_sort.h. Layer: kernels/portable.
 * Bottom-up, so it needs no recursion and exactly n indices of scratch. */
#include <string.h>

#include "kernels/portable/index_sort.h"

void kiln_index_sort(int64_t *idx, int64_t *tmp, int64_t n, kiln_index_order order, const void *ctx)
{
    int64_t *src = idx, *dst = tmp;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) dst[k++] = order(ctx, src[b], src[a]) < 0 ? src[b++] : src[a++];
            while (a < mid) dst[k++] = src[a++];
            while (b < hi) dst[k++] = src[b++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
}
