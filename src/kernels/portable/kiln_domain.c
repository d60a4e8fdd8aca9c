/* kiln_domain.c — the table of kiln's own ops (domain KILN_DOMAIN_KILN) and the input checks
 * they share.
 *
 * Layer: kernels/portable. registry.c gives this table a domain row of its own, so these names
 * never meet the ONNX ops of the same name. Attribute lists follow the contract of docs/llm.md
 * "kiln ops"; every op is opset 1.
 */
#include "core/diag.h"
#include "kernels/portable/families.h"
#include "kernels/portable/kiln_domain_ops.h"
#include "kernels/portable/quant/quant_rows.h"

kiln_domain_shape kiln_domain_shape_of(const kiln_tensor *t)
{
    kiln_domain_shape s;
    kiln_tensor_shape_text(t, s.text, sizeof s.text);
    return s;
}

void kiln_domain_explain(kiln_domain_check_fn check, const kiln_node *node, const kiln_tensor *const *in, char *why,
                         size_t why_size)
{
    kiln_tensor scratch_out = {0};
    kiln_tensor *out[1] = {&scratch_out};
    size_t scratch_size = 0;
    check(node, in, out, &scratch_size, why, why_size);
}

kiln_status kiln_domain_check_f32(const kiln_tensor *t, uint32_t rank, const char *what, char *why, size_t why_size)
{
    if (!t) return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "input %s is missing", what);
    if (t->dtype != KILN_DTYPE_F32)
        return kiln_reject(KILN_ERROR_DTYPE_MISMATCH, why, why_size, "%s is %s, expected f32", what,
                           kiln_dtype_name(t->dtype));
    if (rank ? t->rank != rank : t->rank < 1) {
        if (rank)
            return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "%s has shape %s, expected rank %u", what,
                               kiln_domain_shape_of(t).text, rank);
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "%s is a scalar, expected rank >= 1", what);
    }
    return KILN_OK;
}

kiln_status kiln_domain_check_weight(const kiln_tensor *w, size_t *row_size, char *why, size_t why_size)
{
    if (!w) return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, why, why_size, "input W is missing");
    if (!kiln_dequantize_supported(w->dtype))
        return kiln_reject(KILN_ERROR_DTYPE_MISMATCH, why, why_size,
                           "W is %s, expected f32, f16, bf16, q8_0, q4_0, q4_k or q6_k", kiln_dtype_name(w->dtype));
    if (w->rank != 2 || w->shape[0] < 0 || w->shape[1] < 0)
        return kiln_reject(KILN_ERROR_SHAPE_MISMATCH, why, why_size, "W has shape %s, expected [rows, cols]",
                           kiln_domain_shape_of(w).text);
    size_t bytes;
    kiln_status st = kiln_dtype_row_size(w->dtype, w->shape[1], row_size);
    if (st == KILN_ERROR_SHAPE_MISMATCH)
        return kiln_reject(st, why, why_size, "W (%s) has rows of %lld elements, not whole blocks of its type",
                           kiln_dtype_name(w->dtype), (long long)w->shape[1]);
    if (st != KILN_OK || !kiln_tensor_bytes_checked(w, &bytes))
        return kiln_reject(KILN_ERROR_LIMIT, why, why_size, "W %s is too large to address", kiln_domain_shape_of(w).text);
    return KILN_OK;
}

float kiln_domain_dot(const float *a, const float *b, int64_t n)
{
    float lanes[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) lanes[l] += a[i + l] * b[i + l];
    for (; i < n; i++) lanes[i % 8] += a[i] * b[i];
    return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
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

/* Entry i explains entry i of kiln_kernels_kiln_domain. */
static const kiln_kernel_explain_fn explainers[] = {
    kiln_rmsnorm_explain, kiln_rope_explain, kiln_attention_explain, kiln_linear_explain, kiln_embed_explain,
};
_Static_assert(sizeof explainers / sizeof explainers[0] + 1 == sizeof kiln_kernels_kiln_domain / sizeof kiln_kernels_kiln_domain[0],
               "one explainer per kiln-domain kernel");

kiln_kernel_explain_fn kiln_kernels_kiln_domain_explainer(const kiln_kernel *kernel)
{
    for (size_t i = 0; kiln_kernels_kiln_domain[i].op; i++)
        if (&kiln_kernels_kiln_domain[i] == kernel) return explainers[i];
    return NULL;
}
