/* activation.c — portable kernels of the activation family (see families.h): pointwise
 * nonlinearities with float attributes. Clip and PRelu, whose bounds and slopes may be
 * tensors, are in elementwise_clip_prelu.c and only listed here.
 *
 * Layer: kernels/portable. Each op is an expression over x and the params p (its attributes,
 * read once per call into p->alpha/beta/gamma), expanded per float dtype; <tgmath.h> picks
 * expf for float and exp for double. Where the textbook formula overflows (softplus, sigmoid
 * and friends for large |x|) the expression is rearranged so that it cannot.
 */
#include <string.h>
#include <tgmath.h>

#include "kernels/portable/elementwise_iter.h"
#include "kernels/portable/elementwise_ops.h"
#include "kernels/portable/families.h"

#define DEFINE_LOOP(op, sfx, T, W, DT) KILN_EW_LOOP1(op##_##sfx, T, T, EXPR_##op(T))
#define FLOAT_OP(op)                                                                             \
    KILN_EW_FLOAT_TYPES(DEFINE_LOOP, op)                                                         \
    static const kiln_ew_loop op##_loops[KILN_DTYPE_COUNT] = {KILN_EW_FLOAT_TYPES(KILN_EW_ENTRY, op)};

/* log(1 + e^x) without overflow for large x nor loss for very negative x. */
#define SOFTPLUS(T, v) ((v) > 0 ? (v) + log1p(exp(-(v))) : log1p(exp(v)))

#define EXPR_sigmoid(T) (x >= 0 ? (T)1 / ((T)1 + exp(-x)) : exp(x) / ((T)1 + exp(x)))
#define EXPR_tanh(T) tanh(x)
#define EXPR_leaky_relu(T) (x < 0 ? (T)p->alpha * x : x)
#define EXPR_elu(T) (x < 0 ? (T)p->alpha * expm1(x) : x)
#define EXPR_selu(T) ((T)p->gamma * (x <= 0 ? (T)p->alpha * expm1(x) : x))
#define EXPR_celu(T) (x < 0 ? (T)p->alpha * expm1(x / (T)p->alpha) : x)
#define EXPR_hard_sigmoid(T) fmax((T)0, fmin((T)1, (T)p->alpha * x + (T)p->beta))
#define EXPR_hard_swish(T) (x * fmax((T)0, fmin((T)1, x / (T)6 + (T)0.5)))
#define EXPR_softplus(T) SOFTPLUS(T, x)
#define EXPR_softsign(T) (x / ((T)1 + fabs(x)))
#define EXPR_thresholded_relu(T) (x > (T)p->alpha ? x : (T)0)
#define EXPR_mish(T) (x * tanh(SOFTPLUS(T, x)))
#define EXPR_gelu(T) ((T)0.5 * x * ((T)1 + erf(x * (T)0.70710678118654752440)))
#define EXPR_gelu_tanh(T) ((T)0.5 * x * ((T)1 + tanh((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x))))
FLOAT_OP(sigmoid)
FLOAT_OP(tanh)
FLOAT_OP(leaky_relu)
FLOAT_OP(elu)
FLOAT_OP(selu)
FLOAT_OP(celu)
FLOAT_OP(hard_sigmoid)
FLOAT_OP(hard_swish)
FLOAT_OP(softplus)
FLOAT_OP(softsign)
FLOAT_OP(thresholded_relu)
FLOAT_OP(mish)
FLOAT_OP(gelu)
FLOAT_OP(gelu_tanh)

/* Relu also takes signed integers (opset 14). */
#define EXPR_relu(T) (x > 0 ? x : (T)0)
KILN_EW_SIGNED_TYPES(DEFINE_LOOP, relu)
static const kiln_ew_loop relu_loops[KILN_DTYPE_COUNT] = {KILN_EW_SIGNED_TYPES(KILN_EW_ENTRY, relu)};

/* Shrink takes every numeric type; it is computed in double so that the float attributes
   lambd (p->alpha) and bias (p->beta) compare and subtract the same way for all of them. */
