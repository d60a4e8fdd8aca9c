/* gemm_f32.h — the one cache-blocked f32 matrix multiply of the portable kernels.
 *
 * Layer: kernels/portable (internal). Used by Gemm, MatMul, Conv and ConvTranspose.
 *
 * Computes C = alpha * A * B + beta * C where A is (m, k), B is (k, n) and C is (m, n). Operands
 * are described by element strides, so a transposed operand is the same memory with its two
 * strides swapped and a sub-matrix is a pointer plus the parent's strides. C must be row-major
 * with row stride ldc (column stride 1). When beta == 0, C is only written, never read (its
 * initial contents may be garbage or NaN). A and B must not overlap C.
 *
 * The routine never allocates: the caller passes scratch of kiln_gemm_f32_scratch_size(m, n, k)
 * bytes (the packing buffers), aligned to at least 16 bytes. The size depends only on the
 * problem shape, so a kernel can report it from infer().
 */
#ifndef KILN_KERNELS_PORTABLE_GEMM_F32_H
#define KILN_KERNELS_PORTABLE_GEMM_F32_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/portable/kernel.h"

/* A read-only strided matrix view: element (i, j) is data[i * row_stride + j * col_stride]. */
typedef struct kiln_gemm_f32_operand {
    const float *data;
    int64_t row_stride;
    int64_t col_stride;
} kiln_gemm_f32_operand;

/* Bytes of scratch kiln_gemm_f32 needs for this shape (bounded by a fixed cap of well under
   1 MiB however large the shape). 0 when m, n or k is 0. */
size_t kiln_gemm_f32_scratch_size(int64_t m, int64_t n, int64_t k);

/* C (m, n; row stride ldc) = alpha * A (m, k) * B (k, n) + beta * C. m, n, k >= 0. */
void kiln_gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, kiln_gemm_f32_operand a,
                   kiln_gemm_f32_operand b, float beta, float *c, int64_t ldc, void *scratch);

/* The same product spread over ctx's threads (ctx NULL or single-threaded: kiln_gemm_f32), in the
   same scratch of kiln_gemm_f32_scratch_size(m, n, k) bytes, with the same result bits for any
   thread count: C is cut into tiles and each task works in its own slice of the scratch. */
void kiln_gemm_f32_parallel(int64_t m, int64_t n, int64_t k, float alpha, kiln_gemm_f32_operand a,
                            kiln_gemm_f32_operand b, float beta, float *c, int64_t ldc, void *scratch,
                            const kiln_kernel_ctx *ctx);

#endif /* KILN_KERNELS_PORTABLE_GEMM_F32_H */
