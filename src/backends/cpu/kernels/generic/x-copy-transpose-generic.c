/* x-copy-transpose-generic.c — COPY and TRANSPOSE for elements of any size; every table uses them.
 *
 * Layer: backends/cpu/kernels/generic. Both only move bytes, so they have no ISA variants: the
 * library memcpy is already vectorised for the CPU it runs on. Transpose walks the output in
 * order and reads the input at permuted strides, one innermost output row at a time.
 */
#include <string.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

kiln_status kiln_cpu_x_copy__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     kiln_cpu_exec *exec)
{
    const kiln_cpu_copy_params *p = params;
    if (p->bytes > 0 && in[0]->data != out[0]->data) memmove(out[0]->data, in[0]->data, (size_t)p->bytes);
    return KILN_OK;
}

/* One output row: n elements of `size` bytes read at input stride s (elements). */
static void gather_row(const char *x, int64_t s, char *y, int64_t n, uint32_t size)
{
    switch (size) {
    case 1: for (int64_t i = 0; i < n; i++) y[i] = x[i * s]; break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(y + 2 * i, x + 2 * i * s, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(y + 4 * i, x + 4 * i * s, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(y + 8 * i, x + 8 * i * s, 8); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(y + (size_t)i * size, x + (size_t)(i * s) * size, size); break;
    }
}

kiln_status kiln_cpu_x_transpose__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                          kiln_cpu_exec *exec)
{
    const kiln_cpu_transpose_params *p = params;
    const char *x = in[0]->data;
    char *y = out[0]->data;
    uint32_t rank = p->rank;
    int64_t in_stride[KILN_CPU_MAX_RANK], shape[KILN_CPU_MAX_RANK], stride[KILN_CPU_MAX_RANK];
    int64_t total = 1;
    for (uint32_t d = rank; d-- > 0;) {
        in_stride[d] = total;
        total *= p->in_shape[d];
    }
    if (total == 0) return KILN_OK;
    if (rank == 0) {
        memcpy(y, x, p->elem_size);
        return KILN_OK;
    }
    for (uint32_t d = 0; d < rank; d++) {
        shape[d] = p->in_shape[p->perm[d]];
        stride[d] = in_stride[p->perm[d]];
    }
    int64_t n = shape[rank - 1], rows = total / n, idx[KILN_CPU_MAX_RANK] = {0}, off = 0;
    for (int64_t r = 0; r < rows; r++) {
        gather_row(x + (size_t)off * p->elem_size, stride[rank - 1], y + (size_t)(r * n) * p->elem_size, n,
                   p->elem_size);
        for (uint32_t d = rank - 1; d-- > 0;) {
            off += stride[d];
            if (++idx[d] < shape[d]) break;
            off -= stride[d] * shape[d];
            idx[d] = 0;
        }
    }
    return KILN_OK;
}
