/* norm_batch.c — BatchNormalization, every version (1, 6, 7, 9, 14, 15).
 *
 * Layer: kernels/portable (norm family; registered in norm.c).
 * Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (dim 1) of X (N x C x D1 ...).
 *
 * Versions:
 *  - before 14 the op always runs with inference semantics here: mean/var are the estimated
 *    statistics, whatever is_test (1, 6) says. Old exporters list the optional training
 *    outputs (mean, var, saved_mean, saved_var) even in test mode; since inference leaves the
 *    statistics unchanged, they receive the input mean and var.
 *  - before 9 `spatial` = 0 gives every element of a sample its own statistics: the params are
 *    (C x D1 x ...), which is the spatial case with C*D1*... channels of one element each.
 *  - from 14 `training_mode` = 1 normalises with the batch statistics (population variance)
 *    and outputs running_mean/running_var blended with `momentum`; without training_mode the
 *    extra outputs are invalid. From 15 the params may differ in float type from X.
 */
#include <math.h>

#include "kernels/portable/norm_kernels.h"
#include "kernels/portable/reduce_row.h"

typedef struct batch_params {
    int64_t batch;          /* N */
    int64_t channels;       /* C, or C*D1*... in the non-spatial mode */
    int64_t block;          /* elements of one (n, channel) block */
    bool spatial;           /* params are (C) rather than (C x D1 ...) */
    double epsilon;
    double momentum;
    bool training;
} batch_params;

static kiln_status parse_params(const kiln_node *node, const kiln_tensor *x, batch_params *p)
{
    int64_t spatial = node->opset < 9 ? kiln_node_attr_int(node, "spatial", 1) : 1;
    int64_t training = node->opset >= 14 ? kiln_node_attr_int(node, "training_mode", 0) : 0;
    if ((spatial != 0 && spatial != 1) || (training != 0 && training != 1)) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->rank < 2) return KILN_ERROR_SHAPE_MISMATCH;
    p->batch = x->shape[0];
    p->channels = x->shape[1];
    p->block = 1;
    for (uint32_t d = 2; d < x->rank; d++) *(spatial ? &p->block : &p->channels) *= x->shape[d];
    p->epsilon = kiln_node_attr_float(node, "epsilon", 1e-5f);
    p->momentum = kiln_node_attr_float(node, "momentum", 0.9f);
    p->training = training != 0;
    p->spatial = spatial != 0;
    return KILN_OK;
}

/* The extra outputs this version may have, and the input whose shape and dtype each copies. */
static size_t max_outputs(const kiln_node *node) { return node->opset >= 14 ? 3 : 5; }
static size_t stat_source(size_t output) { return output % 2 == 1 ? 3 : 4; } /* mean-like : var-like */

kiln_status kiln_norm_batch_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    if (node->n_inputs != 5 || node->n_outputs > max_outputs(node) || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < 5; i++) {
        if (!in[i]) return KILN_ERROR_INVALID_ARGUMENT;
        kiln_status st = kiln_norm_check_float(in[i]->dtype);
        if (st != KILN_OK) return st;
    }
    const kiln_tensor *x = in[0];
    batch_params p;
    kiln_status st = parse_params(node, x, &p);
    if (st != KILN_OK) return st;
    for (size_t i = 1; i < 5; i++) {
        /* Spatial params are (C); non-spatial ones (C x D1 ...) — accept any shape of that size. */
        if (kiln_numel(in[i]) != p.channels || (p.spatial && in[i]->rank != 1)) return KILN_ERROR_SHAPE_MISMATCH;
    }
    kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
    for (size_t j = 1; j < node->n_outputs; j++) {
        if (!out[j]) continue;
        if (node->opset >= 14 && !p.training) return KILN_ERROR_INVALID_ARGUMENT;
        const kiln_tensor *src = in[stat_source(j)];
        kiln_tensor_set_shape(out[j], src->dtype, src->rank, src->shape);
    }
    /* scale, bias, mean, var, batch mean, batch var (channels each), then one block row */
    *scratch_size = (size_t)(6 * p.channels + p.block) * sizeof(double);
    return KILN_OK;
}

/* Per-channel mean and population variance over the batch and the block. */
static void batch_statistics(const kiln_tensor *x, const batch_params *p, double *row, double *mean, double *var)
{
    double count = (double)(p->batch * p->block);
    for (int64_t c = 0; c < p->channels; c++) {
        double sum = 0.0, sq = 0.0;
        for (int64_t n = 0; n < p->batch; n++) {
            kiln_reduce_row_load_f64(x, (n * p->channels + c) * p->block, 1, p->block, row);
            for (int64_t k = 0; k < p->block; k++) sum += row[k];
        }
        mean[c] = count > 0 ? sum / count : 0.0;
        for (int64_t n = 0; n < p->batch; n++) {
            kiln_reduce_row_load_f64(x, (n * p->channels + c) * p->block, 1, p->block, row);
            for (int64_t k = 0; k < p->block; k++) sq += (row[k] - mean[c]) * (row[k] - mean[c]);
        }
        var[c] = count > 0 ? sq / count : 0.0;
    }
}

static void normalize(const kiln_tensor *x, kiln_tensor *y, const batch_params *p, const double *scale,
                      const double *bias, const double *mean, const double *var, double *row)
{
    for (int64_t c = 0; c < p->channels; c++) {
        double inv_std = 1.0 / sqrt(var[c] + p->epsilon);
        for (int64_t n = 0; n < p->batch; n++) {
            int64_t base = (n * p->channels + c) * p->block;
            kiln_reduce_row_load_f64(x, base, 1, p->block, row);
            for (int64_t k = 0; k < p->block; k++) row[k] = (row[k] - mean[c]) * inv_std * scale[c] + bias[c];
            kiln_reduce_row_store_f64(y, base, 1, p->block, row);
        }
    }
}

kiln_status kiln_norm_batch_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    batch_params p;
    kiln_status st = parse_params(node, in[0], &p);
    if (st != KILN_OK) return st;
    int64_t c = p.channels;
    double *scale = ctx->scratch, *bias = scale + c, *mean = bias + c, *var = mean + c;
    double *batch_mean = var + c, *batch_var = batch_mean + c, *row = batch_var + c;
    kiln_reduce_row_load_f64(in[1], 0, 1, c, scale);
    kiln_reduce_row_load_f64(in[2], 0, 1, c, bias);
    kiln_reduce_row_load_f64(in[3], 0, 1, c, mean);
    kiln_reduce_row_load_f64(in[4], 0, 1, c, var);

    if (!p.training) {
        normalize(in[0], out[0], &p, scale, bias, mean, var, row);
        /* Inference leaves the statistics as they were (see the file comment). */
        for (size_t j = 1; j < node->n_outputs; j++)
            if (out[j]) kiln_reduce_row_store_f64(out[j], 0, 1, c, j % 2 == 1 ? mean : var);
        return KILN_OK;
    }
    batch_statistics(in[0], &p, row, batch_mean, batch_var);
    normalize(in[0], out[0], &p, scale, bias, batch_mean, batch_var, row);
    for (int64_t k = 0; k < c; k++) {
        mean[k] = mean[k] * p.momentum + batch_mean[k] * (1.0 - p.momentum);
        var[k] = var[k] * p.momentum + batch_var[k] * (1.0 - p.momentum);
    }
    if (node->n_outputs > 1 && out[1]) kiln_reduce_row_store_f64(out[1], 0, 1, c, mean);
    if (node->n_outputs > 2 && out[2]) kiln_reduce_row_store_f64(out[2], 0, 1, c, var);
    return KILN_OK;
}
