/* training.c — portable kernels of ONNX's training optimizers (domain ai.onnx.preview.training,
 * version 1): Adagrad, Momentum, Adam.
 *
 * Layer: kernels/portable. Depends on kernel.h and the row helpers.
 * Each takes a learning rate R (float scalar), an update count T (i64 scalar) and n groups of
 * same-shaped tensors, laid out by kind: X1..Xn, G1..Gn, then the optimizer's state (Adagrad:
 * H; Momentum: V; Adam: V, H). Its outputs are the new X1..Xn and then the new states in the same
 * order. One element of every group is updated at a time, in double, by the op's formula
 * (step_fn); the formulas are ONNX's, quoted at each.
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/reduce_row.h"

typedef enum optimizer { ADAGRAD, MOMENTUM, ADAM } optimizer;

/* Tensors per group in the inputs (X, G and the states). */
static const size_t group_inputs[] = {3, 3, 4};

typedef struct optimizer_args {
    double r;      /* learning rate */
    int64_t t;     /* update count */
    double decay_factor, epsilon, norm_coefficient, norm_coefficient_post, alpha, beta;
    bool nesterov;
} optimizer_args;

static kiln_status args_read(const kiln_node *node, optimizer kind, optimizer_args *a)
{
    a->decay_factor = kiln_node_attr_float(node, "decay_factor", 0.0f);
    a->epsilon = kiln_node_attr_float(node, "epsilon", kind == ADAGRAD || kind == ADAM ? 1e-6f : 0.0f);
    a->norm_coefficient = kiln_node_attr_float(node, "norm_coefficient", 0.0f);
    a->norm_coefficient_post = kiln_node_attr_float(node, "norm_coefficient_post", 0.0f);
    a->alpha = kiln_node_attr_float(node, "alpha", kind == ADAM ? 0.9f : 0.0f);
    a->beta = kiln_node_attr_float(node, "beta", kind == ADAM ? 0.999f : 0.0f);
    a->nesterov = false;
    if (kind == MOMENTUM) {
        /* alpha, beta, mode and norm_coefficient have no default in Momentum. */
        const char *mode = kiln_node_attr_string(node, "mode", NULL);
        if (!mode || !kiln_node_attr(node, "alpha") || !kiln_node_attr(node, "beta") ||
            !kiln_node_attr(node, "norm_coefficient"))
            return KILN_ERROR_INVALID_ARGUMENT;
        if (strcmp(mode, "nesterov") == 0) a->nesterov = true;
        else if (strcmp(mode, "standard") != 0) return KILN_ERROR_INVALID_ARGUMENT;
    }
    return KILN_OK;
}

static bool is_scalar(const kiln_tensor *t) { return t->rank == 0 || (t->rank == 1 && t->shape[0] == 1); }

