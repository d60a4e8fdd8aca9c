/* reduce.c — portable kernels of the reduce family: the family table, and the Reduce* ops.
 *
 * Layer: kernels/portable. ArgMax/ArgMin live in reduce_arg.c and CumSum in reduce_cumsum.c.
 *
 * Reduce* semantics by version:
 *  - the axes come from the `axes` attribute, except ReduceSum from opset 13 and every Reduce*
 *    from opset 18, where they are the optional second input;
 *  - no axes (or an empty list) reduces every axis, unless noop_with_empty_axes (input form
 *    only) asks for the input unchanged;
 *  - keepdims (default 1) keeps reduced axes as 1s.
 * Each output element is one independent reduction (reduce_plan.h). Its elements are gathered
 * into a dense row (reduce_row.h): float inputs are reduced in double, integer inputs in int64
 * with wrapping arithmetic (as a C cast of the exact result would wrap); ReduceL2, ReduceLogSum
 * and ReduceLogSumExp of integers pass through double and truncate, as ONNX's numpy reference does.
 */
#include <math.h>
#include <string.h>

#include "kernels/portable/families.h"
#include "kernels/portable/reduce_kernels.h"
#include "kernels/portable/reduce_plan.h"
#include "kernels/portable/reduce_row.h"

typedef enum reduce_kind {
    REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD,
    REDUCE_L1, REDUCE_L2, REDUCE_LOG_SUM, REDUCE_LOG_SUM_EXP, REDUCE_SUM_SQUARE,
} reduce_kind;

static const struct {
    const char *op;
    reduce_kind kind;
} reduce_ops[] = {
    {"ReduceSum", REDUCE_SUM},       {"ReduceMean", REDUCE_MEAN},     {"ReduceMax", REDUCE_MAX},
    {"ReduceMin", REDUCE_MIN},       {"ReduceProd", REDUCE_PROD},     {"ReduceL1", REDUCE_L1},
    {"ReduceL2", REDUCE_L2},         {"ReduceLogSum", REDUCE_LOG_SUM}, {"ReduceLogSumExp", REDUCE_LOG_SUM_EXP},
    {"ReduceSumSquare", REDUCE_SUM_SQUARE},
};

static reduce_kind kind_of(const kiln_node *node)
{
    for (size_t i = 0; i < sizeof reduce_ops / sizeof reduce_ops[0]; i++)
        if (strcmp(reduce_ops[i].op, node->op) == 0) return reduce_ops[i].kind;
    return REDUCE_SUM; /* unreachable: the table below only registers the names above */
}

static bool axes_from_input(const kiln_node *node)
{
    return node->opset >= 18 || (kind_of(node) == REDUCE_SUM && node->opset >= 13);
}

static void mask_fill(bool *mask, uint32_t rank, bool value)
{
    for (uint32_t d = 0; d < rank; d++) mask[d] = value;
}

