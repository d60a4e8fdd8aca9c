/* shard_manifest_text.h — the records of a shard manifest (docs/cli.md "Manifest format"), for
 * the writers of both kinds of sharded model: ONNX cuts (shards.c) and GGUF LLM blocks
 * (shards_gguf.c).
 *
 * Layer: compiler (internal). Each record is one line; control characters in names become '?'
 * so that a record stays one line. All return false when out of memory.
 */
#ifndef KILN_COMPILER_SHARD_MANIFEST_TEXT_H
#define KILN_COMPILER_SHARD_MANIFEST_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/shard_plan.h"
#include "core/buf.h"

#define KILN_SHARD_MANIFEST_MAGIC "kiln-shards 1"

/* One record, printf-style. */
bool kiln_manifest_line(kiln_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The first records: the magic line, a comment, "method", "shards" and one "shard I FILE" per
   path (the file name only: shards sit beside the manifest). */
bool kiln_manifest_head(kiln_buf *b, const char *method, size_t n_shards, char *const *paths);

/* "<head> graph K NAME" or "<head> shard S K NAME". */
bool kiln_manifest_source(kiln_buf *b, const char *head, const kiln_shard_source *src, const char *name);

#endif
