/* aot_ops_qlinear.c — kiln.Linear over ggml blocks as a QLINEAR step, kiln.Embed as an EMBED step.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h). The weight's bytes are recorded as they
 * are, a U8 tensor [N, row_size]: never dequantized, and the same bytes for every target, so
 * the pool of the context binary (aot_record.c) stores them once and a program stays about the
 * size of its GGUF. Block types the kits have no dot product for (Q4_K, Q6_K, F16, BF16) stay
 * on the portable kernel, as do shapes it takes that this step does not (K not a multiple of
 * 32: no such block type here). kiln.Embed records its weight the same way, so when the
 * classifier is tied to the token embedding (one GGUF tensor, both nodes' input) the two steps
 * name bytes the pool holds once, and the program keeps no constant of it.
 */
#include <string.h>

#include "backends/cpu/aot/aot_ops.h"

/* The weight's bytes as they are: a U8 tensor [rows, row_size]. */
static aot_operand raw_rows(const kiln_tensor *w, size_t row_size)
{
    aot_operand o = aot_weight_raw(w);
    o.t.dtype = KILN_DTYPE_U8;
    o.t.shape[1] = (int64_t)row_size;
    return o;
}

static bool only_output_0(const kiln_node *node, const kiln_tensor *const *out)
{
    for (size_t j = 1; j < node->n_outputs; j++)
        if (out[j]) return false;
    return aot_is_f32(out[0]);
}

/* Embed(W [V, D], I i32/i64 [...]) -> Y f32 [..., D]. F32 rows too: the step is as cheap, and
   the embedding then sits in the delegate with the layers it feeds. */
static bool describe_embed(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out,
                           aot_step_desc *d)
{
    if (node->n_inputs != 2 || !only_output_0(node, out)) return false;
    const kiln_tensor *w = in[0], *ids = in[1], *y = out[0];
    if (!w || !w->data || w->rank != 2 || !ids || ids->data) return false;
    if (w->dtype != KILN_DTYPE_Q8_0 && w->dtype != KILN_DTYPE_Q4_0 && w->dtype != KILN_DTYPE_F32) return false;
    if (ids->dtype != KILN_DTYPE_I32 && ids->dtype != KILN_DTYPE_I64) return false;
    int64_t v = w->shape[0], dim = w->shape[1], count = aot_numel(ids);
    size_t row_size;
    if (v <= 0 || dim <= 0 || count <= 0 || kiln_dtype_row_size(w->dtype, dim, &row_size) != KILN_OK) return false;
    if (y->shape[y->rank - 1] != dim || aot_numel(y) != count * dim) return false;
    kiln_cpu_embed_params *p = &d->params.embed;
    d->op = KILN_CPU_OP_EMBED;
    d->n_inputs = 2;
    p->V = v, p->D = dim, p->count = count;
    p->row_size = (int64_t)row_size;
    p->dtype = (uint32_t)w->dtype;
    p->id_dtype = (uint32_t)ids->dtype;
    d->in[0] = raw_rows(w, row_size);
    d->in[1] = aot_operand_of(node, in, 1);
    return true;
}

bool aot_describe_kiln(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out,
                       aot_step_desc *d)
{
    if (strcmp(node->domain, KILN_DOMAIN_KILN) != 0) return false;
    if (strcmp(node->op, "Embed") == 0) return describe_embed(node, in, out, d);
    if (strcmp(node->op, "Linear") != 0) return false;
    if (node->n_inputs < 2 || node->n_inputs > 3 || !aot_is_f32(in[0]) || !only_output_0(node, out)) return false;
    const kiln_tensor *x = in[0], *w = in[1], *y = out[0], *bias = aot_input(node, in, 2);
    if (!w || !w->data || (w->dtype != KILN_DTYPE_Q8_0 && w->dtype != KILN_DTYPE_Q4_0) || w->rank != 2) return false;
    int64_t n = w->shape[0], k = w->shape[1];
    size_t row_size;
    if (n <= 0 || k <= 0 || x->shape[x->rank - 1] != k || kiln_dtype_row_size(w->dtype, k, &row_size) != KILN_OK)
        return false;
    int64_t m = aot_numel(x) / k;
    if (y->shape[y->rank - 1] != n || aot_numel(y) != m * n) return false;
    if (bias && (!aot_is_f32(bias) || aot_numel(bias) != n)) return false;
    kiln_cpu_qlinear_params *p = &d->params.qlinear;
    d->op = KILN_CPU_OP_QLINEAR;
    d->n_inputs = 3;
    p->M = m, p->N = n, p->K = k;
    p->row_size = (int64_t)row_size;
    p->dtype = (uint32_t)w->dtype;
    p->has_bias = bias != NULL;
    d->in[0] = aot_operand_of(node, in, 0);
    d->in[1] = raw_rows(w, row_size);
    d->in[2] = bias ? aot_operand_of(node, in, 2) : (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
    return true;
}
