/* ref_model.h — the reference decoder of issue 14: a llama / qwen2 read from a GGUF file and run
 * one token at a time, in plain scalar f32 with double sums, the way llama2.c runs a llama.
 *
 * Layer: tests (tests/llm/ref). Depends on kiln.h, src/core (allocators) and the compiler's GGUF
 * reader (the file is parsed by kiln's validating reader; everything after that — hyper-parameters,
 * dequantization, the forward pass — is the reference's own, so that it checks kiln's optimised
 * paths rather than repeating them). Every weight is dequantized to f32 when the model is loaded.
 *
 * The function, per token at position pos (tests/llm/README.md lists the facts it follows):
 *   x = token_embd[token]
 *   per layer: n = rmsnorm(x) * attn_norm; q, k, v = Wq n (+bq), Wk n (+bk), Wv n (+bv);
 *              RoPE on q, k (llama: pairs (2i, 2i+1); qwen2: (i, i + rope_dim/2)),
 *              theta_i = pos * base^(-2i / rope_dim); k, v appended to the cache;
 *              query head h attends over cached rows 0..pos of KV head h / (heads / kv_heads),
 *              scale 1/sqrt(head_dim); x += Wo a;
 *              n = rmsnorm(x) * ffn_norm; x += Wdown (silu(Wgate n) * Wup n)
 *   logits = Wout (rmsnorm(x) * output_norm), Wout = output.weight or token_embd (tied).
 */
#ifndef KILN_TESTS_LLM_REF_MODEL_H
#define KILN_TESTS_LLM_REF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

struct kiln_gguf;

typedef struct ref_config {
    int64_t dim, n_layers, n_heads, n_kv_heads, head_dim, ffn, vocab, context, rope_dim;
    double rope_base;
    float eps;
    bool neox;        /* qwen2's RoPE pairing */
    bool tied;        /* no output.weight: the classifier is token_embd */
} ref_config;

typedef struct ref_layer {
    float *attn_norm;               /* (dim) */
    float *wq, *wk, *wv, *wo;       /* (heads*hd, dim) (kvh*hd, dim) (kvh*hd, dim) (dim, heads*hd) */
    float *bq, *bk, *bv;            /* (heads*hd) (kvh*hd) (kvh*hd), or NULL (llama) */
    float *ffn_norm;                /* (dim) */
    float *w_gate, *w_up, *w_down;  /* (ffn, dim) (ffn, dim) (dim, ffn) */
} ref_layer;

typedef struct ref_model {
    ref_config config;
    const kiln_allocator *allocator;
    float *token_embd;   /* (vocab, dim) */
    ref_layer *layers;   /* (n_layers) */
    float *output_norm;  /* (dim) */
    float *output;       /* (vocab, dim); == token_embd when tied */
} ref_model;

/* Reads the hyper-parameters and weights of a `llama` or `qwen2` GGUF. The model owns copies of
 * the weights (from allocator, NULL: the default), so gguf need not outlive it. Returns KILN_OK or
 * KILN_ERROR_MODEL (another architecture, a missing key or tensor, a tensor of the wrong shape;
 * message says which), KILN_ERROR_NOT_SUPPORTED (a tensor type the reference cannot dequantize),
 * KILN_ERROR_OUT_OF_MEMORY. On failure *out is untouched and there is nothing to free. */
kiln_status ref_model_load(const struct kiln_gguf *gguf, const kiln_allocator *allocator, ref_model *out,
                           char *message, size_t message_size);
void ref_model_deinit(ref_model *model);

/* The KV cache and scratch of one sequence of at most `capacity` tokens. */
typedef struct ref_state {
    const kiln_allocator *allocator;
    int64_t capacity;
    float *key_cache, *value_cache;  /* (n_layers, capacity, kvh*hd) */
    float *x, *xb, *q, *k, *v, *att, *h1, *h3;  /* scratch of one token */
    double *scores, *acc;                        /* (capacity) (head_dim): one head's attention */
} ref_state;

/* KILN_ERROR_INVALID_ARGUMENT for capacity < 1, KILN_ERROR_OUT_OF_MEMORY; nothing to free then. */
kiln_status ref_state_init(ref_state *state, const ref_model *model, int64_t capacity);
void ref_state_deinit(ref_state *state);

/* Runs token at position pos (0 .. capacity-1; positions 0..pos-1 run before, in order) and
 * writes the vocab logits. KILN_ERROR_INVALID_VALUE for a token outside [0, vocab) or a
 * position outside the state. */
kiln_status ref_forward(const ref_model *model, ref_state *state, int64_t token, int64_t pos, float *logits);

#endif
