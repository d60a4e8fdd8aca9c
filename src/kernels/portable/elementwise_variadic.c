/* elementwise_variadic.c — Sum Mean Max Min over one or more inputs, for the binary family.
 *
 * Layer: kernels/portable. The inputs are folded pairwise into the output: out = in0 op in1,
 * then out = out op in_k. Reading and writing out in the same loop is safe because every loop
 * reads element i of its inputs before writing element i of its output and nothing else.
 * Before opset 8 these ops did not broadcast: every input must have the same shape.
 * Max and Min propagate NaN like numpy's maximum/minimum, which the ONNX reference uses.
 */
#include <math.h>
#include <string.h>

#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/elementwise_ops.h"

#define DEFINE_LOOP(op, sfx, T, W, DT) KILN_EW_LOOP2(op##_##sfx, T, T, T, EXPR_##op(T, W))
#define EXPR_sum_f(T, W) (x + y)
#define EXPR_sum_i(T, W) (T)((W)x + (W)y)
#define EXPR_max_f(T, W) (x > y || isnan(x) ? x : y)
#define EXPR_max_i(T, W) (x > y ? x : y)
#define EXPR_min_f(T, W) (x < y || isnan(x) ? x : y)
#define EXPR_min_i(T, W) (x < y ? x : y)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, sum_f)
KILN_EW_INT_TYPES(DEFINE_LOOP, sum_i)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, max_f)
KILN_EW_INT_TYPES(DEFINE_LOOP, max_i)
KILN_EW_FLOAT_TYPES(DEFINE_LOOP, min_f)
KILN_EW_INT_TYPES(DEFINE_LOOP, min_i)

static const kiln_ew_loop sum_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, sum_f) KILN_EW_INT_TYPES(KILN_EW_ENTRY, sum_i)};
/* Mean divides, so it is defined for floats only (as ONNX specifies). */
static const kiln_ew_loop mean_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, sum_f)};
static const kiln_ew_loop max_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, max_f) KILN_EW_INT_TYPES(KILN_EW_ENTRY, max_i)};
static const kiln_ew_loop min_loops[KILN_DTYPE_COUNT] = {
    KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, min_f) KILN_EW_INT_TYPES(KILN_EW_ENTRY, min_i)};

/* Mean's final step: the sum divided by the input count (p->alpha). */
#define DEFINE_DIVIDE(op, sfx, T, W, DT) KILN_EW_LOOP1(op##_##sfx, T, T, x / (T)p->alpha)
KILN_EW_FLOAT_TYPES(DEFINE_DIVIDE, divide)
static const kiln_ew_loop divide_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, divide)};

static kiln_status variadic_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  const kiln_ew_loop *loops)
{
    size_t n = node->n_inputs;
    if (n == 0) return KILN_ERROR_INVALID_ARGUMENT;
    for (size_t k = 0; k < n; k++) {
        if (!in[k]) return KILN_ERROR_INVALID_ARGUMENT;
        if (in[k]->dtype != in[0]->dtype) return KILN_ERROR_DTYPE_MISMATCH;
        if (node->opset < 8 && !kiln_ew_same_shape(in[k], in[0])) return KILN_ERROR_SHAPE_MISMATCH;
    }
    if (!kiln_ew_loop_for(loops, in[0]->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    return kiln_ew_broadcast_infer(in, n, in[0]->dtype, out[0]);
}

static void variadic_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                         const kiln_ew_loop *loops)
{
    kiln_tensor *dst = out[0];
    if (!dst) return;
    size_t n = node->n_inputs;
    if (n == 1) {
        /* One input: its shape is the output's, so this is a copy. */
        if (kiln_numel(dst) > 0) memcpy(dst->data, in[0]->data, kiln_tensor_bytes(dst));
        return;
    }
    kiln_ew_loop loop = kiln_ew_loop_for(loops, in[0]->dtype);
    const kiln_tensor *first[2] = {in[0], in[1]};
    kiln_ew_apply(first, 2, dst, loop, NULL);
    for (size_t k = 2; k < n; k++) {
        const kiln_tensor *next[2] = {dst, in[k]};
        kiln_ew_apply(next, 2, dst, loop, NULL);
    }
}

/* Public infer/run pairs named kiln_ew_<op>_{infer,run} around <op>_loops. */
#define EXPORT_VARIADIC_INFER(op)                                                                \
    kiln_status kiln_ew_##op##_infer(const kiln_node *node, const kiln_tensor *const *in,       \
                                     kiln_tensor *const *out, size_t *scratch_size)              \
    {                                                                                            \
        (void)scratch_size;                                                                      \
        return variadic_infer(node, in, out, op##_loops);                                        \
    }
EXPORT_VARIADIC_INFER(sum)
EXPORT_VARIADIC_INFER(mean)
EXPORT_VARIADIC_INFER(max)
EXPORT_VARIADIC_INFER(min)

#define EXPORT_VARIADIC_RUN(op)                                                                  \
    kiln_status kiln_ew_##op##_run(const kiln_node *node, const kiln_tensor *const *in,         \
                                   kiln_tensor *const *out, kiln_kernel_ctx *ctx)                \
    {                                                                                            \
        (void)ctx;                                                                               \
        variadic_run(node, in, out, op##_loops);                                                 \
        return KILN_OK;                                                                          \
    }
EXPORT_VARIADIC_RUN(sum)
EXPORT_VARIADIC_RUN(max)
EXPORT_VARIADIC_RUN(min)

kiln_status kiln_ew_mean_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    (void)ctx;
    variadic_run(node, in, out, mean_loops);
    if (out[0] && node->n_inputs > 1) {
        const kiln_ew_params count = {.alpha = (double)node->n_inputs};
        const kiln_tensor *sum = out[0];
        /* In place, by the same element-i-before-element-i argument as the folding above. */
        kiln_ew_apply(&sum, 1, out[0], kiln_ew_loop_for(divide_loops, sum->dtype), &count);
    }
    return KILN_OK;
}
