/* llm_model.h — the model of `kiln generate`, `perplexity` and `tokenize`: a GGUF LLM program
 * (.kiln) or a GGUF model compiled in memory, and its runner or just its vocabulary.
 *
 * Layer: tools. Uses the public API (kiln.h, llm.h, compiler.h) and, for the vocabulary alone,
 * the llm layer's loaders (llm/gguf/vocab_gguf.h, llm/runner/llm_vocab_program.h).
 */
#ifndef KILN_TOOLS_LLM_MODEL_H
#define KILN_TOOLS_LLM_MODEL_H

#include "kiln/llm.h"
#include "llm/tokenizer.h"

typedef struct cli_llm {
    void *bytes;                /* the program compiled from a GGUF model, or NULL */
    kiln_program *program;      /* the one program, or NULL for a shard manifest */
    kiln_program **shards;      /* (n_shards) a shard manifest's programs in order, or NULL */
    size_t n_shards;
    kiln_llm *llm;
    double compile_ms;          /* 0 for a .kiln */
    double load_ms;             /* program open + kiln_llm_create */
} cli_llm;

/* Opens path (a program, a shard manifest of kiln compile MODEL.gguf --shards N, or a model
 * compiled in memory: a GGUF file) and creates its runner
 * with threads and target (NULL: best). cmd names the command in messages. 0, or after
 * reporting one line the exit status (docs/cli.md); *m is then closed. */
int cli_llm_open(const char *cmd, const char *path, int threads, const char *target, cli_llm *m);
void cli_llm_close(cli_llm *m);

/* Only the vocabulary of path: a GGUF file's own metadata (no compile), or a program's (for a
 * shard manifest, its first shard's) "llm.gguf". 0, or after reporting one line the exit status. */
int cli_vocab_open(const char *cmd, const char *path, kiln_vocab **out);

/* Peak resident set size of this process in bytes (getrusage), 0 if unknown. */
unsigned long long cli_peak_rss_bytes(void);

#endif
