/* gguf_llama_graph.c — the graph of one method of a llama-family LLM (llama, qwen2), laid out
 * as docs/llm.md's "The GGUF importer" states: inputs tokens, positions, mask and each layer's
 * cache_k/cache_v; outputs logits and each layer's new K and V rows. A shard's part of the model
 * (kiln_llm_layers) takes "hidden" instead of tokens without the embedding, gives "hidden"
 * instead of logits without the head, and has the cache inputs and K/V outputs of its blocks.
 *
 * Layer: compiler/gguf (gguf_llm.h). Each op is a node bound to its portable kernel: kiln's own
 * (kiln.RMSNorm, kiln.RoPE, kiln.Attention, kiln.Linear, kiln.Embed) or ONNX's. An F32 weight is
 * an ONNX Gemm (transB=1) or Gather over it, which the cpu backend takes into its delegates (and
 * packs); other types go to kiln.Linear / kiln.Embed, which read their blocks as they are. SiLU
 * is Sigmoid and Mul, a pattern the cpu backend fuses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compiler/gguf/gguf_llm.h"
#include "core/check.h"

/* ONNX opset of the graph's default-domain nodes: Gemm with an optional C and Gather with i32
   indices have meant the same since well before it. */
#define LLM_ONNX_OPSET 17
#define LLM_KILN_OPSET 1

static kiln_attr attr_int(const char *name, int64_t v) { return (kiln_attr){.name = name, .type = KILN_ATTR_INT, .i = v}; }
static kiln_attr attr_float(const char *name, float v)
{
    return (kiln_attr){.name = name, .type = KILN_ATTR_FLOAT, .f = v};
}

/* Appends node `op` of `domain` (NULL: ONNX) over inputs in[] (-1: absent), its one output the
   new value `out_name`, which is also the node's name. */
static kiln_status add_node(kiln_llm_builder *b, const char *domain, const char *op, const kiln_attr *attrs,
                            size_t n_attrs, const int32_t *in, size_t n_in, const char *out_name, int32_t *out)
{
    kiln_ir_graph *g = b->g;
    int opset = domain ? LLM_KILN_OPSET : LLM_ONNX_OPSET;
    const kiln_kernel *k = kiln_portable_kernel_find(domain, op, opset);
    if (!k)
        return kiln_ir_fail(g, KILN_ERROR_UNSUPPORTED_OP, "GGUF LLM graph: this build of kiln has no kernel for %s%s%s",
                            domain ? domain : "", domain ? "." : "", op);
    kiln_attr *a = NULL;
    if (n_attrs) {
        a = KILN_ARENA_ARRAY(&g->arena, kiln_attr, n_attrs);
        KILN_CHECK(a, KILN_ERROR_OUT_OF_MEMORY);
        memcpy(a, attrs, n_attrs * sizeof *a); /* names are string literals */
    }
    int32_t ni, v;
    KILN_TRY(kiln_ir_node_add(g, n_in, 1, &ni));
    KILN_TRY(kiln_ir_value_add(g, out_name, &v));
    kiln_ir_node *n = &g->nodes[ni];
    n->kernel = k;
    n->node.op = op;
    n->node.domain = domain ? domain : "";
    n->node.name = g->values[v].name;
    n->node.opset = opset;
    n->node.attrs = a;
    n->node.n_attrs = n_attrs;
    memcpy(n->inputs, in, n_in * sizeof *in);
    n->outputs[0] = v;
    g->values[v].producer = ni;
    *out = v;
    return KILN_OK;
}

static kiln_status add_input(kiln_llm_builder *b, const char *name, kiln_dtype dtype, int64_t d0, int64_t d1)
{
    kiln_ir_graph *g = b->g;
    int32_t v;
    KILN_TRY(kiln_ir_value_add(g, name, &v));
    kiln_ir_value *val = &g->values[v];
    val->t.dtype = dtype;
    val->t.rank = d1 ? 2 : 1;
    val->t.shape[0] = d0;
    val->t.shape[1] = d1;
    size_t bytes;
    KILN_TRY(kiln_ir_tensor_size(g, &val->t, "input", name, &bytes));
    val->is_input = val->typed = val->shape_known = true;
    g->inputs[g->n_inputs++] = v;
    return KILN_OK;
}

