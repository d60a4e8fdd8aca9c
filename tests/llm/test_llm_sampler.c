/* test_llm_sampler.c — the runner's sampler (kiln/llm.h) on hand-made logits: greedy is the
 * argmax (lowest id on a tie), top-k 1 is greedy, the candidate sets of top-k, top-p and min-p,
 * the repetition penalty and its window, determinism by seed, the draw's frequencies, bad
 * parameters and every allocation failure; the lazily ranked candidates against a full sort.
 */
#include <math.h>
#include <stdlib.h>

#include "core/splitmix.h"
#include "kiln/llm.h"
#include "llm/runner/llm_sample.h"
#include "unit_expect.h"

static kiln_llm_sampling params(float temperature)
{
    kiln_llm_sampling s = {.struct_size = sizeof s, .temperature = temperature, .top_k = 0, .top_p = 1.0f,
                           .min_p = 0.0f, .repeat_penalty = 1.0f, .repeat_last_n = 64, .seed = 7};
    return s;
}

static kiln_llm_sampler *make(const kiln_llm_sampling *s, size_t n_vocab)
{
    kiln_llm_sampler *out = NULL;
    EXPECT_STATUS(kiln_llm_sampler_create(s, n_vocab, NULL, &out), KILN_OK);
    REQUIRE(out);
    return out;
}

static int32_t sample(kiln_llm_sampler *s, const float *logits, const int32_t *hist, size_t n_hist)
{
    int32_t t = -1;
    EXPECT_STATUS(kiln_llm_sampler_sample(s, logits, hist, n_hist, &t), KILN_OK);
    return t;
}

/* The candidate ids left, as a bit set (ids < 32). */
static uint32_t candidate_set(kiln_llm_sampler *s, const float *logits, const int32_t *hist, size_t n_hist)
{
    const int32_t *ids;
    const float *probs;
    size_t n = llm_sample_candidates(s, logits, hist, n_hist, &ids, &probs);
    uint32_t set = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        set |= 1u << ids[i];
        sum += probs[i];
        if (i) EXPECT(probs[i] <= probs[i - 1]); /* most likely first */
    }
    EXPECT(fabs(sum - 1.0) < 1e-5);
    return set;
}

static void test_greedy(void)
{
    unit_section("greedy is the argmax, lowest id on a tie; top-k 1 is greedy");
    const float logits[6] = {0.5f, 3.0f, -1.0f, 3.0f, 2.9f, -INFINITY};
    kiln_llm_sampling p = params(0.0f);
    kiln_llm_sampler *g = make(&p, 6);
    for (int i = 0; i < 5; i++) EXPECT(sample(g, logits, NULL, 0) == 1);
    kiln_llm_sampler_destroy(g);
    p = params(1.5f);
    p.top_k = 1;
    kiln_llm_sampler *k1 = make(&p, 6);
    for (int i = 0; i < 20; i++) EXPECT(sample(k1, logits, NULL, 0) == 1);
    kiln_llm_sampler_destroy(k1);
    /* NaN never wins. */
    const float with_nan[3] = {NAN, 1.0f, 0.0f};
    p = params(0.0f);
    g = make(&p, 3);
    EXPECT(sample(g, with_nan, NULL, 0) == 1);
    kiln_llm_sampler_destroy(g);
}

