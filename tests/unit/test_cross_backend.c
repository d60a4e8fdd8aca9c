/* test_cross_backend.c — cross-backend op conformance: every op the `cpu` backend lowers, on
 * every target this machine can run, against the portable kernels (issue 3). This program holds
 * the elementwise, normalisation, pooling and data-movement ops and the empty-tensor cases;
 * test_cross_backend_linear.c holds Gemm, MatMul, Conv and the fused chains.
 *
 * Layer: tests (harness: tests/support/cross_backend.h). One function per op family adds its
 * cases; a new lowered op adds its cases to the program of its family. Lengths 1, 3, 7, 8, 9,
 * 16, 17, 31, 32, 33, 64, 65 leave every remainder that matters against the vector widths (8
 * floats for AVX2, 16 for AVX-512, and their multiples); special values (NaN, infinities, signed
 * zeros, huge and tiny magnitudes) go through every activation and arithmetic form. Cases with
 * an empty dimension, and forms the backend refuses, are marked XB_MAY_STAY_PORTABLE: they must
 * still run and match, but need not delegate. Each line printed is one (case, target).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cross_backend.h"

/* ---- activations ----------------------------------------------------------------------------------- */

typedef struct unary_op {
    const char *op;
    float lo, hi;           /* input range: inside the domain, wide enough to reach saturation */
    bool nonzero;           /* magnitudes in [lo, hi], random sign */
} unary_op;

static const unary_op unary_ops[] = {
    {"Relu", -2, 2, false},       {"LeakyRelu", -2, 2, false},  {"Sigmoid", -12, 12, false},
    {"Tanh", -9, 9, false},       {"HardSigmoid", -5, 5, false}, {"HardSwish", -5, 5, false},
    {"Elu", -4, 4, false},        {"Exp", -20, 20, false},     {"Log", 0.01f, 50, false},
    {"Sqrt", 0, 30, false},       {"Neg", -3, 3, false},       {"Abs", -3, 3, false},
    {"Erf", -4, 4, false},        {"Reciprocal", 0.05f, 4, true}, {"Softplus", -20, 20, false},
};

static const unary_op *unary_named(const char *op)
{
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
        if (strcmp(unary_ops[i].op, op) == 0) return &unary_ops[i];
    fprintf(stderr, "no unary op %s in the table\n", op);
    abort();
}

