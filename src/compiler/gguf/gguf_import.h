/* gguf_import.h — the GGUF LLM importer: a llama.cpp model file as one method of an LLM program.
 * Layer: compiler/gguf. */
#ifndef KILN_COMPILER_GGUF_IMPORT_H
#define KILN_COMPILER_GGUF_IMPORT_H

#include "compiler/importer.h"

/* The method names a GGUF LLM compiles to, in program order (docs/llm.md). */
#define KILN_GGUF_METHOD_PREFILL "prefill"
#define KILN_GGUF_METHOD_DECODE "decode"
/* The program metadata key holding the GGUF file's key/values (docs/llm.md). */
#define KILN_GGUF_METADATA_KEY "llm.gguf"
/* The program metadata key of a shard's program: which part of the model it holds, as text lines
   "shard=I", "shards=N", "first_block=F", "block_count=K" (docs/llm.md "Sharded LLMs"). */
#define KILN_GGUF_SHARD_METADATA_KEY "llm.shard"

/* KILN_IMPORTER_MAGIC when bytes start with "GGUF" and version 2 or 3, else 0. Reads 8 bytes. */
int kiln_gguf_probe(const void *bytes, size_t size);

/* The GGUF entry of the importer table (importer.h). Its import builds method opt->method
 * ("prefill": opt->llm_prefill tokens, "decode": one) of an architecture llama or qwen2 model,
 * with a KV cache of opt->llm_context rows (0: the defaults of docs/llm.md), and stores the
 * file's metadata as the program metadata "llm.gguf". KILN_ERROR_MODEL (a bad file, a missing
 * key or tensor, a tensor of the wrong shape or a norm not F32), KILN_ERROR_NOT_SUPPORTED (another
 * architecture, a tensor type kiln does not read), KILN_ERROR_INVALID_ARGUMENT (another method
 * name, bad lengths, shape overrides), KILN_ERROR_UNSUPPORTED_OP (a kiln.* kernel missing from
 * the build), KILN_ERROR_OUT_OF_MEMORY; the message in g names which. */
extern const kiln_importer kiln_gguf_model_importer;

#endif