static void test_cut_sets(void)
{
    unit_section("top-k, top-p and min-p keep the right candidates");
    /* probabilities at temperature 1: 0.5, 0.3, 0.15, 0.05 (ids 2, 0, 3, 1) */
    const float logits[4] = {logf(0.3f), logf(0.05f), logf(0.5f), logf(0.15f)};
    kiln_llm_sampling p = params(1.0f);
    kiln_llm_sampler *s = make(&p, 4);
    EXPECT(candidate_set(s, logits, NULL, 0) == 0xFu);
    kiln_llm_sampler_destroy(s);

    p.top_k = 2;
    s = make(&p, 4);
    EXPECT(candidate_set(s, logits, NULL, 0) == ((1u << 2) | (1u << 0)));
    kiln_llm_sampler_destroy(s);

    p = params(1.0f);
    p.top_p = 0.75f; /* 0.5 < 0.75 <= 0.8: ids 2, 0 */
    s = make(&p, 4);
    EXPECT(candidate_set(s, logits, NULL, 0) == ((1u << 2) | (1u << 0)));
    kiln_llm_sampler_destroy(s);
    p.top_p = 0.9f; /* 0.8 < 0.9 <= 0.95: ids 2, 0, 3 */
    s = make(&p, 4);
    EXPECT(candidate_set(s, logits, NULL, 0) == ((1u << 2) | (1u << 0) | (1u << 3)));
    kiln_llm_sampler_destroy(s);
    p.top_p = 0.1f; /* at least one */
    s = make(&p, 4);
    EXPECT(candidate_set(s, logits, NULL, 0) == (1u << 2));
    kiln_llm_sampler_destroy(s);

    p = params(1.0f);
    p.min_p = 0.25f; /* p >= 0.125: ids 2, 0, 3 */
    s = make(&p, 4);
    EXPECT(candidate_set(s, logits, NULL, 0) == ((1u << 2) | (1u << 0) | (1u << 3)));
    kiln_llm_sampler_destroy(s);
    p.min_p = 0.5f; /* p >= 0.25: ids 2, 0 */
    s = make(&p, 4);
    EXPECT(candidate_set(s, logits, NULL, 0) == ((1u << 2) | (1u << 0)));
    kiln_llm_sampler_destroy(s);

    /* Temperature reshapes what is left: at 0.5 the probabilities go as p^2. */
    p = params(0.5f);
    p.top_k = 2;
    s = make(&p, 4);
    const int32_t *ids;
    const float *probs;
    size_t n = llm_sample_candidates(s, logits, NULL, 0, &ids, &probs);
    EXPECT(n == 2 && ids[0] == 2 && ids[1] == 0);
    EXPECT(fabs(probs[0] - 0.25 / (0.25 + 0.09)) < 1e-5);
    kiln_llm_sampler_destroy(s);
}

static void test_penalty(void)
{
    unit_section("repetition penalty: positive logits divided, negative multiplied, within the window");
    const float logits[4] = {2.0f, 1.9f, -1.0f, -1.1f};
    kiln_llm_sampling p = params(0.0f);
    p.repeat_penalty = 2.0f;
    kiln_llm_sampler *s = make(&p, 4);
    EXPECT(sample(s, logits, NULL, 0) == 0);
    const int32_t h0[] = {0, 0, 0}; /* counted once: 2 / 2 = 1 < 1.9 */
    EXPECT(sample(s, logits, h0, 3) == 1);
    kiln_llm_sampler_destroy(s);

    const float negative[2] = {-1.0f, -1.5f};
    s = make(&p, 2);
    const int32_t h1[] = {0}; /* -1 * 2 = -2 < -1.5 */
    EXPECT(sample(s, negative, h1, 1) == 1);
    kiln_llm_sampler_destroy(s);

    p.repeat_last_n = 1; /* only the newest token is penalised */
    s = make(&p, 4);
    const int32_t h2[] = {0, 3};
    EXPECT(sample(s, logits, h2, 2) == 0);
    const int32_t h3[] = {3, 0, 99, -5}; /* ids outside the vocabulary are ignored */
    EXPECT(sample(s, logits, h3, 4) == 0);
    const int32_t h4[] = {3, 0};
    EXPECT(sample(s, logits, h4, 2) == 1);
    kiln_llm_sampler_destroy(s);
    p.repeat_last_n = 0; /* off */
    s = make(&p, 4);
    EXPECT(sample(s, logits, h4, 2) == 0);
    kiln_llm_sampler_destroy(s);
}