static void unary_case(xb_suite *s, const unary_op *u, xb_dims shape, const char *shape_name)
{
    xb_case *c = xb_case_begin(s, 14, 0, "%s %s", u->op, shape_name);
    if (u->nonzero) xb_input_nonzero(c, "x", shape, u->lo, u->hi);
    else xb_input(c, "x", shape, u->lo, u->hi);
    xb_node(c, u->op, "x", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

/* One activation with attributes. */
static void act_with(xb_suite *s, const char *op, const char *a, float av, const char *b, float bv)
{
    xb_case *c = b ? xb_case_begin(s, 13, 0, "%s %s=%g %s=%g [5,13]", op, a, av, b, bv)
                   : xb_case_begin(s, 13, 0, "%s %s=%g [5,13]", op, a, av);
    xb_input(c, "x", XB_DIMS(5, 13), -5, 5);
    Onnx__NodeProto *n = xb_node(c, op, "x", "y");
    xb_attr_float(c, n, a, av);
    if (b) xb_attr_float(c, n, b, bv);
    xb_output(c, "y");
    xb_case_run(c);
}

/* Clip in its forms: opset 6 attributes, opset >= 11 optional constant inputs. */
static void clip_case(xb_suite *s, int64_t opset, const char *inputs, bool attrs, unsigned flags, const char *what)
{
    xb_case *c = xb_case_begin(s, opset, flags, "Clip-%lld %s [3,37]", (long long)opset, what);
    xb_input(c, "x", XB_DIMS(3, 37), -2, 2);
    if (strstr(inputs, "lo") && (flags & XB_MAY_STAY_PORTABLE)) xb_input(c, "lo", XB_SCALAR, -0.5f, -0.4f);
    else if (strstr(inputs, "lo")) xb_weight_values(c, "lo", XB_SCALAR, (const float[]){-0.5f});
    if (strstr(inputs, "hi")) xb_weight_values(c, "hi", XB_SCALAR, (const float[]){0.7f});
    Onnx__NodeProto *n = xb_node(c, "Clip", inputs, "y");
    if (attrs) {
        xb_attr_float(c, n, "min", -0.5f);
        xb_attr_float(c, n, "max", 0.7f);
    }
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_unary(xb_suite *s)
{
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
        unary_case(s, &unary_ops[i], XB_DIMS(2, 3, 37), "[2,3,37]");
    unary_case(s, unary_named("Sigmoid"), XB_DIMS(17), "[17]");
    unary_case(s, unary_named("Log"), XB_DIMS(4, 1031), "[4,1031]");
    unary_case(s, unary_named("Erf"), XB_SCALAR, "[] (scalar)");
    static const int64_t sizes[] = {1, 3, 8, 9, 16, 31, 32, 33, 64};
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            char name[32];
            snprintf(name, sizeof name, "[%lld]", (long long)sizes[j]);
            unary_case(s, &unary_ops[i], XB_DIMS(sizes[j]), name);
        }
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++) {
        xb_case *c = xb_case_begin(s, 14, 0, "%s [5,13] with NaN, inf, 0, -0, 1e30, 1e-30, 88.5", unary_ops[i].op);
        xb_input_special(c, "x", XB_DIMS(5, 13), -4, 4);
        xb_node(c, unary_ops[i].op, "x", "y");
        xb_output(c, "y");
        xb_case_run(c);
    }
    act_with(s, "LeakyRelu", "alpha", 0.2f, NULL, 0);
    act_with(s, "Elu", "alpha", 0.7f, NULL, 0);
    act_with(s, "HardSigmoid", "alpha", 0.3f, "beta", 0.4f);
    clip_case(s, 6, "x", true, 0, "min=-0.5 max=0.7");
    clip_case(s, 6, "x", false, 0, "no bounds");
    clip_case(s, 11, "x,lo", false, 0, "min input");
    clip_case(s, 12, "x,,hi", false, 0, "max input");
    clip_case(s, 13, "x,lo,hi", false, 0, "min and max inputs");
    clip_case(s, 13, "x,lo,hi", false, XB_MAY_STAY_PORTABLE, "min as activation");
}

/* ---- binary arithmetic ------------------------------------------------------------------------ */

typedef struct binary_shapes {
    const char *what;
    xb_dims a, b;
    bool b_const;
} binary_shapes;

static void binary_case(xb_suite *s, const char *op, const binary_shapes *sh)
{
    bool pow = op[0] == 'P', div = op[0] == 'D';
    xb_case *c = xb_case_begin(s, 14, 0, "%s %s", op, sh->what);
    xb_input(c, "a", sh->a, pow ? 0.2f : -2.0f, pow ? 3.0f : 2.0f);
    if (sh->b_const) xb_weight(c, "b", sh->b, pow ? -2.0f : 0.3f, 2.0f); /* positive: divisors too */
    else if (div) xb_input_nonzero(c, "b", sh->b, 0.3f, 3.0f);
    else xb_input(c, "b", sh->b, -2, 2);
    xb_node(c, op, "a,b", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

/* Opset 6 binary ops broadcast B only, when `broadcast` says so, aligned at `axis`. */
static void legacy_broadcast_case(xb_suite *s, const char *op, xb_dims b, int64_t axis)
{
    xb_case *c = xb_case_begin(s, 6, 0, "%s-6 broadcast=1 axis=%lld [2,3,4,5] by rank %u", op, (long long)axis, b.rank);
    xb_input(c, "a", XB_DIMS(2, 3, 4, 5), -2, 2);
    xb_input_nonzero(c, "b", b, 0.5f, 2);
    Onnx__NodeProto *n = xb_node(c, op, "a,b", "y");
    xb_attr_int(c, n, "broadcast", 1);
    if (axis >= 0) xb_attr_int(c, n, "axis", axis);
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_binary(xb_suite *s)
{
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
    static const binary_shapes shapes[] = {
        {"[3,65] by [3,65]", XB_DIMS(3, 65), XB_DIMS(3, 65), false},
        {"[2,3,5,7] by [3,1,1]", XB_DIMS(2, 3, 5, 7), XB_DIMS(3, 1, 1), false},
        {"[2,1,5,1] by [1,3,1,7]", XB_DIMS(2, 1, 5, 1), XB_DIMS(1, 3, 1, 7), false},
        {"[2,13,17] by const [17]", XB_DIMS(2, 13, 17), XB_DIMS(17), true},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++) binary_case(s, ops[i], &shapes[j]);
    static const binary_shapes more[] = {
        {"[33] by const scalar", XB_DIMS(33), XB_SCALAR, true},
        {"scalar by [13]", XB_SCALAR, XB_DIMS(13), false},
        {"[1] by [1]", XB_DIMS(1), XB_DIMS(1), false},
        {"[4,1031] by [4,1]", XB_DIMS(4, 1031), XB_DIMS(4, 1), false},
        {"[7,1,33] by [7,13,1]", XB_DIMS(7, 1, 33), XB_DIMS(7, 13, 1), false},
        {"[2,3,4,5,6] by [3,1,5,1]", XB_DIMS(2, 3, 4, 5, 6), XB_DIMS(3, 1, 5, 1), false},
    };
    for (size_t j = 0; j < sizeof more / sizeof more[0]; j++) binary_case(s, j % 2 ? "Mul" : "Add", &more[j]);
    binary_case(s, "Sub", &more[3]);
    binary_case(s, "Div", &more[4]);

    xb_case *c = xb_case_begin(s, 14, 0, "Sub const [5,13] - x [5,13]");
    xb_weight(c, "a", XB_DIMS(5, 13), -1, 1);
    xb_input(c, "b", XB_DIMS(5, 13), -1, 1);
    xb_node(c, "Sub", "a,b", "y");
    xb_output(c, "y");
    xb_case_run(c);

    /* The vectorised forms (both contiguous, either a broadcast scalar) at every tail length, for
       every kind that has them (all but Pow, the last of ops); then special values through each
       form, for every kind. */
    static const int64_t sizes[] = {1, 3, 8, 9, 16, 17, 33};
    for (size_t i = 0; i + 1 < sizeof ops / sizeof ops[0]; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            int64_t n = sizes[j];
            char what[3][64];
            snprintf(what[0], sizeof what[0], "[3,%lld] by [3,%lld]", (long long)n, (long long)n);
            snprintf(what[1], sizeof what[1], "[3,%lld] by [3,1]", (long long)n);
            snprintf(what[2], sizeof what[2], "[3,1] by [3,%lld]", (long long)n);
            const binary_shapes forms[3] = {{what[0], XB_DIMS(3, n), XB_DIMS(3, n), false},
                                            {what[1], XB_DIMS(3, n), XB_DIMS(3, 1), false},
                                            {what[2], XB_DIMS(3, 1), XB_DIMS(3, n), false}};
            for (int k = 0; k < 3; k++) binary_case(s, ops[i], &forms[k]);
        }
    static const struct {
        const char *what;
        xb_dims a, b;
    } special_forms[] = {
        {"[5,13] by [5,13]", XB_DIMS(5, 13), XB_DIMS(5, 13)},
        {"[5,13] by [5,1]", XB_DIMS(5, 13), XB_DIMS(5, 1)},
        {"[5,1] by [5,13]", XB_DIMS(5, 1), XB_DIMS(5, 13)},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t j = 0; j < sizeof special_forms / sizeof special_forms[0]; j++) {
            xb_case *sc = xb_case_begin(s, 14, 0, "%s %s with NaN, inf, 0, -0, 1e30, 1e-30, 88.5", ops[i],
                                        special_forms[j].what);
            xb_input_special(sc, "a", special_forms[j].a, -3, 3);
            xb_input_special(sc, "b", special_forms[j].b, -3, 3);
            xb_node(sc, ops[i], "a,b", "y");
            xb_output(sc, "y");
            xb_case_run(sc);
        }

    legacy_broadcast_case(s, "Add", XB_DIMS(3, 4), 1);
    legacy_broadcast_case(s, "Mul", XB_DIMS(5), -1);
    legacy_broadcast_case(s, "Div", XB_DIMS(2, 3), 0);
}

/* ---- pooling -------------------------------------------------------------------------------------- */

#define NONE XB_SCALAR /* an attribute left out */

typedef struct pool_form {
    const char *op;
    const char *what;
    xb_dims x, kernel, strides, pads, dilations;
    int ceil_mode, count_include_pad;
    const char *auto_pad;   /* NULL (0 in the tables): attribute absent */
} pool_form;

static void cases_pool(xb_suite *s)
{
    static const pool_form forms[] = {
        {"MaxPool", "3x3 stride 2 pad 1 [2,3,13,17]", XB_DIMS(2, 3, 13, 17), XB_DIMS(3, 3), XB_DIMS(2, 2),
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"MaxPool", "2x2 stride 2 ceil_mode [1,5,13,17]", XB_DIMS(1, 5, 13, 17), XB_DIMS(2, 2), XB_DIMS(2, 2), NONE,
         NONE, 1, 0, 0},
        {"MaxPool", "3x3 dilation 2 [1,3,17,13]", XB_DIMS(1, 3, 17, 13), XB_DIMS(3, 3), NONE, NONE, XB_DIMS(2, 2), 0, 0,
         0},
        {"MaxPool", "2x3 strides 1,2 SAME_UPPER [1,7,7,13]", XB_DIMS(1, 7, 7, 13), XB_DIMS(2, 3), XB_DIMS(1, 2), NONE,
         NONE, 0, 0, "SAME_UPPER"},
        {"MaxPool", "1-D k3 stride 2 pad 1 [2,5,33]", XB_DIMS(2, 5, 33), XB_DIMS(3), XB_DIMS(2), XB_DIMS(1, 1), NONE,
         0, 0, 0},
        {"MaxPool", "3x3 stride 3 ceil_mode pads 1,1,0,0 [1,2,17,17]", XB_DIMS(1, 2, 17, 17), XB_DIMS(3, 3),
         XB_DIMS(3, 3), XB_DIMS(1, 1, 0, 0), NONE, 1, 0, 0},
        {"AveragePool", "3x3 stride 2 pad 1 exclude pad [2,3,13,17]", XB_DIMS(2, 3, 13, 17), XB_DIMS(3, 3),
         XB_DIMS(2, 2), XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"AveragePool", "3x3 stride 2 pad 1 count_include_pad [2,3,13,17]", XB_DIMS(2, 3, 13, 17), XB_DIMS(3, 3),
         XB_DIMS(2, 2), XB_DIMS(1, 1, 1, 1), NONE, 0, 1, 0},
        {"AveragePool", "3x3 stride 2 ceil_mode pads 0,0,1,1 count_include_pad [1,3,12,12]", XB_DIMS(1, 3, 12, 12),
         XB_DIMS(3, 3), XB_DIMS(2, 2), XB_DIMS(0, 0, 1, 1), NONE, 1, 1, 0},
        {"AveragePool", "2x2 stride 2 ceil_mode [1,5,13,17]", XB_DIMS(1, 5, 13, 17), XB_DIMS(2, 2), XB_DIMS(2, 2), NONE,
         NONE, 1, 0, 0},
        {"AveragePool", "3x3 stride 2 SAME_LOWER [1,3,13,16]", XB_DIMS(1, 3, 13, 16), XB_DIMS(3, 3), XB_DIMS(2, 2),
         NONE, NONE, 0, 0, "SAME_LOWER"},
        {"AveragePool", "1-D k5 pad 2 count_include_pad [2,7,33]", XB_DIMS(2, 7, 33), XB_DIMS(5), NONE, XB_DIMS(2, 2),
         NONE, 0, 1, 0},
        {"MaxPool", "3x1 pads 1,0,1,0 on width 1 [1,3,5,1]", XB_DIMS(1, 3, 5, 1), XB_DIMS(3, 1), NONE,
         XB_DIMS(1, 0, 1, 0), NONE, 0, 0, 0},
        {"AveragePool", "1x3 stride 1,2 pads 0,1,0,1 on height 1 [2,3,1,17]", XB_DIMS(2, 3, 1, 17), XB_DIMS(1, 3),
         XB_DIMS(1, 2), XB_DIMS(0, 1, 0, 1), NONE, 0, 0, 0},
        {"AveragePool", "7x7 global-like [1,65,7,7]", XB_DIMS(1, 65, 7, 7), XB_DIMS(7, 7), NONE, NONE, NONE, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const pool_form *f = &forms[i];
        xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "%s %s", f->op, f->what);
        xb_input(c, "x", f->x, -2, 2);
        Onnx__NodeProto *n = xb_node(c, f->op, "x", "y");
        xb_attr_ints(c, n, "kernel_shape", f->kernel.rank, f->kernel.d);
        if (f->strides.rank) xb_attr_ints(c, n, "strides", f->strides.rank, f->strides.d);
        if (f->pads.rank) xb_attr_ints(c, n, "pads", f->pads.rank, f->pads.d);
        if (f->dilations.rank) xb_attr_ints(c, n, "dilations", f->dilations.rank, f->dilations.d);
        if (f->ceil_mode) xb_attr_int(c, n, "ceil_mode", 1);
        if (f->count_include_pad) xb_attr_int(c, n, "count_include_pad", 1);
        if (f->auto_pad) xb_attr_string(c, n, "auto_pad", f->auto_pad);
        xb_output(c, "y");
        xb_case_run(c);
    }
    static const struct {
        const char *op;
        xb_dims x;
        const char *what;
    } globals[] = {
        {"GlobalAveragePool", XB_DIMS(2, 7, 5, 13), "[2,7,5,13]"},
        {"GlobalAveragePool", XB_DIMS(1, 17, 1, 1), "[1,17,1,1]"},
        {"GlobalAveragePool", XB_DIMS(2, 5, 33), "[2,5,33]"},
        {"GlobalMaxPool", XB_DIMS(2, 7, 5, 13), "[2,7,5,13]"},
        {"GlobalMaxPool", XB_DIMS(3, 65, 3, 3), "[3,65,3,3]"},
        {"GlobalMaxPool", XB_DIMS(1, 3, 65), "[1,3,65]"},
    };
    static const char *const special_pools[] = {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"};
    for (size_t i = 0; i < sizeof special_pools / sizeof special_pools[0]; i++) {
        xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "%s [2,3,7,9] with NaN, inf, 0, -0, 1e30, ...", special_pools[i]);
        xb_input_special(c, "x", XB_DIMS(2, 3, 7, 9), -2, 2);
        Onnx__NodeProto *n = xb_node(c, special_pools[i], "x", "y");
        if (special_pools[i][0] != 'G') xb_attr_ints(c, n, "kernel_shape", XB_INTS(2, 3));
        xb_output(c, "y");
        xb_case_run(c);
    }
    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++) {
        xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "%s %s", globals[i].op, globals[i].what);
        xb_input(c, "x", globals[i].x, -2, 2);
        xb_node(c, globals[i].op, "x", "y");
        xb_output(c, "y");
        xb_case_run(c);
    }
}

/* ---- softmax and normalisation ---------------------------------------------------------------- */

static void softmax_case(xb_suite *s, const char *op, int64_t opset, xb_dims x, const char *shape, int64_t axis,
                         bool has_axis)
{
    xb_case *c = xb_case_begin(s, opset, XB_REDUCES, "%s-%lld axis=%s%lld %s", op, (long long)opset,
                               has_axis ? "" : "default ", (long long)axis, shape);
    xb_input(c, "x", x, -8, 8);
    Onnx__NodeProto *n = xb_node(c, op, "x", "y");
    if (has_axis) xb_attr_int(c, n, "axis", axis);
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_softmax(xb_suite *s)
{
    for (int log = 0; log < 2; log++) {
        const char *op = log ? "LogSoftmax" : "Softmax";
        softmax_case(s, op, 11, XB_DIMS(2, 3, 17), "[2,3,17]", 1, true);
        softmax_case(s, op, 11, XB_DIMS(5, 65), "[5,65]", 1, false);
        softmax_case(s, op, 11, XB_DIMS(3, 7), "[3,7]", 0, true);
        softmax_case(s, op, 11, XB_DIMS(2, 3, 17), "[2,3,17]", -1, true);
        softmax_case(s, op, 13, XB_DIMS(3, 5, 33), "[3,5,33]", -1, false);
        softmax_case(s, op, 13, XB_DIMS(2, 7, 5), "[2,7,5]", 1, true);
        softmax_case(s, op, 13, XB_DIMS(13, 3), "[13,3]", 0, true);
        softmax_case(s, op, 13, XB_DIMS(4, 1), "[4,1]", -1, false);
        softmax_case(s, op, 13, XB_DIMS(2, 1030), "[2,1030]", -1, false);
    }
    for (int log = 0; log < 2; log++) {
        xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "%s [7,17] with NaN, inf, 0, -0, 1e30, 1e-30, 88.5",
                                   log ? "LogSoftmax" : "Softmax");
        xb_input_special(c, "x", XB_DIMS(7, 17), -8, 8);
        xb_node(c, log ? "LogSoftmax" : "Softmax", "x", "y");
        xb_output(c, "y");
        xb_case_run(c);
    }
    static const int64_t rows[] = {3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "[3,%lld]", (long long)rows[i]);
        softmax_case(s, "Softmax", 13, XB_DIMS(3, rows[i]), what, -1, false);
        softmax_case(s, "LogSoftmax", 13, XB_DIMS(3, rows[i]), what, -1, false);
    }
}

typedef struct layernorm_form {
    const char *what;
    xb_dims x, scale;
    int64_t axis;
    bool has_bias, scale_input;
    float epsilon;          /* 0: default */
} layernorm_form;

static void cases_norm(xb_suite *s)
{
    static const layernorm_form forms[] = {
        {"axis -1 [3,5,33]", XB_DIMS(3, 5, 33), XB_DIMS(33), -1, true, false, 0},
        {"axis -1 no bias [7,65]", XB_DIMS(7, 65), XB_DIMS(65), -1, false, false, 0},
        {"axis 1 [2,3,17]", XB_DIMS(2, 3, 17), XB_DIMS(3, 17), 1, true, false, 0},
        {"axis 0 [3,7]", XB_DIMS(3, 7), XB_DIMS(3, 7), 0, true, false, 0},
        {"epsilon 1e-2 scale [1,13] [5,13]", XB_DIMS(5, 13), XB_DIMS(1, 13), -1, true, false, 1e-2f},
        {"rows of one [4,1]", XB_DIMS(4, 1), XB_DIMS(1), -1, true, false, 0},
        {"[2,1030]", XB_DIMS(2, 1030), XB_DIMS(1030), -1, true, false, 0},
        {"scale and bias as inputs [3,17]", XB_DIMS(3, 17), XB_DIMS(17), -1, true, true, 0},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const layernorm_form *f = &forms[i];
        xb_case *c = xb_case_begin(s, 17, XB_REDUCES, "LayerNormalization %s", f->what);
        xb_input(c, "x", f->x, -3, 5);
        if (f->scale_input) {
            xb_input(c, "scale", f->scale, -2, 2);
            xb_input(c, "bias", f->scale, -1, 1);
        } else {
            xb_weight(c, "scale", f->scale, -2, 2);
            if (f->has_bias) xb_weight(c, "bias", f->scale, -1, 1);
        }
        Onnx__NodeProto *n = xb_node(c, "LayerNormalization", f->has_bias ? "x,scale,bias" : "x,scale", "y");
        if (f->axis != -1) xb_attr_int(c, n, "axis", f->axis);
        if (f->epsilon != 0) xb_attr_float(c, n, "epsilon", f->epsilon);
        xb_output(c, "y");
        xb_case_run(c);
    }
    /* Non-finite values only: the AVX2/AVX-512 kernels sum squares in float lanes (as ONNX's
       float32 stash_type does), which overflow for |x| near 1e19 where the portable kernel's
       double sums stay finite; that difference is one of range, not of correctness. */
    xb_case *sc = xb_case_begin(s, 17, XB_REDUCES, "LayerNormalization [7,17] with NaN, inf, 0, -0");
    xb_input_nonfinite(sc, "x", XB_DIMS(7, 17), -3, 5);
    xb_weight(sc, "scale", XB_DIMS(17), -2, 2);
    xb_weight(sc, "bias", XB_DIMS(17), -1, 1);
    xb_node(sc, "LayerNormalization", "x,scale,bias", "y");
    xb_output(sc, "y");
    xb_case_run(sc);
    /* Rows far from zero relative to their spread (mean / std up to ~3500): the float-lane mean
       must not lose the spread (f32-layernorm.h sums deviations from the row's first element).
       What remains at 1000 is the float rounding of x - mean itself, ~0.4 of the tolerance. */
    static const float offsets[] = {10, 100, 1000};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        xb_case *c = xb_case_begin(s, 17, XB_REDUCES, "LayerNormalization x in [%g, %g+1] [3,1030]", offsets[i],
                                   offsets[i]);
        xb_input(c, "x", XB_DIMS(3, 1030), offsets[i], offsets[i] + 1);
        xb_weight(c, "scale", XB_DIMS(1030), -2, 2);
        xb_node(c, "LayerNormalization", "x,scale", "y");
        xb_output(c, "y");
        xb_case_run(c);
    }
    static const int64_t rows[] = {3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        xb_case *c = xb_case_begin(s, 17, XB_REDUCES, "LayerNormalization rows of %lld [3,%lld]", (long long)rows[i],
                                   (long long)rows[i]);
        xb_input(c, "x", XB_DIMS(3, rows[i]), -3, 5);
        xb_weight(c, "scale", XB_DIMS(rows[i]), -2, 2);
        xb_weight(c, "bias", XB_DIMS(rows[i]), -1, 1);
        xb_node(c, "LayerNormalization", "x,scale,bias", "y");
        xb_output(c, "y");
        xb_case_run(c);
    }
    static const struct {
        int64_t opset;
        xb_dims x;
        const char *what;
        float epsilon;
        bool stats_input;
    } bn[] = {
        {15, XB_DIMS(2, 13, 5, 7), "[2,13,5,7] with special values", 0, false}, {9, XB_DIMS(3, 7), "[3,7]", 0, false},
        {14, XB_DIMS(2, 5, 17), "[2,5,17]", 0, false},      {7, XB_DIMS(2, 3, 4, 4), "[2,3,4,4]", 0, false},
        {15, XB_DIMS(1, 33, 3, 3), "epsilon 1e-3 [1,33,3,3]", 1e-3f, false},
        {15, XB_DIMS(2, 3, 5, 5), "mean and var as inputs [2,3,5,5]", 0, true},
    };
    for (size_t i = 0; i < sizeof bn / sizeof bn[0]; i++) {
        xb_case *c = xb_case_begin(s, bn[i].opset, bn[i].stats_input ? XB_MAY_STAY_PORTABLE : 0,
                                   "BatchNormalization-%lld %s", (long long)bn[i].opset, bn[i].what);
        xb_dims ch = XB_DIMS(bn[i].x.d[1]);
        if (i == 0) xb_input_special(c, "x", bn[i].x, -3, 3);
        else xb_input(c, "x", bn[i].x, -3, 3);
        xb_weight(c, "gamma", ch, -2, 2);
        xb_weight(c, "beta", ch, -1, 1);
        if (bn[i].stats_input) {
            xb_input(c, "mean", ch, -1, 1);
            xb_input(c, "var", ch, 0.1f, 3);
        } else {
            xb_weight(c, "mean", ch, -1, 1);
            xb_weight(c, "var", ch, 0.1f, 3);
        }
        Onnx__NodeProto *n = xb_node(c, "BatchNormalization", "x,gamma,beta,mean,var", "y");
        if (bn[i].epsilon != 0) xb_attr_float(c, n, "epsilon", bn[i].epsilon);
        xb_output(c, "y");
        xb_case_run(c);
    }
}

