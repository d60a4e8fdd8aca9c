/* vocab.c — building a kiln_vocab from its neutral description, and the lookups.
 *
 * Layer: llm (tokenizer core). Depends on core. The spec is copied into one arena: token texts,
 * scores and types, a text -> id map (the last of duplicate texts wins) and, for gpt2, a merge
 * text -> rank map. Byte tokens are found once here: "<0xXX>" for llama, the byte's mapped
 * character for gpt2.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/diag.h"
#include "llm/unicode.h"
#include "llm/vocab_internal.h"

/* GPT-2's table: the printable Latin-1 bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) stand for
   themselves; the other 68 (controls, space, 0x7F..0xA0, 0xAD) for U+0100.. in byte order. */
static bool gpt2_byte_is_printable(unsigned b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
}

uint32_t kiln_gpt2_byte_cp(uint8_t b)
{
    if (gpt2_byte_is_printable(b)) return b;
    uint32_t rank = 0;
    for (unsigned x = 0; x < b; x++) rank += !gpt2_byte_is_printable(x);
    return 0x100 + rank;
}

int kiln_gpt2_cp_byte(uint32_t cp)
{
    if (cp < 0x100) return gpt2_byte_is_printable(cp) ? (int)cp : -1;
    uint32_t rank = cp - 0x100;
    for (unsigned b = 0; b < 256; b++) {
        if (gpt2_byte_is_printable(b)) continue;
        if (rank-- == 0) return (int)b;
    }
    return -1;
}

static kiln_status copy_tokens(kiln_vocab *v, const kiln_vocab_spec *spec, char *message, size_t message_size)
{
    size_t n = spec->n_tokens;
    v->text = KILN_ARENA_ARRAY(&v->arena, const char *, n);
    v->text_size = KILN_ARENA_ARRAY(&v->arena, uint32_t, n);
    v->scores = KILN_ARENA_ARRAY(&v->arena, float, n);
    v->types = KILN_ARENA_ARRAY(&v->arena, int32_t, n);
    if (!v->text || !v->text_size || !v->scores || !v->types) return KILN_ERROR_OUT_OF_MEMORY;
    KILN_TRY(kiln_str_map_init(&v->by_text, &v->arena, n));
    for (size_t i = 0; i < n; i++) {
        const kiln_vocab_text *t = &spec->tokens[i];
        if (t->size > UINT32_MAX || (!t->data && t->size))
            return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, message_size, "token %zu has no text", i);
        char *copy = kiln_arena_alloc(&v->arena, t->size + 1, 1);
        if (!copy) return KILN_ERROR_OUT_OF_MEMORY;
        if (t->size) memcpy(copy, t->data, t->size);
        v->text[i] = copy;
        v->text_size[i] = (uint32_t)t->size;
        v->scores[i] = spec->scores ? spec->scores[i] : 0.0f;
        v->types[i] = spec->token_types ? spec->token_types[i] : KILN_TOKEN_NORMAL;
        kiln_str_map_put(&v->by_text, copy, (uint32_t)t->size, (int32_t)i);
        if (t->size > v->max_token_size) v->max_token_size = t->size;
    }
    return KILN_OK;
}

static kiln_status copy_merges(kiln_vocab *v, const kiln_vocab_spec *spec, char *message, size_t message_size)
{
    KILN_TRY(kiln_str_map_init(&v->merge_rank, &v->arena, spec->n_merges));
    for (size_t i = 0; i < spec->n_merges; i++) {
        const kiln_vocab_text *m = &spec->merges[i];
        if (!m->data || m->size > INT32_MAX || !memchr(m->data, ' ', m->size))
            return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, message_size,
                               "merge %zu is not two pieces separated by a space", i);
        char *copy = kiln_arena_memdup(&v->arena, m->data, m->size, 1);
        if (!copy) return KILN_ERROR_OUT_OF_MEMORY;
        /* A merge listed twice keeps its first (best) rank. */
        if (kiln_str_map_get(&v->merge_rank, copy, m->size) < 0)
            kiln_str_map_put(&v->merge_rank, copy, (uint32_t)m->size, (int32_t)i);
        if (m->size > v->max_merge_size) v->max_merge_size = m->size;
    }
    return KILN_OK;
}

static void find_byte_tokens(kiln_vocab *v)
{
    for (unsigned b = 0; b < 256; b++) {
        char text[8];
        size_t n;
        if (v->kind == KILN_VOCAB_LLAMA) {
            n = (size_t)snprintf(text, sizeof text, "<0x%02X>", b);
        } else {
            n = kiln_utf8_encode(kiln_gpt2_byte_cp((uint8_t)b), (uint8_t *)text);
        }
        v->byte_token[b] = kiln_str_map_get(&v->by_text, text, n);
    }
}

static bool id_ok(int32_t id, size_t n) { return id >= -1 && (id < 0 || (size_t)id < n); }

