/* llm_sample.c — the sampler: repetition penalty, greedy, top-k, top-p, min-p, temperature
 * and the draw (the order and rules are stated in kiln/llm.h).
 *
 * Layer: llm runner. Depends on core's allocator and generator only. Each sampler holds its own
 * generator state (core/splitmix.h), so samplers never share randomness and nothing is global.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/splitmix.h"
#include "llm/runner/llm_sample.h"

typedef struct candidate {
    float logit;
    int32_t id;
} candidate;

struct kiln_llm_sampler {
    const kiln_allocator *allocator;
    kiln_llm_sampling params;
    size_t n_vocab;
    uint64_t state;             /* splitmix64 */
    float *penalized;           /* (n_vocab) the logits after the repetition penalty */
    uint8_t *seen;              /* (n_vocab) tokens already penalized in this step */
    candidate *cand;            /* (n_vocab) */
    int32_t *ids;               /* (n_vocab) the candidates left, most likely first */
    float *probs;               /* (n_vocab) their probabilities */
};

void kiln_llm_sampling_default(kiln_llm_sampling *out)
{
    if (!out) return;
    *out = (kiln_llm_sampling){.struct_size = sizeof *out, .temperature = 0.8f, .top_k = 40, .top_p = 0.95f,
                               .min_p = 0.05f, .repeat_penalty = 1.0f, .repeat_last_n = 64, .seed = 0};
}

