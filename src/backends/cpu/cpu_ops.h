/* cpu_ops.h — the lowered operations of the `cpu` backend and their parameters.
 *
 * Layer: backends/cpu (shared by aot/, rt/ and kernels/). A context-binary graph is a list of
 * steps; each step is one of these ops with a POD parameter block stored verbatim in the binary
 * (little-endian, fixed layout, at most KILN_CPU_PARAMS_SIZE bytes). The ahead-of-time lowering
 * (aot/) derives every field from the ONNX node and its static shapes; the runtime validates
 * params against the step's tensors (kernels/validate.c) before first use, so a corrupt binary
 * cannot make a kernel read or write out of bounds.
 *
 * All element counts, strides and sizes are in elements of float32 unless named *_bytes.
 * Tensors are dense row-major; "NCHW" layouts as in ONNX.
 */
#ifndef KILN_BACKENDS_CPU_CPU_OPS_H
#define KILN_BACKENDS_CPU_CPU_OPS_H

#include <stdint.h>

#define KILN_CPU_PARAMS_SIZE 256
#define KILN_CPU_MAX_STEP_TENSORS 8
#define KILN_CPU_MAX_RANK 8

/* The one list of lowered ops: X(NAME, value, step name, parameter struct). The value is the
 * step's `op` field in the context binary (docs/format.md): never renumber an op, give a new
 * one the next value. The enum, KILN_CPU_OP_COUNT, the step names (kiln_ctxbin_op_name) and the
 * size of each op's parameters come from this list; what the runtime does with an op's
 * parameters is its row of kiln_cpu_op_info (kernels/op_info.c). Slots of the steps:
 *   GEMM            in: A, B, [bias]            out: Y
 *   CONV2D          in: X, W, [bias], [residual] out: Y  (grouped, depthwise)
 *   POOL2D          in: X                       out: Y   (max / average / global)
 *   UNARY           in: X                       out: Y
 *   BINARY          in: A, B                    out: Y   (broadcast by strides)
 *   SOFTMAX         in: X                       out: Y
 *   LAYERNORM       in: X, scale, [bias], [residual] out: Y
 *   CHANNEL_AFFINE  in: X, scale[C], shift[C]   out: Y   (inference BatchNorm)
 *   COPY            in: X                       out: Y   (Reshape/Flatten/Identity...)
 *   TRANSPOSE       in: X                       out: Y
 *   CONCAT          in: X0 .. X6                out: Y   (rows of each input side by side; an
 *                                                         input already in its place is skipped)
 *   SLICE           in: X                       out: Y   (strided gather: Slice, Split)
 *   PAD             in: X                       out: Y   (constant, reflect, edge)
 *   WHERE           in: cond (bool), A, B       out: Y   (broadcast by strides)
 *   QLINEAR         in: X, W blocks, [bias]     out: Y   (kiln.Linear over ggml blocks)
 *   EMBED           in: W rows, ids             out: Y   (kiln.Embed: rows of W by id) */
#define KILN_CPU_OP_LIST(X)                                           \
    X(GEMM, 1, "gemm", kiln_cpu_gemm_params)                          \
    X(CONV2D, 2, "conv2d", kiln_cpu_conv_params)                      \
    X(POOL2D, 3, "pool2d", kiln_cpu_pool_params)                      \
    X(UNARY, 4, "unary", kiln_cpu_unary_params)                       \
    X(BINARY, 5, "binary", kiln_cpu_binary_params)                    \
    X(SOFTMAX, 6, "softmax", kiln_cpu_softmax_params)                 \
    X(LAYERNORM, 7, "layernorm", kiln_cpu_layernorm_params)           \
    X(CHANNEL_AFFINE, 8, "channel_affine", kiln_cpu_affine_params)    \
    X(COPY, 9, "copy", kiln_cpu_copy_params)                          \
    X(TRANSPOSE, 10, "transpose", kiln_cpu_transpose_params)          \
    X(CONCAT, 11, "concat", kiln_cpu_concat_params)                   \
    X(SLICE, 12, "slice", kiln_cpu_slice_params)                      \
    X(PAD, 13, "pad", kiln_cpu_pad_params)                            \
    X(WHERE, 14, "where", kiln_cpu_where_params)                      \
    X(QLINEAR, 15, "qlinear", kiln_cpu_qlinear_params)                \
    X(EMBED, 16, "embed", kiln_cpu_embed_params)

