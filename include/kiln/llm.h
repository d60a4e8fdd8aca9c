/* llm.h — the LLM runner of kiln: text in, text out, over a program compiled from a GGUF model.
 *
 * Layer: public header (libkiln_llm). Depends on kiln/kiln.h only. The runner uses the public
 * runtime API (kiln.h) and the tokenizers of src/llm; it needs no compiler.
 *
 * What it runs. A program in the "GGUF LLM" layout (docs/llm.md) has two methods over one set
 * of weights — "prefill" (T tokens at once) and "decode" (1 token) — and the metadata entry
 * "llm.gguf" (a GGUF file holding the source model's metadata, from which the vocabulary is
 * built). Every method takes tokens i32 [T], positions i32 [T], an additive mask f32 [T, C + T]
 * and, per layer l, the key and value cache f32 [C, KVD]; it returns logits f32 [T, n_vocab]
 * and the new rows' keys and values f32 [T, KVD] per layer. The runner owns the cache
 * (f32 [L][2][C][KVD]), feeds it in, and copies the new rows into their slots: cache slot j
 * always holds position j.
 *
 * Conventions as in kiln.h: statuses, results through final *_out parameters (NULL or
 * unchanged on failure), nothing to free on failure. A kiln_llm is used by one thread at a
 * time (it holds the cache and the last logits); two kiln_llm over one program may run in two
 * threads. Every call that fails on a kiln_llm leaves one line saying why in
 * kiln_llm_last_error.
 */
#ifndef KILN_LLM_H
#define KILN_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_llm kiln_llm;

typedef struct kiln_llm_options {
    size_t struct_size;                 /* sizeof(kiln_llm_options); lets the struct grow */
    const kiln_allocator *allocator;    /* the runner's memory (cache, vocabulary, buffers) and the
                                           module's runtime allocator; NULL: defaults. Must
                                           outlive the kiln_llm */
    int num_threads;                    /* the module's threads; 0: one per available core */
    const char *target;                 /* as kiln_module_options.target; not retained */
    kiln_scratch_group *scratch_group;  /* as kiln_module_options.scratch_group */
} kiln_llm_options;

/* Creates a runner over program: builds the vocabulary from the metadata "llm.gguf", creates
 * one module (options, which may be NULL) and loads "prefill" and "decode" from it (so they
 * share their contexts), and takes the lengths from the methods' declared inputs and outputs:
 * T (prefill rows), C (context), L (layers), KVD (cache row) and n_vocab, checking that both
 * methods have exactly the layout above and agree. The program may be closed afterwards (the
 * module keeps what it needs). Statuses:
 *   KILN_ERROR_INVALID_ARGUMENT  program or out NULL, struct_size too small;
 *   KILN_ERROR_STALE_HANDLE      a closed program;
 *   KILN_ERROR_MODEL             not an LLM program: no "llm.gguf", no prefill/decode method,
 *                                inputs or outputs of another layout, n_vocab not the
 *                                vocabulary's size; or a bad llm.gguf (message names it);
 *   KILN_ERROR_NOT_SUPPORTED     a tokenizer kiln does not have;
 *   KILN_ERROR_OUT_OF_MEMORY, and the statuses of kiln_module_create / kiln_method_load.
 * On failure message (message_size bytes, may be NULL/0) holds one line; "" on success. */
KILN_API kiln_status kiln_llm_create(kiln_program *program, const kiln_llm_options *options, kiln_llm **out,
                                     char *message, size_t message_size);
/* As kiln_llm_create over the n_programs shard programs of one model (kiln compile MODEL.gguf
 * --shards N; the programs in shard order, as the manifest lists them): a module per shard,
 * each loading its "prefill" and "decode" (so the two share that shard's contexts), all in one
 * scratch group (options->scratch_group, or one the runner creates and releases), so that one
 * scratch buffer of the largest shard's need serves them all. Shard 0 takes the tokens and every
 * other shard the previous one's "hidden" rows; the last gives the logits; shard i's layers
 * follow shard i-1's (docs/llm.md, "Shards"). The vocabulary is programs[0]'s. A shard of
 * another layout is KILN_ERROR_MODEL with a message naming the shard; otherwise the statuses
 * of kiln_llm_create (KILN_ERROR_INVALID_ARGUMENT also for NULL programs or n_programs 0). */
