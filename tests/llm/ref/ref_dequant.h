/* ref_dequant.h — the reference decoder's own dequantization of GGUF tensor rows.
 *
 * Layer: tests (tests/llm/ref, the second oracle of issue 14). Depends on kiln.h only. Written
 * from the published block layouts (docs/format.md "Element types", ggml's block structs), on
 * purpose without looking at src/kernels: an oracle that shared the kernels' dequantizer would
 * share its bugs. Plain scalar code; speed does not matter here.
 */
#ifndef KILN_TESTS_LLM_REF_DEQUANT_H
#define KILN_TESTS_LLM_REF_DEQUANT_H

#include <stdint.h>

#include "kiln/kiln.h"

/* ggml's type numbers (the GGUF tensor-info field), as the reference knows them. */
enum {
    REF_GGML_F32 = 0, REF_GGML_F16 = 1, REF_GGML_Q4_0 = 2, REF_GGML_Q8_0 = 8,
    REF_GGML_Q4_K = 12, REF_GGML_Q6_K = 14, REF_GGML_BF16 = 30
};

/* Elements per block and bytes per block of a type; KILN_ERROR_NOT_SUPPORTED for any other. */
kiln_status ref_block_layout(uint32_t ggml_type, int64_t *block_elems, int64_t *block_bytes);

/* Writes the n values of the row at src (n a multiple of the type's block, src holding
 * n / block_elems blocks) to dst. KILN_ERROR_NOT_SUPPORTED for a type outside the list above,
 * KILN_ERROR_SHAPE_MISMATCH when n is not a whole number of blocks. */
kiln_status ref_dequantize_row(uint32_t ggml_type, const uint8_t *src, float *dst, int64_t n);

/* IEEE half and bfloat16 bit patterns to float (exact: every such value is a float). */
float ref_f16_to_f32(uint16_t h);
float ref_bf16_to_f32(uint16_t h);

#endif
