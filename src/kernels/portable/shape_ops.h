/* shape_ops.h — kernels of the shape family that live outside shape.c (the generators in
 * shape_gen.c); shape.c lists them in kiln_kernels_shape. Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_SHAPE_OPS_H
#define KILN_KERNELS_PORTABLE_SHAPE_OPS_H

#include "kernels/portable/kernel.h"

#define KILN_SHAPE_KERNEL_DECL_(name)                                                            \
    kiln_status kiln_shape_##name##_infer(const kiln_node *node, const kiln_tensor *const *in,  \
                                          kiln_tensor *const *out, size_t *scratch_size);        \
    kiln_status kiln_shape_##name##_run(const kiln_node *node, const kiln_tensor *const *in,    \
                                        kiln_tensor *const *out, kiln_kernel_ctx *ctx);

KILN_SHAPE_KERNEL_DECL_(expand)
KILN_SHAPE_KERNEL_DECL_(tile)
KILN_SHAPE_KERNEL_DECL_(constant_of_shape)
KILN_SHAPE_KERNEL_DECL_(range)

#endif /* KILN_KERNELS_PORTABLE_SHAPE_OPS_H */
