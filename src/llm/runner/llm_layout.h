/* llm_layout.h — checking that two loaded methods are the prefill/decode pair of the GGUF LLM
 * program layout (kiln/llm.h, docs/llm.md), or of one shard of it, and reading their lengths.
 *
 * Layer: llm runner. Public runtime API only (kiln_method_*_info and names).
 */
#ifndef KILN_LLM_RUNNER_LAYOUT_H
#define KILN_LLM_RUNNER_LAYOUT_H

#include <stdbool.h>

#include "core/diag.h"
#include "kiln/kiln.h"

typedef struct llm_layout {
    size_t n_batch;     /* T: rows of a prefill call */
    size_t n_ctx;       /* C */
    size_t n_layer;     /* L: the layers of this program (of this shard) */
    size_t n_kv;        /* KVD */
    size_t n_vocab;     /* the last shard's (0 for a shard that gives "hidden") */
    size_t n_embd;      /* D of "hidden" f32 [T, D] (0 for a whole program) */
} llm_layout;

/* Where a program sits among the shards of one model: the first takes "tokens", the others the
   previous one's "hidden"; the last gives "logits", the others "hidden"; a whole program is
   both first and last. Its layers must be first_layer, first_layer + 1, ... (names cache_k.<l>). */
typedef struct llm_shard_place {
    bool first, last;
    size_t first_layer;
    size_t n_batch;     /* T, C, KVD and D the earlier shards had (0 for the first) */
    size_t n_ctx, n_kv, n_embd;
} llm_shard_place;

/* KILN_OK with *out filled, or KILN_ERROR_MODEL with one line in d naming the method, the
 * input or output and what was expected. */
kiln_status llm_layout_read(const kiln_method *prefill, const kiln_method *decode, const llm_shard_place *place,
                            llm_layout *out, kiln_diag *d);

#endif
