/* tokenize_llama.c — SentencePiece-style BPE over a vocabulary with scores ("llama").
 *
 * Layer: llm (tokenizer core). Depends on core. The text is escaped as SentencePiece does for
 * llama vocabularies (every space becomes U+2581 "▁", and one "▁" goes in front when
 * add_space_prefix is set), split into characters, and adjacent pieces are merged while their
 * concatenation is a token, the highest-scoring concatenation first (bpe_merge.h). A final
 * piece that is not a token (a character the vocabulary lacks) becomes the <0xXX> byte tokens
 * of its bytes, or UNK where a byte token is missing.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "llm/bpe_merge.h"
#include "llm/unicode.h"
#include "llm/vocab_internal.h"

static const char spm_space[3] = {(char)0xE2, (char)0x96, (char)0x81};   /* U+2581 */

static bool spm_rank(const void *ctx, const char *left, size_t left_size, size_t right_size, double *priority)
{
    const kiln_vocab *v = ctx;
    if (left_size + right_size > v->max_token_size) return false;
    int32_t id = kiln_str_map_get(&v->by_text, left, left_size + right_size);
    if (id < 0) return false;
    *priority = -(double)v->scores[id];   /* higher score merges first */
    return true;
}

/* The escaped text: "▁" in front (optional) and for every space. */
static size_t escape(const kiln_vocab *v, const char *text, size_t size, char *out)
{
    size_t n = 0;
    if (v->add_space_prefix) memcpy(out, spm_space, 3), n = 3;
    for (size_t i = 0; i < size; i++) {
        if (text[i] == ' ') memcpy(out + n, spm_space, 3), n += 3;
        else out[n++] = text[i];
    }
    return n;
}

kiln_status kiln_tokenize_llama(const kiln_vocab *v, const char *text, size_t size, kiln_id_list *list)
{
    const kiln_allocator *a = list->allocator;
    size_t cap, sym_bytes;
    if (!kiln_mul_size(size, 3, &cap) || !kiln_add_size(cap, 3, &cap) ||
        !kiln_mul_size(cap, sizeof(kiln_bpe_symbol), &sym_bytes))
        return KILN_ERROR_OUT_OF_MEMORY;
    char *escaped = kiln_alloc(a, cap, 1);
    kiln_bpe_symbol *syms = kiln_alloc(a, sym_bytes, _Alignof(kiln_bpe_symbol));
    kiln_status st = KILN_ERROR_OUT_OF_MEMORY;
    if (!escaped || !syms) goto fail;
    size_t n = escape(v, text, size, escaped), n_syms = 0;
    for (size_t pos = 0; pos < n; n_syms++) {
        size_t len = kiln_utf8_lead_length((uint8_t)escaped[pos]);
        if (len > n - pos) len = n - pos;
        syms[n_syms] = (kiln_bpe_symbol){pos, len, (int64_t)n_syms - 1, (int64_t)n_syms + 1};
        pos += len;
    }
    if (n_syms) syms[n_syms - 1].next = -1;
    KILN_TRY_GOTO(st, kiln_bpe_merge(escaped, syms, n_syms, spm_rank, v, a));
    for (int64_t i = n_syms ? 0 : -1; i >= 0; i = syms[i].next) {
        const kiln_bpe_symbol *s = &syms[i];
        int32_t id = kiln_str_map_get(&v->by_text, escaped + s->start, s->size);
        if (id >= 0) {
            KILN_TRY_GOTO(st, kiln_id_list_push(list, id));
            continue;
        }
        for (size_t b = 0; b < s->size; b++) {
            int32_t byte_id = v->byte_token[(uint8_t)escaped[s->start + b]];
            if (byte_id < 0) byte_id = v->unk_id;
            if (byte_id >= 0) KILN_TRY_GOTO(st, kiln_id_list_push(list, byte_id));
        }
    }
    st = KILN_OK;
fail:
    kiln_free(a, escaped);
    kiln_free(a, syms);
    return st;
}
