/* reduce_cumsum.c — CumSum: running sums along one axis (opset 11, 14).
 *
 * Layer: kernels/portable (reduce family; registered in reduce.c).
 * The axis is a 0-D (or one-element 1-D) int32/int64 input, so its value is only checked once it
 * is known; the output shape never depends on it. `exclusive` leaves out the element itself
 * (the first sum is 0); `reverse` sums from the end of the axis. Each lane is loaded into a dense
 * row (reduce_row.h), scanned in place and stored back: float inputs accumulate in double,
 * integers in int64 with wrapping arithmetic, which is exact modulo 2^64 for every integer dtype.
 */
#include "kernels/portable/reduce_kernels.h"
#include "kernels/portable/reduce_row.h"

static kiln_status check_axis_tensor(const kiln_tensor *axis)
{
    if (axis->dtype != KILN_DTYPE_I32 && axis->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
    if (axis->rank > 1 || kiln_numel(axis) != 1) return KILN_ERROR_SHAPE_MISMATCH;
    return KILN_OK;
}

kiln_status kiln_reduce_cumsum_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     size_t *scratch_size)
{
    const kiln_tensor *x = in[0], *axis = in[1];
    if (!x || !axis || !out[0] || node->n_inputs != 2) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->dtype == KILN_DTYPE_BOOL) return KILN_ERROR_DTYPE_MISMATCH;
    if (!kiln_reduce_row_dtype_ok(x->dtype)) return KILN_ERROR_NOT_SUPPORTED;
    kiln_status st = check_axis_tensor(axis);
    if (st != KILN_OK) return st;
    int64_t exclusive = kiln_node_attr_int(node, "exclusive", 0);
    int64_t reverse = kiln_node_attr_int(node, "reverse", 0);
    if ((exclusive != 0 && exclusive != 1) || (reverse != 0 && reverse != 1)) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->rank == 0) return KILN_ERROR_SHAPE_MISMATCH; /* no axis to scan */
    int64_t a = 0;
    if (axis->data && !kiln_axis_normalize(kiln_tensor_get_i64(axis, 0), x->rank, &a))
        return KILN_ERROR_INVALID_ARGUMENT;

    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    /* The axis may be unknown yet: size the row for the longest dim. */
    int64_t longest = 0;
    for (uint32_t d = 0; d < x->rank; d++) longest = x->shape[d] > longest ? x->shape[d] : longest;
    *scratch_size = (size_t)longest * sizeof(int64_t);
    return KILN_OK;
}

/* Lane element k in scan order: forward, or from the end when reversed. */
static int64_t scan_index(int64_t k, int64_t n, bool reverse) { return reverse ? n - 1 - k : k; }

static void scan_f64(double *v, int64_t n, bool exclusive, bool reverse)
{
    double sum = 0.0;
    for (int64_t k = 0; k < n; k++) {
        int64_t j = scan_index(k, n, reverse);
        double x = v[j];
        v[j] = exclusive ? sum : sum + x;
        sum += x;
    }
}

static void scan_i64(int64_t *v, int64_t n, bool exclusive, bool reverse)
{
    uint64_t sum = 0; /* unsigned: overflow wraps instead of being undefined */
    for (int64_t k = 0; k < n; k++) {
        int64_t j = scan_index(k, n, reverse);
        uint64_t x = (uint64_t)v[j];
        v[j] = (int64_t)(exclusive ? sum : sum + x);
        sum += x;
    }
}

kiln_status kiln_reduce_cumsum_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = out[0];
    int64_t axis;
    if (!kiln_axis_normalize(kiln_tensor_get_i64(in[1], 0), x->rank, &axis)) return KILN_ERROR_INVALID_VALUE;
    bool exclusive = kiln_node_attr_int(node, "exclusive", 0) != 0;
    bool reverse = kiln_node_attr_int(node, "reverse", 0) != 0;

    int64_t outer = 1, inner = 1, n = x->shape[axis];
    for (int64_t d = 0; d < axis; d++) outer *= x->shape[d];
    for (uint32_t d = (uint32_t)axis + 1; d < x->rank; d++) inner *= x->shape[d];
    bool is_float = kiln_reduce_row_is_float(x->dtype);
    void *row = ctx->scratch; /* (n) doubles or int64s */
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            if (is_float) {
                kiln_reduce_row_load_f64(x, base, inner, n, row);
                scan_f64(row, n, exclusive, reverse);
                kiln_reduce_row_store_f64(y, base, inner, n, row);
            } else {
                kiln_reduce_row_load_i64(x, base, inner, n, row);
                scan_i64(row, n, exclusive, reverse);
                kiln_reduce_row_store_i64(y, base, inner, n, row);
            }
        }
    }
    return KILN_OK;
}