KILN_API kiln_status kiln_llm_create_sharded(kiln_program *const *programs, size_t n_programs,
                                             const kiln_llm_options *options, kiln_llm **out, char *message,
                                             size_t message_size);
/* Unloads the methods, destroys the modules and frees everything; NULL is ignored. */
KILN_API void        kiln_llm_destroy(kiln_llm *llm);
/* One line about the most recent failed call on llm, "" if none. Valid until the next call. */
KILN_API const char *kiln_llm_last_error(const kiln_llm *llm);

/* The lengths taken from the methods (0 for NULL). */
KILN_API size_t      kiln_llm_context_length(const kiln_llm *llm);   /* C */
KILN_API size_t      kiln_llm_prefill_length(const kiln_llm *llm);   /* T */
KILN_API size_t      kiln_llm_n_vocab(const kiln_llm *llm);
KILN_API size_t      kiln_llm_n_layers(const kiln_llm *llm);         /* L */
/* Special tokens of the vocabulary, -1 when it has none. */
KILN_API int32_t     kiln_llm_bos(const kiln_llm *llm);
KILN_API int32_t     kiln_llm_eos(const kiln_llm *llm);
/* Milliseconds kiln_llm_create took (vocabulary, module, both methods). */
KILN_API double      kiln_llm_load_ms(const kiln_llm *llm);

/* ---- Text ------------------------------------------------------------------------------------
 * kiln_llm_tokenize: the ids of text[0..size) (special-token text is not parsed), BOS first
 * when add_bos is nonzero and the vocabulary has one and adds it (tokenizer.ggml.add_bos_token).
 * *ids_out (allocated from the runner's allocator) is freed with kiln_llm_free; an empty result
 * is a freeable block with *n_out = 0. KILN_ERROR_INVALID_ARGUMENT, KILN_ERROR_OUT_OF_MEMORY. */
KILN_API kiln_status kiln_llm_tokenize(kiln_llm *llm, const char *text, size_t size, int add_bos, int32_t **ids_out,
                                       size_t *n_out);
/* The text of ids[0..n) as one string, NUL-terminated (*size_out bytes without the NUL); a
 * llama vocabulary's leading space is dropped, so detokenize(tokenize(t)) == t. Freed with
 * kiln_llm_free. KILN_ERROR_INDEX_OUT_OF_RANGE (an id outside the vocabulary),
 * KILN_ERROR_INVALID_ARGUMENT, KILN_ERROR_OUT_OF_MEMORY. */
KILN_API kiln_status kiln_llm_detokenize(kiln_llm *llm, const int32_t *ids, size_t n, char **text_out, size_t *size_out);
/* The bytes one token stands for, for streaming (a leading space is kept; control tokens give
 * nothing). Writes at most size bytes to out and sets *n_out to the full length (size 0
 * measures). KILN_ERROR_INDEX_OUT_OF_RANGE, KILN_ERROR_INVALID_ARGUMENT (it does not fit). */
KILN_API kiln_status kiln_llm_token_piece(kiln_llm *llm, int32_t id, char *out, size_t size, size_t *n_out);
/* Frees a block kiln_llm_tokenize or kiln_llm_detokenize returned; NULL is ignored. */
KILN_API void        kiln_llm_free(kiln_llm *llm, void *block);

/* ---- Evaluation --------------------------------------------------------------------------- */

/* Empties the cache: the next kiln_llm_eval starts at position 0. */
KILN_API void        kiln_llm_reset(kiln_llm *llm);
/* Tokens in the cache (the position the next token gets). */
KILN_API size_t      kiln_llm_n_past(const kiln_llm *llm);
/* The tokens in the cache, in position order (kiln_llm_n_past of them); valid until the next
 * call that changes the cache. */
KILN_API const int32_t *kiln_llm_cache_tokens(const kiln_llm *llm);