kiln_status kiln_vocab_create(const kiln_vocab_spec *spec, const kiln_allocator *allocator, kiln_vocab **out,
                              char *message, size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    if (out) *out = NULL;
    if (!spec || !out || (!spec->tokens && spec->n_tokens) || (!spec->merges && spec->n_merges))
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, message_size, "vocabulary: missing argument");
    if (spec->kind != KILN_VOCAB_LLAMA && spec->kind != KILN_VOCAB_GPT2)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, message_size, "vocabulary: unknown kind");
    if (spec->n_tokens > INT32_MAX)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, message_size, "vocabulary: more than 2^31 tokens");
    if (!id_ok(spec->bos_id, spec->n_tokens) || !id_ok(spec->eos_id, spec->n_tokens) ||
        !id_ok(spec->unk_id, spec->n_tokens))
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, message_size,
                           "vocabulary: BOS %d, EOS %d or UNK %d is not a token id (0..%zu)", (int)spec->bos_id,
                           (int)spec->eos_id, (int)spec->unk_id, spec->n_tokens ? spec->n_tokens - 1 : 0);
    if (!allocator) allocator = kiln_allocator_default();
    kiln_vocab *v = KILN_NEW(allocator, kiln_vocab);
    if (!v) return kiln_reject(KILN_ERROR_OUT_OF_MEMORY, message, message_size, "out of memory");
    v->allocator = allocator;
    kiln_arena_init(&v->arena, allocator, 256 * 1024);
    v->kind = spec->kind;
    v->n_tokens = spec->n_tokens;
    v->bos_id = spec->bos_id;
    v->eos_id = spec->eos_id;
    v->unk_id = spec->unk_id;
    v->add_bos = spec->add_bos;
    v->add_space_prefix = spec->add_space_prefix;
    kiln_status st;
    KILN_TRY_GOTO(st, copy_tokens(v, spec, message, message_size));
    KILN_TRY_GOTO(st, copy_merges(v, spec, message, message_size));
    find_byte_tokens(v);
    *out = v;
    return KILN_OK;
fail:
    if (st == KILN_ERROR_OUT_OF_MEMORY) kiln_reject(st, message, message_size, "out of memory");
    kiln_vocab_destroy(v);
    return st;
}

void kiln_vocab_destroy(kiln_vocab *v)
{
    if (!v) return;
    kiln_arena_deinit(&v->arena);
    kiln_free(v->allocator, v);
}

kiln_vocab_kind kiln_vocab_get_kind(const kiln_vocab *v) { return v->kind; }
size_t kiln_vocab_n_tokens(const kiln_vocab *v) { return v->n_tokens; }
int32_t kiln_vocab_bos(const kiln_vocab *v) { return v->bos_id; }
int32_t kiln_vocab_eos(const kiln_vocab *v) { return v->eos_id; }
bool kiln_vocab_adds_bos(const kiln_vocab *v) { return v->add_bos; }

int32_t kiln_vocab_find(const kiln_vocab *v, const char *text, size_t size)
{
    return kiln_str_map_get(&v->by_text, text, size);
}

kiln_status kiln_id_list_push(kiln_id_list *list, int32_t id)
{
    if (list->n == list->capacity) {
        size_t cap = list->capacity ? 2 * list->capacity : 64, bytes;
        if (!kiln_mul_size(cap, sizeof(int32_t), &bytes)) return KILN_ERROR_OUT_OF_MEMORY;
        int32_t *ids = kiln_alloc(list->allocator, bytes, _Alignof(int32_t));
        if (!ids) return KILN_ERROR_OUT_OF_MEMORY;
        if (list->n) memcpy(ids, list->ids, list->n * sizeof(int32_t));
        kiln_free(list->allocator, list->ids);
        list->ids = ids;
        list->capacity = cap;
    }
    list->ids[list->n++] = id;
    return KILN_OK;
}

kiln_status kiln_vocab_tokenize(const kiln_vocab *v, const char *text, size_t size, bool add_bos,
                                const kiln_allocator *allocator, int32_t **ids_out, size_t *n_out)
{
    if (ids_out) *ids_out = NULL;
    if (n_out) *n_out = 0;
    if (!v || !ids_out || !n_out || (!text && size)) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_id_list list = {allocator ? allocator : kiln_allocator_default(), NULL, 0, 0};
    kiln_status st = KILN_OK;
    if (add_bos && v->bos_id >= 0) st = kiln_id_list_push(&list, v->bos_id);
    if (st == KILN_OK && size)
        st = v->kind == KILN_VOCAB_LLAMA ? kiln_tokenize_llama(v, text, size, &list)
                                         : kiln_tokenize_gpt2(v, text, size, &list);
    if (st == KILN_OK && !list.ids) {
        list.ids = kiln_alloc(list.allocator, sizeof(int32_t), _Alignof(int32_t));   /* freeable, empty */
        if (!list.ids) st = KILN_ERROR_OUT_OF_MEMORY;
    }
    if (st != KILN_OK) {
        kiln_free(list.allocator, list.ids);
        return st;
    }
    *ids_out = list.ids;
    *n_out = list.n;
    return KILN_OK;
}