/* Uniform in [0, 1) from the top 53 bits. */
static double uniform01(uint64_t *state)
{
    return (double)(kiln_splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

kiln_status kiln_llm_sampler_create(const kiln_llm_sampling *params, size_t n_vocab, const kiln_allocator *allocator,
                                    kiln_llm_sampler **out)
{
    if (!out) return KILN_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!params || params->struct_size < sizeof *params || n_vocab == 0 || n_vocab > INT32_MAX)
        return KILN_ERROR_INVALID_ARGUMENT;
    if (isnan(params->temperature) || isnan(params->top_p) || isnan(params->min_p) ||
        !(params->repeat_penalty > 0) || params->repeat_last_n < -1)
        return KILN_ERROR_INVALID_ARGUMENT;
    const kiln_allocator *a = allocator ? allocator : kiln_allocator_default();
    kiln_llm_sampler *s = KILN_NEW(a, kiln_llm_sampler);
    if (!s) return KILN_ERROR_OUT_OF_MEMORY;
    s->allocator = a;
    s->params = *params;
    s->n_vocab = n_vocab;
    s->state = params->seed;
    s->penalized = kiln_alloc(a, n_vocab * sizeof *s->penalized, 64);
    s->seen = kiln_alloc_zero(a, n_vocab, 64);
    s->cand = kiln_alloc(a, n_vocab * sizeof *s->cand, 64);
    s->ids = kiln_alloc(a, n_vocab * sizeof *s->ids, 64);
    s->probs = kiln_alloc(a, n_vocab * sizeof *s->probs, 64);
    if (!s->penalized || !s->seen || !s->cand || !s->ids || !s->probs) {
        kiln_llm_sampler_destroy(s);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    *out = s;
    return KILN_OK;
}

void kiln_llm_sampler_destroy(kiln_llm_sampler *s)
{
    if (!s) return;
    const kiln_allocator *a = s->allocator;
    kiln_free(a, s->penalized);
    kiln_free(a, s->seen);
    kiln_free(a, s->cand);
    kiln_free(a, s->ids);
    kiln_free(a, s->probs);
    kiln_free(a, s);
}

/* Step 1: llama.cpp's rule, once per distinct token of the window. NaN logits become -inf so
   that they are never chosen and never poison a sum. */
static void penalize(kiln_llm_sampler *s, const float *logits, const int32_t *history, size_t n_history)
{
    for (size_t i = 0; i < s->n_vocab; i++) s->penalized[i] = isnan(logits[i]) ? -INFINITY : logits[i];
    float penalty = s->params.repeat_penalty;
    if (penalty == 1.0f || s->params.repeat_last_n == 0 || !history) return;
    size_t window = s->params.repeat_last_n < 0 ? n_history : (size_t)s->params.repeat_last_n;
    size_t first = n_history > window ? n_history - window : 0;
    for (size_t i = first; i < n_history; i++) {
        int32_t t = history[i];
        if (t < 0 || (size_t)t >= s->n_vocab || s->seen[t]) continue;
        s->seen[t] = 1;
        float *v = &s->penalized[t];
        *v = *v > 0 ? *v / penalty : *v * penalty;
    }
    for (size_t i = first; i < n_history; i++)
        if (history[i] >= 0 && (size_t)history[i] < s->n_vocab) s->seen[history[i]] = 0;
}

/* Larger logit first, lower id on a tie: a total order, so the result never depends on qsort. */
static int by_logit_desc(const void *pa, const void *pb)
{
    const candidate *a = pa, *b = pb;
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Softmax of cand[0..n) at temperature t into probs (double sums: n may be 10^5). */
static void softmax(const candidate *cand, size_t n, double t, float *probs)
{
    double max = cand[0].logit, sum = 0;
    for (size_t i = 0; i < n; i++) sum += exp(((double)cand[i].logit - max) / t);
    for (size_t i = 0; i < n; i++) probs[i] = (float)(exp(((double)cand[i].logit - max) / t) / sum);
}

static size_t greedy(kiln_llm_sampler *s)
{
    size_t best = 0;
    for (size_t i = 1; i < s->n_vocab; i++)
        if (s->penalized[i] > s->penalized[best]) best = i;
    s->ids[0] = (int32_t)best;
    s->probs[0] = 1.0f;
    return 1;
}

size_t llm_sample_candidates(kiln_llm_sampler *s, const float *logits, const int32_t *history, size_t n_history,
                             const int32_t **ids, const float **probs)
{
    if (!s || !logits || !ids || !probs) return 0;
    *ids = s->ids;
    *probs = s->probs;
    penalize(s, logits, history, n_history);
    const kiln_llm_sampling *p = &s->params;
    if (!(p->temperature > 0) || p->top_k == 1) return greedy(s);

    size_t n = s->n_vocab;
    for (size_t i = 0; i < n; i++) s->cand[i] = (candidate){s->penalized[i], (int32_t)i};
    qsort(s->cand, n, sizeof *s->cand, by_logit_desc);
    if (s->cand[0].logit == -INFINITY) return greedy(s); /* nothing is possible: take id 0 as argmax does */
    if (p->top_k > 0 && (size_t)p->top_k < n) n = (size_t)p->top_k;
    while (n > 1 && s->cand[n - 1].logit == -INFINITY) n--;
    if (p->top_p < 1.0f) {
        softmax(s->cand, n, 1.0, s->probs);
        double sum = 0;
        size_t keep = n;
        for (size_t i = 0; i < n; i++) {
            sum += s->probs[i];
            if (sum >= p->top_p) {
                keep = i + 1;
                break;
            }
        }
        n = keep;
    }
    if (p->min_p > 0.0f) {
        /* Relative to the most likely token, so the same at any renormalisation: p_i >= min_p *
           p_0 exactly when logit_i - logit_0 >= log(min_p). */
        double floor = log((double)p->min_p);
        size_t keep = 1;
        while (keep < n && (double)s->cand[keep].logit - s->cand[0].logit >= floor) keep++;
        n = keep;
    }
    softmax(s->cand, n, p->temperature, s->probs);
    for (size_t i = 0; i < n; i++) s->ids[i] = s->cand[i].id;
    return n;
}

kiln_status kiln_llm_sampler_sample(kiln_llm_sampler *s, const float *logits, const int32_t *history,
                                    size_t n_history, int32_t *token_out)
{
    if (!s || !logits || !token_out || (!history && n_history)) return KILN_ERROR_INVALID_ARGUMENT;
    const int32_t *ids;
    const float *probs;
    size_t n = llm_sample_candidates(s, logits, history, n_history, &ids, &probs);
    if (n == 1) {
        *token_out = ids[0];
        return KILN_OK;
    }
    double u = uniform01(&s->state), sum = 0;
    size_t pick = n - 1; /* rounding may leave the sum a hair below 1: the last one takes it */
    for (size_t i = 0; i < n; i++) {
        sum += probs[i];
        if (u < sum) {
            pick = i;
            break;
        }
    }
    *token_out = ids[pick];
    return KILN_OK;
}
