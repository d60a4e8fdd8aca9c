/* llm_generate.c — the generation loop: prompt, sample, stream, stop, context shift; and the
 * stats of the last run.
 *
 * Layer: llm runner. Public runtime API (through llm_eval.c), the sampler and the vocabulary.
 *
 * Stop strings and streaming: the text of the generated tokens goes through `pending`, the
 * part not released yet. After each token's piece is appended, a stop string found in pending
 * ends the run (the text before it is released, the rest dropped); otherwise everything is
 * released except the longest tail of pending that is the beginning of some stop string (it
 * might still become one). So no stop string is ever passed to the callback, and held-back
 * text is at most the longest stop string long.
 */
#include <string.h>

#include "core/alloc.h"
#include "llm/runner/llm_internal.h"

typedef struct stream {
    const kiln_llm_generate_options *o;
    const kiln_allocator *a;
    char *pending;          /* (cap) */
    size_t n, cap;
} stream;

static kiln_status stream_append(stream *s, const char *text, size_t size)
{
    if (s->n + size > s->cap) {
        size_t cap = (s->n + size) * 2 + 64;
        char *p = kiln_alloc(s->a, cap, 1);
        if (!p) return KILN_ERROR_OUT_OF_MEMORY;
        if (s->n) memcpy(p, s->pending, s->n);
        kiln_free(s->a, s->pending);
        s->pending = p, s->cap = cap;
    }
    if (size) memcpy(s->pending + s->n, text, size);
    s->n += size;
    return KILN_OK;
}

/* Whether pending[from..n) is the beginning of a stop string (shorter than it). */
static bool tail_could_stop(const stream *s, size_t from)
{
    size_t len = s->n - from;
    for (size_t k = 0; k < s->o->n_stop_strings; k++) {
        const char *stop = s->o->stop_strings[k];
        if (strlen(stop) > len && memcmp(stop, s->pending + from, len) == 0) return true;
    }
    return false;
}

/* The earliest position of a stop string in pending, or n. */
static size_t find_stop(const stream *s)
{
    size_t best = s->n;
    for (size_t k = 0; k < s->o->n_stop_strings; k++) {
        const char *stop = s->o->stop_strings[k];
        size_t len = strlen(stop);
        for (size_t i = 0; i + len <= s->n && i < best; i++)
            if (memcmp(s->pending + i, stop, len) == 0) best = i;
    }
    return best;
}

/* Hands pending[0..count) with token to the callback and drops it from pending; true when the
   callback asks to stop. */
static bool release(stream *s, int32_t token, size_t count)
{
    int rc = s->o->on_token ? s->o->on_token(s->o->user, token, s->pending, count) : 0;
    memmove(s->pending, s->pending + count, s->n - count);
    s->n -= count;
    return rc != 0;
}

/* Appends token's piece and releases what is certain; *stop set to STRING or CALLBACK. */
static kiln_status stream_token(kiln_llm *llm, stream *s, int32_t token, kiln_llm_stop *stop)
{
    char piece[256];
    size_t size = 0;
    kiln_status st = kiln_vocab_token_piece(llm->vocab, token, piece, sizeof piece, &size);
    if (st == KILN_ERROR_INVALID_ARGUMENT) { /* a piece longer than the buffer: measure, then copy */
        char *big = kiln_alloc(s->a, size, 1);
        if (!big) return KILN_ERROR_OUT_OF_MEMORY;
        st = kiln_vocab_token_piece(llm->vocab, token, big, size, &size);
        if (st == KILN_OK) st = stream_append(s, big, size);
        kiln_free(s->a, big);
    } else if (st == KILN_OK) {
        st = stream_append(s, piece, size);
    }
    if (st != KILN_OK) return st;
    size_t at = find_stop(s);
    if (at < s->n) {
        *stop = KILN_LLM_STOP_STRING;
        release(s, token, at);
        s->n = 0;
        return KILN_OK;
    }
    size_t keep_from = 0;
    while (keep_from < s->n && !tail_could_stop(s, keep_from)) keep_from++;
    if (release(s, token, keep_from)) *stop = KILN_LLM_STOP_CALLBACK;
    return KILN_OK;
}

/* Keeps the first n_keep tokens and the newer half of the rest, and evaluates them anew from an
   empty cache. false when nothing can be dropped. */
static kiln_status context_shift(kiln_llm *llm, size_t n_keep, bool *shifted)
{
    size_t n = llm->n_past;
    if (n_keep > n) n_keep = n;
    size_t n_discard = (n - n_keep) / 2;
    *shifted = false;
    if (n_discard == 0) return KILN_OK;
    size_t n_new = n - n_discard;
    int32_t *kept = kiln_alloc(llm->allocator, n_new * sizeof *kept, 64);
    if (!kept) return KILN_ERROR_OUT_OF_MEMORY;
    memcpy(kept, llm->tokens, n_keep * sizeof *kept);
    memcpy(kept + n_keep, llm->tokens + n_keep + n_discard, (n - n_keep - n_discard) * sizeof *kept);
    kiln_llm_reset(llm);
    kiln_status st = kiln_llm_eval(llm, kept, n_new, NULL);
    kiln_free(llm->allocator, kept);
    *shifted = st == KILN_OK;
    return st;
}

