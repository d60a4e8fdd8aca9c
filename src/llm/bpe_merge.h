/* bpe_merge.h — the merge loop both tokenizers share: adjacent symbols of a text are merged,
 * best candidate first, until no adjacent pair has a candidate.
 *
 * Layer: llm (tokenizer core). Depends on core. Symbols are byte ranges of one text, kept as a
 * doubly linked list in text order; a merge folds the right symbol into the left one. The
 * candidates wait in a binary heap ordered by priority (lower first), ties by the left
 * symbol's position (leftmost first), as SentencePiece and GPT-2's BPE break them. A candidate
 * whose symbols changed since it was queued is stale and dropped when it comes up: its recorded
 * combined size no longer matches.
 */
#ifndef KILN_LLM_BPE_MERGE_H
#define KILN_LLM_BPE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

typedef struct kiln_bpe_symbol {
    size_t start, size;         /* bytes of the text; size 0: merged away */
    int64_t prev, next;         /* neighbours, -1 at the ends */
} kiln_bpe_symbol;

/* Whether text[start, start + size) may be formed by merging, and with which priority. */
typedef bool (*kiln_bpe_rank_fn)(const void *ctx, const char *left, size_t left_size, size_t right_size,
                                 double *priority);

/* Merges syms[0..n) (linked in order over text) in place. Scratch memory from allocator. */
kiln_status kiln_bpe_merge(const char *text, kiln_bpe_symbol *syms, size_t n, kiln_bpe_rank_fn rank,
                           const void *ctx, const kiln_allocator *allocator);

#endif