/* Which axes the node reduces: fills mask; *noop is set when the op must copy its input. */
static kiln_status resolve_axes(const kiln_node *node, const kiln_tensor *const *in, bool *mask, bool *noop)
{
    const kiln_tensor *x = in[0];
    *noop = false;
    if (!axes_from_input(node)) {
        if (node->n_inputs > 1) return KILN_ERROR_INVALID_ARGUMENT;
        const kiln_attr *attr = kiln_node_attr(node, "axes");
        if (!attr) {
            mask_fill(mask, x->rank, true);
            return KILN_OK;
        }
        if (attr->type != KILN_ATTR_INTS) return KILN_ERROR_INVALID_ARGUMENT;
        if (attr->n == 0) {
            mask_fill(mask, x->rank, true);
            return KILN_OK;
        }
        return kiln_reduce_axes_mask(attr->ints, attr->n, x->rank, mask);
    }
    if (node->n_inputs > 2 || kiln_node_attr(node, "axes")) return KILN_ERROR_INVALID_ARGUMENT;
    const kiln_tensor *axes = node->n_inputs > 1 ? in[1] : NULL;
    if (axes) {
        if (axes->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
        if (axes->rank != 1) return KILN_ERROR_SHAPE_MISMATCH;
        if (axes->shape[0] > 0) {
            if (!axes->data) return KILN_ERROR_SHAPE_UNKNOWN;
            return kiln_reduce_axes_mask_tensor(axes, x->rank, mask);
        }
    }
    *noop = kiln_node_attr_int(node, "noop_with_empty_axes", 0) != 0;
    mask_fill(mask, x->rank, !*noop);
    return KILN_OK;
}

static kiln_status check_input_dtype(kiln_dtype dtype)
{
    if (dtype == KILN_DTYPE_BOOL) return KILN_ERROR_DTYPE_MISMATCH;
    /* u64 would need unsigned max/min; f16/bf16 have no portable arithmetic here. */
    if (!kiln_reduce_row_dtype_ok(dtype) || dtype == KILN_DTYPE_U64) return KILN_ERROR_NOT_SUPPORTED;
    return KILN_OK;
}

static kiln_status reduce_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    const kiln_tensor *x = in[0];
    if (!x || !out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_status st = check_input_dtype(x->dtype);
    if (st != KILN_OK) return st;
    int64_t keepdims = kiln_node_attr_int(node, "keepdims", 1);
    if (keepdims != 0 && keepdims != 1) return KILN_ERROR_INVALID_ARGUMENT;

    bool mask[KILN_MAX_RANK];
    bool noop;
    st = resolve_axes(node, in, mask, &noop);
    if (st != KILN_OK) return st;
    if (noop) {
        kiln_tensor_set_shape(out[0], x->dtype, x->rank, x->shape);
        return KILN_OK;
    }
    int64_t shape[KILN_MAX_RANK];
    uint32_t rank;
    kiln_reduce_out_shape(x, mask, keepdims != 0, shape, &rank);
    kiln_tensor_set_shape(out[0], x->dtype, rank, shape);
    kiln_reduce_plan plan;
    kiln_reduce_plan_init(&plan, x, mask);
    /* offsets (n_inner int64) then the gathered row (n_inner doubles or int64s) */
    *scratch_size = (size_t)plan.n_inner * 2 * sizeof(int64_t);
    return KILN_OK;
}

static double max_f64(const double *v, int64_t n)
{
    double m = -INFINITY;
    for (int64_t k = 0; k < n; k++) {
        if (isnan(v[k])) return v[k];
        if (v[k] > m) m = v[k];
    }
    return m;
}

static double min_f64(const double *v, int64_t n)
{
    double m = INFINITY;
    for (int64_t k = 0; k < n; k++) {
        if (isnan(v[k])) return v[k];
        if (v[k] < m) m = v[k];
    }
    return m;
}

/* Stable log(sum(exp(v))): shift by the maximum so no exp overflows. */
static double log_sum_exp_f64(const double *v, int64_t n)
{
    double m = max_f64(v, n);
    if (isnan(m) || isinf(m)) return m; /* NaN, +inf, or -inf for all -inf / empty */
    double s = 0.0;
    for (int64_t k = 0; k < n; k++) s += exp(v[k] - m);
    return m + log(s);
}

static double reduce_row_f64(reduce_kind kind, const double *v, int64_t n)
{
    double acc = 0.0;
    switch (kind) {
    case REDUCE_MAX: return max_f64(v, n);
    case REDUCE_MIN: return min_f64(v, n);
    case REDUCE_LOG_SUM_EXP: return log_sum_exp_f64(v, n);
    case REDUCE_PROD:
        acc = 1.0;
        for (int64_t k = 0; k < n; k++) acc *= v[k];
        return acc;
    case REDUCE_L1:
        for (int64_t k = 0; k < n; k++) acc += fabs(v[k]);
        return acc;
    case REDUCE_L2:
    case REDUCE_SUM_SQUARE:
        for (int64_t k = 0; k < n; k++) acc += v[k] * v[k];
        return kind == REDUCE_L2 ? sqrt(acc) : acc;
    case REDUCE_SUM:
    case REDUCE_MEAN:
    case REDUCE_LOG_SUM:
        for (int64_t k = 0; k < n; k++) acc += v[k];
        if (kind == REDUCE_MEAN) return acc / (double)n; /* empty: 0/0 = NaN, as numpy */
        if (kind == REDUCE_LOG_SUM) return log(acc);
        return acc;
    }
    return acc;
}

/* Integer arithmetic wraps modulo 2^64 (done in uint64_t: signed overflow is undefined). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t wrap_abs(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }

static int64_t reduce_row_i64(reduce_kind kind, const int64_t *v, int64_t n)
{
    int64_t acc = 0;
    switch (kind) {
    case REDUCE_MAX:
        acc = INT64_MIN;
        for (int64_t k = 0; k < n; k++) acc = v[k] > acc ? v[k] : acc;
        return acc;
    case REDUCE_MIN:
        acc = INT64_MAX;
        for (int64_t k = 0; k < n; k++) acc = v[k] < acc ? v[k] : acc;
        return acc;
    case REDUCE_PROD:
        acc = 1;
        for (int64_t k = 0; k < n; k++) acc = wrap_mul(acc, v[k]);
        return acc;
    case REDUCE_L1:
        for (int64_t k = 0; k < n; k++) acc = wrap_add(acc, wrap_abs(v[k]));
        return acc;
    case REDUCE_SUM_SQUARE:
        for (int64_t k = 0; k < n; k++) acc = wrap_add(acc, wrap_mul(v[k], v[k]));
        return acc;
    case REDUCE_SUM:
    case REDUCE_MEAN:
        for (int64_t k = 0; k < n; k++) acc = wrap_add(acc, v[k]);
        return kind == REDUCE_MEAN && n > 0 ? acc / n : acc;
    case REDUCE_L2:
    case REDUCE_LOG_SUM:
    case REDUCE_LOG_SUM_EXP: {
        /* Through double: the results are irrational in general and get truncated. */
        double d = 0.0, m = -INFINITY;
        for (int64_t k = 0; k < n; k++) m = (double)v[k] > m ? (double)v[k] : m;
        for (int64_t k = 0; k < n; k++) {
            double x = (double)v[k];
            d += kind == REDUCE_L2 ? x * x : kind == REDUCE_LOG_SUM ? x : exp(x - m);
        }
        double r = kind == REDUCE_L2 ? sqrt(d) : kind == REDUCE_LOG_SUM ? log(d) : m + log(d);
        return kiln_reduce_f64_to_i64(r);
    }
    }
    return acc;
}

