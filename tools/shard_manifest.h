/* shard_manifest.h — reading the text manifest `kiln compile --shards` writes (docs/cli.md):
 * which programs the shards are, in order, and where each shard input and each final output
 * comes from.
 *
 * Layer: tools. The reader checks the grammar and the wiring it can check on its own: every
 * index in range and given exactly once, every shard input fed by a graph input or by an
 * EARLIER shard. Output indices of shards are checked against the loaded programs by the caller.
 */
#ifndef KILN_TOOLS_SHARD_MANIFEST_H
#define KILN_TOOLS_SHARD_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHARD_MANIFEST_MAGIC "kiln-shards 1"
#define SHARD_MANIFEST_MAX_SHARDS 1024

typedef struct shard_source {
    int32_t shard;              /* -1: graph input `index`; else output `index` of that shard */
    size_t index;
    const char *name;           /* the value's name (informative) */
} shard_source;

typedef struct manifest_shard {
    char *path;                 /* resolved against the manifest's directory */
    shard_source *inputs;       /* (n_inputs) */
    size_t n_inputs;
} manifest_shard;

typedef struct shard_manifest {
    char *text;                 /* the file, split in place into the names below (default
                                   allocator) */
    const char *method;         /* NULL when the manifest names none */
    manifest_shard *shards;     /* (n_shards) */
    size_t n_shards;
    const char **graph_inputs;  /* (n_graph_inputs) names */
    size_t n_graph_inputs;
    shard_source *outputs;      /* (n_outputs) */
    size_t n_outputs;
    size_t n_owned_paths;       /* shards [0, n) hold a resolved (heap) path */
} shard_manifest;

/* Read and check the manifest at path (a regular file only: a FIFO or device is refused before it
 * is read). On failure *error (error_size bytes) says which line is wrong and why, and nothing is
 * held. 0 on success, else 4 (unreadable or invalid manifest; docs/cli.md). */
int shard_manifest_read(const char *path, shard_manifest *out, char *error, size_t error_size);
void shard_manifest_free(shard_manifest *m);

#endif