static bool same_shape(const kiln_tensor *a, const kiln_tensor *b)
{
    if (a->rank != b->rank || a->dtype != b->dtype) return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

/* The group count n, after checking every input. */
static kiln_status groups_check(const kiln_node *node, const kiln_tensor *const *in, optimizer kind, size_t *n_out)
{
    size_t k = group_inputs[kind];
    if (node->n_inputs < 2 + k || (node->n_inputs - 2) % k != 0) return KILN_ERROR_INVALID_ARGUMENT;
    size_t n = (node->n_inputs - 2) / k;
    if (node->n_outputs > (k - 1) * n) return KILN_ERROR_INVALID_ARGUMENT;
    const kiln_tensor *r = in[0], *t = in[1];
    if (!r || !t || !is_scalar(r) || !is_scalar(t)) return KILN_ERROR_SHAPE_MISMATCH;
    if (!kiln_reduce_row_is_float(r->dtype) || t->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
    for (size_t i = 0; i < n; i++) {
        const kiln_tensor *x = in[2 + i];
        if (!x) return KILN_ERROR_INVALID_ARGUMENT;
        if (!kiln_reduce_row_is_float(x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
        for (size_t s = 1; s < k; s++)
            if (!in[2 + s * n + i] || !same_shape(in[2 + s * n + i], x)) return KILN_ERROR_SHAPE_MISMATCH;
    }
    *n_out = n;
    return KILN_OK;
}

static kiln_status optimizer_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   optimizer kind)
{
    size_t n;
    KILN_TRY(groups_check(node, in, kind, &n));
    optimizer_args a;
    KILN_TRY(args_read(node, kind, &a));
    /* Output s * n + i is the new X_i (s = 0) or the new state s of group i: X_i's shape. */
    for (size_t j = 0; j < node->n_outputs; j++)
        if (out[j]) kiln_tensor_set_shape(out[j], in[2 + j % n]->dtype, in[2 + j % n]->rank, in[2 + j % n]->shape);
    return KILN_OK;
}

/* One element: x, g and the states st[] in; the new x and states out. */
static void step(optimizer kind, const optimizer_args *a, double x, double g, double *st)
{
    double g_reg = a->norm_coefficient * x + g; /* G_regularized = norm_coefficient * X + G */
    switch (kind) {
    case ADAGRAD: {
        double r = a->r / (1.0 + (double)a->t * a->decay_factor); /* r = R / (1 + T * decay_factor) */
        double h = st[0] + g_reg * g_reg;                           /* H_new = H + G_regularized^2 */
        st[0] = x - r * g_reg / (sqrt(h) + a->epsilon);             /* X - r * G_reg / (sqrt(H_new) + epsilon) */
        st[1] = h;
        return;
    }
    case MOMENTUM: {
        double beta = a->t > 0 ? a->beta : 1.0;     /* beta_adjusted = T > 0 ? beta : 1 */
        double v = a->alpha * st[0] + beta * g_reg; /* V_new = alpha * V + beta_adjusted * G_regularized */
        st[0] = a->nesterov ? x - a->r * (g_reg + a->alpha * v) : x - a->r * v;
        st[1] = v;
        return;
    }
    case ADAM: {
        double v = a->alpha * st[0] + (1.0 - a->alpha) * g_reg;       /* V_new */
        double h = a->beta * st[1] + (1.0 - a->beta) * g_reg * g_reg; /* H_new */
        double r = a->t > 0 ? a->r * sqrt(1.0 - pow(a->beta, (double)a->t)) / (1.0 - pow(a->alpha, (double)a->t))
                            : a->r;                                   /* R_adjusted */
        double x_new = x - r * v / (sqrt(h) + a->epsilon);
        st[0] = (1.0 - a->norm_coefficient_post) * x_new; /* X_final */
        st[1] = v;
        st[2] = h;
        return;
    }
    }
}

static kiln_status optimizer_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 optimizer kind)
{
    size_t n, k = group_inputs[kind];
    KILN_TRY(groups_check(node, in, kind, &n));
    optimizer_args a;
    KILN_TRY(args_read(node, kind, &a));
    a.r = kiln_tensor_get_f64(in[0], 0);
    a.t = kiln_tensor_get_i64(in[1], 0);
    for (size_t i = 0; i < n; i++) {
        int64_t numel = kiln_numel(in[2 + i]);
        for (int64_t e = 0; e < numel; e++) {
            double x = kiln_tensor_get_f64(in[2 + i], e), g = kiln_tensor_get_f64(in[2 + n + i], e);
            double st[3] = {0}; /* the states in; then X_new and the new states */
            for (size_t s = 2; s < k; s++) st[s - 2] = kiln_tensor_get_f64(in[2 + s * n + i], e);
            step(kind, &a, x, g, st);
            for (size_t s = 0; s + 1 < k; s++)
                if (s * n + i < node->n_outputs && out[s * n + i]) kiln_reduce_row_store_f64(out[s * n + i], e, 1, 1, &st[s]);
        }
    }
    return KILN_OK;
}

#define OPTIMIZER_FNS(name, kind)                                                                                    \
    static kiln_status name##_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,  \
                                    size_t *scratch_size)                                                          \
    {                                                                                                              \
        (void)scratch_size;                                                                                        \
        return optimizer_infer(node, in, out, kind);                                                               \
    }                                                                                                              \
    static kiln_status name##_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,    \
                                  kiln_kernel_ctx *ctx)                                                            \
    {                                                                                                              \
        (void)ctx;                                                                                                 \
        return optimizer_run(node, in, out, kind);                                                                 \
    }
OPTIMIZER_FNS(adagrad, ADAGRAD)
OPTIMIZER_FNS(momentum, MOMENTUM)
OPTIMIZER_FNS(adam, ADAM)
#undef OPTIMIZER_FNS

const kiln_kernel kiln_kernels_training[] = {
    {"Adagrad", 1, adagrad_infer, adagrad_run, {{0, 5, KILN_ARITY_ANY, 2, KILN_ARITY_ANY}},
     "decay_factor:f epsilon:f norm_coefficient:f"},
    {"Momentum", 1, momentum_infer, momentum_run, {{0, 5, KILN_ARITY_ANY, 2, KILN_ARITY_ANY}},
     "alpha:f beta:f mode:s norm_coefficient:f"},
    {"Adam", 1, adam_infer, adam_run, {{0, 6, KILN_ARITY_ANY, 3, KILN_ARITY_ANY}},
     "alpha:f beta:f epsilon:f norm_coefficient:f norm_coefficient_post:f"},
    {0},
};
