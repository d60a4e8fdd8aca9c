/* norm_kernels.h — kernels of the norm family defined outside norm.c, which holds the family
 * table (kiln_kernels_norm), and the checks they share.
 * Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_NORM_KERNELS_H
#define KILN_KERNELS_PORTABLE_NORM_KERNELS_H

#include "kernels/portable/kernel.h"

/* BatchNormalization (norm_batch.c) */
kiln_status kiln_norm_batch_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size);
kiln_status kiln_norm_batch_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx);

/* LayerNormalization (norm_layer.c) */
kiln_status kiln_norm_layer_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size);
kiln_status kiln_norm_layer_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx);

/* InstanceNormalization (norm_stats.c) */
kiln_status kiln_norm_instance_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size);
kiln_status kiln_norm_instance_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx);

/* MeanVarianceNormalization (norm_stats.c) */
kiln_status kiln_norm_mvn_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size);
kiln_status kiln_norm_mvn_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx);

/* LpNormalization (norm_stats.c) */
kiln_status kiln_norm_lp_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size);
kiln_status kiln_norm_lp_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx);

/* LRN (norm_lrn.c) */
kiln_status kiln_norm_lrn_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size);
kiln_status kiln_norm_lrn_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 kiln_kernel_ctx *ctx);

/* The norm kernels compute in double through reduce_row.h and accept f32 and f64 tensors:
   KILN_ERROR_NOT_SUPPORTED for f16/bf16 (valid ONNX), KILN_ERROR_DTYPE_MISMATCH otherwise. */
kiln_status kiln_norm_check_float(kiln_dtype dtype);

#endif /* KILN_KERNELS_PORTABLE_NORM_KERNELS_H */
