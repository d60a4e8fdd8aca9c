/* run_shards.h — `kiln run MANIFEST`: the shard programs of one model (kiln compile --shards)
 * run in sequence, each in its own module, all modules sharing one explicit scratch group.
 *
 * Layer: tools. Public API only (kiln.h). The manifest format is documented in docs/cli.md.
 */
#ifndef KILN_TOOLS_RUN_SHARDS_H
#define KILN_TOOLS_RUN_SHARDS_H

#include <stdbool.h>
#include <stddef.h>

#include "kiln/kiln.h"

typedef struct shard_run_options {
    const kiln_tensor *inputs;          /* (n_inputs) the model's inputs, by position ... */
    const char *const *input_names;     /* ... or, where non-NULL, by name */
    size_t n_inputs;
    const char *method;                 /* --method, or NULL */
    const char *outputs_dir, *target;
    int threads;
    long iterations;
    bool quiet, stats;
} shard_run_options;

/* true when the file at path starts with the manifest's first line. */
bool shard_manifest_detect(const char *path);

/* Run the manifest's shards; returns the process exit status (docs/cli.md). */
int run_shards(const char *manifest_path, const shard_run_options *opt);

/* Shared with cmd_run.c: one output line ("output 0 'logits': f32 [1,1000] = [...]"), and the
 * process-wide runtime counters as one line ("runtime stats: live_contexts=1 ..."). */
void run_print_output(size_t index, const char *name, const kiln_tensor *t);
void run_print_stats(void);

#endif