/* Helpers for deriving counts from the lists: one `+ 1` per row, one bit per row's value. */
#define KILN_CPU_LIST_PLUS_ONE_(name, value, ...) +1
#define KILN_CPU_LIST_BIT_(name, value, ...) | ((uint64_t)1 << (value))

typedef enum kiln_cpu_op {
#define KILN_CPU_OP_ENUM_(name, value, ...) KILN_CPU_OP_##name = value,
    KILN_CPU_OP_LIST(KILN_CPU_OP_ENUM_)
#undef KILN_CPU_OP_ENUM_
} kiln_cpu_op;
/* Table size of arrays indexed by op: index 0 unused. */
#define KILN_CPU_OP_COUNT (1 KILN_CPU_OP_LIST(KILN_CPU_LIST_PLUS_ONE_))
_Static_assert((0 KILN_CPU_OP_LIST(KILN_CPU_LIST_BIT_)) == (((uint64_t)1 << KILN_CPU_OP_COUNT) - 2),
               "ops are numbered 1 .. KILN_CPU_OP_COUNT - 1, each value once");

/* Activation applied elementwise, alone (UNARY) or fused into an epilogue. The kind is stored
 * in the binary's parameters (docs/format.md): values are fixed, a new one takes the next.
 * Two lists, one enum: activations an ONNX op of its own lowers to as a UNARY step, with the
 * attribute defaults of that op, X(NAME, value, ONNX op, default alpha, default beta) ... */
#define KILN_CPU_ACT_ONNX_LIST(X)                   \
    X(RELU, 1, "Relu", 0, 0)                        \
    X(LEAKY_RELU, 2, "LeakyRelu", 0.01f, 0)         \
    X(SIGMOID, 4, "Sigmoid", 0, 0)                  \
    X(TANH, 5, "Tanh", 0, 0)                        \
    X(HARD_SIGMOID, 6, "HardSigmoid", 0.2f, 0.5f)   \
    X(HARD_SWISH, 7, "HardSwish", 0, 0)             \
    X(ELU, 11, "Elu", 1.0f, 0)                      \
    X(EXP, 12, "Exp", 0, 0)                         \
    X(LOG, 13, "Log", 0, 0)                         \
    X(SQRT, 14, "Sqrt", 0, 0)                       \
    X(NEG, 15, "Neg", 0, 0)                         \
    X(ABS, 16, "Abs", 0, 0)                         \
    X(ERF, 17, "Erf", 0, 0)                         \
    X(RECIPROCAL, 18, "Reciprocal", 0, 0)           \
    X(SOFTPLUS, 19, "Softplus", 0, 0)
/* ... and the others, X(NAME, value, what it computes): made by fusion (a decomposed GELU or
 * SiLU), or, Clip, by a lowering with attribute rules of its own (aot_ops_elementwise.c). */
#define KILN_CPU_ACT_OTHER_LIST(X)                                  \
    X(NONE, 0, "x (no activation)")                                 \
    X(CLIP, 3, "min(max(x, alpha), beta)")                          \
    X(GELU_ERF, 8, "0.5 x (1 + erf(x / sqrt 2))")                   \
    X(GELU_TANH, 9, "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))") \
    X(SILU, 10, "x * sigmoid(x)")                                   \
    X(IDENTITY, 20, "x")
