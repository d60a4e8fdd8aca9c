/* llm_layout.c — the prefill/decode pair's inputs and outputs, checked against the layout:
 *
 *   inputs   0 tokens i32 [T] | 1 positions i32 [T] | 2 mask f32 [T, C + T] |
 *            3 + 2l cache_k.<f+l> f32 [C, KVD] | 4 + 2l cache_v.<f+l> f32 [C, KVD]
 *   outputs  0 logits f32 [T, n_vocab] | 1 + 2l k.<f+l> f32 [T, KVD] | 2 + 2l v.<f+l> f32 [T, KVD]
 *
 * with T = 1 for decode and C, L, KVD and n_vocab equal in both; f = 0 for a whole program. A
 * shard of a model (kiln compile MODEL.gguf --shards N) has its own layers f .. f + L - 1, and
 * takes input 0 "hidden" f32 [T, D] (every shard but the first) and gives output 0 "hidden"
 * (every shard but the last) instead of tokens and logits. Anything else is not a program the
 * runner can drive, and one message says which value differs.
 *
 * Layer: llm runner. Public runtime API and core's shape formatting only.
 */
#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "core/text_format.h"
#include "llm/runner/llm_layout.h"

#define NOT_LLM "not an LLM program (kiln compile MODEL.gguf makes one)"

typedef struct value_want {
    const char *what;           /* "input" or "output" */
    size_t index;
    char name[32];
    kiln_dtype dtype;
    int64_t d0, d1;             /* rank 1 when d1 < 0 */
} value_want;

static kiln_status check_value(const kiln_method *m, const char *method, const value_want *w, kiln_diag *d)
{
    bool input = w->what[0] == 'i';
    const char *name = input ? kiln_method_input_name(m, w->index) : kiln_method_output_name(m, w->index);
    kiln_tensor t;
    kiln_status st = input ? kiln_method_input_info(m, w->index, &t) : kiln_method_output_info(m, w->index, &t);
    uint32_t rank = w->d1 < 0 ? 1 : 2;
    if (st == KILN_OK && name && strcmp(name, w->name) == 0 && t.dtype == w->dtype && t.rank == rank &&
        t.shape[0] == w->d0 && (rank == 1 || t.shape[1] == w->d1))
        return KILN_OK;
    char have[160] = "?", want[64];
    if (st == KILN_OK) kiln_format_shape(&t, have, sizeof have);
    if (rank == 1) snprintf(want, sizeof want, "%s [%lld]", kiln_dtype_name(w->dtype), (long long)w->d0);
    else snprintf(want, sizeof want, "%s [%lld,%lld]", kiln_dtype_name(w->dtype), (long long)w->d0, (long long)w->d1);
    return kiln_diag_fail_escaping(d, KILN_ERROR_MODEL, "%s: method '%s' %s %zu is '%s' %s, expected '%s' %s",
                                   NOT_LLM, method, w->what, w->index, name ? name : "?", have, w->name, want);
}

/* Reads T, C and KVD from the method's own first inputs (so that a wrong one is named as it is),
   then checks every value against them. */
