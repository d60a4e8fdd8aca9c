/* llm_eval.c — appending tokens to the cache: choosing prefill or decode per chunk, building a
 * call's inputs (tokens, positions, mask, the cache), and copying its outputs (logits, the new
 * rows' K and V) back.
 *
 * Layer: llm runner. Public runtime API only (kiln_method_set_input / execute / get_output).
 *
 * The mask of one call of R rows (R = T for prefill, 1 for decode) whose first n rows are the
 * tokens at positions p .. p + n - 1 (p = n_past, cache slots 0 .. p - 1 filled), f32
 * [R, C + R], 0 = attend, -inf = not:
 *
 *                 cache columns 0 .. C-1          new columns C .. C+R-1
 *   row t < n     0 for j < p, -inf for j >= p    0 for s <= t, -inf for s > t (causal)
 *   row t >= n    -inf                            0 for s == t only (padding sees itself, so
 *                                                 its softmax is defined; its results are dropped)
 *
 * Padding rows get position min(p + t, C - 1) (any position < C is allowed) and token 0.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "llm/runner/llm_internal.h"

void kiln_llm_reset(kiln_llm *llm)
{
    if (!llm) return;
    llm->n_past = 0;
    llm->has_logits = false;
}

size_t kiln_llm_n_past(const kiln_llm *llm) { return llm ? llm->n_past : 0; }
const int32_t *kiln_llm_cache_tokens(const kiln_llm *llm) { return llm ? llm->tokens : NULL; }
const float *kiln_llm_logits(const kiln_llm *llm) { return llm && llm->has_logits ? llm->logits : NULL; }

static void fill_inputs(kiln_llm *llm, const int32_t *tokens, size_t n, size_t rows)
{
    size_t C = llm->n_ctx, p = llm->n_past, width = C + rows;
    for (size_t t = 0; t < rows; t++) {
        llm->in_tokens[t] = t < n ? tokens[t] : 0;
        size_t pos = p + t < C ? p + t : C - 1;
        llm->in_positions[t] = (int32_t)pos;
        float *row = llm->in_mask + t * width;
        for (size_t j = 0; j < width; j++) row[j] = -INFINITY;
        if (t < n) {
            for (size_t j = 0; j < p; j++) row[j] = 0.0f;
            for (size_t s = 0; s <= t; s++) row[C + s] = 0.0f;
        } else {
            row[C + t] = 0.0f;
        }
    }
}

static kiln_status set_f32(kiln_method *m, size_t index, float *data, size_t d0, size_t d1)
{
    kiln_tensor t = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {(int64_t)d0, (int64_t)d1}, .data = data};
    return kiln_method_set_input(m, index, &t);
}

/* An output's view, checked to be what the layout promised (rows x cols f32). */
static kiln_status get_rows(kiln_method *m, size_t index, size_t rows, size_t cols, const float **out)
{
    kiln_tensor t;
    kiln_status st = kiln_method_get_output(m, index, &t);
    if (st != KILN_OK) return st;
    if (t.dtype != KILN_DTYPE_F32 || t.rank != 2 || t.shape[0] != (int64_t)rows || t.shape[1] != (int64_t)cols || !t.data)
        return KILN_ERROR_INTERNAL;
    *out = t.data;
    return KILN_OK;
}

/* Sets shard sh's inputs (input 0 is in0: the tokens, or the previous shard's hidden rows),
   runs it, copies the new rows' K and V of its layers into their cache slots p .. p + n - 1, and
   gives its output 0 (hidden rows or logits, checked to be rows x out0_width) through *out0. A
   later shard's failure leaves those slots written but unfilled (n_past unchanged), as before. */
