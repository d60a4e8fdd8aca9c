/* vocab_internal.h — the kiln_vocab layout, shared by the tokenizer's files only.
 *
 * Layer: llm (tokenizer core). Everything lives in `arena`: the token texts (one copy each,
 * `text`/`text_size`), scores, types, the text -> id map and, for gpt2, the "left right" ->
 * rank map of the merges.
 */
#ifndef KILN_LLM_VOCAB_INTERNAL_H
#define KILN_LLM_VOCAB_INTERNAL_H

#include "core/arena.h"
#include "llm/str_map.h"
#include "llm/tokenizer.h"

struct kiln_vocab {
    const kiln_allocator *allocator;
    kiln_arena arena;
    kiln_vocab_kind kind;
    size_t n_tokens;
    const char **text;          /* (n_tokens) */
    uint32_t *text_size;        /* (n_tokens) */
    float *scores;              /* (n_tokens) */
    int32_t *types;             /* (n_tokens) kiln_token_type */
    kiln_str_map by_text;       /* token text -> id */
    size_t max_token_size;      /* longest token text: longer pieces need no lookup */
    kiln_str_map merge_rank;    /* gpt2: "left right" -> rank */
    size_t max_merge_size;      /* longest merge text, bounds the lookup buffer */
    /* llama: the <0xXX> token of each byte; gpt2: the token of each byte's mapped character.
       -1 where the vocabulary has none. */
    int32_t byte_token[256];
    int32_t bos_id, eos_id, unk_id;
    bool add_bos, add_space_prefix;
};

/* GPT-2's byte-to-unicode table: byte b stands for code point kiln_gpt2_byte_cp(b), printable
   and not a space; kiln_gpt2_cp_byte inverts it (-1 for a code point no byte maps to). */
uint32_t kiln_gpt2_byte_cp(uint8_t b);
int kiln_gpt2_cp_byte(uint32_t cp);

/* A growable output list of ids from the caller's allocator. */
typedef struct kiln_id_list {
    const kiln_allocator *allocator;
    int32_t *ids;
    size_t n, capacity;
} kiln_id_list;

kiln_status kiln_id_list_push(kiln_id_list *list, int32_t id);

/* The two tokenizers: append the ids of text[0..size) to list (no BOS). */
kiln_status kiln_tokenize_llama(const kiln_vocab *v, const char *text, size_t size, kiln_id_list *list);
kiln_status kiln_tokenize_gpt2(const kiln_vocab *v, const char *text, size_t size, kiln_id_list *list);

/* The GPT-2 pre-tokenizer: the end (byte offset) of the piece that starts at byte `pos` of
   text[0..size), pos < size. Pieces tile the text. */
size_t kiln_gpt2_next_piece(const char *text, size_t size, size_t pos);

#endif