static void test_seed_and_draw(void)
{
    unit_section("equal seeds give equal tokens, the draw follows the probabilities");
    const float logits[3] = {logf(0.5f), logf(0.3f), logf(0.2f)};
    kiln_llm_sampling p = params(1.0f);
    kiln_llm_sampler *a = make(&p, 3), *b = make(&p, 3);
    p.seed = 8;
    kiln_llm_sampler *c = make(&p, 3);
    int differ = 0;
    size_t count[3] = {0};
    enum { N = 20000 };
    for (int i = 0; i < N; i++) {
        int32_t ta = sample(a, logits, NULL, 0), tb = sample(b, logits, NULL, 0), tc = sample(c, logits, NULL, 0);
        EXPECT(ta == tb);
        differ += ta != tc;
        REQUIRE(ta >= 0 && ta < 3);
        count[ta]++;
    }
    EXPECT(differ > N / 4); /* another seed, another sequence */
    EXPECT(fabs((double)count[0] / N - 0.5) < 0.015);
    EXPECT(fabs((double)count[1] / N - 0.3) < 0.015);
    EXPECT(fabs((double)count[2] / N - 0.2) < 0.015);
    kiln_llm_sampler_destroy(a);
    kiln_llm_sampler_destroy(b);
    kiln_llm_sampler_destroy(c);
}

