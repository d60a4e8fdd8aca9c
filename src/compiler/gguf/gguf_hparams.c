/* gguf_hparams.c — a GGUF LLM's architecture and hyperparameters, from its metadata keys.
 *
 * Layer: compiler/gguf (gguf_llm.h). The keys are llama.cpp's ("<arch>.embedding_length" ...);
 * the defaults are llama.cpp's too (head_count_kv = head_count, rope.freq_base 10000,
 * rope.dimension_count = head_dim). Every value is range-checked here, before any size is
 * computed from it, so the graph builder multiplies only small positive numbers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compiler/gguf/gguf_llm.h"
#include "core/check.h"

static const kiln_llm_arch archs[] = {
    {"llama", false, false},
    {"qwen2", true, true},
};

/* Bounds no real model comes near, which keep every product of two of them far inside int64
   and every tensor size the builder computes inside what kiln_ir_tensor_size accepts. */
#define MAX_WIDTH ((int64_t)1 << 20)    /* embedding, feed-forward, context */
#define MAX_LAYERS 4096
#define MAX_VOCAB ((int64_t)1 << 24)

typedef struct key_reader {
    kiln_ir_graph *g;
    const kiln_gguf *gguf;
    const char *arch;
} key_reader;

/* Whether the file has the key "<arch>.<suffix>" (written into key); a missing required one is
   KILN_ERROR_MODEL naming it. */
static kiln_status find_key(const key_reader *r, const char *suffix, bool required, char *key, size_t key_size,
                            bool *present)
{
    snprintf(key, key_size, "%s.%s", r->arch, suffix);
    *present = kiln_gguf_find_key(r->gguf, key) != NULL;
    if (*present || !required) return KILN_OK;
    return kiln_ir_fail(r->g, KILN_ERROR_MODEL, "GGUF model (architecture %s) lacks the metadata key '%s'", r->arch,
                        key);
}

/* The integer key <arch>.<suffix> in [1, max]; `fallback` when absent, or a missing-key error
   when fallback is 0. */
static kiln_status read_int(const key_reader *r, const char *suffix, int64_t fallback, int64_t max, int64_t *out)
{
    char key[128], why[KILN_GGUF_MESSAGE_SIZE];
    bool present;
    KILN_TRY(find_key(r, suffix, fallback == 0, key, sizeof key, &present));
    if (!present) {
        *out = fallback;
        return KILN_OK;
    }
    int64_t v;
    kiln_status st = kiln_gguf_get_int(r->gguf, key, &v, why, sizeof why);
    if (st != KILN_OK) return kiln_ir_fail(r->g, KILN_ERROR_MODEL, "GGUF metadata key '%s': %s", key, why);
    if (v < 1 || v > max)
        return kiln_ir_fail(r->g, KILN_ERROR_MODEL, "GGUF metadata key '%s' is %" PRId64 "; kiln reads 1 to %" PRId64,
                            key, v, max);
    *out = v;
    return KILN_OK;
}

/* The float key <arch>.<suffix>, positive and finite; `fallback` when absent (0: required). */
static kiln_status read_float(const key_reader *r, const char *suffix, float fallback, float *out)
{
    char key[128], why[KILN_GGUF_MESSAGE_SIZE];
    bool present;
    KILN_TRY(find_key(r, suffix, !(fallback > 0), key, sizeof key, &present));
    if (!present) {
        *out = fallback;
        return KILN_OK;
    }
    float v;
    kiln_status st = kiln_gguf_get_f32(r->gguf, key, &v, why, sizeof why);
    if (st != KILN_OK) return kiln_ir_fail(r->g, KILN_ERROR_MODEL, "GGUF metadata key '%s': %s", key, why);
    if (!(v > 0) || v > 1e30f)
        return kiln_ir_fail(r->g, KILN_ERROR_MODEL, "GGUF metadata key '%s' is %g; it must be positive and finite", key,
                            (double)v);
    *out = v;
    return KILN_OK;
}

static kiln_status read_arch(kiln_ir_graph *g, const kiln_gguf *gguf, const kiln_llm_arch **out)
{
    const char *s;
    size_t n;
    char why[KILN_GGUF_MESSAGE_SIZE];
    kiln_status st = kiln_gguf_get_string(gguf, "general.architecture", &s, &n, why, sizeof why);
    if (st == KILN_ERROR_NOT_FOUND)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF model lacks the metadata key 'general.architecture'; kiln "
                            "builds LLMs of architecture llama or qwen2");
    if (st != KILN_OK) return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF metadata key 'general.architecture': %s", why);
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        if (strlen(archs[i].name) == n && memcmp(archs[i].name, s, n) == 0) {
            *out = &archs[i];
            return KILN_OK;
        }
    }
    return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "GGUF model of architecture '%.*s': kiln builds llama and qwen2",
                        (int)(n > 64 ? 64 : n), s);
}

/* RoPE scaling: none, or llama.cpp's "linear" (positions divided by rope.scaling.factor). YaRN
   and llama 3's per-frequency factors (tensor rope_freqs.weight) change the angles in ways
   kiln.RoPE does not compute, so they are refused rather than run wrong past short contexts. */