static bool validate(const kiln_llm_generate_options *o)
{
    if (!o || o->struct_size < sizeof *o || (!o->stop_strings && o->n_stop_strings)) return false;
    for (size_t k = 0; k < o->n_stop_strings; k++)
        if (!o->stop_strings[k] || !o->stop_strings[k][0]) return false;
    return true;
}

kiln_status kiln_llm_generate(kiln_llm *llm, const int32_t *prompt, size_t n_prompt,
                              const kiln_llm_generate_options *o)
{
    if (!llm) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_diag d = llm_diag_begin(llm);
    if (!validate(o) || (!prompt && n_prompt))
        return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT,
                              "kiln_llm_generate: bad options (NULL, struct_size, or an empty or NULL stop string)");
    kiln_llm_sampling greedy = {.struct_size = sizeof greedy, .temperature = 0, .repeat_penalty = 1};
    kiln_llm_sampler *sampler = NULL;
    kiln_status st = kiln_llm_sampler_create(o->sampling ? o->sampling : &greedy, llm->n_vocab, llm->allocator, &sampler);
    if (st != KILN_OK) return kiln_diag_fail(&d, st, "kiln_llm_generate: bad sampling parameters or out of memory");
    llm->stats = (kiln_llm_stats){.struct_size = sizeof llm->stats, .load_ms = llm->load_ms};
    kiln_llm_stats *stats = &llm->stats;
    stream s = {.o = o, .a = llm->allocator};

    double t0 = llm_now();
    if (n_prompt) {
        if (n_prompt > llm->n_ctx - llm->n_past) {
            st = kiln_diag_fail(&d, KILN_ERROR_LIMIT, "the prompt of %zu tokens does not fit the context of %zu (%zu in use)",
                                n_prompt, llm->n_ctx, llm->n_past);
            goto done;
        }
        st = kiln_llm_eval(llm, prompt, n_prompt, NULL);
        if (st != KILN_OK) goto done;
    } else if (!llm->has_logits) {
        st = kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_generate: no prompt and nothing evaluated to go on from");
        goto done;
    }
    double t1 = llm_now();
    stats->prompt_tokens = n_prompt;
    stats->prompt_seconds = t1 - t0;

    kiln_llm_stop stop = KILN_LLM_STOP_NONE;
    int32_t eos = kiln_vocab_eos(llm->vocab);
    while (stop == KILN_LLM_STOP_NONE) {
        int32_t token;
        st = kiln_llm_sampler_sample(sampler, llm->logits, llm->tokens, llm->n_past, &token);
        if (st != KILN_OK) goto done;
        stats->generated_tokens++;
        if (token == eos) {
            stop = KILN_LLM_STOP_EOS;
            if (o->on_token) o->on_token(o->user, token, "", 0); /* the run ends either way */
            break;
        }
        st = stream_token(llm, &s, token, &stop);
        if (st != KILN_OK) goto done;
        if (stop != KILN_LLM_STOP_NONE) break;
        if (o->max_tokens && stats->generated_tokens >= o->max_tokens) {
            stop = KILN_LLM_STOP_MAX_TOKENS;
            break;
        }
        if (llm->n_past == llm->n_ctx) {
            bool shifted = false;
            if (o->context_shift) {
                st = context_shift(llm, o->n_keep, &shifted);
                if (st != KILN_OK) goto done;
            }
            if (!shifted) {
                stop = KILN_LLM_STOP_CONTEXT_FULL;
                break;
            }
            stats->context_shifts++;
        }
        st = kiln_llm_eval(llm, &token, 1, NULL);
        if (st != KILN_OK) goto done;
    }
    /* Held-back text that never became a stop string is the run's; a callback that asked to
       stop is not called again. */
    if (s.n && stop != KILN_LLM_STOP_STRING && stop != KILN_LLM_STOP_CALLBACK) release(&s, -1, s.n);
    stats->stop = stop;
    stats->generate_seconds = llm_now() - t1;
done:
    if (stats->prompt_seconds > 0) stats->prompt_tokens_per_second = (double)stats->prompt_tokens / stats->prompt_seconds;
    if (stats->generate_seconds > 0)
        stats->generated_tokens_per_second = (double)stats->generated_tokens / stats->generate_seconds;
    /* kiln_llm_eval writes its own line into the same buffer; only a failure without one
       (the sampler, out of memory) still needs one. */
    if (st != KILN_OK) kiln_diag_fail(&d, st, "generation failed: %s", kiln_status_str(st));
    kiln_free(llm->allocator, s.pending);
    kiln_llm_sampler_destroy(sampler);
    return st;
}

kiln_status kiln_llm_stats_get(const kiln_llm *llm, kiln_llm_stats *out)
{
    if (!llm || !out || out->struct_size < sizeof *out) return KILN_ERROR_INVALID_ARGUMENT;
    *out = llm->stats;
    return KILN_OK;
}

const char *kiln_llm_stop_name(kiln_llm_stop stop)
{
    switch (stop) {
    case KILN_LLM_STOP_EOS: return "eos";
    case KILN_LLM_STOP_STRING: return "stop string";
    case KILN_LLM_STOP_MAX_TOKENS: return "max tokens";
    case KILN_LLM_STOP_CONTEXT_FULL: return "context full";
    case KILN_LLM_STOP_CALLBACK: return "callback";
    case KILN_LLM_STOP_NONE: break;
    }
    return "none";
}
