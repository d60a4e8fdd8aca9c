/* kiln_domain.c — the table of kiln's own ops (domain KILN_DOMAIN_KILN) and the input checks
 * they share.
 *
 * Layer: kernels/portable. registry.c gives this table a domain row of its own, so these names
 * never meet the ONNX ops of the same name. Attribute lists follow the contract of docs/llm.md
 * "kiln ops"; every op is opset 1.
 */
#include "kernels/portable/families.h"
#include "kernels/portable/kiln_domain_ops.h"
#include "kernels/portable/quant/quant_rows.h"

kiln_status kiln_domain_check_f32(const kiln_tensor *t, uint32_t rank)
{
    if (!t) return KILN_ERROR_INVALID_ARGUMENT;
    if (t->dtype != KILN_DTYPE_F32) return KILN_ERROR_DTYPE_MISMATCH;
    if (rank ? t->rank != rank : t->rank < 1) return KILN_ERROR_SHAPE_MISMATCH;
    return KILN_OK;
}

kiln_status kiln_domain_check_weight(const kiln_tensor *w, size_t *row_size)
{
    if (!w) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_dequantize_supported(w->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    if (w->rank != 2 || w->shape[0] < 0 || w->shape[1] < 0) return KILN_ERROR_SHAPE_MISMATCH;
    size_t bytes;
    kiln_status st = kiln_dtype_row_size(w->dtype, w->shape[1], row_size);
    if (st == KILN_OK) st = kiln_tensor_bytes_checked(w, &bytes) ? KILN_OK : KILN_ERROR_LIMIT;
    return st;
}

bool kiln_domain_attr_int(const kiln_node *node, const char *name, int64_t *value)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    if (!a || a->type != KILN_ATTR_INT) return false;
    *value = a->i;
    return true;
}

const kiln_kernel kiln_kernels_kiln_domain[] = {
    {"RMSNorm", 1, kiln_rmsnorm_infer, kiln_rmsnorm_run, {{0, 2, 2, 1, 1}}, "epsilon:f"},
    {"RoPE", 1, kiln_rope_infer, kiln_rope_run, {{0, 2, 2, 1, 1}}, "head_dim:i rope_dim:i base:f freq_scale:f neox:i"},
    {"Attention", 1, kiln_attention_infer, kiln_attention_run, {{0, 6, 6, 1, 1}}, "num_heads:i num_kv_heads:i scale:f"},
    {"Linear", 1, kiln_linear_infer, kiln_linear_run, {{0, 2, 3, 1, 1}}, ""},
    {"Embed", 1, kiln_embed_infer, kiln_embed_run, {{0, 2, 2, 1, 1}}, ""},
    {0},
};
