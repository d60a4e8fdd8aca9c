/* softmax.c — portable kernels of the softmax family: Softmax, LogSoftmax, Hardmax.
 *
 * Layer: kernels/portable.
 * The normalised set changed at opset 13:
 *  - before 13 the input is coerced to 2-D at `axis` (default 1): each row of the flattened
 *    trailing dims [axis, rank) is normalised as one vector;
 *  - from 13 the vector runs along the single dim `axis` (default -1).
 * Both are the same loop over (outer, n, inner) lanes: before 13 inner is 1 and n is the trailing
 * product. Each lane is loaded into a dense double row (reduce_row.h), normalised there and
 * stored back; the maximum is subtracted before exp so large inputs cannot overflow.
 */
#include <math.h>

#include "kernels/portable/families.h"
#include "kernels/portable/reduce_row.h"

typedef enum softmax_kind { SOFTMAX, LOG_SOFTMAX, HARDMAX } softmax_kind;

/* The (outer, n, inner) decomposition of x for this node. */
typedef struct softmax_lanes {
    int64_t outer, n, inner;
} softmax_lanes;

static kiln_status lanes_of(const kiln_node *node, const kiln_tensor *x, softmax_lanes *l)
{
    int64_t rank = x->rank;
    l->outer = l->n = l->inner = 1;
    if (node->opset < 13) {
        /* Coercion to 2-D: an axis equal to the rank gives rows of one element. */
        int64_t axis = kiln_node_attr_int(node, "axis", 1);
        if (axis < -rank || axis > rank) return KILN_ERROR_INVALID_ARGUMENT;
        if (axis < 0) axis += rank;
        for (int64_t d = 0; d < rank; d++) *(d < axis ? &l->outer : &l->n) *= x->shape[d];
        return KILN_OK;
    }
    int64_t axis;
    if (!kiln_axis_normalize(kiln_node_attr_int(node, "axis", -1), rank, &axis)) return KILN_ERROR_INVALID_ARGUMENT;
    for (int64_t d = 0; d < rank; d++) {
        if (d < axis) l->outer *= x->shape[d];
        else if (d == axis) l->n = x->shape[d];
        else l->inner *= x->shape[d];
    }
    return KILN_OK;
}

static kiln_status softmax_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = in[0];
    if (!x || !out[0] || node->n_inputs != 1) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->dtype == KILN_DTYPE_F16 || x->dtype == KILN_DTYPE_BF16) return KILN_ERROR_NOT_SUPPORTED;
    if (!kiln_reduce_row_is_float(x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    softmax_lanes l;
    kiln_status st = lanes_of(node, x, &l);
    if (st != KILN_OK) return st;
    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    *scratch_size = (size_t)l.n * sizeof(double);
    return KILN_OK;
}

static double row_max(const double *v, int64_t n)
{
    double m = -INFINITY;
    for (int64_t k = 0; k < n; k++) m = v[k] > m ? v[k] : m;
    return m;
}

static void softmax_row(double *v, int64_t n, softmax_kind kind)
{
    double m = row_max(v, n);
    if (kind == HARDMAX) {
        int64_t hit = 0; /* the first maximum; index 0 when every element is NaN */
        for (int64_t k = n; k-- > 0;)
            if (v[k] == m) hit = k;
        for (int64_t k = 0; k < n; k++) v[k] = k == hit ? 1.0 : 0.0;
        return;
    }
    double sum = 0.0;
    for (int64_t k = 0; k < n; k++) sum += exp(v[k] - m);
    if (kind == LOG_SOFTMAX) {
        double log_sum = log(sum);
        for (int64_t k = 0; k < n; k++) v[k] = v[k] - m - log_sum;
        return;
    }
    for (int64_t k = 0; k < n; k++) v[k] = exp(v[k] - m) / sum;
}

static kiln_status softmax_family_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_kernel_ctx *ctx, softmax_kind kind)
{
    const kiln_tensor *x = in[0];
    softmax_lanes l;
    kiln_status st = lanes_of(node, x, &l);
    if (st != KILN_OK) return st;
    double *row = ctx->scratch; /* (n) */
    for (int64_t o = 0; o < l.outer; o++) {
        for (int64_t i = 0; i < l.inner; i++) {
            int64_t base = o * l.n * l.inner + i;
            kiln_reduce_row_load_f64(x, base, l.inner, l.n, row);
            softmax_row(row, l.n, kind);
            kiln_reduce_row_store_f64(out[0], base, l.inner, l.n, row);
        }
    }
    return KILN_OK;
}

static kiln_status softmax_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    return softmax_family_run(node, in, out, ctx, SOFTMAX);
}

static kiln_status log_softmax_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   kiln_kernel_ctx *ctx)
{
    return softmax_family_run(node, in, out, ctx, LOG_SOFTMAX);
}

static kiln_status hardmax_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    return softmax_family_run(node, in, out, ctx, HARDMAX);
}

const kiln_kernel kiln_kernels_softmax[] = {
    {"Softmax", 1, softmax_infer, softmax_run, {{0, 1, 1, 1, 1}}, "axis:i"},
    {"LogSoftmax", 1, softmax_infer, log_softmax_run, {{0, 1, 1, 1, 1}}, "axis:i"},
    {"Hardmax", 1, softmax_infer, hardmax_run, {{0, 1, 1, 1, 1}}, "axis:i"},
    {0},
};
