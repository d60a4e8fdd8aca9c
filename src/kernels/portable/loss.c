/* loss.c — portable kernels of the loss family: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
 *
 * Layer: kernels/portable. Depends on kernel.h and the row helpers (reduce_row.h).
 * Both ops see their first input as (N, C, D) with D the product of the dims after C, and their
 * target as (N, D) class indices. SoftmaxCrossEntropyLoss is NegativeLogLikelihoodLoss applied
 * to log_softmax(scores) along C, so both end in the same loop (nll_reduce) over a dense double
 * copy of the log-probabilities held in scratch: f32 inputs are accumulated in double.
 *
 * Per element, loss = -logp[n, t, d] * w[t] with t = target[n, d] and w = 1 without weights; an
 * element whose target is ignore_index has loss 0 and weight 0. "mean" divides the sum of the
 * losses by the sum of the weights (ONNX's definition, so ignored elements do not count), "sum"
 * gives the sum, "none" the (N, d1 .. dk) losses. A target outside [0, C) that is not
 * ignore_index is a data error (KILN_ERROR_INVALID_VALUE).
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/reduce_row.h"

typedef enum loss_reduction { REDUCE_NONE, REDUCE_SUM, REDUCE_MEAN } loss_reduction;

/* The (N, C, D) view of a loss node's inputs. */
typedef struct loss_dims {
    int64_t n, c, d;
} loss_dims;

static kiln_status reduction_of(const kiln_node *node, loss_reduction *out)
{
    const char *r = kiln_node_attr_string(node, "reduction", "mean");
    if (strcmp(r, "none") == 0) *out = REDUCE_NONE;
    else if (strcmp(r, "sum") == 0) *out = REDUCE_SUM;
    else if (strcmp(r, "mean") == 0) *out = REDUCE_MEAN;
    else return KILN_ERROR_INVALID_ARGUMENT;
    return KILN_OK;
}

/* The (N, C, D) view of an input infer() accepted. */
static loss_dims dims_of(const kiln_tensor *x)
{
    loss_dims dims = {x->shape[0], x->shape[1], 1};
    for (uint32_t i = 2; i < x->rank; i++) dims.d *= x->shape[i];
    return dims;
}

