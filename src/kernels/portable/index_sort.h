/* index_sort.h — a stable merge sort of element indices under a caller's order, shared by the
 * kernels that rank elements or slices (TopK, Unique, NonMaxSuppression).
 * Layer: kernels/portable (internal). Depends on nothing but the C library.
 * Stability is part of the contract: ONNX breaks ties by the lower index, and a stable sort of
 * indices given in ascending order gives exactly that without a tie-break in every comparator. */
#ifndef KILN_KERNELS_PORTABLE_INDEX_SORT_H
#define KILN_KERNELS_PORTABLE_INDEX_SORT_H

#include <stdint.h>

/* Negative when the element at index a goes before the one at b, positive when after, 0 when
   they are equivalent (their order is kept). */
typedef int (*kiln_index_order)(const void *ctx, int64_t a, int64_t b);

/* Sorts idx[0..n) in place; tmp holds n indices of scratch. */
void kiln_index_sort(int64_t *idx, int64_t *tmp, int64_t n, kiln_index_order order, const void *ctx);

#endif