/* Appends tokens[0..n) to the cache at positions n_past .. n_past + n - 1. Runs of at least an
 * eighth of T tokens go through "prefill" in chunks of T rows (the last one padded: a padding
 * row attends to itself only, and its results are dropped); shorter rests go through "decode"
 * one token at a time. With logits_out (n x n_vocab floats, the caller's), row i receives the
 * logits after tokens 0..i of this call (the next-token scores at position n_past + i); with
 * NULL only the last row is kept (kiln_llm_logits). Statuses:
 *   KILN_ERROR_INVALID_ARGUMENT  llm or tokens NULL, n 0, a token id outside [0, n_vocab);
 *   KILN_ERROR_LIMIT             n_past + n exceeds the context length C (nothing evaluated);
 *   the statuses of kiln_method_execute.
 * On an execution failure the chunks evaluated before it stay in the cache (kiln_llm_n_past). */
KILN_API kiln_status kiln_llm_eval(kiln_llm *llm, const int32_t *tokens, size_t n, float *logits_out);
/* The logits (n_vocab floats) after the last evaluated token, or NULL when the cache is empty
 * or was changed since. Valid until the next call that changes the cache. */
KILN_API const float *kiln_llm_logits(const kiln_llm *llm);

/* ---- Sampling ----------------------------------------------------------------------------
 * A sampler turns logits into a token, in llama.cpp's order:
 *   1. repetition penalty: each distinct token among the last repeat_last_n of the history
 *      has its logit divided by repeat_penalty when positive, multiplied when negative;
 *   2. temperature <= 0 or top_k == 1: greedy — the largest logit, the lowest id on a tie;
 *   3. top_k > 0: the k largest logits stay (ties broken by lower id);
 *   4. top_p < 1: of the softmax of what is left (at temperature 1), the fewest most likely
 *      tokens whose probabilities sum to at least top_p stay;
 *   5. min_p > 0: tokens whose probability is below min_p times the largest one are dropped;
 *   6. the rest is drawn from softmax(logit / temperature).
 * Every step keeps at least one token. The random numbers come from the sampler's own
 * generator (splitmix64 seeded with `seed`), so equal seeds, logits and history give equal
 * tokens; there is no global state. */
typedef struct kiln_llm_sampling {
    size_t struct_size;         /* sizeof(kiln_llm_sampling) */
    float temperature;          /* <= 0: greedy */
    int32_t top_k;              /* <= 0: off */
    float top_p;                /* >= 1: off */
    float min_p;                /* <= 0: off */
    float repeat_penalty;       /* 1: off; must be > 0 */
    int32_t repeat_last_n;      /* history tokens the penalty looks at; 0: off, -1: all */
    uint64_t seed;
} kiln_llm_sampling;

/* Fills *out with llama.cpp's defaults: temperature 0.8, top_k 40, top_p 0.95, min_p 0.05,
 * repeat_penalty 1 (off), repeat_last_n 64, seed 0. */
KILN_API void        kiln_llm_sampling_default(kiln_llm_sampling *out);

typedef struct kiln_llm_sampler kiln_llm_sampler;
/* A sampler for logits of n_vocab entries, its memory from allocator (NULL: default; must
 * outlive it). KILN_ERROR_INVALID_ARGUMENT (NULL params or out, struct_size too small, n_vocab
 * 0 or above INT32_MAX, a NaN parameter, repeat_penalty <= 0, repeat_last_n < -1),
 * KILN_ERROR_OUT_OF_MEMORY. */
KILN_API kiln_status kiln_llm_sampler_create(const kiln_llm_sampling *params, size_t n_vocab,
                                             const kiln_allocator *allocator, kiln_llm_sampler **out);
KILN_API void        kiln_llm_sampler_destroy(kiln_llm_sampler *sampler);
/* One token from logits (n_vocab floats, not changed) given the history (n_history earlier
 * tokens, oldest first; may be NULL when n_history is 0; ids outside the vocabulary are
 * ignored). KILN_ERROR_INVALID_ARGUMENT (NULL arguments). Draws one random number unless a single
 * candidate is left. */
KILN_API kiln_status kiln_llm_sampler_sample(kiln_llm_sampler *sampler, const float *logits, const int32_t *history,
                                             size_t n_history, int32_t *token_out);

/* ---- Generation -------------------------------------------------------------------------- */