static kiln_status reduce_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    const kiln_tensor *x = in[0];
    kiln_tensor *y = out[0];
    bool mask[KILN_MAX_RANK];
    bool noop;
    kiln_status st = resolve_axes(node, in, mask, &noop);
    if (st != KILN_OK) return st == KILN_ERROR_INVALID_ARGUMENT ? KILN_ERROR_INVALID_VALUE : st;
    if (noop) {
        memcpy(y->data, x->data, kiln_tensor_bytes(x));
        return KILN_OK;
    }
    kiln_reduce_plan plan;
    kiln_reduce_plan_init(&plan, x, mask);
    /* The axes input may have been unknown when the buffers were planned: insist that the data
       seen now produce the output that was planned. */
    if (plan.n_outer != kiln_numel(y) || ctx->scratch_size < (size_t)plan.n_inner * 2 * sizeof(int64_t))
        return KILN_ERROR_INVALID_VALUE;

    reduce_kind kind = kind_of(node);
    int64_t *offsets = ctx->scratch; /* (n_inner) */
    /* (n_inner) doubles or int64s; an empty reduction has no scratch at all */
    void *row = plan.n_inner > 0 ? (void *)(offsets + plan.n_inner) : NULL;
    kiln_reduce_plan_offsets(&plan, offsets);
    bool is_float = kiln_reduce_row_is_float(x->dtype);
    for (int64_t o = 0; o < plan.n_outer; o++) {
        int64_t base = kiln_reduce_plan_base(&plan, o);
        if (is_float) {
            kiln_reduce_row_gather_f64(x, base, offsets, plan.n_inner, row);
            double r = reduce_row_f64(kind, row, plan.n_inner);
            kiln_reduce_row_store_f64(y, o, 1, 1, &r);
        } else {
            kiln_reduce_row_gather_i64(x, base, offsets, plan.n_inner, row);
            int64_t r = reduce_row_i64(kind, row, plan.n_inner);
            kiln_reduce_row_store_i64(y, o, 1, 1, &r);
        }
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_reduce[] = {
    {"ReduceSum", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {13, 1, 2, 1, 1}},
     "axes:I keepdims:i noop_with_empty_axes:i"},
    {"ReduceMean", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceMax", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceMin", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceProd", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceL1", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceL2", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceLogSum", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceLogSumExp", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ReduceSumSquare", 1, reduce_infer, reduce_run, {{0, 1, 1, 1, 1}, {18, 1, 2, 1, 1}}, "axes:I keepdims:i"},
    {"ArgMax", 1, kiln_reduce_arg_infer, kiln_reduce_arg_run, {{0, 1, 1, 1, 1}},
     "axis:i keepdims:i select_last_index:i"},
    {"ArgMin", 1, kiln_reduce_arg_infer, kiln_reduce_arg_run, {{0, 1, 1, 1, 1}},
     "axis:i keepdims:i select_last_index:i"},
    {"CumSum", 11, kiln_reduce_cumsum_infer, kiln_reduce_cumsum_run, {{0, 2, 2, 1, 1}}, "exclusive:i reverse:i"},
    {0},
};
