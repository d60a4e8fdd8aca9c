/* conv_transpose.h — the ConvTranspose kernel, listed in conv.c's family table.
 * Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_CONV_TRANSPOSE_H
#define KILN_KERNELS_PORTABLE_CONV_TRANSPOSE_H

#include "kernels/portable/kernel.h"

kiln_status kiln_conv_transpose_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      size_t *scratch_size);
kiln_status kiln_conv_transpose_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    kiln_kernel_ctx *ctx);

#endif /* KILN_KERNELS_PORTABLE_CONV_TRANSPOSE_H */
