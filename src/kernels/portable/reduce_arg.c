/* reduce_arg.c — ArgMax and ArgMin: the index (int64) of the extreme element along one axis.
 *
 * Layer: kernels/portable (reduce family; registered in reduce.c).
 * Attributes: axis (default 0; negative from opset 11), keepdims (default 1), select_last_index
 * (opset 12, default 0: ties go to the first index). Each lane along the axis is loaded into a
 * dense row (reduce_row.h), double for float inputs and int64 for integers so that large
 * integers compare exactly. A NaN counts as the extreme value in both ops (numpy's rule), so the
 * first NaN wins (the last with select_last_index).
 */
#include <math.h>
#include <string.h>

#include "kernels/portable/reduce_kernels.h"
#include "kernels/portable/reduce_row.h"

typedef struct arg_params {
    int64_t axis;           /* normalised */
    bool keepdims;
    bool last;              /* select_last_index */
    bool is_max;            /* ArgMax rather than ArgMin */
} arg_params;

static kiln_status parse_params(const kiln_node *node, const kiln_tensor *x, arg_params *p)
{
    int64_t keepdims = kiln_node_attr_int(node, "keepdims", 1);
    int64_t last = kiln_node_attr_int(node, "select_last_index", 0);
    if (keepdims != 0 && keepdims != 1) return KILN_ERROR_INVALID_ARGUMENT;
    if (last != 0 && last != 1) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_axis_normalize(kiln_node_attr_int(node, "axis", 0), x->rank, &p->axis))
        return KILN_ERROR_INVALID_ARGUMENT;
    p->keepdims = keepdims != 0;
    p->last = last != 0;
    p->is_max = strcmp(node->op, "ArgMax") == 0;
    return KILN_OK;
}

kiln_status kiln_reduce_arg_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    const kiln_tensor *x = in[0];
    if (!x || !out[0] || node->n_inputs != 1) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->dtype == KILN_DTYPE_BOOL) return KILN_ERROR_DTYPE_MISMATCH;
    if (!kiln_reduce_row_dtype_ok(x->dtype) || x->dtype == KILN_DTYPE_U64) return KILN_ERROR_NOT_SUPPORTED;
    arg_params p;
    kiln_status st = parse_params(node, x, &p);
    if (st != KILN_OK) return st;
    /* An empty axis has no extreme element to point at. */
    if (x->shape[p.axis] == 0) return KILN_ERROR_SHAPE_MISMATCH;

    int64_t shape[KILN_MAX_RANK];
    uint32_t rank = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (d != p.axis) shape[rank++] = x->shape[d];
        else if (p.keepdims) shape[rank++] = 1;
    }
    kiln_tensor_set_shape(out[0], KILN_DTYPE_I64, rank, shape);
    *scratch_size = (size_t)x->shape[p.axis] * sizeof(int64_t);
    return KILN_OK;
}

/* Does candidate c replace the current best b? Ties replace only when the last index is wanted. */
static bool better_f64(double c, double b, const arg_params *p)
{
    if (isnan(b)) return p->last && isnan(c);
    if (isnan(c)) return true;
    if (c == b) return p->last;
    return p->is_max ? c > b : c < b;
}

static int64_t arg_f64(const double *v, int64_t n, const arg_params *p)
{
    int64_t best = 0;
    for (int64_t k = 1; k < n; k++)
        if (better_f64(v[k], v[best], p)) best = k;
    return best;
}

static int64_t arg_i64(const int64_t *v, int64_t n, const arg_params *p)
{
    int64_t best = 0;
    for (int64_t k = 1; k < n; k++) {
        bool better = v[k] == v[best] ? p->last : p->is_max ? v[k] > v[best] : v[k] < v[best];
        if (better) best = k;
    }
    return best;
}

kiln_status kiln_reduce_arg_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    int64_t *y = out[0]->data;
    arg_params p;
    kiln_status st = parse_params(node, x, &p);
    if (st != KILN_OK) return st;

    int64_t outer = 1, inner = 1, n = x->shape[p.axis];
    for (int64_t d = 0; d < p.axis; d++) outer *= x->shape[d];
    for (uint32_t d = (uint32_t)p.axis + 1; d < x->rank; d++) inner *= x->shape[d];
    bool is_float = kiln_reduce_row_is_float(x->dtype);
    void *row = ctx->scratch; /* (n) doubles or int64s */
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            if (is_float) {
                kiln_reduce_row_load_f64(x, base, inner, n, row);
                y[o * inner + i] = arg_f64(row, n, &p);
            } else {
                kiln_reduce_row_load_i64(x, base, inner, n, row);
                y[o * inner + i] = arg_i64(row, n, &p);
            }
        }
    }
    return KILN_OK;
}
