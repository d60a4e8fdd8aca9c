/* vocab_gguf.h — a kiln_vocab from a GGUF file's tokenizer.ggml.* metadata.
 *
 * Layer: llm (its GGUF loader, the one file of src/llm that sees the compiler's GGUF reader;
 * the tokenizer core does not). Keys read:
 *   tokenizer.ggml.model             string, "llama" or "gpt2" (required)
 *   tokenizer.ggml.tokens            array of string (required)
 *   tokenizer.ggml.scores            array of f32, one per token (optional; llama needs it to merge)
 *   tokenizer.ggml.token_type        array of i32, one per token (optional: all normal)
 *   tokenizer.ggml.merges            array of string "left right" (required for gpt2)
 *   tokenizer.ggml.pre               string (optional; for gpt2 only "gpt-2" or "default")
 *   tokenizer.ggml.bos_token_id, eos_token_id, unknown_token_id   any integer type (optional)
 *   tokenizer.ggml.add_bos_token     bool (optional; default true for llama, false for gpt2)
 *   tokenizer.ggml.add_space_prefix  bool (optional; default true for llama)
 */
#ifndef KILN_LLM_VOCAB_GGUF_H
#define KILN_LLM_VOCAB_GGUF_H

#include "format/gguf/gguf_reader.h"
#include "llm/tokenizer.h"

/* Returns KILN_OK or
 *   KILN_ERROR_MODEL          a required key is missing, a key has the wrong type, an array's
 *                             length differs from the token count, an id is out of range;
 *   KILN_ERROR_NOT_SUPPORTED  a tokenizer model other than llama and gpt2, or a gpt2 file whose
 *                             pre-tokenizer is not GPT-2's (named);
 *   KILN_ERROR_OUT_OF_MEMORY.
 * The GGUF view may be destroyed afterwards (the vocabulary copies what it needs). On failure
 * *out is NULL and message holds one line. */
kiln_status kiln_vocab_from_gguf(const kiln_gguf *gguf, const kiln_allocator *allocator, kiln_vocab **out,
                                 char *message, size_t message_size);

#endif
