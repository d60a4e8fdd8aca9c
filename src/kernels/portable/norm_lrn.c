/* norm_lrn.c — LRN, local response normalisation across channels (opset 1, 13).
 *
 * Layer: kernels/portable (norm family; registered in norm.c).
 * For X (N x C x D1 ...): y[n,c,d] = x[n,c,d] / (bias + alpha / size * sum of x[n,i,d]^2)^beta
 * over channels i in [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
 * Each (n, d) lane across the channels is loaded into a dense double row (reduce_row.h); the
 * squares are summed once per lane with a sliding window, so a lane costs O(C) whatever size is.
 */
#include <math.h>

#include "kernels/portable/norm_kernels.h"
#include "kernels/portable/reduce_row.h"

typedef struct lrn_params {
    double alpha, beta, bias;
    int64_t size;
} lrn_params;

static kiln_status parse_params(const kiln_node *node, lrn_params *p)
{
    const kiln_attr *size = kiln_node_attr(node, "size");
    if (!size || size->type != KILN_ATTR_INT || size->i < 1) return KILN_ERROR_INVALID_ARGUMENT;
    p->size = size->i;
    p->alpha = kiln_node_attr_float(node, "alpha", 1e-4f);
    p->beta = kiln_node_attr_float(node, "beta", 0.75f);
    p->bias = kiln_node_attr_float(node, "bias", 1.0f);
    return KILN_OK;
}

kiln_status kiln_norm_lrn_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    const kiln_tensor *x = in[0];
    if (node->n_inputs != 1 || !x || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_status st = kiln_norm_check_float(x->dtype);
    if (st != KILN_OK) return st;
    if (x->rank < 2) return KILN_ERROR_SHAPE_MISMATCH;
    lrn_params p;
    st = parse_params(node, &p);
    if (st != KILN_OK) return st;
    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    /* the lane and the squares of its elements, C each */
    *scratch_size = (size_t)x->shape[1] * 2 * sizeof(double);
    return KILN_OK;
}

/* Normalises one lane of c channels in place; sq is scratch for c squares. */
static void lrn_lane(double *v, double *sq, int64_t c, const lrn_params *p)
{
    int64_t before = (p->size - 1) / 2, after = p->size - 1 - before; /* floor and ceil of (size-1)/2 */
    for (int64_t i = 0; i < c; i++) sq[i] = v[i] * v[i];
    /* window sum over [i - before, i + after], maintained as i advances */
    double window = 0.0;
    for (int64_t i = 0; i < after && i < c; i++) window += sq[i];
    for (int64_t i = 0; i < c; i++) {
        if (i + after < c) window += sq[i + after];
        if (i - before - 1 >= 0) window -= sq[i - before - 1];
        v[i] /= pow(p->bias + p->alpha / (double)p->size * window, p->beta);
    }
}

kiln_status kiln_norm_lrn_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    lrn_params p;
    kiln_status st = parse_params(node, &p);
    if (st != KILN_OK) return st;
    int64_t c = x->shape[1], lanes = 1;
    for (uint32_t d = 2; d < x->rank; d++) lanes *= x->shape[d];
    double *row = ctx->scratch, *sq = row + c;
    for (int64_t n = 0; n < x->shape[0]; n++) {
        for (int64_t l = 0; l < lanes; l++) {
            int64_t base = n * c * lanes + l;
            kiln_reduce_row_load_f64(x, base, lanes, c, row);
            lrn_lane(row, sq, c, &p);
            kiln_reduce_row_store_f64(out[0], base, lanes, c, row);
        }
    }
    return KILN_OK;
}