/* Checks input (N, C, d1 .. dk), target (N, d1 .. dk) and weight (C), and shapes out[0]. */
static kiln_status loss_infer_common(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     loss_dims *dims)
{
    const kiln_tensor *x = in[0], *target = in[1], *weight = node->n_inputs > 2 ? in[2] : NULL;
    if (!x || !target || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_reduce_row_is_float(x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    if (target->dtype != KILN_DTYPE_I32 && target->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
    if (x->rank < 2 || target->rank != x->rank - 1) return KILN_ERROR_SHAPE_MISMATCH;
    if (target->shape[0] != x->shape[0]) return KILN_ERROR_SHAPE_MISMATCH;
    for (uint32_t i = 2; i < x->rank; i++)
        if (target->shape[i - 1] != x->shape[i]) return KILN_ERROR_SHAPE_MISMATCH;
    *dims = dims_of(x);
    if (weight) {
        if (weight->dtype != x->dtype) return KILN_ERROR_DTYPE_MISMATCH;
        if (weight->rank != 1 || weight->shape[0] != dims->c) return KILN_ERROR_SHAPE_MISMATCH;
    }
    loss_reduction reduction;
    KILN_TRY(reduction_of(node, &reduction));
    if (reduction == REDUCE_NONE) kiln_tensor_set_shape(out[0], x->dtype, target->rank, target->shape);
    else kiln_tensor_set_shape(out[0], x->dtype, 0, NULL);
    return KILN_OK;
}

/* The loss of log-probabilities logp (N, C, D) against target (N, D) into out. */
static kiln_status nll_reduce(const kiln_node *node, const double *logp, loss_dims dims, const kiln_tensor *target,
                              const kiln_tensor *weight, kiln_tensor *out)
{
    loss_reduction reduction;
    KILN_TRY(reduction_of(node, &reduction));
    int64_t ignore = kiln_node_attr_int(node, "ignore_index", INT64_MIN);
    bool has_ignore = kiln_node_attr(node, "ignore_index") != NULL;
    double loss_sum = 0.0, weight_sum = 0.0;
    for (int64_t n = 0; n < dims.n; n++) {
        for (int64_t d = 0; d < dims.d; d++) {
            int64_t t = kiln_tensor_get_i64(target, n * dims.d + d);
            double loss = 0.0, w = 0.0;
            if (!(has_ignore && t == ignore)) {
                if (t < 0 || t >= dims.c) return KILN_ERROR_INVALID_VALUE;
                w = weight ? kiln_tensor_get_f64(weight, t) : 1.0;
                loss = -logp[(n * dims.c + t) * dims.d + d] * w;
            }
            if (reduction == REDUCE_NONE) kiln_reduce_row_store_f64(out, n * dims.d + d, 1, 1, &loss);
            loss_sum += loss;
            weight_sum += w;
        }
    }
    if (reduction == REDUCE_NONE) return KILN_OK;
    double result = reduction == REDUCE_SUM ? loss_sum : loss_sum / weight_sum;
    kiln_reduce_row_store_f64(out, 0, 1, 1, &result);
    return KILN_OK;
}

static kiln_status nll_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             size_t *scratch_size)
{
    loss_dims dims;
    KILN_TRY(loss_infer_common(node, in, out, &dims));
    *scratch_size = (size_t)kiln_numel(in[0]) * sizeof(double);
    return KILN_OK;
}

static kiln_status nll_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                           kiln_kernel_ctx *ctx)
{
    loss_dims dims = dims_of(in[0]);
    double *logp = ctx->scratch; /* (N, C, D) */
    kiln_reduce_row_load_f64(in[0], 0, 1, kiln_numel(in[0]), logp);
    return nll_reduce(node, logp, dims, in[1], node->n_inputs > 2 ? in[2] : NULL, out[0]);
}

static kiln_status sce_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             size_t *scratch_size)
{
    loss_dims dims;
    KILN_TRY(loss_infer_common(node, in, out, &dims));
    if (node->n_outputs > 1 && out[1]) kiln_tensor_set_shape(out[1], in[0]->dtype, in[0]->rank, in[0]->shape);
    *scratch_size = (size_t)kiln_numel(in[0]) * sizeof(double);
    return KILN_OK;
}

/* logp (N, C, D) = log_softmax along C, in place; the maximum is subtracted before exp. */
static void log_softmax_channels(double *logp, loss_dims dims)
{
    for (int64_t n = 0; n < dims.n; n++) {
        for (int64_t d = 0; d < dims.d; d++) {
            double *lane = logp + n * dims.c * dims.d + d; /* stride D */
            double m = -INFINITY, sum = 0.0;
            for (int64_t c = 0; c < dims.c; c++) m = lane[c * dims.d] > m ? lane[c * dims.d] : m;
            for (int64_t c = 0; c < dims.c; c++) sum += exp(lane[c * dims.d] - m);
            double log_sum = log(sum);
            for (int64_t c = 0; c < dims.c; c++) lane[c * dims.d] = lane[c * dims.d] - m - log_sum;
        }
    }
}

static kiln_status sce_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                           kiln_kernel_ctx *ctx)
{
    int64_t numel = kiln_numel(in[0]);
    loss_dims dims = dims_of(in[0]);
    double *logp = ctx->scratch; /* (N, C, D) */
    kiln_reduce_row_load_f64(in[0], 0, 1, numel, logp);
    log_softmax_channels(logp, dims);
    if (node->n_outputs > 1 && out[1]) kiln_reduce_row_store_f64(out[1], 0, 1, numel, logp);
    return nll_reduce(node, logp, dims, in[1], node->n_inputs > 2 ? in[2] : NULL, out[0]);
}

const kiln_kernel kiln_kernels_loss[] = {
    {"NegativeLogLikelihoodLoss", 12, nll_infer, nll_run, {{0, 2, 3, 1, 1}}, "ignore_index:i reduction:s"},
    {"SoftmaxCrossEntropyLoss", 12, sce_infer, sce_run, {{0, 2, 3, 1, 2}}, "ignore_index:i reduction:s"},
    {0},
};