/* ---- data movement ---------------------------------------------------------------------------------
 * The partitioner leaves runs made only of reshapes portable, so each reshape-family case puts
 * an activation before (the reshape is the partition's output: a COPY step) or after (it reads
 * the partition's input: no step at all) the op under test. */

typedef struct reshape_form {
    const char *op;
    int64_t opset;
    const char *what;
    xb_dims x;
    const char *operand;        /* an int64 constant second input (shape, axes), or NULL */
    xb_dims operand_shape;
    int64_t operand_values[4];
    const char *attr;           /* an int or ints attribute, or NULL */
    bool attr_is_list;
    size_t n_attr;
    int64_t attr_values[4];
} reshape_form;

static void reshape_case(xb_suite *s, const reshape_form *f, bool act_first)
{
    xb_case *c = xb_case_begin(s, f->opset, 0, "%s-%lld %s (%s)", f->op, (long long)f->opset, f->what,
                               act_first ? "after Tanh" : "before Tanh");
    xb_input(c, "x", f->x, -2, 2);
    if (f->operand) xb_weight_i64(c, f->operand, f->operand_shape, f->operand_values);
    char inputs[64];
    snprintf(inputs, sizeof inputs, "%s%s%s", act_first ? "t" : "x", f->operand ? "," : "",
             f->operand ? f->operand : "");
    if (act_first) xb_node(c, "Tanh", "x", "t");
    Onnx__NodeProto *n = xb_node(c, f->op, inputs, act_first ? "y" : "t");
    if (f->attr && f->attr_is_list) xb_attr_ints(c, n, f->attr, f->n_attr, f->attr_values);
    else if (f->attr) xb_attr_int(c, n, f->attr, f->attr_values[0]);
    if (!act_first) xb_node(c, "Tanh", "t", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void transpose_case(xb_suite *s, xb_dims x, const char *what, size_t n_perm, const int64_t *perm)
{
    xb_case *c = xb_case_begin(s, 13, 0, "Transpose %s", what);
    xb_input(c, "x", x, -2, 2);
    Onnx__NodeProto *n = xb_node(c, "Transpose", "x", "y");
    if (perm) xb_attr_ints(c, n, "perm", n_perm, perm);
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_layout(xb_suite *s)
{
    static const reshape_form forms[] = {
        {"Reshape", 13, "[2,3,4,5] to [6,-1]", XB_DIMS(2, 3, 4, 5), "shape", XB_DIMS(2), {6, -1}, NULL, false, 0, {0}},
        {"Reshape", 13, "[2,3,20] to [2,0,4,5]", XB_DIMS(2, 3, 20), "shape", XB_DIMS(4), {2, 0, 4, 5}, NULL, false, 0,
         {0}},
        {"Flatten", 13, "axis 0 [2,3,5,7]", XB_DIMS(2, 3, 5, 7), NULL, XB_SCALAR, {0}, "axis", false, 1, {0}},
        {"Flatten", 13, "axis 2 [2,3,5,7]", XB_DIMS(2, 3, 5, 7), NULL, XB_SCALAR, {0}, "axis", false, 1, {2}},
        {"Flatten", 13, "default axis [2,3,5,7]", XB_DIMS(2, 3, 5, 7), NULL, XB_SCALAR, {0}, NULL, false, 0, {0}},
        {"Squeeze", 11, "axes 1,3 [3,1,5,1]", XB_DIMS(3, 1, 5, 1), NULL, XB_SCALAR, {0}, "axes", true, 2, {1, 3}},
        {"Squeeze", 13, "axes input -1 [3,1,5,1]", XB_DIMS(3, 1, 5, 1), "axes", XB_DIMS(1), {-1}, NULL, false, 0, {0}},
        {"Unsqueeze", 11, "axes 0,3 [3,5]", XB_DIMS(3, 5), NULL, XB_SCALAR, {0}, "axes", true, 2, {0, 3}},
        {"Unsqueeze", 13, "axes input -1 [3,5]", XB_DIMS(3, 5), "axes", XB_DIMS(1), {-1}, NULL, false, 0, {0}},
        {"Identity", 13, "[7,13]", XB_DIMS(7, 13), NULL, XB_SCALAR, {0}, NULL, false, 0, {0}},
        {"Dropout", 13, "inference [7,13]", XB_DIMS(7, 13), NULL, XB_SCALAR, {0}, NULL, false, 0, {0}},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        reshape_case(s, &forms[i], true);
        reshape_case(s, &forms[i], false);
    }
    xb_case *c = xb_case_begin(s, 13, 0, "Relu -> Reshape [2,3,4,5] to [4,30] -> Sigmoid (reshape inside)");
    xb_input(c, "x", XB_DIMS(2, 3, 4, 5), -2, 2);
    xb_weight_i64(c, "shape", XB_DIMS(2), (const int64_t[]){4, 30});
    xb_node(c, "Relu", "x", "r");
    xb_node(c, "Reshape", "r,shape", "t");
    xb_node(c, "Sigmoid", "t", "y");
    xb_output(c, "y");
    xb_case_run(c);

    transpose_case(s, XB_DIMS(2, 3, 4, 5), "perm 0,2,3,1 [2,3,4,5]", XB_INTS(0, 2, 3, 1));
    transpose_case(s, XB_DIMS(2, 3, 4, 5), "default perm [2,3,4,5]", 0, NULL);
    transpose_case(s, XB_DIMS(13, 17), "perm 1,0 [13,17]", XB_INTS(1, 0));
    transpose_case(s, XB_DIMS(65, 33), "perm 1,0 [65,33]", XB_INTS(1, 0));
    transpose_case(s, XB_DIMS(1, 5, 1, 7), "perm 2,0,1,3 [1,5,1,7] (moves nothing)", XB_INTS(2, 0, 1, 3));
    transpose_case(s, XB_DIMS(2, 3, 5, 7, 3), "perm 0,4,1,2,3 [2,3,5,7,3]", XB_INTS(0, 4, 1, 2, 3));
    transpose_case(s, XB_DIMS(2, 3, 1, 4, 5, 3), "perm 5,1,4,2,0,3 [2,3,1,4,5,3]", XB_INTS(5, 1, 4, 2, 0, 3));
    transpose_case(s, XB_DIMS(3, 7, 5), "perm 2,0,1 [3,7,5]", XB_INTS(2, 0, 1));
}

/* ---- empty dimensions ------------------------------------------------------------------------------- */

static void empty_unary(xb_suite *s, const char *op, xb_dims x, const char *what)
{
    xb_case *c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE, "empty: %s %s", op, what);
    xb_input(c, "x", x, -1, 1);
    xb_node(c, op, "x", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_empty(xb_suite *s)
{
    empty_unary(s, "Relu", XB_DIMS(0, 7), "[0,7]");
    empty_unary(s, "Sigmoid", XB_DIMS(2, 0, 5), "[2,0,5]");
    empty_unary(s, "Softmax", XB_DIMS(0, 5), "[0,5]");
    empty_unary(s, "GlobalAveragePool", XB_DIMS(2, 0, 3, 3), "[2,0,3,3]");
    empty_unary(s, "GlobalMaxPool", XB_DIMS(0, 3, 3, 3), "[0,3,3,3]");
    empty_unary(s, "Transpose", XB_DIMS(0, 3, 4), "[0,3,4]");

    xb_case *c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE, "empty: Add [2,0,5] + [5]");
    xb_input(c, "a", XB_DIMS(2, 0, 5), -1, 1);
    xb_weight(c, "b", XB_DIMS(5), -1, 1);
    xb_node(c, "Add", "a,b", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 11, XB_MAY_STAY_PORTABLE | XB_REDUCES, "empty: Conv N=0 [0,3,5,5] -> 4");
    xb_input(c, "x", XB_DIMS(0, 3, 5, 5), -1, 1);
    xb_weight(c, "w", XB_DIMS(4, 3, 3, 3), -1, 1);
    xb_node(c, "Conv", "x,w", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 11, XB_MAY_STAY_PORTABLE | XB_REDUCES, "empty: Conv C=0 [1,0,5,5] -> 3 (bias only)");
    xb_input(c, "x", XB_DIMS(1, 0, 5, 5), -1, 1);
    xb_weight(c, "w", XB_DIMS(3, 0, 3, 3), -1, 1);
    xb_weight(c, "b", XB_DIMS(3), -1, 1);
    xb_attr_ints(c, xb_node(c, "Conv", "x,w,b", "conv"), "pads", XB_INTS(1, 1, 1, 1));
    xb_node(c, "Relu", "conv", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE | XB_REDUCES, "empty: MatMul [0,33] x const [33,17]");
    xb_input(c, "a", XB_DIMS(0, 33), -1, 1);
    xb_weight(c, "b", XB_DIMS(33, 17), -1, 1);
    xb_node(c, "MatMul", "a,b", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE | XB_REDUCES, "empty: MatMul K=0 [3,0] x [0,4] (zeros)");
    xb_input(c, "a", XB_DIMS(3, 0), -1, 1);
    xb_input(c, "b", XB_DIMS(0, 4), -1, 1);
    xb_node(c, "MatMul", "a,b", "y");
    xb_output(c, "y");
    xb_case_run(c);

    /* The empty product stays portable; the Relu after it, over a non-empty tensor, may not. */
    c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE | XB_REDUCES, "empty: MatMul K=0 [3,0] x [0,4] -> Add [4] -> Relu");
    xb_input(c, "a", XB_DIMS(3, 0), -1, 1);
    xb_input(c, "b", XB_DIMS(0, 4), -1, 1);
    xb_weight(c, "bias", XB_DIMS(4), -1, 1);
    xb_node(c, "MatMul", "a,b", "mm");
    xb_node(c, "Add", "mm,bias", "s");
    xb_node(c, "Relu", "s", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE | XB_REDUCES, "empty: Gemm M=0 [0,13] x [13,7] + C [7]");
    xb_input(c, "a", XB_DIMS(0, 13), -1, 1);
    xb_weight(c, "b", XB_DIMS(13, 7), -1, 1);
    xb_weight(c, "c", XB_DIMS(7), -1, 1);
    xb_node(c, "Gemm", "a,b,c", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 17, XB_MAY_STAY_PORTABLE | XB_REDUCES, "empty: LayerNormalization [0,8]");
    xb_input(c, "x", XB_DIMS(0, 8), -1, 1);
    xb_weight(c, "scale", XB_DIMS(8), -1, 1);
    xb_node(c, "LayerNormalization", "x,scale", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 15, XB_MAY_STAY_PORTABLE, "empty: BatchNormalization [0,3,4,4]");
    xb_input(c, "x", XB_DIMS(0, 3, 4, 4), -1, 1);
    xb_weight(c, "gamma", XB_DIMS(3), -1, 1);
    xb_weight(c, "beta", XB_DIMS(3), -1, 1);
    xb_weight(c, "mean", XB_DIMS(3), -1, 1);
    xb_weight(c, "var", XB_DIMS(3), 0.5f, 1);
    xb_node(c, "BatchNormalization", "x,gamma,beta,mean,var", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE, "empty: MaxPool 2x2 [0,3,5,5]");
    xb_input(c, "x", XB_DIMS(0, 3, 5, 5), -1, 1);
    xb_attr_ints(c, xb_node(c, "MaxPool", "x", "y"), "kernel_shape", XB_INTS(2, 2));
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_MAY_STAY_PORTABLE, "empty: Relu -> Reshape [0,6] to [0,2,3]");
    xb_input(c, "x", XB_DIMS(0, 6), -1, 1);
    xb_weight_i64(c, "shape", XB_DIMS(3), (const int64_t[]){0, 2, 3});
    xb_node(c, "Relu", "x", "r");
    xb_node(c, "Reshape", "r,shape", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

int main(void)
{
    xb_suite *s = xb_suite_create();
    cases_unary(s);
    cases_binary(s);
    cases_pool(s);
    cases_softmax(s);
    cases_norm(s);
    cases_layout(s);
    cases_empty(s);
    return xb_suite_finish(s);
}
