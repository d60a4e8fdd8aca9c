/* vocab_gguf.c — see vocab_gguf.h. Layer: llm (GGUF loader). Depends on core, the tokenizer
 * core and format/gguf. Builds a kiln_vocab_spec pointing into the GGUF bytes (texts) and
 * into two temporary arrays (scores and types, which the file does not align), then lets
 * kiln_vocab_create copy it.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/diag.h"
#include "llm/gguf/vocab_gguf.h"

/* NOT_FOUND from a getter means a required key is missing: a bad model, not a bad call. */
static kiln_status required(kiln_status st) { return st == KILN_ERROR_NOT_FOUND ? KILN_ERROR_MODEL : st; }

static kiln_status read_texts(const kiln_gguf_value *arr, kiln_vocab_text *out)
{
    for (uint64_t i = 0; i < arr->n; i++) {
        kiln_gguf_value e;
        KILN_TRY(kiln_gguf_array_at(arr, i, &e));
        KILN_TRY(kiln_gguf_value_string(&e, &out[i].data, &out[i].size, NULL, 0));
    }
    return KILN_OK;
}

/* An optional per-token array of elem_type; *arr NULL when absent. */
static kiln_status per_token(const kiln_gguf *g, const char *key, kiln_gguf_type elem_type, uint64_t n_tokens,
                             const kiln_gguf_value **arr, char *message, size_t message_size)
{
    *arr = NULL;
    if (!kiln_gguf_find_key(g, key)) return KILN_OK;
    KILN_TRY(kiln_gguf_get_array(g, key, elem_type, arr, message, message_size));
    if ((*arr)->n != n_tokens)
        return kiln_reject(KILN_ERROR_MODEL, message, message_size, "GGUF: %s has %llu entries for %llu tokens", key,
                           (unsigned long long)(*arr)->n, (unsigned long long)n_tokens);
    return KILN_OK;
}

static kiln_status optional_id(const kiln_gguf *g, const char *key, uint64_t n_tokens, int32_t *id, char *message,
                               size_t message_size)
{
    if (!kiln_gguf_find_key(g, key)) return KILN_OK;
    int64_t v;
    KILN_TRY(kiln_gguf_get_int(g, key, &v, message, message_size));
    if (v < 0 || (uint64_t)v >= n_tokens)
        return kiln_reject(KILN_ERROR_MODEL, message, message_size, "GGUF: %s is %lld, not a token id (0..%llu)", key,
                           (long long)v, (unsigned long long)(n_tokens - 1));
    *id = (int32_t)v;
    return KILN_OK;
}

static kiln_status optional_bool(const kiln_gguf *g, const char *key, bool *flag, char *message,
                                 size_t message_size)
{
    if (!kiln_gguf_find_key(g, key)) return KILN_OK;
    return kiln_gguf_get_bool(g, key, flag, message, message_size);
}

/* A name from the file, cut and with non-ASCII bytes as '?', for a message. */
static void printable(char *out, size_t out_size, const char *s, size_t size)
{
    size_t n = size < out_size - 1 ? size : out_size - 1;
    for (size_t i = 0; i < n; i++) out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    out[n] = '\0';
}

static kiln_status read_model(const kiln_gguf *g, kiln_vocab_kind *kind, char *message, size_t message_size)
{
    const char *model;
    size_t size;
    KILN_TRY(required(kiln_gguf_get_string(g, "tokenizer.ggml.model", &model, &size, message, message_size)));
    if (size == 5 && memcmp(model, "llama", 5) == 0) *kind = KILN_VOCAB_LLAMA;
    else if (size == 4 && memcmp(model, "gpt2", 4) == 0) *kind = KILN_VOCAB_GPT2;
    else {
        char name[40];
        printable(name, sizeof name, model, size);
        return kiln_reject(KILN_ERROR_NOT_SUPPORTED, message, message_size,
                           "tokenizer model '%s' is not supported (kiln has llama and gpt2)", name);
    }
    return KILN_OK;
}

/* Byte-level BPE files name the pattern that splits text before merging; only GPT-2's own is
   implemented, and another one (llama-bpe, qwen2 ...) would tokenize wrongly without a word. */
static kiln_status check_pretokenizer(const kiln_gguf *g, char *message, size_t message_size)
{
    const char *pre;
    size_t size;
    if (!kiln_gguf_find_key(g, "tokenizer.ggml.pre")) return KILN_OK;
    KILN_TRY(kiln_gguf_get_string(g, "tokenizer.ggml.pre", &pre, &size, message, message_size));
    if ((size == 5 && memcmp(pre, "gpt-2", 5) == 0) || (size == 7 && memcmp(pre, "default", 7) == 0)) return KILN_OK;
    char name[40];
    printable(name, sizeof name, pre, size);
    return kiln_reject(KILN_ERROR_NOT_SUPPORTED, message, message_size,
                       "pre-tokenizer '%s' (tokenizer.ggml.pre) is not supported (kiln has gpt-2)", name);
}

