/* quant_rows.h — rows of the weight dtypes kiln.Linear and kiln.Embed read, decoded to f32.
 *
 * Layer: kernels/portable (quant). Depends on kiln.h only. The block layouts are ggml's (as GGUF
 * stores them, little-endian; docs/format.md "Block-quantized types"); F32, F16 and BF16 are
 * handled here too, so a kernel reading a weight row has one call for every dtype it accepts.
 */
#ifndef KILN_KERNELS_PORTABLE_QUANT_QUANT_ROWS_H
#define KILN_KERNELS_PORTABLE_QUANT_QUANT_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "kiln/kiln.h"

/* Whether kiln_dequantize_row decodes dtype: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K. */
bool kiln_dequantize_supported(kiln_dtype dtype);

/* Decodes the n elements stored at src (kiln_dtype_row_size(dtype, n) bytes, no alignment
   needed) into dst (n floats). KILN_ERROR_NOT_SUPPORTED for a dtype kiln_dequantize_supported
   refuses, KILN_ERROR_SHAPE_MISMATCH when n is negative or not a whole number of dtype's blocks;
   nothing is written then. */
kiln_status kiln_dequantize_row(kiln_dtype dtype, const void *src, float *dst, int64_t n);

#endif /* KILN_KERNELS_PORTABLE_QUANT_QUANT_ROWS_H */
