/* elementwise_iter.h — shared machinery of the elementwise families (unary, binary, activation):
 * the inner-loop type, the broadcast driver that calls it, the dtype lists loops are generated
 * over, and the generic infer/run bodies that most elementwise ops reduce to.
 *
 * Layer: kernels/portable (internal to unary.c, binary.c, activation.c and elementwise_*.c).
 *
 * Invariant of every loop: it writes n contiguous outputs; input k advances by step[k] elements
 * per output, where step[k] is 0 (broadcast) or 1 (contiguous). The broadcast driver collapses
 * dimensions until this holds for the innermost one, so loops stay simple enough to vectorise.
 */
#ifndef KILN_KERNELS_PORTABLE_ELEMENTWISE_ITER_H
#define KILN_KERNELS_PORTABLE_ELEMENTWISE_ITER_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/portable/kernel.h"

#define KILN_EW_MAX_INPUTS 3

/* Scalar parameters of a loop: activation attributes, Clip bounds, Pow exponent kind. Bounds
   are kept both as double and as int64 so that 64-bit integer Clip stays exact. */
typedef struct kiln_ew_params {
    double alpha, beta, gamma;
    int64_t ilow, ihigh;
    bool flag_a, flag_b;
} kiln_ew_params;

typedef void (*kiln_ew_loop)(int64_t n, const void *const *in, const int64_t *step, void *out,
                             const kiln_ew_params *p);

/* Runs loop over every element of out (shape and data set), with in[0..n_in) broadcast to out's
   shape numpy-style (right-aligned; every in[k] must be broadcastable to out). n_in <= 3.
   Operands and output of dtype f16/bf16 are presented to the loop as f32 (widened in chunks,
   the output rounded back), so the f32 loop serves them: see kiln_ew_loop_for. */
void kiln_ew_apply(const kiln_tensor *const *in, size_t n_in, kiln_tensor *out, kiln_ew_loop loop,
                   const kiln_ew_params *params);
/* As kiln_ew_apply, but every element reaches the loop as stored (loops that only move bytes). */
void kiln_ew_apply_stored(const kiln_tensor *const *in, size_t n_in, kiln_tensor *out, kiln_ew_loop loop,
                          const kiln_ew_params *params);
/* The loop of loops for dtype, the f32 one for f16/bf16; NULL when there is none. */
kiln_ew_loop kiln_ew_loop_for(const kiln_ew_loop *loops, kiln_dtype dtype);
/* Element i of t as double, for every numeric dtype including f16/bf16. */
double kiln_ew_get_f64(const kiln_tensor *t, int64_t i);

/* Input i of node, or NULL when it is absent or beyond the inputs the node has. */
static inline const kiln_tensor *kiln_ew_input(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    return i < node->n_inputs ? in[i] : NULL;
}

bool kiln_ew_same_shape(const kiln_tensor *a, const kiln_tensor *b);

/* KILN_OK when t has rank <= KILN_MAX_RANK, no negative dim and an element count that fits. */
kiln_status kiln_ew_check_shape(const kiln_tensor *t);

/* Numpy broadcast of in[0..n) (NULL entries skipped) into out's rank/shape with the given dtype,
   after checking each shape and that the result's element count fits. */
kiln_status kiln_ew_broadcast_infer(const kiln_tensor *const *in, size_t n, kiln_dtype dtype, kiln_tensor *out);

/* The operands of a two-input op as its opset defines them. From opset 7 that is numpy
   broadcasting and *b_view is *b. Below 7 the legacy `broadcast`/`axis` attributes apply:
   without broadcast=1 the shapes must be equal; with it, B's dims line up with A's starting at
   `axis` (default: trailing), each equal to A's or 1, and *b_view is B reshaped to A's rank.
   Sets out's shape (not its dtype). */
kiln_status kiln_ew_binary_operands(const kiln_node *node, const kiln_tensor *a, const kiln_tensor *b,
                                    kiln_tensor *b_view, kiln_tensor *out);

/* A two-input elementwise op: one loop per dtype of the (equal) input dtypes. */
typedef struct kiln_ew_binary_op {
    const kiln_ew_loop *loops;  /* (KILN_DTYPE_COUNT), NULL where the dtype is not supported */
    bool bool_output;           /* comparisons: the output is bool whatever the input dtype */
} kiln_ew_binary_op;

kiln_status kiln_ew_binary_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 const kiln_ew_binary_op *op);
kiln_status kiln_ew_binary_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               const kiln_ew_binary_op *op, const kiln_ew_params *params);

/* A one-input elementwise op; the output has the input's shape, and its dtype unless
   bool_output (IsNaN, IsInf). */
kiln_status kiln_ew_unary_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                const kiln_ew_loop *loops, bool bool_output);
void kiln_ew_unary_run(const kiln_tensor *const *in, kiln_tensor *const *out, const kiln_ew_loop *loops,
                       const kiln_ew_params *params);

/* ---- dtype lists: X(op, suffix, T, W, DTYPE) ----
 * W is the type arithmetic on T is done in so that integer overflow wraps instead of being
 * undefined (the unsigned type of the same width); for floats it is T itself. */
