/* pool_global.c — the Global*Pool ops: one value per (n, c) plane over all spatial dims.
 *
 * Layer: kernels/portable. f32 only. Input (N, C, D1, ..., Dk), k >= 0; output (N, C, 1, ..., 1)
 * of the same rank. Sums accumulate in double so large planes lose no precision; GlobalLpPool's
 * p is a float attribute at opset 1 and an int from 2 (kiln_node_attr_float reads both).
 */
#include <float.h>
#include <math.h>

#include "kernels/portable/pool_global.h"

#include "kernels/portable/parallel.h"

typedef enum global_kind { GLOBAL_AVG, GLOBAL_MAX, GLOBAL_LP } global_kind;

static kiln_status global_infer(const kiln_node *node, global_kind kind, const kiln_tensor *const *in,
                                kiln_tensor *const *out)
{
    const kiln_tensor *x = in[0];
    if (!x || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    if (x->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (x->rank < 2) return KILN_ERROR_SHAPE_MISMATCH;
    if (kind == GLOBAL_LP && !(kiln_node_attr_float(node, "p", 2.0f) > 0.0f)) return KILN_ERROR_INVALID_ARGUMENT;
    int64_t shape[KILN_MAX_RANK];
    for (uint32_t d = 0; d < x->rank; d++) shape[d] = d < 2 ? x->shape[d] : 1;
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, x->rank, shape);
    return KILN_OK;
}

static float global_plane(global_kind kind, float p, const float *x, int64_t n)
{
    if (kind == GLOBAL_MAX) {
        float best = n > 0 ? x[0] : -FLT_MAX;
        for (int64_t i = 1; i < n; i++)
            if (x[i] > best) best = x[i];
        return best;
    }
    double sum = 0.0;
    if (kind == GLOBAL_AVG) {
        for (int64_t i = 0; i < n; i++) sum += x[i];
        return n > 0 ? (float)(sum / (double)n) : 0.0f;
    }
    for (int64_t i = 0; i < n; i++) sum += pow(fabs((double)x[i]), (double)p);
    return (float)pow(sum, 1.0 / (double)p);
}

typedef struct global_job {
    global_kind kind;
    float p;
    const float *x;
    int64_t plane;
    float *y;
} global_job;

/* Planes [lo, hi). */
static void global_planes(const void *arg, int64_t lo, int64_t hi)
{
    const global_job *j = arg;
    for (int64_t c = lo; c < hi; c++) j->y[c] = global_plane(j->kind, j->p, j->x + c * j->plane, j->plane);
}

/* Threads take runs of planes once there are two grains of elements to read. */
static kiln_status global_run(const kiln_node *node, global_kind kind, const kiln_tensor *const *in,
                              kiln_tensor *const *out, const kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    int64_t planes = x->shape[0] * x->shape[1], plane = 1;
    for (uint32_t d = 2; d < x->rank; d++) plane *= x->shape[d];
    global_job j = {kind, kiln_node_attr_float(node, "p", 2.0f), x->data, plane, out[0]->data};
    kiln_par_rows(ctx, planes, plane, (int64_t)1 << 15, global_planes, &j);
    return KILN_OK;
}

kiln_status kiln_global_average_pool_infer(const kiln_node *node, const kiln_tensor *const *in,
                                           kiln_tensor *const *out, size_t *scratch_size)
{
    return global_infer(node, GLOBAL_AVG, in, out);
}
kiln_status kiln_global_average_pool_run(const kiln_node *node, const kiln_tensor *const *in,
                                         kiln_tensor *const *out, kiln_kernel_ctx *ctx)
{
    return global_run(node, GLOBAL_AVG, in, out, ctx);
}
kiln_status kiln_global_max_pool_infer(const kiln_node *node, const kiln_tensor *const *in,
                                       kiln_tensor *const *out, size_t *scratch_size)
{
    return global_infer(node, GLOBAL_MAX, in, out);
}
kiln_status kiln_global_max_pool_run(const kiln_node *node, const kiln_tensor *const *in,
                                     kiln_tensor *const *out, kiln_kernel_ctx *ctx)
{
    return global_run(node, GLOBAL_MAX, in, out, ctx);
}
kiln_status kiln_global_lp_pool_infer(const kiln_node *node, const kiln_tensor *const *in,
                                      kiln_tensor *const *out, size_t *scratch_size)
{
    return global_infer(node, GLOBAL_LP, in, out);
}
kiln_status kiln_global_lp_pool_run(const kiln_node *node, const kiln_tensor *const *in,
                                    kiln_tensor *const *out, kiln_kernel_ctx *ctx)
{
    return global_run(node, GLOBAL_LP, in, out, ctx);
}