/* Of the first list: LEAKY_RELU uses alpha; HARD_SIGMOID is max(0, min(1, alpha*x + beta));
 * HARD_SWISH is x * max(0, min(1, x/6 + 1/2)); ELU uses alpha. */

typedef enum kiln_cpu_act_kind {
#define KILN_CPU_ACT_ENUM_(name, value, ...) KILN_CPU_ACT_##name = value,
    KILN_CPU_ACT_ONNX_LIST(KILN_CPU_ACT_ENUM_) KILN_CPU_ACT_OTHER_LIST(KILN_CPU_ACT_ENUM_)
#undef KILN_CPU_ACT_ENUM_
} kiln_cpu_act_kind;
#define KILN_CPU_ACT_COUNT \
    (0 KILN_CPU_ACT_ONNX_LIST(KILN_CPU_LIST_PLUS_ONE_) KILN_CPU_ACT_OTHER_LIST(KILN_CPU_LIST_PLUS_ONE_))
_Static_assert((0 KILN_CPU_ACT_ONNX_LIST(KILN_CPU_LIST_BIT_) KILN_CPU_ACT_OTHER_LIST(KILN_CPU_LIST_BIT_)) ==
                   (((uint64_t)1 << KILN_CPU_ACT_COUNT) - 1),
               "activations are numbered 0 .. KILN_CPU_ACT_COUNT - 1, each value once");

typedef struct kiln_cpu_act {
    uint32_t kind;                  /* kiln_cpu_act_kind */
    float alpha, beta;
} kiln_cpu_act;

typedef enum kiln_cpu_bias_kind {
    KILN_CPU_BIAS_NONE = 0,
    KILN_CPU_BIAS_SCALAR = 1,       /* bias[0] */
    KILN_CPU_BIAS_PER_COL = 2,      /* bias[n], length N */
    KILN_CPU_BIAS_PER_ROW = 3,      /* bias[m], length M */
    KILN_CPU_BIAS_FULL = 4,         /* bias[m * N + n], M x N (per batch: bias_batch_stride) */
} kiln_cpu_bias_kind;

/* Y[b] = act(alpha * op(A[b]) . op(B[b]) + beta * bias)  for b < batch.
 * A is activations, row-major M x K (K x M when trans_a), leading dimension lda.
 * B is either a weight block packed for the target (b_packed: layout of kiln_cpu_pack_b with
 * the target's NR, independent of batch: b_batch_stride must be 0) or activations K x N
 * (N x K when trans_b) with leading dimension ldb. Y is M x N with leading dimension ldy. */
#define KILN_CPU_PACKED_BF16 2
/* b_packed: B as the seven quadrant sums of one level of Strassen's algorithm
 * (kiln_cpu_pack_b_strassen); batch 1, M, N and K even, K / 2 within one K block of the table
 * (kiln_cpu_gemm_kc). */
#define KILN_CPU_PACKED_STRASSEN 3

typedef struct kiln_cpu_gemm_params {
    int64_t M, N, K, batch;
    int64_t lda, ldb, ldy;
    int64_t a_batch_stride, b_batch_stride, y_batch_stride, bias_batch_stride; /* 0 = shared */
    float alpha, beta;
    uint8_t trans_a, trans_b;
    uint8_t b_packed;               /* 0: B as it is; 1: kiln_cpu_pack_b panels (f32);
                                       KILN_CPU_PACKED_BF16: kiln_cpu_pack_b_bf16 pair panels
                                       (precision bf16, a BF16 weight tensor);
                                       KILN_CPU_PACKED_STRASSEN: Strassen's seven B sums */
    uint8_t bias_kind;
    uint32_t reserved;
    kiln_cpu_act act;
} kiln_cpu_gemm_params;

/* 2-D convolution, NCHW, weights [M, C/group, KH, KW] (with taps also 3-D, NCDHW). When depthwise (group == C == M, one
 * input channel per group) W is stored unpacked as [C, KH, KW]; otherwise W is packed per group
 * with kiln_cpu_pack_a (rows = M/group output channels, K = C/group*KH*KW) and the target's MR. */