#define KILN_EW_FLOAT_TYPES(X, op)                                                               \
    X(op, f32, float, float, KILN_DTYPE_F32)                                                     \
    X(op, f64, double, double, KILN_DTYPE_F64)
#define KILN_EW_SINT_TYPES(X, op)                                                                \
    X(op, i8, int8_t, uint8_t, KILN_DTYPE_I8)                                                    \
    X(op, i16, int16_t, uint16_t, KILN_DTYPE_I16)                                                \
    X(op, i32, int32_t, uint32_t, KILN_DTYPE_I32)                                                \
    X(op, i64, int64_t, uint64_t, KILN_DTYPE_I64)
#define KILN_EW_UINT_TYPES(X, op)                                                                \
    X(op, u8, uint8_t, uint8_t, KILN_DTYPE_U8)                                                   \
    X(op, u16, uint16_t, uint16_t, KILN_DTYPE_U16)                                               \
    X(op, u32, uint32_t, uint32_t, KILN_DTYPE_U32)                                               \
    X(op, u64, uint64_t, uint64_t, KILN_DTYPE_U64)
#define KILN_EW_INT_TYPES(X, op) KILN_EW_SINT_TYPES(X, op) KILN_EW_UINT_TYPES(X, op)
#define KILN_EW_SIGNED_TYPES(X, op) KILN_EW_FLOAT_TYPES(X, op) KILN_EW_SINT_TYPES(X, op)
#define KILN_EW_NUMERIC_TYPES(X, op) KILN_EW_FLOAT_TYPES(X, op) KILN_EW_INT_TYPES(X, op)

/* Table entry for the loop op_suffix, for `static const kiln_ew_loop t[KILN_DTYPE_COUNT] = {..}`. */
#define KILN_EW_ENTRY(op, sfx, T, W, DT) [DT] = op##_##sfx,

/* ---- loop generators ----
 * EXPR sees x (input 0, or the element), y (input 1) and p (the params) and yields the output. */
#define KILN_EW_LOOP1(name, TI, TO, EXPR)                                                        \
    static void name(int64_t n, const void *const *in, const int64_t *step, void *out,          \
                     const kiln_ew_params *p)                                                    \
    {                                                                                            \
        const TI *src_ = in[0];                                                                  \
        TO *dst_ = out;                                                                          \
        (void)p;                                                                                 \
        (void)step;                                                                              \
        for (int64_t i_ = 0; i_ < n; i_++) {                                                     \
            const TI x = src_[i_];                                                               \
            dst_[i_] = (TO)(EXPR);                                                               \
        }                                                                                        \
    }

/* One branch per broadcast pattern, so each inner loop has fixed strides and vectorises. */
#define KILN_EW_LOOP2(name, TA, TB, TO, EXPR)                                                    \
    static void name(int64_t n, const void *const *in, const int64_t *step, void *out,          \
                     const kiln_ew_params *p)                                                    \
    {                                                                                            \
        const TA *a_ = in[0];                                                                    \
        const TB *b_ = in[1];                                                                    \
        TO *o_ = out;                                                                            \
        (void)p;                                                                                 \
        if (step[0] && step[1]) {                                                                \
            for (int64_t i_ = 0; i_ < n; i_++) {                                                 \
                const TA x = a_[i_];                                                             \
                const TB y = b_[i_];                                                             \
                o_[i_] = (TO)(EXPR);                                                             \
            }                                                                                    \
        } else if (step[1]) {                                                                    \
            const TA x = a_[0];                                                                  \
            for (int64_t i_ = 0; i_ < n; i_++) {                                                 \
                const TB y = b_[i_];                                                             \
                o_[i_] = (TO)(EXPR);                                                             \
            }                                                                                    \
        } else if (step[0]) {                                                                    \
            const TB y = b_[0];                                                                  \
            for (int64_t i_ = 0; i_ < n; i_++) {                                                 \
                const TA x = a_[i_];                                                             \
                o_[i_] = (TO)(EXPR);                                                             \
            }                                                                                    \
        } else {                                                                                 \
            const TA x = a_[0];                                                                  \
            const TB y = b_[0];                                                                  \
            const TO v_ = (TO)(EXPR);                                                            \
            for (int64_t i_ = 0; i_ < n; i_++) o_[i_] = v_;                                      \
        }                                                                                        \
    }

/* infer/run wrappers with the kernel signature around a kiln_ew_binary_op named op##_op. */
#define KILN_EW_BINARY_KERNEL(op)                                                                \
    static kiln_status op##_infer(const kiln_node *node, const kiln_tensor *const *in,          \
                                  kiln_tensor *const *out, size_t *scratch_size)                 \
    {                                                                                            \
        (void)scratch_size;                                                                      \
        return kiln_ew_binary_infer(node, in, out, &op##_op);                                    \
    }                                                                                            \
    static kiln_status op##_run(const kiln_node *node, const kiln_tensor *const *in,            \
                                kiln_tensor *const *out, kiln_kernel_ctx *ctx)                   \
    {                                                                                            \
        (void)ctx;                                                                               \
        return kiln_ew_binary_run(node, in, out, &op##_op, NULL);                                \
    }

#endif /* KILN_KERNELS_PORTABLE_ELEMENTWISE_ITER_H */