/* Y = X . W^T (+ B): Gemm for an F32 W (the cpu backend's), kiln.Linear for the others. */
static kiln_status linear(kiln_llm_builder *b, int32_t x, int32_t w, int32_t bias, const char *out_name, int32_t *out)
{
    int32_t in[3] = {x, w, bias};
    size_t n_in = bias >= 0 ? 3 : 2;
    if (b->g->values[w].t.dtype == KILN_DTYPE_F32) {
        kiln_attr trans_b = attr_int("transB", 1);
        return add_node(b, NULL, "Gemm", &trans_b, 1, in, n_in, out_name, out);
    }
    return add_node(b, KILN_DOMAIN_KILN, "Linear", NULL, 0, in, n_in, out_name, out);
}

static kiln_status rms_norm(kiln_llm_builder *b, int32_t x, const char *weight, const char *out_name, int32_t *out)
{
    int32_t w;
    KILN_TRY(kiln_llm_weight(b, weight, 0, b->hp->n_embd, true, &w));
    kiln_attr eps = attr_float("epsilon", b->hp->rms_eps);
    int32_t in[2] = {x, w};
    return add_node(b, KILN_DOMAIN_KILN, "RMSNorm", &eps, 1, in, 2, out_name, out);
}

/* "blk.<l>.<what>" into buf. */
static const char *blk(char *buf, size_t size, int64_t l, const char *what)
{
    snprintf(buf, size, "blk.%" PRId64 ".%s", l, what);
    return buf;
}

/* One of the attention's projections: n . W^T (+ its bias, required when the architecture has
   them, used when present otherwise). */
static kiln_status projection(kiln_llm_builder *b, int32_t n, int64_t l, const char *which, int64_t rows,
                              const char *out_name, int32_t *out)
{
    char wname[64], bname[64];
    int32_t w, bias = -1;
    snprintf(wname, sizeof wname, "%s.weight", which);
    snprintf(bname, sizeof bname, "%s.bias", which);
    char wfull[96], bfull[96];
    KILN_TRY(kiln_llm_weight(b, blk(wfull, sizeof wfull, l, wname), rows, b->hp->n_embd, false, &w));
    blk(bfull, sizeof bfull, l, bname);
    if (b->hp->arch->qkv_bias) KILN_TRY(kiln_llm_weight(b, bfull, 0, rows, true, &bias));
    else KILN_TRY(kiln_llm_weight_optional(b, bfull, 0, rows, true, &bias));
    return linear(b, n, w, bias, out_name, out);
}

static kiln_status rope(kiln_llm_builder *b, int32_t x, int32_t positions, const char *out_name, int32_t *out)
{
    const kiln_llm_hparams *hp = b->hp;
    kiln_attr attrs[5] = {attr_int("head_dim", hp->head_dim), attr_int("rope_dim", hp->rope_dim),
                          attr_float("base", hp->rope_base), attr_int("neox", hp->arch->neox_rope),
                          attr_float("freq_scale", hp->rope_freq_scale)};
    int32_t in[2] = {x, positions};
    return add_node(b, KILN_DOMAIN_KILN, "RoPE", attrs, 5, in, 2, out_name, out);
}

/* The layer's attention half: x + attn_output(Attention(RoPE(q), RoPE(k), v, caches, mask)).
   Its K (after RoPE) and V are the method's outputs k.<l> and v.<l>. */