static kiln_status run_shard(kiln_llm *llm, const llm_shard *sh, bool prefill, size_t rows, const kiln_tensor *in0,
                             size_t n, size_t out0_width, const float **out0)
{
    size_t C = llm->n_ctx, KVD = llm->n_kv, p = llm->n_past;
    kiln_method *m = prefill ? sh->prefill : sh->decode;
    kiln_tensor pos = {.dtype = KILN_DTYPE_I32, .rank = 1, .shape = {(int64_t)rows}, .data = llm->in_positions};
    kiln_status st = kiln_method_set_input(m, 0, in0);
    if (st == KILN_OK) st = kiln_method_set_input(m, 1, &pos);
    if (st == KILN_OK) st = set_f32(m, 2, llm->in_mask, rows, C + rows);
    float *cache = llm->cache + 2 * sh->first_layer * C * KVD; /* K and V of its first layer */
    for (size_t i = 0; i < 2 * sh->n_layer && st == KILN_OK; i++) st = set_f32(m, 3 + i, cache + i * C * KVD, C, KVD);
    if (st == KILN_OK) st = kiln_method_execute(m);
    if (st != KILN_OK) return st;
    for (size_t i = 0; i < 2 * sh->n_layer && st == KILN_OK; i++) {
        const float *kv;
        st = get_rows(m, 1 + i, rows, KVD, &kv);
        if (st == KILN_OK) memcpy(cache + (i * C + p) * KVD, kv, n * KVD * sizeof(float));
    }
    if (st == KILN_OK) st = get_rows(m, 0, rows, out0_width, out0);
    return st;
}

/* One call of every shard (rows R: prefill or decode) on tokens[0..n), n <= R; logits rows to
   logits_out when not NULL. */
static kiln_status run_chunk(kiln_llm *llm, bool prefill, size_t rows, const int32_t *tokens, size_t n,
                             float *logits_out, kiln_diag *d)
{
    size_t V = llm->n_vocab, p = llm->n_past;
    fill_inputs(llm, tokens, n, rows);
    kiln_tensor in0 = {.dtype = KILN_DTYPE_I32, .rank = 1, .shape = {(int64_t)rows}, .data = llm->in_tokens};
    const float *logits = NULL;
    for (size_t s = 0; s < llm->n_shards; s++) {
        bool last = s + 1 == llm->n_shards;
        const float *out0;
        kiln_status st = run_shard(llm, &llm->shards[s], prefill, rows, &in0, n, last ? V : llm->n_embd, &out0);
        if (st == KILN_ERROR_INTERNAL)
            return kiln_diag_fail(d, st, "the method's outputs are not the shapes it declared");
        if (st != KILN_OK) {
            if (llm->n_shards > 1)
                return kiln_diag_fail(d, st, "evaluating %zu tokens at position %zu failed in shard %zu: %s", n, p, s,
                                      kiln_status_str(st));
            return kiln_diag_fail(d, st, "evaluating %zu tokens at position %zu failed: %s", n, p, kiln_status_str(st));
        }
        /* The hand-off: a view of shard s's output, copied by the next shard's set_input. */
        in0 = (kiln_tensor){.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {(int64_t)rows, (int64_t)llm->n_embd},
                            .data = (void *)out0};
        logits = out0;
    }
    if (logits_out) memcpy(logits_out, logits, n * V * sizeof(float));
    memcpy(llm->logits, logits + (n - 1) * V, V * sizeof(float));
    memcpy(llm->tokens + p, tokens, n * sizeof(int32_t));
    llm->n_past = p + n;
    llm->has_logits = true;
    return KILN_OK;
}

kiln_status kiln_llm_eval(kiln_llm *llm, const int32_t *tokens, size_t n, float *logits_out)
{
    if (!llm) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_diag d = llm_diag_begin(llm);
    if (!tokens || n == 0) return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_eval: no tokens");
    if (n > llm->n_ctx - llm->n_past)
        return kiln_diag_fail(&d, KILN_ERROR_LIMIT, "context full: %zu tokens in the cache and %zu more exceed the context of %zu",
                              llm->n_past, n, llm->n_ctx);
    for (size_t i = 0; i < n; i++)
        if (tokens[i] < 0 || (size_t)tokens[i] >= llm->n_vocab)
            return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "token %zu is %d, not in the vocabulary of %zu", i,
                                  (int)tokens[i], llm->n_vocab);
    /* A prefill call costs about T rows' work whatever n is, a decode call one row's (plus the
       weights read once per call): below an eighth of T the padded prefill wastes more than
       decoding token by token costs. A heuristic, to be measured in the speed issue. */
    size_t T = llm->n_batch, done = 0;
    while (done < n) {
        size_t left = n - done, take = left < T ? left : T;
        bool prefill = T > 1 && take * 8 >= T && take > 1;
        if (!prefill) take = 1;
        kiln_status st = run_chunk(llm, prefill, prefill ? T : 1, tokens + done, take,
                                   logits_out ? logits_out + done * llm->n_vocab : NULL, &d);
        if (st != KILN_OK) return st;
        done += take;
    }
    return KILN_OK;
}
