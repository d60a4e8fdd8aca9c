/* gguf_llm.h — what the GGUF LLM importer's files share: the model's hyperparameters as the
 * file states them, and the state of the graph being built.
 *
 * Layer: compiler/gguf (internal to the importer: gguf_import.c, gguf_hparams.c,
 * gguf_weights.c, gguf_llama_graph.c). The program layout it builds (method inputs and outputs,
 * the graph of a block) is docs/llm.md's "The GGUF importer". Every refusal goes through
 * kiln_ir_fail, naming the key, tensor or option at fault.
 */
#ifndef KILN_COMPILER_GGUF_LLM_H
#define KILN_COMPILER_GGUF_LLM_H

#include <stdbool.h>
#include <stdint.h>

#include "format/gguf/gguf_reader.h"
#include "compiler/importer.h"
#include "compiler/ir.h"
#include "compiler/strmap.h"

/* The architectures the importer builds, and what sets them apart. */
typedef struct kiln_llm_arch {
    const char *name;       /* general.architecture, also the prefix of its keys ("llama") */
    bool neox_rope;         /* RoPE on (i, i + rope_dim/2) instead of adjacent pairs */
    bool qkv_bias;          /* attn_q/k/v.bias are required (else optional, used when present) */
} kiln_llm_arch;

typedef struct kiln_llm_hparams {
    const kiln_llm_arch *arch;
    int64_t n_embd;         /* <arch>.embedding_length */
    int64_t n_layer;        /* <arch>.block_count */
    int64_t n_ff;           /* <arch>.feed_forward_length */
    int64_t n_head;         /* <arch>.attention.head_count */
    int64_t n_head_kv;      /* <arch>.attention.head_count_kv (default n_head) */
    int64_t head_dim;       /* n_embd / n_head */
    int64_t rope_dim;       /* <arch>.rope.dimension_count (default head_dim) */
    int64_t n_ctx_train;    /* <arch>.context_length */
    int64_t n_vocab;        /* token_embd.weight's row count */
    float rms_eps;          /* <arch>.attention.layer_norm_rms_epsilon */
    float rope_base;        /* <arch>.rope.freq_base (default 10000) */
    float rope_freq_scale;  /* 1 / <arch>.rope.scaling.factor for rope.scaling.type "linear", else 1 */
} kiln_llm_hparams;

/* Reads the architecture and hyperparameters of gguf into *hp and checks them against each other
   (heads divide the width, KV heads divide the heads, rope_dim even and <= head_dim).
   KILN_ERROR_NOT_SUPPORTED (an architecture other than llama and qwen2), KILN_ERROR_MODEL (a key
   missing, of the wrong type, or out of range), message in g. */
kiln_status kiln_llm_read_hparams(kiln_ir_graph *g, const kiln_gguf *gguf, kiln_llm_hparams *hp);

/* One method's graph under construction. */
typedef struct kiln_llm_builder {
    kiln_ir_graph *g;
    const kiln_gguf *gguf;
    const kiln_llm_hparams *hp;
    int64_t tokens;         /* T: rows of this method (prefill length, or 1 for decode) */
    int64_t context;        /* C: KV cache rows */
    kiln_llm_layers layers; /* the blocks, and whether embedding and head, this graph holds */
    kiln_strmap weights;    /* tensor name -> constant value, so a tied tensor is one constant */
} kiln_llm_builder;

/* The constant value of tensor `name` (kiln shape [rows, cols] = GGUF dims (cols, rows); rows 0:
   a vector of cols), after checking that it exists, has a type kiln reads (only F32 when
   f32_only) and that shape. Its bytes are copied as they are (block-quantized types stay
   quantized). KILN_ERROR_MODEL (missing, wrong shape or type), KILN_ERROR_NOT_SUPPORTED (a ggml
   type kiln does not read), KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_llm_weight(kiln_llm_builder *b, const char *name, int64_t rows, int64_t cols, bool f32_only,
                            int32_t *value);
/* As kiln_llm_weight for a tensor that may be absent: *value -1 when the file has no `name`. */
kiln_status kiln_llm_weight_optional(kiln_llm_builder *b, const char *name, int64_t rows, int64_t cols,
                                     bool f32_only, int32_t *value);

/* Builds the method's part b->layers (inputs, blocks, logits or hidden, outputs in the order of
   docs/llm.md) into b->g. */
kiln_status kiln_llm_build_graph(kiln_llm_builder *b);

#endif
