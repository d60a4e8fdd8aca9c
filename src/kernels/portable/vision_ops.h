/* vision_ops.h — kernels of the vision family that live outside vision.c (vision_nms.c:
 * NonMaxSuppression), listed by vision.c in kiln_kernels_vision. Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_VISION_OPS_H
#define KILN_KERNELS_PORTABLE_VISION_OPS_H

#include "kernels/portable/kernel.h"

kiln_status kiln_vision_nms_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size);
kiln_status kiln_vision_nms_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx);

#endif
