/* reduce_kernels.h — kernels of the reduce family defined outside reduce.c, which holds the
 * family table (kiln_kernels_reduce).
 * Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_REDUCE_KERNELS_H
#define KILN_KERNELS_PORTABLE_REDUCE_KERNELS_H

#include "kernels/portable/kernel.h"

/* ArgMax and ArgMin (reduce_arg.c); the op name picks which. */
kiln_status kiln_reduce_arg_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size);
kiln_status kiln_reduce_arg_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx);

/* CumSum (reduce_cumsum.c). */
kiln_status kiln_reduce_cumsum_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     size_t *scratch_size);
kiln_status kiln_reduce_cumsum_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   kiln_kernel_ctx *ctx);

#endif /* KILN_KERNELS_PORTABLE_REDUCE_KERNELS_H */
