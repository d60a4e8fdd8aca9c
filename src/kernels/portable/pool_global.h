/* pool_global.h — GlobalAveragePool, GlobalMaxPool and GlobalLpPool, listed in pool.c's table.
 * Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_POOL_GLOBAL_H
#define KILN_KERNELS_PORTABLE_POOL_GLOBAL_H

#include "kernels/portable/kernel.h"

kiln_status kiln_global_average_pool_infer(const kiln_node *node, const kiln_tensor *const *in,
                                           kiln_tensor *const *out, size_t *scratch_size);
kiln_status kiln_global_average_pool_run(const kiln_node *node, const kiln_tensor *const *in,
                                         kiln_tensor *const *out, kiln_kernel_ctx *ctx);
kiln_status kiln_global_max_pool_infer(const kiln_node *node, const kiln_tensor *const *in,
                                       kiln_tensor *const *out, size_t *scratch_size);
kiln_status kiln_global_max_pool_run(const kiln_node *node, const kiln_tensor *const *in,
                                     kiln_tensor *const *out, kiln_kernel_ctx *ctx);
kiln_status kiln_global_lp_pool_infer(const kiln_node *node, const kiln_tensor *const *in,
                                      kiln_tensor *const *out, size_t *scratch_size);
kiln_status kiln_global_lp_pool_run(const kiln_node *node, const kiln_tensor *const *in,
                                    kiln_tensor *const *out, kiln_kernel_ctx *ctx);

#endif /* KILN_KERNELS_PORTABLE_POOL_GLOBAL_H */
