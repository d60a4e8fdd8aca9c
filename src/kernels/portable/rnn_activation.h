/* rnn_activation.h — the named activation functions of the recurrent ops (RNN, GRU, LSTM).
 *
 * Layer: kernels/portable (internal to rnn.c). The recurrent ops name their gate functions in
 * a STRINGS attribute ("activations") with optional per-function parameters in the FLOATS
 * attributes activation_alpha and activation_beta; the parameters are consumed in order by the
 * functions that take one (as ONNX Runtime reads them), the others take their ONNX defaults.
 */
#ifndef KILN_KERNELS_PORTABLE_RNN_ACTIVATION_H
#define KILN_KERNELS_PORTABLE_RNN_ACTIVATION_H

#include "kernels/portable/kernel.h"

/* The most functions one node names: 3 per direction (LSTM), 2 directions. */
#define KILN_RNN_ACTIVATIONS_MAX 6

typedef enum kiln_rnn_fn {
    KILN_RNN_RELU, KILN_RNN_TANH, KILN_RNN_SIGMOID, KILN_RNN_AFFINE, KILN_RNN_LEAKY_RELU,
    KILN_RNN_THRESHOLDED_RELU, KILN_RNN_SCALED_TANH, KILN_RNN_HARD_SIGMOID, KILN_RNN_ELU,
    KILN_RNN_SOFTSIGN, KILN_RNN_SOFTPLUS,
} kiln_rnn_fn;

typedef struct kiln_rnn_activation {
    kiln_rnn_fn fn;
    double alpha, beta;
} kiln_rnn_activation;

/* Reads the node's activations into acts[n_per_direction * n_directions]; a node that names
   none gets the defaults (defaults[n_per_direction], repeated per direction). A node that names
   only one direction's functions for a bidirectional op gets them for both.
   KILN_ERROR_INVALID_ARGUMENT for an unknown name or a wrong count. */
kiln_status kiln_rnn_activations_read(const kiln_node *node, const kiln_rnn_fn *defaults, size_t n_per_direction,
                                      size_t n_directions, kiln_rnn_activation *acts);

/* The function applied to x. */
double kiln_rnn_activation_apply(const kiln_rnn_activation *act, double x);

#endif /* KILN_KERNELS_PORTABLE_RNN_ACTIVATION_H */