static kiln_status read_rope_scaling(const key_reader *r, kiln_llm_hparams *hp)
{
    char key[128], why[KILN_GGUF_MESSAGE_SIZE];
    hp->rope_freq_scale = 1.0f;
    if (kiln_gguf_find_tensor(r->gguf, "rope_freqs.weight"))
        return kiln_ir_fail(r->g, KILN_ERROR_NOT_SUPPORTED, "GGUF model has per-frequency RoPE factors "
                            "(tensor 'rope_freqs.weight', llama 3 rope scaling), which kiln does not build");
    bool present;
    KILN_TRY(find_key(r, "rope.scaling.type", false, key, sizeof key, &present));
    if (!present) return KILN_OK;
    const char *type;
    size_t n;
    if (kiln_gguf_get_string(r->gguf, key, &type, &n, why, sizeof why) != KILN_OK)
        return kiln_ir_fail(r->g, KILN_ERROR_MODEL, "GGUF metadata key '%s': %s", key, why);
    if (n == 4 && memcmp(type, "none", 4) == 0) return KILN_OK;
    if (n != 6 || memcmp(type, "linear", 6) != 0)
        return kiln_ir_fail(r->g, KILN_ERROR_NOT_SUPPORTED, "GGUF model: %s is '%.*s'; kiln builds RoPE scaling "
                            "none and linear", key, (int)(n > 32 ? 32 : n), type);
    float factor;
    KILN_TRY(read_float(r, "rope.scaling.factor", 1.0f, &factor));
    hp->rope_freq_scale = 1.0f / factor;
    return KILN_OK;
}

kiln_status kiln_llm_read_hparams(kiln_ir_graph *g, const kiln_gguf *gguf, kiln_llm_hparams *hp)
{
    memset(hp, 0, sizeof *hp);
    KILN_TRY(read_arch(g, gguf, &hp->arch));
    key_reader r = {g, gguf, hp->arch->name};
    KILN_TRY(read_int(&r, "embedding_length", 0, MAX_WIDTH, &hp->n_embd));
    KILN_TRY(read_int(&r, "block_count", 0, MAX_LAYERS, &hp->n_layer));
    KILN_TRY(read_int(&r, "feed_forward_length", 0, MAX_WIDTH, &hp->n_ff));
    KILN_TRY(read_int(&r, "attention.head_count", 0, hp->n_embd, &hp->n_head));
    KILN_TRY(read_int(&r, "attention.head_count_kv", hp->n_head, hp->n_head, &hp->n_head_kv));
    KILN_TRY(read_int(&r, "context_length", 0, MAX_WIDTH, &hp->n_ctx_train));
    KILN_TRY(read_float(&r, "attention.layer_norm_rms_epsilon", 0, &hp->rms_eps));
    KILN_TRY(read_float(&r, "rope.freq_base", 10000.0f, &hp->rope_base));
    KILN_TRY(read_rope_scaling(&r, hp));
    if (hp->n_embd % hp->n_head != 0)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF model: %s.embedding_length %" PRId64 " is not a multiple of "
                            "%s.attention.head_count %" PRId64, r.arch, hp->n_embd, r.arch, hp->n_head);
    if (hp->n_head % hp->n_head_kv != 0)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF model: %s.attention.head_count %" PRId64 " is not a multiple "
                            "of %s.attention.head_count_kv %" PRId64, r.arch, hp->n_head, r.arch, hp->n_head_kv);
    hp->head_dim = hp->n_embd / hp->n_head;
    /* Models whose head width is not embedding_length / head_count say so in key_length; the
       graph below assumes it is. */
    int64_t key_length;
    KILN_TRY(read_int(&r, "attention.key_length", hp->head_dim, MAX_WIDTH, &key_length));
    if (key_length != hp->head_dim)
        return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "GGUF model: %s.attention.key_length %" PRId64 " differs "
                            "from embedding_length / head_count = %" PRId64 "; kiln builds only the latter",
                            r.arch, key_length, hp->head_dim);
    KILN_TRY(read_int(&r, "rope.dimension_count", hp->head_dim, hp->head_dim, &hp->rope_dim));
    if (hp->rope_dim % 2 != 0)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF model: %s.rope.dimension_count %" PRId64 " is odd; RoPE "
                            "rotates pairs", r.arch, hp->rope_dim);
    /* The vocabulary is the embedding's row count: its dims are (n_embd, n_vocab). */
    const kiln_gguf_tensor *te = kiln_gguf_find_tensor(gguf, "token_embd.weight");
    if (!te)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF model (architecture %s) lacks the tensor 'token_embd.weight'",
                            r.arch);
    if (te->n_dims != 2 || te->dims[1] < 1 || te->dims[1] > (uint64_t)MAX_VOCAB)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF tensor 'token_embd.weight' has %" PRIu32 " dims and %" PRIu64
                            " rows; it must be a matrix (embedding_length, n_vocab) of 1 to %" PRId64 " rows",
                            te->n_dims, te->dims[1], MAX_VOCAB);
    hp->n_vocab = (int64_t)te->dims[1];
    return KILN_OK;
}
