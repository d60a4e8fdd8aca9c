/* compile_part.h — compiling one part of a GGUF LLM (a shard's blocks) as a program.
 *
 * Layer: compiler (internal; not installed). The shard driver (shards_gguf.c) sets which blocks
 * a program holds; everything else is kiln_compile_memory's, so every compile option applies to
 * a shard as to the whole model.
 */
#ifndef KILN_COMPILER_COMPILE_PART_H
#define KILN_COMPILER_COMPILE_PART_H

#include "compiler/importer.h"
#include "kiln/compiler.h"

/* kiln_compile_memory of one GGUF LLM `model` (named "forward": both methods, prefill and decode,
 * with weight sharing) restricted to the blocks, embedding and head of *layers (importer.h). */
kiln_status kiln_compile_memory_llm_part(const kiln_compile_options *opt, const kiln_compile_method *model,
                                         const kiln_llm_layers *layers, void **out_data, size_t *out_size,
                                         char *message, size_t message_size);

#endif
