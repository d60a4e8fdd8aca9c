/* kiln_domain_ops.h — the kernels of kiln's own ops (domain KILN_DOMAIN_KILN, opset 1), which a
 * decoder-only LLM is built of: RMSNorm, RoPE, Attention over a KV cache, Linear and Embed over
 * f32, f16, bf16 or block-quantized weights. Semantics: docs/llm.md "kiln ops".
 *
 * Layer: kernels/portable (internal). The table is kiln_kernels_kiln_domain (kiln_domain.c);
 * kiln_rmsnorm_rope.c, kiln_attention.c and kiln_linear_embed.c hold the kernels.
 *
 * Each op's checks are written once, as NAME_check(node, in, out, scratch_size, why, why_size),
 * which on a refusal also says why in one line (kiln_reject; why NULL: nowhere). infer() is the
 * check without a buffer, explain() (kiln_kernel.explain) the same check with one, so the
 * message cannot disagree with the status.
 */
#ifndef KILN_KERNELS_PORTABLE_KILN_DOMAIN_OPS_H
#define KILN_KERNELS_PORTABLE_KILN_DOMAIN_OPS_H

#include "kernels/portable/kernel.h"

#define KILN_DOMAIN_KERNEL_(name)                                                                         \
    kiln_status kiln_##name##_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out, \
                                    size_t *scratch_size);                                               \
    void kiln_##name##_explain(const kiln_node *node, const kiln_tensor *const *in, char *why, size_t why_size); \
    kiln_status kiln_##name##_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,   \
                                  kiln_kernel_ctx *ctx);
KILN_DOMAIN_KERNEL_(rmsnorm)
KILN_DOMAIN_KERNEL_(rope)
KILN_DOMAIN_KERNEL_(attention)
KILN_DOMAIN_KERNEL_(linear)
KILN_DOMAIN_KERNEL_(embed)
#undef KILN_DOMAIN_KERNEL_

typedef kiln_status (*kiln_domain_check_fn)(const kiln_node *node, const kiln_tensor *const *in,
                                            kiln_tensor *const *out, size_t *scratch_size, char *why, size_t why_size);

/* Defines kiln_NAME_infer and kiln_NAME_explain over a file's static NAME_check. */
#define KILN_DOMAIN_INFER_AND_EXPLAIN(name)                                                               \
    kiln_status kiln_##name##_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out, \
                                    size_t *scratch_size)                                                \
    {                                                                                                    \
        return name##_check(node, in, out, scratch_size, NULL, 0);                                       \
    }                                                                                                    \
    void kiln_##name##_explain(const kiln_node *node, const kiln_tensor *const *in, char *why, size_t why_size) \
    {                                                                                                    \
        kiln_domain_explain(name##_check, node, in, why, why_size);                                      \
    }

/* Runs check into a throwaway output, for the message alone. */
void kiln_domain_explain(kiln_domain_check_fn check, const kiln_node *node, const kiln_tensor *const *in, char *why,
                         size_t why_size);

/* KILN_OK when input `what` (its name in messages) is present, f32 and of rank `rank` (0: any
   rank >= 1); else KILN_ERROR_INVALID_ARGUMENT (absent), KILN_ERROR_DTYPE_MISMATCH or
   KILN_ERROR_SHAPE_MISMATCH, saying why. */
kiln_status kiln_domain_check_f32(const kiln_tensor *t, uint32_t rank, const char *what, char *why, size_t why_size);

/* A weight matrix [rows, cols] of Linear/Embed: rank 2, a dtype kiln_dequantize_row decodes
   (KILN_ERROR_DTYPE_MISMATCH otherwise), rows of whole blocks (KILN_ERROR_SHAPE_MISMATCH), a
   byte size that fits (KILN_ERROR_LIMIT), saying why. *row_size receives the bytes of one row. */
kiln_status kiln_domain_check_weight(const kiln_tensor *w, size_t *row_size, char *why, size_t why_size);

/* The shape of t as "[2, 3]" in a caller's buffer, for messages. */
typedef struct kiln_domain_shape {
    char text[96];
} kiln_domain_shape;
kiln_domain_shape kiln_domain_shape_of(const kiln_tensor *t);

/* sum of a[i] * b[i] in f32, over eight interleaved partial sums (so the compiler can keep them
   in one vector register) added pairwise at the end: the same bits for the same inputs always. */
float kiln_domain_dot(const float *a, const float *b, int64_t n);

/* Whether the INT attribute `name` is present (as an INT), its value through *value. */
bool kiln_domain_attr_int(const kiln_node *node, const char *name, int64_t *value);

#endif /* KILN_KERNELS_PORTABLE_KILN_DOMAIN_OPS_H */
