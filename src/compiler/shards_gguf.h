/* shards_gguf.h — a GGUF LLM cut into shards by blocks (kiln_compile_shards; docs/llm.md
 * "Sharded LLMs").
 *
 * Layer: compiler (internal). shards.c reads the file, names the outputs, sizes the scratch
 * group and writes the files; this part plans the blocks, compiles each shard's program and
 * writes the manifest's records.
 */
#ifndef KILN_COMPILER_SHARDS_GGUF_H
#define KILN_COMPILER_SHARDS_GGUF_H

#include <stddef.h>

#include "core/buf.h"
#include "kiln/compiler.h"

/* Splits the blocks of the GGUF LLM in bytes (size; path for messages, may be NULL) into n_shards
 * contiguous, non-empty ranges whose weight bytes (embedding in the first, head in the last)
 * are as even as possible (the largest shard as small as it can be), compiles shard i with opt
 * into programs[i] (sizes[i]; from opt's allocator) and appends the manifest's records, whose
 * shard files are paths[i], to *manifest. KILN_ERROR_COMPILE_SPEC when n_shards is more than the
 * model's blocks; otherwise the statuses of kiln_compile_memory, message saying which. */
kiln_status kiln_llm_shards_compile(const kiln_compile_options *opt, const void *bytes, size_t size, const char *path,
                                    size_t n_shards, char *const *paths, void **programs, size_t *sizes,
                                    kiln_buf *manifest, char *message, size_t message_size);

#endif