#define EXPR_shrink(T)                                                                           \
    ((double)x < -p->alpha ? (T)((double)x + p->beta) : (double)x > p->alpha ? (T)((double)x - p->beta) : (T)0)
KILN_EW_NUMERIC_TYPES(DEFINE_LOOP, shrink)
static const kiln_ew_loop shrink_loops[KILN_DTYPE_COUNT] = {KILN_EW_NUMERIC_TYPES(KILN_EW_ENTRY, shrink)};

/* An activation: its loops and how its attributes become params (NULL: no attributes).
   read_params returns KILN_ERROR_INVALID_ARGUMENT for an attribute value out of its domain. */
typedef struct activation {
    const kiln_ew_loop *loops;
    kiln_status (*read_params)(const kiln_node *node, kiln_ew_params *p, const kiln_ew_loop **loops);
} activation;

static kiln_status leaky_relu_params(const kiln_node *node, kiln_ew_params *p, const kiln_ew_loop **loops)
{
    p->alpha = kiln_node_attr_float(node, "alpha", 0.01f);
    return KILN_OK;
}

/* Elu, Celu and ThresholdedRelu all default alpha to 1. */
static kiln_status alpha_one_params(const kiln_node *node, kiln_ew_params *p, const kiln_ew_loop **loops)
{
    p->alpha = kiln_node_attr_float(node, "alpha", 1.0f);
    return KILN_OK;
}

static kiln_status selu_params(const kiln_node *node, kiln_ew_params *p, const kiln_ew_loop **loops)
{
    p->alpha = kiln_node_attr_float(node, "alpha", 1.67326319217681884765625f);
    p->gamma = kiln_node_attr_float(node, "gamma", 1.05070102214813232421875f);
    return KILN_OK;
}

static kiln_status hard_sigmoid_params(const kiln_node *node, kiln_ew_params *p, const kiln_ew_loop **loops)
{
    p->alpha = kiln_node_attr_float(node, "alpha", 0.2f);
    p->beta = kiln_node_attr_float(node, "beta", 0.5f);
    return KILN_OK;
}

static kiln_status shrink_params(const kiln_node *node, kiln_ew_params *p, const kiln_ew_loop **loops)
{
    p->alpha = kiln_node_attr_float(node, "lambd", 0.5f);
    p->beta = kiln_node_attr_float(node, "bias", 0.0f);
    return KILN_OK;
}

/* Gelu's `approximate` attribute chooses the loops rather than a parameter. */
static kiln_status gelu_params(const kiln_node *node, kiln_ew_params *p, const kiln_ew_loop **loops)
{
    const char *approximate = kiln_node_attr_string(node, "approximate", "none");
    if (strcmp(approximate, "tanh") == 0) *loops = gelu_tanh_loops;
    else if (strcmp(approximate, "none") != 0) return KILN_ERROR_INVALID_ARGUMENT;
    return KILN_OK;
}

static kiln_status activation_prepare(const kiln_node *node, const activation *act, kiln_ew_params *p,
                                      const kiln_ew_loop **loops)
{
    *p = (kiln_ew_params){0};
    *loops = act->loops;
    return act->read_params ? act->read_params(node, p, loops) : KILN_OK;
}

static kiln_status activation_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    const activation *act)
{
    kiln_ew_params p;
    const kiln_ew_loop *loops;
    kiln_status st = activation_prepare(node, act, &p, &loops);
    return st != KILN_OK ? st : kiln_ew_unary_infer(node, in, out, loops, false);
}

static kiln_status activation_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  const activation *act)
{
    kiln_ew_params p;
    const kiln_ew_loop *loops;
    kiln_status st = activation_prepare(node, act, &p, &loops);
    if (st == KILN_OK) kiln_ew_unary_run(in, out, loops, &p);
    return st;
}

