/* tokenize_gpt2.c — byte-level BPE ("gpt2"): GPT-2's pre-tokenizer, byte-to-unicode mapping
 * and merges by rank.
 *
 * Layer: llm (tokenizer core). Depends on core. Each piece of the pre-tokenizer
 * (gpt2_split.c) is mapped byte by byte to GPT-2's printable characters, split into those
 * characters, and adjacent pieces whose pair "left right" is in the merge list are merged,
 * lowest rank first (bpe_merge.h). A final piece that is not a token falls back to the tokens
 * of its single characters (every byte has one in a GPT-2 vocabulary), or UNK.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "llm/bpe_merge.h"
#include "llm/unicode.h"
#include "llm/vocab_internal.h"

typedef struct merge_lookup {
    const kiln_vocab *vocab;
    char *pair;                 /* (max_merge_size) scratch for "left right" */
} merge_lookup;

static bool merge_rank(const void *ctx, const char *left, size_t left_size, size_t right_size, double *priority)
{
    const merge_lookup *m = ctx;
    size_t n = left_size + 1 + right_size;
    if (n > m->vocab->max_merge_size) return false;
    memcpy(m->pair, left, left_size);
    m->pair[left_size] = ' ';
    memcpy(m->pair + left_size + 1, left + left_size, right_size);
    int32_t rank = kiln_str_map_get(&m->vocab->merge_rank, m->pair, n);
    if (rank < 0) return false;
    *priority = rank;
    return true;
}

/* Appends the ids of one pre-tokenized piece; mapped and syms have room for 2 * size. */
static kiln_status tokenize_piece(const merge_lookup *m, const uint8_t *piece, size_t size, char *mapped,
                                  kiln_bpe_symbol *syms, kiln_id_list *list)
{
    const kiln_vocab *v = m->vocab;
    size_t n = 0, n_syms = 0;
    for (size_t i = 0; i < size; i++) {
        size_t len = kiln_utf8_encode(kiln_gpt2_byte_cp(piece[i]), (uint8_t *)mapped + n);
        syms[n_syms] = (kiln_bpe_symbol){n, len, (int64_t)n_syms - 1, (int64_t)n_syms + 1};
        n += len, n_syms++;
    }
    syms[n_syms - 1].next = -1;
    KILN_TRY(kiln_bpe_merge(mapped, syms, n_syms, merge_rank, m, list->allocator));
    for (int64_t i = 0; i >= 0; i = syms[i].next) {
        const kiln_bpe_symbol *s = &syms[i];
        int32_t id = kiln_str_map_get(&v->by_text, mapped + s->start, s->size);
        if (id >= 0) {
            KILN_TRY(kiln_id_list_push(list, id));
            continue;
        }
        for (size_t pos = s->start; pos < s->start + s->size;) {
            uint32_t cp;
            pos += kiln_utf8_decode((const uint8_t *)mapped + pos, s->start + s->size - pos, &cp);
            int byte = kiln_gpt2_cp_byte(cp);
            int32_t byte_id = byte >= 0 ? v->byte_token[byte] : -1;
            if (byte_id < 0) byte_id = v->unk_id;
            if (byte_id >= 0) KILN_TRY(kiln_id_list_push(list, byte_id));
        }
    }
    return KILN_OK;
}

kiln_status kiln_tokenize_gpt2(const kiln_vocab *v, const char *text, size_t size, kiln_id_list *list)
{
    const kiln_allocator *a = list->allocator;
    size_t mapped_size, sym_bytes;
    if (!kiln_mul_size(size, 2, &mapped_size) || !kiln_mul_size(size, sizeof(kiln_bpe_symbol), &sym_bytes))
        return KILN_ERROR_OUT_OF_MEMORY;
    merge_lookup m = {v, kiln_alloc(a, v->max_merge_size, 1)};
    char *mapped = kiln_alloc(a, mapped_size, 1);
    kiln_bpe_symbol *syms = kiln_alloc(a, sym_bytes, _Alignof(kiln_bpe_symbol));
    kiln_status st = KILN_ERROR_OUT_OF_MEMORY;
    if (!m.pair || !mapped || !syms) goto fail;
    for (size_t pos = 0; pos < size;) {
        size_t end = kiln_gpt2_next_piece(text, size, pos);
        KILN_TRY_GOTO(st, tokenize_piece(&m, (const uint8_t *)text + pos, end - pos, mapped, syms, list));
        pos = end;
    }
    st = KILN_OK;
fail:
    kiln_free(a, m.pair);
    kiln_free(a, mapped);
    kiln_free(a, syms);
    return st;
}
