/* llm_vocab_program.h — the vocabulary a GGUF LLM program carries (its metadata "llm.gguf"),
 * for the runner and for tools that need only the tokenizer (kiln tokenize PROGRAM.kiln).
 *
 * Layer: llm runner. Public runtime API (kiln_program_metadata_get), the GGUF reader and
 * kiln_vocab_from_gguf.
 */
#ifndef KILN_LLM_RUNNER_VOCAB_PROGRAM_H
#define KILN_LLM_RUNNER_VOCAB_PROGRAM_H

#include "core/diag.h"
#include "llm/tokenizer.h"

#define KILN_LLM_METADATA_KEY "llm.gguf"

/* *out from the program's "llm.gguf" (allocator: NULL for the default; must outlive it).
 * KILN_ERROR_MODEL (no such metadata: not an LLM program; or not a valid GGUF file), the
 * statuses of kiln_vocab_from_gguf and of kiln_program_metadata_get (a stale program), with one
 * line in d. */
kiln_status llm_vocab_from_program(const kiln_program *program, const kiln_allocator *allocator, kiln_vocab **out,
                                   kiln_diag *d);

#endif