#define ACTIVATION_KERNEL(op, read_params)                                                       \
    static const activation op##_act = {op##_loops, read_params};                                \
    static kiln_status op##_infer(const kiln_node *node, const kiln_tensor *const *in,          \
                                  kiln_tensor *const *out, size_t *scratch_size)                 \
    {                                                                                            \
        (void)scratch_size;                                                                      \
        return activation_infer(node, in, out, &op##_act);                                       \
    }                                                                                            \
    static kiln_status op##_run(const kiln_node *node, const kiln_tensor *const *in,            \
                                kiln_tensor *const *out, kiln_kernel_ctx *ctx)                   \
    {                                                                                            \
        (void)ctx;                                                                               \
        return activation_run(node, in, out, &op##_act);                                         \
    }

ACTIVATION_KERNEL(relu, NULL)
ACTIVATION_KERNEL(sigmoid, NULL)
ACTIVATION_KERNEL(tanh, NULL)
ACTIVATION_KERNEL(leaky_relu, leaky_relu_params)
ACTIVATION_KERNEL(elu, alpha_one_params)
ACTIVATION_KERNEL(selu, selu_params)
ACTIVATION_KERNEL(celu, alpha_one_params)
ACTIVATION_KERNEL(hard_sigmoid, hard_sigmoid_params)
ACTIVATION_KERNEL(hard_swish, NULL)
ACTIVATION_KERNEL(softplus, NULL)
ACTIVATION_KERNEL(softsign, NULL)
ACTIVATION_KERNEL(thresholded_relu, alpha_one_params)
ACTIVATION_KERNEL(mish, NULL)
ACTIVATION_KERNEL(gelu, gelu_params)
ACTIVATION_KERNEL(shrink, shrink_params)

/* min_opset is the ONNX version that introduced each op (Gelu: 20, Mish: 18); later versions
   only widened types. Opset-1 forms differ only by the ignored `consumed_inputs` attribute. */
const kiln_kernel kiln_kernels_activation[] = {
    {"Relu", 1, relu_infer, relu_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Sigmoid", 1, sigmoid_infer, sigmoid_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"Tanh", 1, tanh_infer, tanh_run, {{0, 1, 1, 1, 1}}, "consumed_inputs:I"},
    {"LeakyRelu", 1, leaky_relu_infer, leaky_relu_run, {{0, 1, 1, 1, 1}}, "alpha:f consumed_inputs:I"},
    {"Elu", 1, elu_infer, elu_run, {{0, 1, 1, 1, 1}}, "alpha:f consumed_inputs:I"},
    {"Selu", 1, selu_infer, selu_run, {{0, 1, 1, 1, 1}}, "alpha:f consumed_inputs:I gamma:f"},
    {"Celu", 12, celu_infer, celu_run, {{0, 1, 1, 1, 1}}, "alpha:f"},
    {"HardSigmoid", 1, hard_sigmoid_infer, hard_sigmoid_run, {{0, 1, 1, 1, 1}}, "alpha:f beta:f consumed_inputs:I"},
    {"HardSwish", 14, hard_swish_infer, hard_swish_run, {{0, 1, 1, 1, 1}}, ""},
    {"Softplus", 1, softplus_infer, softplus_run, {{0, 1, 1, 1, 1}}, ""},
    {"Softsign", 1, softsign_infer, softsign_run, {{0, 1, 1, 1, 1}}, ""},
    {"ThresholdedRelu", 10, thresholded_relu_infer, thresholded_relu_run, {{0, 1, 1, 1, 1}}, "alpha:f"},
    {"Mish", 18, mish_infer, mish_run, {{0, 1, 1, 1, 1}}, ""},
    {"Gelu", 20, gelu_infer, gelu_run, {{0, 1, 1, 1, 1}}, "approximate:s"},
    {"Shrink", 9, shrink_infer, shrink_run, {{0, 1, 1, 1, 1}}, "bias:f lambd:f"},
    {"PRelu", 1, kiln_ew_prelu_infer, kiln_ew_prelu_run, {{0, 2, 2, 1, 1}}, "consumed_inputs:I"},
    {"Clip", 1, kiln_ew_clip_infer, kiln_ew_clip_run, {{0, 1, 1, 1, 1}, {11, 1, 3, 1, 1}},
     "consumed_inputs:I max:f min:f"},
    {0},
};
