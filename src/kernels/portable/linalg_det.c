/* linalg_det.c — Det, the determinant of each square matrix in the last two dims (its own
 * family table, see families.h). Layer: kernels/portable.
 * Gaussian elimination with partial pivoting in double on a scratch copy of each matrix: the
 * determinant is the product of the pivots, negated once per row swap. */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/data_ops.h"
#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/families.h"
#include "kernels/portable/shape_common.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

static kiln_status det_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->dtype == KILN_DTYPE_F32 || x->dtype == KILN_DTYPE_F64 || x->dtype == KILN_DTYPE_F16 ||
                   x->dtype == KILN_DTYPE_BF16,
               KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(x->rank >= 2 && x->shape[x->rank - 1] == x->shape[x->rank - 2], KILN_ERROR_SHAPE_MISMATCH);
    int64_t m = x->shape[x->rank - 1];
    KILN_CHECK(m <= 46340, KILN_ERROR_LIMIT); /* m * m stays an int32-sized scratch count */
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), x->dtype, x->rank - 2, x->shape);
    *scratch_size = (size_t)(m * m) * sizeof(double);
    return KILN_OK;
}

static double determinant(double *a, int64_t m)
{
    double det = 1;
    for (int64_t c = 0; c < m; c++) {
        int64_t pivot = c;
        for (int64_t r = c + 1; r < m; r++)
            if (fabs(a[r * m + c]) > fabs(a[pivot * m + c])) pivot = r;
        if (a[pivot * m + c] == 0) return 0;
        if (pivot != c) {
            for (int64_t k = 0; k < m; k++) {
                double t = a[c * m + k];
                a[c * m + k] = a[pivot * m + k];
                a[pivot * m + k] = t;
            }
            det = -det;
        }
        double p = a[c * m + c];
        det *= p;
        for (int64_t r = c + 1; r < m; r++) {
            double f = a[r * m + c] / p;
            for (int64_t k = c + 1; k < m; k++) a[r * m + k] -= f * a[c * m + k];
        }
    }
    return det;
}

static kiln_status det_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                           kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    int64_t m = x->shape[x->rank - 1], n = kiln_numel(y), mm = m * m;
    double *a = ctx->scratch;
    size_t es = kiln_dtype_size(y->dtype);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t e = 0; e < mm; e++) a[e] = kiln_ew_get_f64(x, i * mm + e);
        kiln_data_store_f64(y->dtype, (char *)y->data + (size_t)i * es, determinant(a, m));
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_det[] = {
    {"Det", 11, det_infer, det_run, {{0, 1, 1, 1, 1}}, ""},
    {0},
};