typedef struct kiln_cpu_conv_params {
    int64_t N, C, H, W, M, OH, OW, KH, KW;
    int64_t stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, group;
    uint8_t has_bias, depthwise;
    uint8_t winograd;               /* 3x3, unit strides and dilation, one group: Winograd
                                       F(2x2, 3x3), filters as kiln_cpu_pack_winograd holds them */
    uint8_t pixel_rows;             /* one group, few output pixels: pixels as the GEMM's rows,
                                       filters as kiln_cpu_pack_b(W, C*KH*KW, M, trans = 1); with
                                       winograd, tiles as rows, filters as kiln_cpu_pack_winograd
                                       for NR */
    uint8_t has_residual;           /* Winograd or pixel_rows only: input 3, a tensor of Y's
                                       shape added before the activation,
                                       y = act(conv + bias + residual) */
    uint8_t bf16;                   /* precision bf16, not depthwise: W as bf16
                                       pairs, a BF16 tensor — the f32 form's panels (B panels with
                                       pixel_rows, A panels per group otherwise; Winograd's 16
                                       positions) through kiln_cpu_panels_to_bf16 */
    uint8_t taps;                   /* 3-D, or dilated 2-D: tap lists (f32-conv-taps.c); the
                                       depth fields below and the kept filter columns
                                       [kw_lo, kw_lo + kw_n) apply, W packed per group with
                                       kiln_cpu_pack_a, K = KD*KH*(C/group)*kw_n in the order
                                       (kd, kh, c, kw - kw_lo); 0: those fields are 0 */
    uint8_t reserved;
    kiln_cpu_act act;
    /* taps only: the depth axis (D = OD = KD = stride_d = dil_d = 1, pad_front = 0 for 2-D), X
       as [N, C, D, H, W], Y as [N, M, OD, OH, OW] */
    int64_t D, OD, KD, stride_d, pad_front, dil_d;
    int64_t kw_lo, kw_n;            /* the filter columns some output column sees the input
                                       through; the others only ever read padding */
} kiln_cpu_conv_params;

typedef enum kiln_cpu_pool_kind { KILN_CPU_POOL_MAX = 0, KILN_CPU_POOL_AVG = 1 } kiln_cpu_pool_kind;

/* Max/average pooling, NCHW. Global pooling is KH = H, KW = W, OH = OW = 1. Windows that run
 * past the input (padding, ceil mode) skip the missing elements; average divides by the full
 * window (count_include_pad, padded cells count, cells past pads never) or by the present count. */
typedef struct kiln_cpu_pool_params {
    int64_t N, C, H, W, OH, OW, KH, KW;
    int64_t stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w;
    uint32_t kind, count_include_pad;
} kiln_cpu_pool_params;

typedef struct kiln_cpu_unary_params {
    int64_t count;
    kiln_cpu_act act;
} kiln_cpu_unary_params;

/* Binary arithmetic, X(NAME, value, ONNX op): the kind is stored in the binary's parameters
 * (values fixed, a new one takes the next). */
#define KILN_CPU_BIN_LIST(X)                                                           \
    X(ADD, 0, "Add") X(SUB, 1, "Sub") X(MUL, 2, "Mul") X(DIV, 3, "Div") X(MAX, 4, "Max") \
    X(MIN, 5, "Min") X(POW, 6, "Pow")

typedef enum kiln_cpu_binary_kind {
#define KILN_CPU_BIN_ENUM_(name, value, ...) KILN_CPU_BIN_##name = value,
    KILN_CPU_BIN_LIST(KILN_CPU_BIN_ENUM_)
#undef KILN_CPU_BIN_ENUM_
} kiln_cpu_binary_kind;
#define KILN_CPU_BIN_COUNT (0 KILN_CPU_BIN_LIST(KILN_CPU_LIST_PLUS_ONE_))
_Static_assert((0 KILN_CPU_BIN_LIST(KILN_CPU_LIST_BIT_)) == (((uint64_t)1 << KILN_CPU_BIN_COUNT) - 1),
               "binary kinds are numbered 0 .. KILN_CPU_BIN_COUNT - 1, each value once");

