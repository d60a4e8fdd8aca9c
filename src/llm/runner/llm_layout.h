/* llm_layout.h — checking that two loaded methods are the prefill/decode pair of the GGUF LLM
 * program layout (kiln/llm.h, docs/llm.md), and reading their lengths.
 *
 * Layer: llm runner. Public runtime API only (kiln_method_*_info and names).
 */
#ifndef KILN_LLM_RUNNER_LAYOUT_H
#define KILN_LLM_RUNNER_LAYOUT_H

#include "core/diag.h"
#include "kiln/kiln.h"

typedef struct llm_layout {
    size_t n_batch;     /* T: rows of a prefill call */
    size_t n_ctx;       /* C */
    size_t n_layer;     /* L */
    size_t n_kv;        /* KVD */
    size_t n_vocab;
} llm_layout;

/* KILN_OK with *out filled, or KILN_ERROR_MODEL with one line in d naming the method, the
 * input or output and what was expected. */
kiln_status llm_layout_read(const kiln_method *prefill, const kiln_method *decode, llm_layout *out, kiln_diag *d);

#endif
