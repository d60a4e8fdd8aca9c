/* llm_text.c — the runner's text calls: thin wrappers over the vocabulary (llm/tokenizer.h)
 * that use the runner's allocator and record failures in kiln_llm_last_error.
 *
 * Layer: llm runner.
 */
#include "core/alloc.h"
#include "llm/runner/llm_internal.h"

kiln_status kiln_llm_tokenize(kiln_llm *llm, const char *text, size_t size, int add_bos, int32_t **ids_out,
                              size_t *n_out)
{
    if (!llm || !ids_out || !n_out || (!text && size)) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_diag d = llm_diag_begin(llm);
    bool bos = add_bos && kiln_vocab_adds_bos(llm->vocab);
    kiln_status st = kiln_vocab_tokenize(llm->vocab, text ? text : "", size, bos, llm->allocator, ids_out, n_out);
    if (st != KILN_OK) return kiln_diag_fail(&d, st, "tokenizing %zu bytes failed: %s", size, kiln_status_str(st));
    return KILN_OK;
}

kiln_status kiln_llm_detokenize(kiln_llm *llm, const int32_t *ids, size_t n, char **text_out, size_t *size_out)
{
    if (!llm || !text_out || !size_out || (!ids && n)) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_diag d = llm_diag_begin(llm);
    static const int32_t none[1] = {0};
    kiln_status st = kiln_vocab_detokenize(llm->vocab, ids ? ids : none, n, llm->allocator, text_out, size_out);
    if (st != KILN_OK) return kiln_diag_fail(&d, st, "detokenizing %zu tokens failed: %s", n, kiln_status_str(st));
    return KILN_OK;
}

kiln_status kiln_llm_token_piece(kiln_llm *llm, int32_t id, char *out, size_t size, size_t *n_out)
{
    if (!llm) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_diag d = llm_diag_begin(llm);
    kiln_status st = kiln_vocab_token_piece(llm->vocab, id, out, size, n_out);
    if (st == KILN_ERROR_INDEX_OUT_OF_RANGE)
        return kiln_diag_fail(&d, st, "token %d is not in the vocabulary of %zu tokens", (int)id, llm->n_vocab);
    return st;
}

void kiln_llm_free(kiln_llm *llm, void *block)
{
    if (llm && block) kiln_free(llm->allocator, block);
}
