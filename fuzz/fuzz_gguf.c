/* fuzz_gguf.c — libFuzzer target for the GGUF reader (src/format/gguf/gguf_reader.h).
 *
 * Layer: fuzz. Arbitrary bytes (copied to an exact-size buffer, so ASan sees any overread) go to
 * kiln_gguf_open. An accepted file is then walked the way an importer would: every key's value
 * through the typed getters, every array element down every nesting level, every string byte,
 * and every supported tensor's data bytes, which must lie inside the input. A refusal must be
 * KILN_ERROR_MODEL (or out of memory under the budget) with one printable message line. An
 * accepted file is also given to the tokenizer loader (src/llm/gguf); a vocabulary it builds
 * tokenizes the input's first bytes as text and detokenizes the ids, which must be valid. The
 * allocator is counted, so a leak on any path is a finding.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/gguf/gguf_reader.h"
#include "fuzz_common.h"
#include "llm/gguf/vocab_gguf.h"

#define GGUF_BUDGET ((size_t)64 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t sink;

static void touch(const uint8_t *p, uint64_t n)
{
    const volatile uint8_t *v = p;
    for (uint64_t i = 0; i < n; i++) sink ^= v[i];
}

static void walk_value(const kiln_gguf_value *v, unsigned depth)
{
    if (depth > KILN_GGUF_MAX_ARRAY_DEPTH) {
        fprintf(stderr, "fuzz: gguf value nested deeper than the reader allows\n");
        abort();
    }
    int64_t i;
    const char *s;
    size_t n;
    if (v->type == KILN_GGUF_TYPE_STRING) {
        if (kiln_gguf_value_string(v, &s, &n, NULL, 0) != KILN_OK) abort();
        touch((const uint8_t *)s, n);
    } else if (v->type == KILN_GGUF_TYPE_ARRAY) {
        kiln_gguf_value e;
        for (uint64_t k = 0; k < v->n; k++) {
            if (kiln_gguf_array_at(v, k, &e) != KILN_OK) abort();
            walk_value(&e, depth + 1);
        }
        if (kiln_gguf_array_at(v, v->n, &e) != KILN_ERROR_INDEX_OUT_OF_RANGE) abort();
    } else {
        touch(v->data, kiln_gguf_type_size(v->type));
        (void)kiln_gguf_value_int(v, &i, NULL, 0);
    }
}

/* The tokenizers on a fuzzed vocabulary and a fuzzed text: statuses only, no crash or leak. */
static void check_vocab(const kiln_gguf *g, const kiln_allocator *a, const uint8_t *text, size_t size)
{
    kiln_vocab *v = NULL;
    char message[KILN_GGUF_MESSAGE_SIZE];
    kiln_status st = kiln_vocab_from_gguf(g, a, &v, message, sizeof message);
    fuzz_check_status(st, "kiln_vocab_from_gguf");
    if (st != KILN_OK) {
        if (v) abort();
        fuzz_check_message(message, sizeof message, "vocab load");
        return;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    if (size > 512) size = 512;     /* merges are O(n log n); keep every input fast */
    st = kiln_vocab_tokenize(v, (const char *)text, size, true, a, &ids, &n);
    if (st == KILN_OK) {
        for (size_t i = 0; i < n; i++)
            if (ids[i] < 0 || (size_t)ids[i] >= kiln_vocab_n_tokens(v)) abort();
        char *back = NULL;
        size_t back_size;
        if (kiln_vocab_detokenize(v, ids, n, a, &back, &back_size) == KILN_OK) a->free(a->ctx, back);
        a->free(a->ctx, ids);
    } else if (st != KILN_ERROR_OUT_OF_MEMORY || ids) {
        abort();
    }
    kiln_vocab_destroy(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    fuzz_budget budget;
    kiln_allocator a = fuzz_budget_allocator(&budget, GGUF_BUDGET);
    kiln_gguf *g = NULL;
    char message[KILN_GGUF_MESSAGE_SIZE];
    kiln_status st = kiln_gguf_open(copy, size, &a, &g, message, sizeof message);
    fuzz_check_status(st, "kiln_gguf_open");
    if (st == KILN_OK) {
        for (size_t k = 0; k < kiln_gguf_n_kv(g); k++) {
            const kiln_gguf_kv *kv = kiln_gguf_kv_at(g, k);
            char key[KILN_GGUF_MAX_KEY_SIZE + 1];
            memcpy(key, kv->key, kv->key_size);
            key[kv->key_size] = '\0';
            if (kiln_gguf_find_key(g, key) != &kv->value) abort();   /* unique keys, index agrees */
            walk_value(&kv->value, 0);
        }
        for (size_t k = 0; k < kiln_gguf_n_tensors(g); k++) {
            const kiln_gguf_tensor *t = kiln_gguf_tensor_at(g, k);
            char name[KILN_GGUF_MAX_NAME_SIZE + 1];
            memcpy(name, t->name, t->name_size);
            name[t->name_size] = '\0';
            if (kiln_gguf_find_tensor(g, name) != t) abort();
            uint64_t tensor_size;
            char why[KILN_GGUF_MESSAGE_SIZE] = "";
            if (kiln_gguf_tensor_size(t, &tensor_size, why, sizeof why) == KILN_OK) {
                if (tensor_size != t->data_size || t->data < copy || t->data_size > size ||
                    (uint64_t)(t->data - copy) > size - t->data_size)
                    abort();
                touch(t->data, t->data_size);
            } else {
                fuzz_check_message(why, sizeof why, "gguf open");
            }
        }
        check_vocab(g, &a, copy, size);
        kiln_gguf_destroy(g);
    } else {
        if (g != NULL || (st != KILN_ERROR_MODEL && st != KILN_ERROR_OUT_OF_MEMORY)) {
            fprintf(stderr, "fuzz: kiln_gguf_open failed with %s or left *out set\n", kiln_status_name(st));
            abort();
        }
        fuzz_check_message(message, sizeof message, "gguf open");
    }
    fuzz_budget_check_clean(&budget, "kiln_gguf_open");
    free(copy);
    return 0;
}
