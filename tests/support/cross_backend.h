/* cross_backend.h — the harness of the cross-backend op conformance test
 * (tests/unit/test_cross_backend.c), after ggml's test-backend-ops: a case is a small ONNX model
 * built in C; the harness compiles it once with every op on the portable kernels (the oracle)
 * and once per `cpu` target with delegation on, runs each on the same random inputs and
 * compares every output with the oracle's (and a target's run on several threads with its run
 * on one, bit for bit).
 *
 * Layer: tests/support (test code). Black-box apart from the target table (backends/cpu/targets.h),
 * which says which targets exist and which this CPU can run. A case is written as
 *
 *   xb_case *c = xb_case_begin(s, 13, 0, "Relu [%d]", 7);
 *   xb_input(c, "x", XB_DIMS(7), -2, 2);
 *   xb_node(c, "Relu", "x", "y");
 *   xb_output(c, "y");
 *   xb_case_run(c);
 *
 * Inputs and weights are uniform in [lo, hi] from a generator seeded by the case's name, so a
 * case sees the same data whatever runs before it. One line is printed per (case, target).
 */
#ifndef KILN_TESTS_CROSS_BACKEND_H
#define KILN_TESTS_CROSS_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "kiln/kiln.h"
#include "onnx_builder.h"

typedef struct xb_dims {
    uint32_t rank;
    int64_t d[KILN_MAX_RANK];
} xb_dims;

/* XB_DIMS(2, 3, 5): a shape; XB_SCALAR: rank 0. XB_INTS(1, 1): count and array for int lists. */
#define XB_DIMS(...) ((xb_dims){(uint32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})
#define XB_SCALAR ((xb_dims){0, {0}})
#define XB_INTS(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), ((const int64_t[]){__VA_ARGS__})

/* Case flags. */
#define XB_REDUCES 1u            /* outputs are sums over many terms: see the tolerance in
                                    cross_backend.c */
#define XB_MAY_STAY_PORTABLE 2u  /* the backend may refuse every node (empty tensors, forms it
                                    does not lower): no delegate is required, results still are */

typedef struct xb_suite xb_suite;
typedef struct xb_case xb_case;

/* A suite; prints a SKIPPED line, with the reason, for every target this CPU cannot run. */
xb_suite *xb_suite_create(void);
/* Prints "N passed, M failed", frees the suite; returns the process exit code. */
int xb_suite_finish(xb_suite *s);

/* Start a case (one at a time) whose model imports `opset`; the name is a printf format. */
xb_case *xb_case_begin(xb_suite *s, int64_t opset, unsigned flags, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A f32 graph input, uniform in [lo, hi]; inputs are fed in the order they are declared. */
void xb_input(xb_case *c, const char *name, xb_dims shape, float lo, float hi);
/* As xb_input, magnitudes in [lo, hi] (lo > 0) with a random sign: divisors, reciprocals. */
void xb_input_nonzero(xb_case *c, const char *name, xb_dims shape, float lo, float hi);
/* As xb_input, with every 5th element one of NaN, +-inf, +-0, +-1e30, +-1e-30, +-88.5 in turn:
 * the backend must treat special values as the portable kernels do. */
void xb_input_special(xb_case *c, const char *name, xb_dims shape, float lo, float hi);
/* As xb_input_special with the non-finite values and signed zeros only (NaN, +-inf, +-0): for ops
 * whose float32 intermediates may overflow on huge finite inputs where the oracle's do not. */
void xb_input_nonfinite(xb_case *c, const char *name, xb_dims shape, float lo, float hi);
/* A f32 initializer, uniform in [lo, hi]. */
void xb_weight(xb_case *c, const char *name, xb_dims shape, float lo, float hi);
/* A f32 initializer with the given values (numel of shape). */
void xb_weight_values(xb_case *c, const char *name, xb_dims shape, const float *values);
/* An int64 initializer (Reshape shapes, axes). */
void xb_weight_i64(xb_case *c, const char *name, xb_dims shape, const int64_t *values);
/* A node; inputs/outputs comma-separated, "" between commas for an absent input. */
Onnx__NodeProto *xb_node(xb_case *c, const char *op, const char *inputs, const char *outputs);
void xb_attr_int(xb_case *c, Onnx__NodeProto *node, const char *name, int64_t value);
void xb_attr_float(xb_case *c, Onnx__NodeProto *node, const char *name, float value);
void xb_attr_ints(xb_case *c, Onnx__NodeProto *node, const char *name, size_t n, const int64_t *values);
void xb_attr_string(xb_case *c, Onnx__NodeProto *node, const char *name, const char *value);
void xb_output(xb_case *c, const char *name);
/* Compile, run and compare on every target; prints the case's lines and ends the case. */
void xb_case_run(xb_case *c);

/* One Conv node (opset 11) on input x [N, C, spatial...] with random filters, then the tail
 * activation when one is named ("Relu" or "Sigmoid": fused into the step by the lowering). */
typedef struct xb_conv_form {
    const char *what;
    xb_dims x;              /* [N, C, (D,) (H,) W] */
    int64_t m, group;
    xb_dims kernel;         /* spatial kernel */
    xb_dims strides, pads, dilations;   /* rank 0: attribute absent */
    const char *auto_pad;   /* NULL (0 in the tables): attribute absent */
    bool no_bias;
    const char *tail;       /* NULL: none */
} xb_conv_form;
void xb_conv_case(xb_suite *s, const xb_conv_form *f);

#endif