/* llm_internal.h — the kiln_llm layout, shared by the runner's files only.
 *
 * Layer: llm runner (src/llm/runner). Depends on the public runtime API (kiln.h), core's
 * allocator and diagnostics helpers, and the tokenizer (llm/tokenizer.h). The runner never
 * sees the runtime's internals: it talks to its methods through kiln_method_* only.
 *
 * Memory of one kiln_llm (all from `allocator`):
 *
 *   cache   f32 [L][2][C][KVD]  slot j of layer l: K at cache[(2l)*C*KVD + j*KVD],
 *                               V at cache[(2l+1)*C*KVD + j*KVD]; slots >= n_past are uninitialised or
 *                               stale and always masked out
 *   tokens  i32 [C]             the token of each slot 0..n_past-1
 *   logits  f32 [n_vocab]       the scores after the last evaluated token (valid: has_logits)
 *   in_tokens, in_positions  i32 [T];  in_mask  f32 [T][C + T]   one call's inputs (T rows for
 *                               prefill, the first row for decode)
 */
#ifndef KILN_LLM_RUNNER_INTERNAL_H
#define KILN_LLM_RUNNER_INTERNAL_H

#include <stdbool.h>

#include "core/diag.h"
#include "kiln/llm.h"
#include "llm/tokenizer.h"

#define KILN_LLM_ERROR_SIZE 512

/* One program of the model (the whole model, or one shard of kiln compile --shards N): a module
   of its own with both methods, and which of the model's layers it holds. */
typedef struct llm_shard {
    kiln_module *module;
    kiln_method *prefill, *decode;
    size_t first_layer;     /* its layers are first_layer .. first_layer + n_layer - 1 */
    size_t n_layer;
} llm_shard;

struct kiln_llm {
    const kiln_allocator *allocator;    /* never NULL */
    llm_shard *shards;      /* (n_shards) in model order: the first takes tokens, the last gives logits */
    size_t n_shards;
    kiln_scratch_group *own_group;      /* the shards' one scratch group when the caller gave none */
    kiln_vocab *vocab;
    size_t n_ctx;           /* C */
    size_t n_batch;         /* T, prefill rows */
    size_t n_layer;         /* L, over all shards */
    size_t n_embd;          /* D of the "hidden" rows between shards (0 for one program) */
    size_t n_kv;            /* KVD, floats per cache row */
    size_t n_vocab;
    float *cache;           /* (L, 2, C, KVD) */
    int32_t *tokens;        /* (C) */
    size_t n_past;
    float *logits;          /* (n_vocab) */
    bool has_logits;
    int32_t *in_tokens;     /* (T) */
    int32_t *in_positions;  /* (T) */
    float *in_mask;         /* (T, C + T) */
    double load_ms;
    kiln_llm_stats stats;
    char error[KILN_LLM_ERROR_SIZE];
};

/* The diag over llm->error, emptied (an entry point's first step). */
kiln_diag llm_diag_begin(kiln_llm *llm);
/* Monotonic seconds. */
double llm_now(void);

#endif
