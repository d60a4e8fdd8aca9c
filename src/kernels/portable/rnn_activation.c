/* rnn_activation.c — the named gate functions of RNN, GRU and LSTM (rnn_activation.h).
 * Layer: kernels/portable. The name table is const data. */
#include <math.h>
#include <string.h>

#include "kernels/portable/rnn_activation.h"

typedef struct fn_info {
    const char *name;
    kiln_rnn_fn fn;
    bool takes_alpha, takes_beta;
    double alpha, beta; /* ONNX's defaults */
} fn_info;

static const fn_info fns[] = {
    {"Relu", KILN_RNN_RELU, false, false, 0, 0},
    {"Tanh", KILN_RNN_TANH, false, false, 0, 0},
    {"Sigmoid", KILN_RNN_SIGMOID, false, false, 0, 0},
    {"Affine", KILN_RNN_AFFINE, true, true, 1.0, 0.0},
    {"LeakyRelu", KILN_RNN_LEAKY_RELU, true, false, 0.01, 0},
    {"ThresholdedRelu", KILN_RNN_THRESHOLDED_RELU, true, false, 1.0, 0},
    {"ScaledTanh", KILN_RNN_SCALED_TANH, true, true, 1.0, 1.0},
    {"HardSigmoid", KILN_RNN_HARD_SIGMOID, true, true, 0.2, 0.5},
    {"Elu", KILN_RNN_ELU, true, false, 1.0, 0},
    {"Softsign", KILN_RNN_SOFTSIGN, false, false, 0, 0},
    {"Softplus", KILN_RNN_SOFTPLUS, false, false, 0, 0},
};

static const fn_info *info_of_name(const char *name)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strcmp(fns[i].name, name) == 0) return &fns[i];
    return NULL;
}

static const fn_info *info_of_fn(kiln_rnn_fn fn)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (fns[i].fn == fn) return &fns[i];
    return &fns[0];
}

kiln_status kiln_rnn_activations_read(const kiln_node *node, const kiln_rnn_fn *defaults, size_t n_per_direction,
                                      size_t n_directions, kiln_rnn_activation *acts)
{
    size_t n_total = n_per_direction * n_directions;
    if (n_total > KILN_RNN_ACTIVATIONS_MAX) return KILN_ERROR_INVALID_ARGUMENT;
    const kiln_attr *names = kiln_node_attr(node, "activations");
    if (names && names->type != KILN_ATTR_STRINGS) return KILN_ERROR_INVALID_ARGUMENT;
    size_t n_named = names ? names->n : 0;
    if (n_named != 0 && n_named != n_total && n_named != n_per_direction) return KILN_ERROR_INVALID_ARGUMENT;
    const float *alphas, *betas;
    size_t n_alphas = kiln_node_attr_floats(node, "activation_alpha", &alphas);
    size_t n_betas = kiln_node_attr_floats(node, "activation_beta", &betas);
    size_t next_alpha = 0, next_beta = 0;
    const char *name = names ? names->s : NULL;
    size_t n_read = n_named ? n_named : n_per_direction;
    for (size_t i = 0; i < n_read; i++) {
        const fn_info *info = n_named ? info_of_name(name) : info_of_fn(defaults[i]);
        if (!info) return KILN_ERROR_INVALID_ARGUMENT;
        if (n_named) name += strlen(name) + 1;
        acts[i].fn = info->fn;
        acts[i].alpha = info->takes_alpha && next_alpha < n_alphas ? alphas[next_alpha++] : info->alpha;
        acts[i].beta = info->takes_beta && next_beta < n_betas ? betas[next_beta++] : info->beta;
    }
    /* Unnamed directions take the first direction's functions. */
    for (size_t i = n_read; i < n_total; i++) acts[i] = acts[i % n_per_direction];
    return KILN_OK;
}

double kiln_rnn_activation_apply(const kiln_rnn_activation *act, double x)
{
    switch (act->fn) {
    case KILN_RNN_RELU: return x > 0 ? x : 0;
    case KILN_RNN_TANH: return tanh(x);
    case KILN_RNN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case KILN_RNN_AFFINE: return act->alpha * x + act->beta;
    case KILN_RNN_LEAKY_RELU: return x >= 0 ? x : act->alpha * x;
    case KILN_RNN_THRESHOLDED_RELU: return x > act->alpha ? x : 0;
    case KILN_RNN_SCALED_TANH: return act->alpha * tanh(act->beta * x);
    case KILN_RNN_HARD_SIGMOID: {
        double y = act->alpha * x + act->beta;
        return y < 0 ? 0 : y > 1 ? 1 : y;
    }
    case KILN_RNN_ELU: return x >= 0 ? x : act->alpha * (exp(x) - 1.0);
    case KILN_RNN_SOFTSIGN: return x / (1.0 + fabs(x));
    case KILN_RNN_SOFTPLUS: return log1p(exp(x));
    }
    return x;
}
