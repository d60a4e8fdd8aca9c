/* linalg.c — portable kernels of the linalg family: Gemm and MatMul (see families.h).
 *
 * Layer: kernels/portable. Both ops run their f32 case on the shared blocked GEMM (gemm_f32.h),
 * whose packing buffers come from the scratch infer() reports and which spreads each product
 * over the module's threads (kiln_gemm_f32_parallel). MatMul also takes f64 and the
 * integer types through a plain triple loop (they are rare and small in real models).
 *
 * Gemm versions: opset 1-6 carry a `broadcast` attribute for C (0: C is exactly (M, N)); from 7
 * C is unidirectionally broadcast to (M, N); from 11 C is optional.
 */
#include <string.h>

#include "kernels/portable/families.h"
#include "kernels/portable/gemm_f32.h"
#include "kernels/portable/matmul_plan.h"

/* ---- Gemm ---------------------------------------------------------------------------------- */

typedef struct gemm_dims {
    int64_t m, n, k;
    bool trans_a, trans_b;
} gemm_dims;

static kiln_status gemm_read_dims(const kiln_node *node, const kiln_tensor *a, const kiln_tensor *b, gemm_dims *d)
{
    if (a->rank != 2 || b->rank != 2) return KILN_ERROR_SHAPE_MISMATCH;
    d->trans_a = kiln_node_attr_int(node, "transA", 0) != 0;
    d->trans_b = kiln_node_attr_int(node, "transB", 0) != 0;
    d->m = d->trans_a ? a->shape[1] : a->shape[0];
    d->k = d->trans_a ? a->shape[0] : a->shape[1];
    int64_t kb = d->trans_b ? b->shape[1] : b->shape[0];
    d->n = d->trans_b ? b->shape[0] : b->shape[1];
    return kb == d->k ? KILN_OK : KILN_ERROR_SHAPE_MISMATCH;
}

/* C must broadcast to (m, n) in one direction: rank <= 2, each dim 1 or the target. Before
   opset 7 with broadcast == 0, C must already be (m, n). */
static kiln_status gemm_check_bias(const kiln_node *node, const kiln_tensor *c, const gemm_dims *d)
{
    if (c->rank > 2) return KILN_ERROR_SHAPE_MISMATCH;
    bool legacy_exact = node->opset < 7 && kiln_node_attr_int(node, "broadcast", 0) == 0;
    if (legacy_exact && (c->rank != 2 || c->shape[0] != d->m || c->shape[1] != d->n))
        return KILN_ERROR_SHAPE_MISMATCH;
    const int64_t target[2] = {d->m, d->n};
    for (uint32_t i = 0; i < c->rank; i++) {
        int64_t dim = c->shape[i], want = target[2 - c->rank + i];
        if (dim != 1 && dim != want) return KILN_ERROR_SHAPE_MISMATCH;
    }
    return KILN_OK;
}

