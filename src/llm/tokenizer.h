/* tokenizer.h — LLM vocabularies and the two tokenizers GGUF models use.
 *
 * Layer: llm (tokenizer core). Depends on core only: the vocabulary is built from a neutral
 * description (kiln_vocab_spec) that a GGUF file (llm/gguf/vocab_gguf.h) or, later, a .kiln
 * program can supply. docs/llm.md says what is supported.
 *
 *   KILN_VOCAB_LLAMA  SentencePiece-style BPE ("tokenizer.ggml.model" = "llama"): spaces become
 *                     U+2581, one is put in front of the text, adjacent pieces are merged while
 *                     their concatenation is a token, highest score first, and bytes no token
 *                     covers become their <0xXX> byte tokens.
 *   KILN_VOCAB_GPT2   byte-level BPE ("gpt2"): the text is split by the GPT-2 pre-tokenizer
 *                     pattern, each piece's bytes are mapped to printable characters (GPT-2's
 *                     byte-to-unicode table) and merged by the rank of the merge list.
 *
 * A kiln_vocab is immutable once created: tokenize and detokenize may run from several threads.
 */
#ifndef KILN_LLM_TOKENIZER_H
#define KILN_LLM_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

typedef enum kiln_vocab_kind { KILN_VOCAB_LLAMA, KILN_VOCAB_GPT2 } kiln_vocab_kind;

/* Token types, numbered as GGUF's tokenizer.ggml.token_type stores them. */
typedef enum kiln_token_type {
    KILN_TOKEN_NORMAL = 1, KILN_TOKEN_UNKNOWN = 2, KILN_TOKEN_CONTROL = 3,
    KILN_TOKEN_USER_DEFINED = 4, KILN_TOKEN_UNUSED = 5, KILN_TOKEN_BYTE = 6
} kiln_token_type;

typedef struct kiln_vocab_text {
    const char *data;           /* size bytes, UTF-8 (not checked), no NUL needed */
    size_t size;
} kiln_vocab_text;

/* What a vocabulary is made of. Everything is copied by kiln_vocab_create, nothing retained. */
typedef struct kiln_vocab_spec {
    kiln_vocab_kind kind;
    size_t n_tokens;
    const kiln_vocab_text *tokens;  /* (n_tokens) */
    const float *scores;            /* (n_tokens), or NULL: all 0 (llama merges need scores) */
    const int32_t *token_types;     /* (n_tokens) kiln_token_type, or NULL: all normal */
    size_t n_merges;
    const kiln_vocab_text *merges;  /* (n_merges) "left right", rank = index; gpt2 only */
    int32_t bos_id, eos_id, unk_id; /* -1: none */
    bool add_bos;                   /* whether tokenizing for a model prompt starts with BOS */
    bool add_space_prefix;          /* llama: put a space in front of the text (SentencePiece) */
} kiln_vocab_spec;

typedef struct kiln_vocab kiln_vocab;

/* Builds a vocabulary from spec, with memory from allocator (NULL: default), which must outlive
 * it. Returns KILN_OK or KILN_ERROR_INVALID_ARGUMENT (out or spec NULL, an id out of range, a
 * merge without a space, more than INT32_MAX tokens; message says which), or
 * KILN_ERROR_OUT_OF_MEMORY. On failure *out is NULL. */
kiln_status kiln_vocab_create(const kiln_vocab_spec *spec, const kiln_allocator *allocator, kiln_vocab **out,
                              char *message, size_t message_size);
void kiln_vocab_destroy(kiln_vocab *vocab);

kiln_vocab_kind kiln_vocab_get_kind(const kiln_vocab *vocab);
size_t kiln_vocab_n_tokens(const kiln_vocab *vocab);
int32_t kiln_vocab_bos(const kiln_vocab *vocab);      /* -1: none */
int32_t kiln_vocab_eos(const kiln_vocab *vocab);
bool kiln_vocab_adds_bos(const kiln_vocab *vocab);
/* The id of the token whose text is exactly text[0..size), or -1. */
int32_t kiln_vocab_find(const kiln_vocab *vocab, const char *text, size_t size);

/* Tokenizes text[0..size) (special-token text is not parsed: "<s>" is three characters). With
 * add_bos and a BOS id, the result starts with BOS. *ids_out is allocated from `allocator`
 * (NULL: default) and released by the caller with kiln_free(allocator, *ids_out); an empty
 * result is a valid, freeable block with *n_out = 0. Returns KILN_OK,
 * KILN_ERROR_INVALID_ARGUMENT (NULL arguments) or KILN_ERROR_OUT_OF_MEMORY (then *ids_out is
 * NULL). */
kiln_status kiln_vocab_tokenize(const kiln_vocab *vocab, const char *text, size_t size, bool add_bos,
                                const kiln_allocator *allocator, int32_t **ids_out, size_t *n_out);

/* The bytes token `id` stands for: byte tokens give their byte, llama pieces have U+2581 turned
 * back into spaces, gpt2 tokens are mapped back through the byte-to-unicode table; control
 * tokens (BOS, EOS) give nothing. Writes at most `size` bytes to out and sets *n_out to the
 * full length (so a call with size 0 measures). KILN_ERROR_INDEX_OUT_OF_RANGE for a bad id,
 * KILN_ERROR_INVALID_ARGUMENT when the piece does not fit (out unchanged past size). */
kiln_status kiln_vocab_token_piece(const kiln_vocab *vocab, int32_t id, char *out, size_t size, size_t *n_out);

/* The text of ids[0..n): their pieces concatenated, without the space a llama vocabulary put
 * in front (so detokenize(tokenize(t)) == t). *text_out (NUL-terminated, *size_out bytes without
 * the NUL) is allocated from allocator (NULL: default) and freed with kiln_free. Returns KILN_OK,
 * KILN_ERROR_INDEX_OUT_OF_RANGE (a bad id), KILN_ERROR_INVALID_ARGUMENT or
 * KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_vocab_detokenize(const kiln_vocab *vocab, const int32_t *ids, size_t n,
                                  const kiln_allocator *allocator, char **text_out, size_t *size_out);

#endif