static kiln_status attention_block(kiln_llm_builder *b, int64_t l, int32_t x, int32_t positions, int32_t mask,
                                   int32_t cache_k, int32_t cache_v, int32_t *k_out, int32_t *v_out, int32_t *x_out)
{
    const kiln_llm_hparams *hp = b->hp;
    int64_t kvd = hp->n_head_kv * hp->head_dim;
    char name[96], kname[32], vname[32];
    int32_t n = -1, q = -1, k = -1, v = -1, qr = -1, kr = -1, a = -1, o = -1, w = -1;
    KILN_TRY(rms_norm(b, x, blk(name, sizeof name, l, "attn_norm.weight"), blk(name, sizeof name, l, "attn_norm"), &n));
    KILN_TRY(projection(b, n, l, "attn_q", hp->n_embd, blk(name, sizeof name, l, "q"), &q));
    KILN_TRY(projection(b, n, l, "attn_k", kvd, blk(name, sizeof name, l, "k_proj"), &k));
    snprintf(vname, sizeof vname, "v.%" PRId64, l);
    KILN_TRY(projection(b, n, l, "attn_v", kvd, vname, &v));
    KILN_TRY(rope(b, q, positions, blk(name, sizeof name, l, "q_rope"), &qr));
    snprintf(kname, sizeof kname, "k.%" PRId64, l);
    KILN_TRY(rope(b, k, positions, kname, &kr));
    kiln_attr attrs[2] = {attr_int("num_heads", hp->n_head), attr_int("num_kv_heads", hp->n_head_kv)};
    int32_t in[6] = {qr, kr, v, cache_k, cache_v, mask};
    KILN_TRY(add_node(b, KILN_DOMAIN_KILN, "Attention", attrs, 2, in, 6, blk(name, sizeof name, l, "attn"), &a));
    KILN_TRY(kiln_llm_weight(b, blk(name, sizeof name, l, "attn_output.weight"), hp->n_embd, hp->n_embd, false, &w));
    KILN_TRY(linear(b, a, w, -1, blk(name, sizeof name, l, "attn_out"), &o));
    int32_t sum[2] = {x, o};
    KILN_TRY(add_node(b, NULL, "Add", NULL, 0, sum, 2, blk(name, sizeof name, l, "attn_residual"), x_out));
    *k_out = kr;
    *v_out = v;
    return KILN_OK;
}

/* The layer's feed-forward half: x + ffn_down(SiLU(ffn_gate(n)) * ffn_up(n)), n = RMSNorm(x). */
static kiln_status ffn_block(kiln_llm_builder *b, int64_t l, int32_t x, const char *out_name, int32_t *x_out)
{
    const kiln_llm_hparams *hp = b->hp;
    char name[96];
    int32_t n = -1, wg = -1, wu = -1, wd = -1, gate = -1, sig = -1, silu = -1, up = -1, prod = -1, down = -1;
    KILN_TRY(rms_norm(b, x, blk(name, sizeof name, l, "ffn_norm.weight"), blk(name, sizeof name, l, "ffn_norm"), &n));
    KILN_TRY(kiln_llm_weight(b, blk(name, sizeof name, l, "ffn_gate.weight"), hp->n_ff, hp->n_embd, false, &wg));
    KILN_TRY(kiln_llm_weight(b, blk(name, sizeof name, l, "ffn_up.weight"), hp->n_ff, hp->n_embd, false, &wu));
    KILN_TRY(kiln_llm_weight(b, blk(name, sizeof name, l, "ffn_down.weight"), hp->n_embd, hp->n_ff, false, &wd));
    KILN_TRY(linear(b, n, wg, -1, blk(name, sizeof name, l, "ffn_gate"), &gate));
    KILN_TRY(add_node(b, NULL, "Sigmoid", NULL, 0, &gate, 1, blk(name, sizeof name, l, "ffn_gate_sigmoid"), &sig));
    int32_t m1[2] = {gate, sig};
    KILN_TRY(add_node(b, NULL, "Mul", NULL, 0, m1, 2, blk(name, sizeof name, l, "ffn_gate_silu"), &silu));
    KILN_TRY(linear(b, n, wu, -1, blk(name, sizeof name, l, "ffn_up"), &up));
    int32_t m2[2] = {silu, up};
    KILN_TRY(add_node(b, NULL, "Mul", NULL, 0, m2, 2, blk(name, sizeof name, l, "ffn_gated"), &prod));
    KILN_TRY(linear(b, prod, wd, -1, blk(name, sizeof name, l, "ffn_down"), &down));
    int32_t sum[2] = {x, down};
    if (!out_name) out_name = blk(name, sizeof name, l, "ffn_residual");
    return add_node(b, NULL, "Add", NULL, 0, sum, 2, out_name, x_out);
}