static kiln_status gemm_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size)
{
    const kiln_tensor *a = in[0], *b = node->n_inputs > 1 ? in[1] : NULL, *c = node->n_inputs > 2 ? in[2] : NULL;
    if (!a || !b || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    if (!c && node->opset < 11) return KILN_ERROR_INVALID_ARGUMENT;
    if (a->dtype != b->dtype || (c && c->dtype != a->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    if (a->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    gemm_dims d;
    kiln_status st = gemm_read_dims(node, a, b, &d);
    if (st != KILN_OK) return st;
    if (c && (st = gemm_check_bias(node, c, &d)) != KILN_OK) return st;
    const int64_t shape[2] = {d.m, d.n};
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, 2, shape);
    if (kiln_tensor_numel(out[0]) < 0) return KILN_ERROR_LIMIT;
    *scratch_size = kiln_gemm_f32_scratch_size(d.m, d.n, d.k);
    return KILN_OK;
}

/* y (m, n) = C broadcast to (m, n). */
static void gemm_fill_bias(const kiln_tensor *c, int64_t m, int64_t n, float *y)
{
    const float *src = c->data;
    int64_t rows = c->rank == 2 ? c->shape[0] : 1;
    int64_t cols = c->rank >= 1 ? c->shape[c->rank - 1] : 1;
    for (int64_t i = 0; i < m; i++) {
        const float *row = src + (rows == 1 ? 0 : i) * cols;
        float *dst = y + i * n;
        if (cols == 1)
            for (int64_t j = 0; j < n; j++) dst[j] = row[0];
        else
            memcpy(dst, row, (size_t)n * sizeof *dst);
    }
}

static kiln_status gemm_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    const kiln_tensor *a = in[0], *b = in[1], *c = node->n_inputs > 2 ? in[2] : NULL;
    gemm_dims d;
    kiln_status st = gemm_read_dims(node, a, b, &d);
    if (st != KILN_OK) return st;
    float alpha = kiln_node_attr_float(node, "alpha", 1.0f);
    float beta = kiln_node_attr_float(node, "beta", 1.0f);
    float *y = out[0]->data;
    /* op(A) element (i, p) and op(B) element (p, j) as strides over the stored matrices. */
    kiln_gemm_f32_operand op_a = {a->data, d.trans_a ? 1 : d.k, d.trans_a ? d.m : 1};
    kiln_gemm_f32_operand op_b = {b->data, d.trans_b ? 1 : d.n, d.trans_b ? d.k : 1};
    if (c && beta != 0.0f) gemm_fill_bias(c, d.m, d.n, y);
    else beta = 0.0f;
    kiln_gemm_f32_parallel(d.m, d.n, d.k, alpha, op_a, op_b, beta, y, d.n, ctx->scratch, ctx);
    return KILN_OK;
}

/* ---- MatMul (numpy matmul semantics) -------------------------------------------------------- */

static bool matmul_dtype_supported(kiln_dtype t)
{
    switch (t) {
    case KILN_DTYPE_F32: case KILN_DTYPE_F64: case KILN_DTYPE_I32: case KILN_DTYPE_I64:
    case KILN_DTYPE_U32: case KILN_DTYPE_U64: return true;
    default: return false;
    }
}

static kiln_status matmul_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    const kiln_tensor *a = in[0], *b = node->n_inputs > 1 ? in[1] : NULL;
    if (!a || !b || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    if (a->dtype != b->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    if (!matmul_dtype_supported(a->dtype)) return KILN_ERROR_NOT_SUPPORTED;
    kiln_matmul_plan p;
    kiln_status st = kiln_matmul_plan_make(a, b, &p);
    if (st != KILN_OK) return st;
    kiln_matmul_output_shape(&p, a, b, a->dtype, out[0]);
    if (kiln_tensor_numel(out[0]) < 0) return KILN_ERROR_LIMIT;
    if (a->dtype == KILN_DTYPE_F32)
        *scratch_size = kiln_gemm_f32_scratch_size(p.fold_batch ? p.batch_count * p.m : p.m, p.n, p.k);
    return KILN_OK;
}

static void matmul_f32(const kiln_matmul_plan *p, const float *a, const float *b, float *y, const kiln_kernel_ctx *ctx)
{
    void *scratch = ctx->scratch;
    if (p->fold_batch) {
        kiln_gemm_f32_operand op_a = {a, p->k, 1}, op_b = {b, p->n, 1};
        kiln_gemm_f32_parallel(p->batch_count * p->m, p->n, p->k, 1.0f, op_a, op_b, 0.0f, y, p->n, scratch, ctx);
        return;
    }
    for (int64_t i = 0; i < p->batch_count; i++) {
        int64_t a_off, b_off;
        kiln_matmul_batch_offsets(p, i, &a_off, &b_off);
        kiln_gemm_f32_operand op_a = {a + a_off, p->k, 1}, op_b = {b + b_off, p->n, 1};
        kiln_gemm_f32_parallel(p->m, p->n, p->k, 1.0f, op_a, op_b, 0.0f, y + i * p->m * p->n, p->n, scratch, ctx);
    }
}

/* The plain loop for the other dtypes; the i-p-j order streams rows of B and Y. Integer
   products wrap like the unsigned arithmetic used for them (no signed-overflow UB). */
#define MATMUL_NAIVE(NAME, T, ACC_T)                                                              \
    static void NAME(const kiln_matmul_plan *p, const T *a, const T *b, T *y)                         \
    {                                                                                            \
        for (int64_t bi = 0; bi < p->batch_count; bi++) {                                        \
            int64_t a_off, b_off;                                                                \
            kiln_matmul_batch_offsets(p, bi, &a_off, &b_off);                                         \
            T *yb = y + bi * p->m * p->n;                                                        \
            for (int64_t i = 0; i < p->m; i++) {                                                 \
                T *row = yb + i * p->n;                                                          \
                for (int64_t j = 0; j < p->n; j++) row[j] = 0;                                   \
                for (int64_t q = 0; q < p->k; q++) {                                             \
                    ACC_T av = (ACC_T)a[a_off + i * p->k + q];                                   \
                    const T *brow = b + b_off + q * p->n;                                        \
                    for (int64_t j = 0; j < p->n; j++) row[j] = (T)((ACC_T)row[j] + av * (ACC_T)brow[j]); \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }
MATMUL_NAIVE(matmul_f64, double, double)
MATMUL_NAIVE(matmul_i32, int32_t, uint32_t)
MATMUL_NAIVE(matmul_i64, int64_t, uint64_t)
MATMUL_NAIVE(matmul_u32, uint32_t, uint32_t)
MATMUL_NAIVE(matmul_u64, uint64_t, uint64_t)
#undef MATMUL_NAIVE

static kiln_status matmul_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    const kiln_tensor *a = in[0], *b = in[1];
    kiln_matmul_plan p;
    kiln_status st = kiln_matmul_plan_make(a, b, &p);
    if (st != KILN_OK) return st;
    void *y = out[0]->data;
    switch (a->dtype) {
    case KILN_DTYPE_F32: matmul_f32(&p, a->data, b->data, y, ctx); break;
    case KILN_DTYPE_F64: matmul_f64(&p, a->data, b->data, y); break;
    case KILN_DTYPE_I32: matmul_i32(&p, a->data, b->data, y); break;
    case KILN_DTYPE_I64: matmul_i64(&p, a->data, b->data, y); break;
    case KILN_DTYPE_U32: matmul_u32(&p, a->data, b->data, y); break;
    case KILN_DTYPE_U64: matmul_u64(&p, a->data, b->data, y); break;
    default: return KILN_ERROR_NOT_SUPPORTED;
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_linalg[] = {
    {"Gemm", 1, gemm_infer, gemm_run, {{0, 3, 3, 1, 1}, {11, 2, 3, 1, 1}},
     "alpha:f beta:f broadcast:i transA:i transB:i"},
    {"MatMul", 1, matmul_infer, matmul_run, {{0, 2, 2, 1, 1}}, ""},
    {0},
};
