/* x-embed-generic.c — EMBED steps: kiln.Embed, the rows of W (Q8_0, Q4_0 or F32, kept as the
 * model stores them) picked by token id and decoded to f32; every table uses it.
 *
 * Layer: backends/cpu/kernels/generic. A step reads `count` rows of D elements (one per token:
 * a decode step reads one), so it is memory-bound and tiny next to the products around it: no
 * ISA variant, no threads. The rows are decoded by the portable kernels' kiln_dequantize_row, the
 * function the portable kiln.Embed calls, so both give the same bits. Its reason to exist is the
 * weight: lowered here, the embedding is a tensor of the context binary that a tied classifier's
 * QLINEAR step reads too, so the bytes are stored once (docs/llm.md).
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"
#include "kernels/portable/quant/quant_rows.h"

kiln_status kiln_cpu_x_embed__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec)
{
    (void)exec;
    const kiln_cpu_embed_params *p = params;
    const uint8_t *w = in[0]->data;
    const int32_t *ids32 = p->id_dtype == KILN_DTYPE_I32 ? in[1]->data : NULL;
    const int64_t *ids64 = p->id_dtype == KILN_DTYPE_I64 ? in[1]->data : NULL;
    float *y = out[0]->data;
    for (int64_t t = 0; t < p->count; t++) {
        int64_t id = ids32 ? ids32[t] : ids64[t];
        /* A token id is data, not a parameter the load checked: refuse it as the portable op does. */
        if (id < 0 || id >= p->V) return KILN_ERROR_INVALID_VALUE;
        kiln_status st = kiln_dequantize_row((kiln_dtype)p->dtype, w + (size_t)id * (size_t)p->row_size, y + t * p->D,
                                             p->D);
        if (KILN_NEVER(st != KILN_OK)) return st; /* validation admits only dtypes it decodes */
    }
    return KILN_OK;
}