static kiln_status embed(kiln_llm_builder *b, int32_t tokens, int32_t *out)
{
    int32_t w;
    KILN_TRY(kiln_llm_weight(b, "token_embd.weight", b->hp->n_vocab, b->hp->n_embd, false, &w));
    int32_t in[2] = {w, tokens};
    if (b->g->values[w].t.dtype == KILN_DTYPE_F32) return add_node(b, NULL, "Gather", NULL, 0, in, 2, "embd", out);
    return add_node(b, KILN_DOMAIN_KILN, "Embed", NULL, 0, in, 2, "embd", out);
}

static void set_output(kiln_ir_graph *g, int32_t v)
{
    g->values[v].is_output = true;
    g->outputs[g->n_outputs++] = v;
}

/* The logits of the residual stream x: Linear(RMSNorm(x, output_norm), output.weight, or
   token_embd.weight when the file has none: a tied output). */
static kiln_status head(kiln_llm_builder *b, int32_t x, int32_t *logits)
{
    const kiln_llm_hparams *hp = b->hp;
    int32_t n = -1, w = -1;
    KILN_TRY(rms_norm(b, x, "output_norm.weight", "output_norm", &n));
    KILN_TRY(kiln_llm_weight_optional(b, "output.weight", hp->n_vocab, hp->n_embd, false, &w));
    if (w < 0) KILN_TRY(kiln_llm_weight(b, "token_embd.weight", hp->n_vocab, hp->n_embd, false, &w)); /* tied */
    return linear(b, n, w, -1, "logits", logits);
}

/* A part of the model (a shard) starts from the residual stream "hidden" of the part before it
   when it has no embedding, and hands its own on as "hidden" when it has no head. */
kiln_status kiln_llm_build_graph(kiln_llm_builder *b)
{
    kiln_ir_graph *g = b->g;
    const kiln_llm_hparams *hp = b->hp;
    const kiln_llm_layers *part = &b->layers;
    int64_t T = b->tokens, C = b->context, L = part->count, first = part->first;
    int64_t kvd = hp->n_head_kv * hp->head_dim;
    g->opset = LLM_ONNX_OPSET;
    size_t n_in = 3 + 2 * (size_t)L, n_out = 1 + 2 * (size_t)L;
    g->inputs = KILN_ARENA_ARRAY(&g->arena, int32_t, n_in);
    g->outputs = KILN_ARENA_ARRAY(&g->arena, int32_t, n_out);
    int32_t *kv_out = KILN_ARENA_ARRAY(&g->arena, int32_t, 2 * (size_t)L);
    KILN_CHECK(g->inputs && g->outputs && kv_out, KILN_ERROR_OUT_OF_MEMORY);
    if (part->embedding) KILN_TRY(add_input(b, "tokens", KILN_DTYPE_I32, T, 0));
    else KILN_TRY(add_input(b, "hidden", KILN_DTYPE_F32, T, hp->n_embd));
    KILN_TRY(add_input(b, "positions", KILN_DTYPE_I32, T, 0));
    KILN_TRY(add_input(b, "mask", KILN_DTYPE_F32, T, C + T));
    for (int64_t l = first; l < first + L; l++) {
        char name[32];
        snprintf(name, sizeof name, "cache_k.%" PRId64, l);
        KILN_TRY(add_input(b, name, KILN_DTYPE_F32, C, kvd));
        snprintf(name, sizeof name, "cache_v.%" PRId64, l);
        KILN_TRY(add_input(b, name, KILN_DTYPE_F32, C, kvd));
    }
    int32_t positions = g->inputs[1], mask = g->inputs[2], x = g->inputs[0];
    if (part->embedding) KILN_TRY(embed(b, g->inputs[0], &x));
    for (int64_t i = 0; i < L; i++) {
        int32_t cache_k = g->inputs[3 + 2 * i], cache_v = g->inputs[4 + 2 * i];
        int64_t l = first + i;
        KILN_TRY(attention_block(b, l, x, positions, mask, cache_k, cache_v, &kv_out[2 * i], &kv_out[2 * i + 1], &x));
        KILN_TRY(ffn_block(b, l, x, !part->head && i == L - 1 ? "hidden" : NULL, &x));
    }
    int32_t out = x;
    if (part->head) KILN_TRY(head(b, x, &out));
    set_output(g, out);
    for (int64_t i = 0; i < 2 * L; i++) set_output(g, kv_out[i]);
    return KILN_OK;
}
