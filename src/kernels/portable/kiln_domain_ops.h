/* kiln_domain_ops.h — the kernels of kiln's own ops (domain KILN_DOMAIN_KILN, opset 1), which a
 * decoder-only LLM is built of: RMSNorm, RoPE, Attention over a KV cache, Linear and Embed over
 * f32, f16, bf16 or block-quantized weights. Semantics: docs/llm.md "kiln ops".
 *
 * Layer: kernels/portable (internal). The table is kiln_kernels_kiln_domain (kiln_domain.c);
 * kiln_rmsnorm_rope.c, kiln_attention.c and kiln_linear_embed.c hold the kernels.
 */
#ifndef KILN_KERNELS_PORTABLE_KILN_DOMAIN_OPS_H
#define KILN_KERNELS_PORTABLE_KILN_DOMAIN_OPS_H

#include "kernels/portable/kernel.h"

#define KILN_DOMAIN_KERNEL_(name)                                                                         \
    kiln_status kiln_##name##_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out, \
                                    size_t *scratch_size);                                               \
    kiln_status kiln_##name##_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,   \
                                  kiln_kernel_ctx *ctx);
KILN_DOMAIN_KERNEL_(rmsnorm)
KILN_DOMAIN_KERNEL_(rope)
KILN_DOMAIN_KERNEL_(attention)
KILN_DOMAIN_KERNEL_(linear)
KILN_DOMAIN_KERNEL_(embed)
#undef KILN_DOMAIN_KERNEL_

/* KILN_OK when t is present, f32 and of rank `rank` (0: any rank >= 1); else
   KILN_ERROR_INVALID_ARGUMENT (absent), KILN_ERROR_DTYPE_MISMATCH or KILN_ERROR_SHAPE_MISMATCH. */
kiln_status kiln_domain_check_f32(const kiln_tensor *t, uint32_t rank);

/* A weight matrix [rows, cols] of Linear/Embed: rank 2, a dtype kiln_dequantize_row decodes
   (KILN_ERROR_DTYPE_MISMATCH otherwise), rows of whole blocks (KILN_ERROR_SHAPE_MISMATCH), a
   byte size that fits (KILN_ERROR_LIMIT). *row_size receives the bytes of one row. */
kiln_status kiln_domain_check_weight(const kiln_tensor *w, size_t *row_size);

/* Whether the INT attribute `name` is present (as an INT), its value through *value. */
bool kiln_domain_attr_int(const kiln_node *node, const char *name, int64_t *value);

#endif /* KILN_KERNELS_PORTABLE_KILN_DOMAIN_OPS_H */
