/* llm_vocab_program.c — a program's vocabulary from its "llm.gguf" metadata.
 *
 * Layer: llm runner. The GGUF bytes are read in place (they live as long as the program) and
 * the view is dropped once the vocabulary has copied what it needs.
 */
#include "llm/gguf/vocab_gguf.h"
#include "llm/runner/llm_vocab_program.h"

kiln_status llm_vocab_from_program(const kiln_program *program, const kiln_allocator *allocator, kiln_vocab **out,
                                   kiln_diag *d)
{
    *out = NULL;
    const void *bytes = NULL;
    size_t size = 0;
    kiln_status st = kiln_program_metadata_get(program, KILN_LLM_METADATA_KEY, &bytes, &size);
    if (st == KILN_ERROR_NOT_FOUND)
        return kiln_diag_fail(d, KILN_ERROR_MODEL,
                              "not an LLM program (kiln compile MODEL.gguf makes one): it has no metadata '"
                              KILN_LLM_METADATA_KEY "' (the vocabulary)");
    if (st != KILN_OK) return kiln_diag_fail(d, st, "reading the program's metadata failed: %s", kiln_status_str(st));
    kiln_gguf *gguf = NULL;
    char why[KILN_GGUF_MESSAGE_SIZE];
    st = kiln_gguf_open(bytes, size, allocator, &gguf, why, sizeof why);
    if (st != KILN_OK)
        return kiln_diag_fail(d, st == KILN_ERROR_OUT_OF_MEMORY ? st : KILN_ERROR_MODEL,
                              "the program's metadata '" KILN_LLM_METADATA_KEY "' is not a valid GGUF file: %s", why);
    char vocab_why[512];
    st = kiln_vocab_from_gguf(gguf, allocator, out, vocab_why, sizeof vocab_why);
    kiln_gguf_destroy(gguf);
    if (st != KILN_OK) return kiln_diag_fail(d, st, "the program's vocabulary: %s", vocab_why);
    return KILN_OK;
}