static void test_bad_arguments(void)
{
    unit_section("bad parameters and arguments are refused");
    kiln_llm_sampler *s = NULL;
    kiln_llm_sampling p = params(1.0f);
    EXPECT_STATUS(kiln_llm_sampler_create(&p, 0, NULL, &s), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_llm_sampler_create(NULL, 4, NULL, &s), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_llm_sampler_create(&p, 4, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    p.repeat_penalty = 0.0f;
    EXPECT_STATUS(kiln_llm_sampler_create(&p, 4, NULL, &s), KILN_ERROR_INVALID_ARGUMENT);
    p = params(NAN);
    EXPECT_STATUS(kiln_llm_sampler_create(&p, 4, NULL, &s), KILN_ERROR_INVALID_ARGUMENT);
    p = params(1.0f);
    p.repeat_last_n = -2;
    EXPECT_STATUS(kiln_llm_sampler_create(&p, 4, NULL, &s), KILN_ERROR_INVALID_ARGUMENT);
    p = params(1.0f);
    p.struct_size = 4;
    EXPECT_STATUS(kiln_llm_sampler_create(&p, 4, NULL, &s), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(s == NULL);
    p = params(1.0f);
    s = make(&p, 4);
    const float logits[4] = {0};
    int32_t t;
    EXPECT_STATUS(kiln_llm_sampler_sample(s, NULL, NULL, 0, &t), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_llm_sampler_sample(s, logits, NULL, 3, &t), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_llm_sampler_sample(s, logits, NULL, 0, NULL), KILN_ERROR_INVALID_ARGUMENT);
    kiln_llm_sampler_destroy(s);
    kiln_llm_sampler_destroy(NULL);
    kiln_llm_sampling d;
    kiln_llm_sampling_default(&d);
    EXPECT(d.struct_size == sizeof d && d.temperature == 0.8f && d.top_k == 40 && d.repeat_penalty == 1.0f);
}

static void test_allocation_failures(void)
{
    unit_section("every allocation failure of the sampler is reported and leaks nothing");
    kiln_llm_sampling p = params(1.0f);
    for (size_t fail_at = 1;; fail_at++) {
        unit_alloc u;
        kiln_allocator a = unit_alloc_make(&u);
        u.fail_at = fail_at;
        kiln_llm_sampler *s = NULL;
        kiln_status st = kiln_llm_sampler_create(&p, 16, &a, &s);
        if (st == KILN_OK) {
            kiln_llm_sampler_destroy(s);
            EXPECT(u.live_blocks == 0);
            EXPECT(fail_at > 1);
            break;
        }
        EXPECT_STATUS(st, KILN_ERROR_OUT_OF_MEMORY);
        EXPECT(s == NULL && u.live_blocks == 0);
    }
}

/* ---- the lazy ranking against the rule as kiln/llm.h states it, by sorting everything ---- */

typedef struct ref_cand {
    float logit;
    int32_t id;
} ref_cand;

static int ref_order(const void *pa, const void *pb)
{
    const ref_cand *a = pa, *b = pb;
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* The kept ids, most likely first, by sorting all logits: top-k, drop -inf, top-p (softmax at
   temperature 1 over what top-k kept), min-p relative to the first. Returns how many. */
static size_t ref_candidates(const float *logits, size_t n_vocab, const kiln_llm_sampling *p, ref_cand *c)
{
    for (size_t i = 0; i < n_vocab; i++) c[i] = (ref_cand){logits[i], (int32_t)i};
    qsort(c, n_vocab, sizeof *c, ref_order);
    size_t n = n_vocab;
    if (p->top_k > 0 && (size_t)p->top_k < n) n = (size_t)p->top_k;
    while (n > 1 && c[n - 1].logit == -INFINITY) n--;
    if (p->top_p < 1.0f) {
        double sum = 0, cumulative = 0;
        for (size_t i = 0; i < n; i++) sum += exp((double)c[i].logit - c[0].logit);
        for (size_t i = 0; i < n; i++) {
            cumulative += (float)(exp((double)c[i].logit - c[0].logit) / sum);
            if (cumulative >= p->top_p) {
                n = i + 1;
                break;
            }
        }
    }
    if (p->min_p > 0.0f) {
        size_t keep = 1;
        while (keep < n && (double)c[keep].logit - c[0].logit >= log((double)p->min_p)) keep++;
        n = keep;
    }
    return n;
}

static void test_ranking_matches_full_sort(void)
{
    unit_section("the lazily ranked candidates equal those of a full sort (ties, -inf, every filter mix)");
    enum { V = 3000 };
    static float logits[V];
    static ref_cand ref[V];
    uint64_t state = 7;
    const int top_ks[] = {0, 2, 40, 2999, 5000};
    const float top_ps[] = {1.0f, 0.95f, 0.5f, 0.01f};
    const float min_ps[] = {0.0f, 0.05f, 0.5f};
    for (int trial = 0; trial < 6; trial++) {
        for (size_t i = 0; i < V; i++) {
            uint64_t r = kiln_splitmix64(&state);
            /* few distinct values so ties are common; some -inf; trial 5 all -inf but one */
            logits[i] = trial < 3 ? (float)(r % 16) * 0.25f : (float)((double)(r >> 11) / 9007199254740992.0 * 8);
            if (r % 13 == 0 || trial == 5) logits[i] = -INFINITY;
        }
        if (trial == 5) logits[1234] = 0.0f;
        for (size_t a = 0; a < sizeof top_ks / sizeof top_ks[0]; a++)
            for (size_t b = 0; b < sizeof top_ps / sizeof top_ps[0]; b++)
                for (size_t m = 0; m < sizeof min_ps / sizeof min_ps[0]; m++) {
                    kiln_llm_sampling p = params(0.7f);
                    p.top_k = top_ks[a];
                    p.top_p = top_ps[b];
                    p.min_p = min_ps[m];
                    kiln_llm_sampler *s = make(&p, V);
                    const int32_t *ids;
                    const float *probs;
                    size_t n = llm_sample_candidates(s, logits, NULL, 0, &ids, &probs);
                    size_t want = ref_candidates(logits, V, &p, ref);
                    EXPECT(n == want);
                    for (size_t i = 0; i < n && i < want; i++) EXPECT(ids[i] == ref[i].id);
                    kiln_llm_sampler_destroy(s);
                }
    }
}

int main(void)
{
    test_greedy();
    test_cut_sets();
    test_ranking_matches_full_sort();
    test_penalty();
    test_seed_and_draw();
    test_bad_arguments();
    test_allocation_failures();
    return unit_finish("test_llm_sampler");
}