/* Y = act(A op B) over out_shape; a_strides/b_strides are element strides of A and B laid over
 * out_shape (0 on broadcast dimensions). */
typedef struct kiln_cpu_binary_params {
    uint32_t kind, rank;
    int64_t out_shape[KILN_CPU_MAX_RANK];
    int64_t a_strides[KILN_CPU_MAX_RANK];
    int64_t b_strides[KILN_CPU_MAX_RANK];
    kiln_cpu_act act;
} kiln_cpu_binary_params;

/* Softmax (or log-softmax) over n elements at stride `inner`, for outer * inner independent
 * rows: element (o, i, j) is at (o * n + j) * inner + i. */
typedef struct kiln_cpu_softmax_params {
    int64_t outer, n, inner;
    uint32_t log, reserved;
} kiln_cpu_softmax_params;

/* LayerNormalization over the last n elements of outer rows; scale/bias of length n. With rms
 * set, RMS normalisation (LLaMA's RMSNorm): no mean is taken out,
 * y = x / sqrt(mean(x^2) + epsilon) * scale (+ bias). */
typedef struct kiln_cpu_layernorm_params {
    int64_t outer, n;
    float epsilon;
    uint32_t has_bias;
    uint32_t rms;
    uint32_t has_residual;          /* input 3, of X's shape, added to X before the statistics:
                                       y = norm(x + r) (a transformer's Add + LayerNormalization) */
} kiln_cpu_layernorm_params;

/* y[n, c, i] = x[n, c, i] * scale[c] + shift[c] for i < inner, then act. */
typedef struct kiln_cpu_affine_params {
    int64_t N, C, inner;
    kiln_cpu_act act;
} kiln_cpu_affine_params;

typedef struct kiln_cpu_copy_params {
    int64_t bytes;
} kiln_cpu_copy_params;

/* Y = transpose(X, perm); X has in_shape; elements of elem_size bytes. */
typedef struct kiln_cpu_transpose_params {
    uint32_t rank, elem_size;
    int64_t in_shape[KILN_CPU_MAX_RANK];
    int64_t perm[KILN_CPU_MAX_RANK];
} kiln_cpu_transpose_params;

/* Y (outer rows of out_row elements of elem_size bytes) from the step's n inputs: input i fills
 * elements [offset[i], offset[i] + row[i]) of every row from its own rows of in_row[i] elements
 * (in_row[i] = row[i] for a dense input; out_row for the partial result of an earlier CONCAT
 * step of a chain, which holds the elements before offset[i] + row[i] in place). The lowering
 * lays inputs out inside Y's bytes where it can (aot_lower_data.c): an input whose data already
 * is at its place in Y (same address, in_row = out_row or one row) is not copied. */
#define KILN_CPU_CONCAT_MAX_INPUTS (KILN_CPU_MAX_STEP_TENSORS - 1)
typedef struct kiln_cpu_concat_params {
    uint32_t n, elem_size;
    int64_t outer, out_row;
    int64_t row[KILN_CPU_CONCAT_MAX_INPUTS];
    int64_t offset[KILN_CPU_CONCAT_MAX_INPUTS];
    int64_t in_row[KILN_CPU_CONCAT_MAX_INPUTS];
} kiln_cpu_concat_params;

/* Y[i0 .. i(rank-1)] = X[offset + sum_d i_d * strides[d]] over out_shape (strides in elements,
 * negative for a backwards Slice, 0 on a dim of one element). When the lowering placed Y inside
 * X's bytes (a contiguous slice, aot_lower_data.c) the step finds Y already in place and does
 * nothing. */
