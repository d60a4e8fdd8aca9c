/* select_ops.h — what the select family's files share (select.c: TopK NonZero Compress;
 * select_unique.c: Unique). Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_SELECT_OPS_H
#define KILN_KERNELS_PORTABLE_SELECT_OPS_H

#include "kernels/portable/kernel.h"

/* Elements loaded as comparable keys: f for float dtypes, i for integers (exact past 2^53);
   exactly one is set. */
typedef struct kiln_select_keys {
    const double *f;
    const int64_t *i;
} kiln_select_keys;

/* Loads n elements of t (a kiln_reduce_row_dtype_ok dtype) from element base, stride apart,
   into buffer (n * 8 bytes) as keys. */
kiln_select_keys kiln_select_keys_load(const kiln_tensor *t, int64_t base, int64_t stride, int64_t n, void *buffer);
/* -1, 0 or 1 as key a is below, equal to or above key b. */
int kiln_select_key_compare(const kiln_select_keys *k, int64_t a, int64_t b);
/* Products of t's dims before and after axis. */
void kiln_select_outer_inner(const kiln_tensor *t, int64_t axis, int64_t *outer, int64_t *inner);

kiln_status kiln_select_unique_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     size_t *scratch_size);
kiln_status kiln_select_unique_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   kiln_kernel_ctx *ctx);

#endif