static kiln_status check_method(const kiln_method *m, const char *method, size_t want_batch,
                                const llm_shard_place *place, llm_layout *io, kiln_diag *d)
{
    size_t n_in = kiln_method_input_count(m), n_out = kiln_method_output_count(m);
    if (n_in < 5 || n_in % 2 == 0 || n_out != n_in - 2)
        return kiln_diag_fail(d, KILN_ERROR_MODEL,
                              "%s: method '%s' has %zu inputs and %zu outputs, expected 3 + 2L inputs and 1 + 2L "
                              "outputs for L >= 1 layers", NOT_LLM, method, n_in, n_out);
    size_t n_layer = (n_in - 3) / 2;
    kiln_tensor mask, cache, logits;
    if (kiln_method_input_info(m, 2, &mask) != KILN_OK || kiln_method_input_info(m, 3, &cache) != KILN_OK ||
        kiln_method_output_info(m, 0, &logits) != KILN_OK)
        return kiln_diag_fail(d, KILN_ERROR_MODEL, "%s: method '%s' does not describe its values", NOT_LLM, method);
    int64_t batch = (int64_t)want_batch;
    int64_t ctx = mask.rank == 2 ? mask.shape[1] - batch : 0;
    int64_t kvd = cache.rank == 2 ? cache.shape[1] : 0;
    int64_t out0 = logits.rank == 2 ? logits.shape[1] : 0; /* n_vocab, or D for a shard giving hidden */
    /* A later shard's lengths are the first one's; the first's come from its own values. */
    int64_t embd = place->first ? (place->last ? 0 : out0) : (int64_t)place->n_embd;
    if (!place->first) ctx = (int64_t)place->n_ctx, kvd = (int64_t)place->n_kv;
    if (io->n_layer) { /* the second method: the first one's lengths */
        ctx = (int64_t)io->n_ctx, kvd = (int64_t)io->n_kv;
        if (place->last) out0 = (int64_t)io->n_vocab;
        if (n_layer != io->n_layer)
            return kiln_diag_fail(d, KILN_ERROR_MODEL, "%s: method '%s' has %zu layers, 'prefill' %zu", NOT_LLM,
                                  method, n_layer, io->n_layer);
    }
    if (!place->last) out0 = embd;
    int64_t vocab = out0;
    if (ctx < 1 || kvd < 1 || vocab < 1) ctx = kvd = vocab = 1; /* then check_value names what is wrong */
    if (embd < 1) embd = 1;
    value_want w[] = {
        {"input", 0, "tokens", KILN_DTYPE_I32, batch, -1},
        {"input", 1, "positions", KILN_DTYPE_I32, batch, -1},
        {"input", 2, "mask", KILN_DTYPE_F32, batch, ctx + batch},
        {"output", 0, "logits", KILN_DTYPE_F32, batch, vocab},
    };
    if (!place->first) w[0] = (value_want){"input", 0, "hidden", KILN_DTYPE_F32, batch, embd};
    if (!place->last) w[3] = (value_want){"output", 0, "hidden", KILN_DTYPE_F32, batch, embd};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) KILN_TRY(check_value(m, method, &w[i], d));
    for (size_t l = 0; l < n_layer; l++) {
        value_want kv[4] = {
            {"input", 3 + 2 * l, "", KILN_DTYPE_F32, ctx, kvd},
            {"input", 4 + 2 * l, "", KILN_DTYPE_F32, ctx, kvd},
            {"output", 1 + 2 * l, "", KILN_DTYPE_F32, batch, kvd},
            {"output", 2 + 2 * l, "", KILN_DTYPE_F32, batch, kvd},
        };
        size_t g = place->first_layer + l; /* the layer's number in the whole model */
        snprintf(kv[0].name, sizeof kv[0].name, "cache_k.%zu", g);
        snprintf(kv[1].name, sizeof kv[1].name, "cache_v.%zu", g);
        snprintf(kv[2].name, sizeof kv[2].name, "k.%zu", g);
        snprintf(kv[3].name, sizeof kv[3].name, "v.%zu", g);
        for (size_t i = 0; i < 4; i++) KILN_TRY(check_value(m, method, &kv[i], d));
    }
    *io = (llm_layout){.n_batch = io->n_layer ? io->n_batch : want_batch, .n_ctx = (size_t)ctx,
                       .n_layer = n_layer, .n_kv = (size_t)kvd, .n_vocab = place->last ? (size_t)vocab : 0,
                       .n_embd = place->first && place->last ? 0 : (size_t)embd};
    return KILN_OK;
}

kiln_status llm_layout_read(const kiln_method *prefill, const kiln_method *decode, const llm_shard_place *place,
                            llm_layout *out, kiln_diag *d)
{
    kiln_tensor in0;
    if (kiln_method_input_count(prefill) < 1 || kiln_method_input_info(prefill, 0, &in0) != KILN_OK ||
        in0.rank < 1 || in0.shape[0] < 1)
        return kiln_diag_fail(d, KILN_ERROR_MODEL, "%s: method 'prefill' has no input 0 '%s' [T%s]", NOT_LLM,
                              place->first ? "tokens" : "hidden", place->first ? "" : ", D");
    size_t batch = place->first ? (size_t)in0.shape[0] : place->n_batch;
    llm_layout io = {0};
    KILN_TRY(check_method(prefill, "prefill", batch, place, &io, d));
    KILN_TRY(check_method(decode, "decode", 1, place, &io, d));
    *out = io;
    return KILN_OK;
}