typedef struct kiln_cpu_slice_params {
    uint32_t rank, elem_size;
    int64_t offset;
    int64_t out_shape[KILN_CPU_MAX_RANK];
    int64_t strides[KILN_CPU_MAX_RANK];
} kiln_cpu_slice_params;

/* The values of core/pad_index.h's kiln_pad_mode, which the kernel maps coordinates with. */
typedef enum kiln_cpu_pad_mode {
    KILN_CPU_PAD_CONSTANT = 0,
    KILN_CPU_PAD_REFLECT = 1,       /* mirrored without repeating the edge (numpy "reflect") */
    KILN_CPU_PAD_EDGE = 2,          /* the edge element repeated */
} kiln_cpu_pad_mode;

/* Y over out_shape from X of in_shape: output index o of dim d reads input index o - begin[d]
 * when in range, else the mode decides (constant: value). Negative begin crops. */
typedef struct kiln_cpu_pad_params {
    uint32_t rank, mode;
    float value;
    uint32_t reserved;
    int64_t in_shape[KILN_CPU_MAX_RANK];
    int64_t out_shape[KILN_CPU_MAX_RANK];
    int64_t begin[KILN_CPU_MAX_RANK];
} kiln_cpu_pad_params;

/* Y = cond ? A : B over out_shape; each operand laid over out_shape by element strides (0 on
 * broadcast dims); cond is bool (one byte per element). One dim fewer than the other ops, so
 * that four stride lists fit a step's parameters; the lowering merges dims first. */
#define KILN_CPU_WHERE_MAX_RANK (KILN_CPU_MAX_RANK - 1)
typedef struct kiln_cpu_where_params {
    uint32_t rank, reserved;
    int64_t out_shape[KILN_CPU_WHERE_MAX_RANK];
    int64_t cond_strides[KILN_CPU_WHERE_MAX_RANK];
    int64_t a_strides[KILN_CPU_WHERE_MAX_RANK];
    int64_t b_strides[KILN_CPU_WHERE_MAX_RANK];
} kiln_cpu_where_params;

/* Y (M x N) = X (M x K) . W^T + bias, W's N rows kept in the ggml blocks of `dtype` (kiln_dtype:
 * Q8_0 or Q4_0) exactly as the GGUF stores them, row_size bytes a row (K / 32 blocks): a U8
 * weight tensor of at least N * row_size bytes. X and Y dense; bias (has_bias) N floats. The
 * kernels convert each block's quants to f32 and accumulate in f32 (kernels/qlinear-driver.c). */
typedef struct kiln_cpu_qlinear_params {
    int64_t M, N, K;
    int64_t row_size;
    uint32_t dtype;
    uint32_t has_bias;
} kiln_cpu_qlinear_params;

/* Y (count x D) = the rows ids[t] of W (V x D), decoded to f32: W's rows kept in `dtype`
 * (kiln_dtype: Q8_0, Q4_0, or F32) exactly as the model stores them, row_size bytes a row, a U8
 * weight tensor of at least V * row_size bytes; ids `count` integers of id_dtype (I32 or I64).
 * An id outside [0, V) fails the step with KILN_ERROR_INVALID_VALUE, as the portable kiln.Embed
 * does. A tied classifier's QLINEAR reads the same W tensor (kernels/generic/x-embed-generic.c). */
typedef struct kiln_cpu_embed_params {
    int64_t V, D, count;
    int64_t row_size;
    uint32_t dtype;
    uint32_t id_dtype;
} kiln_cpu_embed_params;

#define KILN_CPU_PARAMS_FIT_(name, value, str, params) \
    _Static_assert(sizeof(params) <= KILN_CPU_PARAMS_SIZE, #params " is larger than a step's params");
KILN_CPU_OP_LIST(KILN_CPU_PARAMS_FIT_)
#undef KILN_CPU_PARAMS_FIT_

#endif
