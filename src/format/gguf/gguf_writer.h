/* gguf_writer.h — writing GGUF bytes back out of a parsed view (gguf_reader.h).
 *
 * Layer: format (src/format/gguf). Depends on core. What a compiled LLM program carries as its
 * "llm.gguf" metadata (docs/llm.md): the model file's key/values without its tensors, so the
 * runner reads its vocabulary and hyperparameters with the same reader, from the program alone.
 */
#ifndef KILN_FORMAT_GGUF_WRITER_H
#define KILN_FORMAT_GGUF_WRITER_H

#include <stddef.h>

#include "format/gguf/gguf_reader.h"

/* A GGUF version 3 file holding every key/value of gguf — same keys, types and values (nested
 * arrays included), in file order — and zero tensors. *out (from allocator a, NULL:
 * kiln_allocator_default(); 64-byte aligned) holds *out_size bytes that kiln_gguf_open reads
 * back; the caller frees it with kiln_free(a, *out). Nothing points into gguf's bytes afterwards.
 * Returns KILN_OK, KILN_ERROR_INVALID_ARGUMENT (NULL gguf, out or out_size),
 * KILN_ERROR_OUT_OF_MEMORY (also for a size that does not fit size_t); on failure *out is NULL
 * and *out_size 0. */
kiln_status kiln_gguf_metadata_blob(const kiln_gguf *gguf, const kiln_allocator *a, void **out, size_t *out_size);

#endif