kiln_status kiln_vocab_from_gguf(const kiln_gguf *g, const kiln_allocator *allocator, kiln_vocab **out,
                                 char *message, size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    if (out) *out = NULL;
    if (!g || !out) return KILN_ERROR_INVALID_ARGUMENT;
    if (!allocator) allocator = kiln_allocator_default();
    kiln_vocab_spec spec = {.bos_id = -1, .eos_id = -1, .unk_id = -1};
    KILN_TRY(read_model(g, &spec.kind, message, message_size));
    const kiln_gguf_value *tokens, *scores, *types, *merges = NULL;
    KILN_TRY(required(kiln_gguf_get_array(g, "tokenizer.ggml.tokens", KILN_GGUF_TYPE_STRING, &tokens, message,
                                          message_size)));
    if (tokens->n > INT32_MAX)
        return kiln_reject(KILN_ERROR_MODEL, message, message_size, "GGUF: more than 2^31 tokens");
    uint64_t n = tokens->n;
    KILN_TRY(per_token(g, "tokenizer.ggml.scores", KILN_GGUF_TYPE_F32, n, &scores, message, message_size));
    KILN_TRY(per_token(g, "tokenizer.ggml.token_type", KILN_GGUF_TYPE_I32, n, &types, message, message_size));
    if (spec.kind == KILN_VOCAB_GPT2) KILN_TRY(check_pretokenizer(g, message, message_size));
    if (spec.kind == KILN_VOCAB_GPT2)
        KILN_TRY(required(kiln_gguf_get_array(g, "tokenizer.ggml.merges", KILN_GGUF_TYPE_STRING, &merges, message,
                                              message_size)));
    KILN_TRY(optional_id(g, "tokenizer.ggml.bos_token_id", n, &spec.bos_id, message, message_size));
    KILN_TRY(optional_id(g, "tokenizer.ggml.eos_token_id", n, &spec.eos_id, message, message_size));
    KILN_TRY(optional_id(g, "tokenizer.ggml.unknown_token_id", n, &spec.unk_id, message, message_size));
    spec.add_bos = spec.kind == KILN_VOCAB_LLAMA;
    spec.add_space_prefix = spec.kind == KILN_VOCAB_LLAMA;
    KILN_TRY(optional_bool(g, "tokenizer.ggml.add_bos_token", &spec.add_bos, message, message_size));
    KILN_TRY(optional_bool(g, "tokenizer.ggml.add_space_prefix", &spec.add_space_prefix, message, message_size));

    kiln_status st = KILN_ERROR_OUT_OF_MEMORY;
    size_t n_merges = merges ? (size_t)merges->n : 0;
    kiln_vocab_text *texts = kiln_alloc(allocator, (size_t)n * sizeof *texts, _Alignof(kiln_vocab_text));
    kiln_vocab_text *merge_texts = kiln_alloc(allocator, n_merges * sizeof *merge_texts, _Alignof(kiln_vocab_text));
    float *score_values = scores ? kiln_alloc(allocator, (size_t)n * sizeof(float), _Alignof(float)) : NULL;
    int32_t *type_values = types ? kiln_alloc(allocator, (size_t)n * sizeof(int32_t), _Alignof(int32_t)) : NULL;
    if (!texts || !merge_texts || (scores && !score_values) || (types && !type_values)) goto fail;
    /* Arrays of strings and scalars were checked at open; these reads cannot fail. */
    KILN_TRY_GOTO(st, read_texts(tokens, texts));
    if (merges) KILN_TRY_GOTO(st, read_texts(merges, merge_texts));
    for (uint64_t i = 0; i < n; i++) {
        kiln_gguf_value e;
        if (scores) {
            KILN_TRY_GOTO(st, kiln_gguf_array_at(scores, i, &e));
            KILN_TRY_GOTO(st, kiln_gguf_value_f32(&e, &score_values[i], NULL, 0));
        }
        if (types) {
            KILN_TRY_GOTO(st, kiln_gguf_array_at(types, i, &e));
            KILN_TRY_GOTO(st, kiln_gguf_value_i32(&e, &type_values[i], NULL, 0));
        }
        if (spec.unk_id < 0 && type_values && type_values[i] == KILN_TOKEN_UNKNOWN) spec.unk_id = (int32_t)i;
    }
    spec.n_tokens = (size_t)n;
    spec.tokens = texts;
    spec.scores = score_values;
    spec.token_types = type_values;
    spec.n_merges = n_merges;
    spec.merges = merge_texts;
    st = kiln_vocab_create(&spec, allocator, out, message, message_size);
    /* The only refusals left (a merge without a space) are the file's fault. */
    if (st == KILN_ERROR_INVALID_ARGUMENT) st = KILN_ERROR_MODEL;
fail:
    if (st == KILN_ERROR_OUT_OF_MEMORY) kiln_reject(st, message, message_size, "out of memory");
    kiln_free(allocator, texts);
    kiln_free(allocator, merge_texts);
    kiln_free(allocator, score_values);
    kiln_free(allocator, type_values);
    return st;
}
