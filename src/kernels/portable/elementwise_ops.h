/* elementwise_ops.h — kernels of the binary and activation families that live in their own
 * elementwise_*.c files (the family tables in binary.c and activation.c list them).
 *
 * Layer: kernels/portable (internal). Each pair has the kiln_kernel infer/run signature.
 */
#ifndef KILN_KERNELS_PORTABLE_ELEMENTWISE_OPS_H
#define KILN_KERNELS_PORTABLE_ELEMENTWISE_OPS_H

#include "kernels/portable/kernel.h"

#define KILN_EW_DECLARE_KERNEL(name)                                                             \
    kiln_status kiln_ew_##name##_infer(const kiln_node *node, const kiln_tensor *const *in,     \
                                       kiln_tensor *const *out, size_t *scratch_size);           \
    kiln_status kiln_ew_##name##_run(const kiln_node *node, const kiln_tensor *const *in,       \
                                     kiln_tensor *const *out, kiln_kernel_ctx *ctx);

/* elementwise_pow.c: Pow, with a base and an exponent of possibly different dtypes. */
KILN_EW_DECLARE_KERNEL(pow)

/* elementwise_compare.c: comparisons (bool output), bool logic and Where. */
KILN_EW_DECLARE_KERNEL(equal)
KILN_EW_DECLARE_KERNEL(less)
KILN_EW_DECLARE_KERNEL(greater)
KILN_EW_DECLARE_KERNEL(less_or_equal)
KILN_EW_DECLARE_KERNEL(greater_or_equal)
KILN_EW_DECLARE_KERNEL(and)
KILN_EW_DECLARE_KERNEL(or)
KILN_EW_DECLARE_KERNEL(xor)
KILN_EW_DECLARE_KERNEL(where)

/* elementwise_variadic.c: Sum Mean Max Min over one or more inputs. */
KILN_EW_DECLARE_KERNEL(sum)
KILN_EW_DECLARE_KERNEL(mean)
KILN_EW_DECLARE_KERNEL(max)
KILN_EW_DECLARE_KERNEL(min)

/* elementwise_clip_prelu.c: the activations whose bounds or slopes come from inputs. */
KILN_EW_DECLARE_KERNEL(clip)
KILN_EW_DECLARE_KERNEL(prelu)

#endif /* KILN_KERNELS_PORTABLE_ELEMENTWISE_OPS_H */
