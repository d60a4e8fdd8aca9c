/* families.h — the op-family tables that registry.c combines. Each is defined in the file of
 * the same name (unary.c defines kiln_kernels_unary ...; kiln_domain.c the kiln domain's) and ends
 * with an all-zero entry.
 * Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_FAMILIES_H
#define KILN_KERNELS_PORTABLE_FAMILIES_H

#include "kernels/portable/kernel.h"

extern const kiln_kernel kiln_kernels_unary[];      /* Abs Neg Exp Log Sqrt Sin Cos Erf Not ... */
extern const kiln_kernel kiln_kernels_binary[];     /* Add Sub Mul Div Pow, comparisons, logic, Sum/Mean/Max/Min, Where */
extern const kiln_kernel kiln_kernels_activation[]; /* Relu Sigmoid Tanh LeakyRelu Elu Selu Clip PRelu ... */
extern const kiln_kernel kiln_kernels_linalg[];     /* Gemm MatMul */
extern const kiln_kernel kiln_kernels_conv[];       /* Conv ConvTranspose */
extern const kiln_kernel kiln_kernels_pool[];       /* MaxPool AveragePool Global*Pool */
extern const kiln_kernel kiln_kernels_norm[];       /* BatchNormalization InstanceNormalization LRN LayerNormalization */
extern const kiln_kernel kiln_kernels_softmax[];    /* Softmax LogSoftmax */
extern const kiln_kernel kiln_kernels_reduce[];     /* Reduce* ArgMax ArgMin CumSum */
extern const kiln_kernel kiln_kernels_shape[];      /* Reshape Flatten Squeeze Unsqueeze Shape Size Identity Dropout Expand Tile ConstantOfShape Range */
extern const kiln_kernel kiln_kernels_data[];       /* Concat Split Slice Gather Transpose Pad Trilu Cast CastLike */
/* Losses, recurrent nets, Einsum, quantization, signal windows and transforms */
extern const kiln_kernel kiln_kernels_loss[];       /* NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss */
extern const kiln_kernel kiln_kernels_rnn[];        /* RNN GRU LSTM */
extern const kiln_kernel kiln_kernels_quantize[];   /* QuantizeLinear DequantizeLinear DynamicQuantizeLinear */
extern const kiln_kernel kiln_kernels_qlinear_matmul[]; /* MatMulInteger QLinearMatMul */
extern const kiln_kernel kiln_kernels_qlinear_conv[];   /* ConvInteger QLinearConv */
extern const kiln_kernel kiln_kernels_signal_window[]; /* HannWindow HammingWindow BlackmanWindow MelWeightMatrix */
extern const kiln_kernel kiln_kernels_signal_dft[];    /* DFT STFT */
extern const kiln_kernel kiln_kernels_einsum[];        /* Einsum */
extern const kiln_kernel kiln_kernels_training[];      /* domain KILN_DOMAIN_ONNX_TRAINING: Adagrad Adam Momentum */
extern const kiln_kernel kiln_kernels_resize[];     /* Resize Upsample */
extern const kiln_kernel kiln_kernels_scatter_gather[]; /* GatherElements GatherND Scatter ScatterElements ScatterND */
extern const kiln_kernel kiln_kernels_select[];     /* TopK NonZero Compress Unique */
extern const kiln_kernel kiln_kernels_rearrange[];  /* DepthToSpace SpaceToDepth ReverseSequence EyeLike OneHot */
extern const kiln_kernel kiln_kernels_vision[];     /* GridSample RoiAlign MaxUnpool NonMaxSuppression */
extern const kiln_kernel kiln_kernels_det[];        /* Det (linalg_det.c) */
/* Domain KILN_DOMAIN_KILN (kiln_domain.c): RMSNorm RoPE Attention Linear Embed */
extern const kiln_kernel kiln_kernels_kiln_domain[];
/* The explain function (kiln_kernel_explain) of an entry of kiln_kernels_kiln_domain, or NULL. */
typedef void (*kiln_kernel_explain_fn)(const kiln_node *node, const kiln_tensor *const *in, char *why, size_t why_size);
kiln_kernel_explain_fn kiln_kernels_kiln_domain_explainer(const kiln_kernel *kernel);

#endif