typedef enum kiln_llm_stop {
    KILN_LLM_STOP_NONE = 0,         /* not stopped (before the first generate) */
    KILN_LLM_STOP_EOS,              /* the end-of-sequence token was generated */
    KILN_LLM_STOP_STRING,           /* the text reached one of the stop strings */
    KILN_LLM_STOP_MAX_TOKENS,       /* max_tokens were generated */
    KILN_LLM_STOP_CONTEXT_FULL,     /* the cache holds C tokens and context_shift is off (or
                                       could not drop anything) */
    KILN_LLM_STOP_CALLBACK          /* the token callback asked to stop */
} kiln_llm_stop;
/* "eos", "stop string", "max tokens", "context full", "callback", "none". Static. */
KILN_API const char *kiln_llm_stop_name(kiln_llm_stop stop);

/* Called once per generated token with the text it releases: the token's piece, or less while
 * the text could still turn into a stop string (that part comes with a later call), never the
 * stop string itself. After the last token, held-back text that turned out not to be a stop
 * string comes in one more call with token -1 (not after the callback asked to stop).
 * Returns 0 to go on, nonzero to stop (ignored for the EOS token, which ends the run anyway). */
typedef int (*kiln_llm_token_fn)(void *user, int32_t token, const char *text, size_t size);

typedef struct kiln_llm_generate_options {
    size_t struct_size;                 /* sizeof(kiln_llm_generate_options) */
    size_t max_tokens;                  /* 0: no limit but the stops */
    const kiln_llm_sampling *sampling;  /* NULL: greedy */
    const char *const *stop_strings;    /* (n_stop_strings) NUL-terminated, non-empty; not retained */
    size_t n_stop_strings;
    int context_shift;                  /* nonzero: when the cache is full, keep its first n_keep
                                           tokens, drop half of the rest (the oldest) and
                                           re-evaluate what is kept, then go on */
    size_t n_keep;                      /* tokens kept at the start by a context shift (the BOS,
                                           an attention sink) */
    kiln_llm_token_fn on_token;         /* may be NULL */
    void *user;
} kiln_llm_generate_options;

/* What the last kiln_llm_generate did (times in seconds of wall clock). */
typedef struct kiln_llm_stats {
    size_t struct_size;                 /* set by the caller to sizeof(kiln_llm_stats) */
    double load_ms;                     /* kiln_llm_create */
    size_t prompt_tokens;               /* evaluated as the prompt */
    double prompt_seconds;
    double prompt_tokens_per_second;    /* 0 when nothing was timed */
    size_t generated_tokens;            /* sampled (the EOS included) */
    double generate_seconds;            /* sampling and decoding, context shifts included */
    double generated_tokens_per_second;
    size_t context_shifts;
    kiln_llm_stop stop;
} kiln_llm_stats;

/* Evaluates prompt[0..n_prompt) after what the cache holds (n_prompt may be 0 when the cache
 * holds tokens whose logits are current, to continue), then samples tokens one by one, passing
 * each to on_token and evaluating it, until a stop (kiln_llm_stop; see kiln_llm_stats_get).
 * Generated tokens that complete a stop string or are EOS are passed to on_token (with the
 * text above) but not evaluated. A context shift re-evaluates the kept tokens, because the
 * cache holds keys after RoPE: moving them to new positions would need their rotation undone
 * and redone, which the runner cannot do without knowing the model's RoPE; re-evaluating is
 * simple and exact. Statuses: KILN_OK (for every stop reason), KILN_ERROR_INVALID_ARGUMENT
 * (NULL llm or options, struct_size, an empty stop string, n_prompt 0 with no current logits,
 * bad sampling parameters), KILN_ERROR_LIMIT (the prompt does not fit the context),
 * KILN_ERROR_OUT_OF_MEMORY, and the statuses of kiln_llm_eval. */
KILN_API kiln_status kiln_llm_generate(kiln_llm *llm, const int32_t *prompt, size_t n_prompt,
                                       const kiln_llm_generate_options *options);
/* The stats of the last kiln_llm_generate (load_ms always). KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_llm_stats_get(const kiln_llm *llm, kiln_llm_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* KILN_LLM_H */
