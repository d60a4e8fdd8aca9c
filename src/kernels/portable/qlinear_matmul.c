/* qlinear_matmul.c — portable reference kernels of the quantized matrix products:
 * MatMulInteger and QLinearMatMul.
 *
 * Layer: kernels/portable. Depends on kernel.h, matmul_plan.h and quantize_common.h.
 * These are the exact oracle later int8 kernels are checked against, so they stay plain loops:
 *   acc[i, j] = sum_k (A[i, k] - a_zero[i]) * (B[k, j] - b_zero[j])   (exact, in int64)
 * MatMulInteger returns acc as i32. QLinearMatMul requantizes it:
 *   y = saturate(round_half_even(acc * (a_scale[i] * b_scale[j] / y_scale[j])) + y_zero[j])
 * with the multiplier formed in f32 and applied in double, as ONNX's reference computes it.
 * Zero points and scales are per tensor (one element) or vectors: per row of A, per column of B
 * and of Y. A and B have numpy matmul shapes (batch broadcast, 1-D promotion: matmul_plan.h).
 */
#include <math.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/matmul_plan.h"
#include "kernels/portable/quantize_common.h"

/* The operands of one product; the zero points and scales may be NULL (0 and 1). */
typedef struct qmatmul_args {
    const kiln_tensor *a, *a_zero, *b, *b_zero;
    const kiln_tensor *a_scale, *b_scale, *y_scale, *y_zero; /* QLinearMatMul only */
} qmatmul_args;

static kiln_status args_check(const qmatmul_args *q, kiln_matmul_plan *p)
{
    if (!q->a || !q->b) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_quant_is_8bit(q->a->dtype) || !kiln_quant_is_8bit(q->b->dtype)) return KILN_ERROR_NOT_SUPPORTED;
    if ((q->a_zero && q->a_zero->dtype != q->a->dtype) || (q->b_zero && q->b_zero->dtype != q->b->dtype))
        return KILN_ERROR_DTYPE_MISMATCH;
    KILN_TRY(kiln_matmul_plan_make(q->a, q->b, p));
    const kiln_tensor *per_row[] = {q->a_zero, q->a_scale}, *per_col[] = {q->b_zero, q->b_scale, q->y_scale, q->y_zero};
    for (size_t i = 0; i < 2; i++)
        if (per_row[i] && !kiln_quant_vector_ok(per_row[i], p->m)) return KILN_ERROR_SHAPE_MISMATCH;
    for (size_t i = 0; i < 4; i++)
        if (per_col[i] && !kiln_quant_vector_ok(per_col[i], p->n)) return KILN_ERROR_SHAPE_MISMATCH;
    const kiln_tensor *scales[] = {q->a_scale, q->b_scale, q->y_scale};
    for (size_t i = 0; i < 3; i++)
        if (scales[i] && scales[i]->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (q->y_zero && !kiln_quant_is_8bit(q->y_zero->dtype)) return KILN_ERROR_NOT_SUPPORTED;
    return KILN_OK;
}

static int64_t vector_at(const kiln_tensor *t, int64_t i)
{
    return t ? kiln_tensor_get_i64(t, kiln_quant_vector_index(t, i)) : 0;
}

static float scale_at(const kiln_tensor *t, int64_t i)
{
    return ((const float *)t->data)[kiln_quant_vector_index(t, i)];
}

/* Computes every output element and stores it through out (i32, or requantized to y_zero's dtype). */
static void qmatmul_compute(const qmatmul_args *q, const kiln_matmul_plan *p, kiln_tensor *out)
{
    for (int64_t bi = 0; bi < p->batch_count; bi++) {
        int64_t a_off, b_off;
        kiln_matmul_batch_offsets(p, bi, &a_off, &b_off);
        for (int64_t i = 0; i < p->m; i++) {
            int64_t a_zero = vector_at(q->a_zero, i);
            for (int64_t j = 0; j < p->n; j++) {
                int64_t b_zero = vector_at(q->b_zero, j), acc = 0;
                for (int64_t k = 0; k < p->k; k++)
                    acc += (kiln_tensor_get_i64(q->a, a_off + i * p->k + k) - a_zero)
                           * (kiln_tensor_get_i64(q->b, b_off + k * p->n + j) - b_zero);
                int64_t o = (bi * p->m + i) * p->n + j;
                if (!q->y_scale) {
                    ((int32_t *)out->data)[o] = (int32_t)(uint32_t)acc; /* wraps as i32 accumulation would */
                    continue;
                }
                float multiplier = scale_at(q->a_scale, i) * scale_at(q->b_scale, j) / scale_at(q->y_scale, j);
                kiln_quant_store(out, o, nearbyint((double)acc * (double)multiplier) + (double)vector_at(q->y_zero, j));
            }
        }
    }
}

static const kiln_tensor *input_of(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    return i < node->n_inputs ? in[i] : NULL;
}

static qmatmul_args matmul_integer_args(const kiln_node *node, const kiln_tensor *const *in)
{
    return (qmatmul_args){.a = in[0], .b = input_of(node, in, 1), .a_zero = input_of(node, in, 2),
                          .b_zero = input_of(node, in, 3)};
}

static qmatmul_args qlinear_matmul_args(const kiln_node *node, const kiln_tensor *const *in)
{
    return (qmatmul_args){.a = in[0], .a_scale = input_of(node, in, 1), .a_zero = input_of(node, in, 2),
                          .b = input_of(node, in, 3), .b_scale = input_of(node, in, 4), .b_zero = input_of(node, in, 5),
                          .y_scale = input_of(node, in, 6), .y_zero = input_of(node, in, 7)};
}

static kiln_status qmatmul_infer(const qmatmul_args *q, kiln_tensor *out)
{
    if (!out) return KILN_ERROR_INVALID_ARGUMENT;
    if (q->y_scale && (!q->a_scale || !q->b_scale || !q->y_zero)) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_matmul_plan p;
    KILN_TRY(args_check(q, &p));
    kiln_matmul_output_shape(&p, q->a, q->b, q->y_zero ? q->y_zero->dtype : KILN_DTYPE_I32, out);
    return kiln_tensor_numel(out) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

static kiln_status qmatmul_run(const qmatmul_args *q, kiln_tensor *out)
{
    kiln_matmul_plan p;
    KILN_TRY(args_check(q, &p));
    qmatmul_compute(q, &p, out);
    return KILN_OK;
}

static kiln_status matmul_integer_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                        size_t *scratch_size)
{
    (void)scratch_size;
    qmatmul_args q = matmul_integer_args(node, in);
    return qmatmul_infer(&q, out[0]);
}

static kiln_status matmul_integer_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_kernel_ctx *ctx)
{
    (void)ctx;
    qmatmul_args q = matmul_integer_args(node, in);
    return qmatmul_run(&q, out[0]);
}

static kiln_status qlinear_matmul_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                        size_t *scratch_size)
{
    (void)scratch_size;
    qmatmul_args q = qlinear_matmul_args(node, in);
    return qmatmul_infer(&q, out[0]);
}

static kiln_status qlinear_matmul_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_kernel_ctx *ctx)
{
    (void)ctx;
    qmatmul_args q = qlinear_matmul_args(node, in);
    return qmatmul_run(&q, out[0]);
}

const kiln_kernel kiln_kernels_qlinear_matmul[] = {
    {"MatMulInteger", 10, matmul_integer_infer, matmul_integer_run, {{0, 2, 4, 1, 1}}, ""},
    {"QLinearMatMul", 10, qlinear_matmul_infer, qlinear_matmul_run, {{0, 8, 8, 1, 1}}, ""},
    {0},
};
