/* test_cross_backend_data.c — Concat, Split, Slice, Pad and Where on every cpu target against
 * the portable kernels (harness: tests/support/cross_backend.h).
 *
 * The Concat cases cover both ways its inputs reach the output: laid out inside it by the
 * lowering (inputs a step of the graph writes, a Concat of channels at batch one, every band
 * 64-byte aligned: the producers write straight into it, aot_lower_data.c) and copied (inputs
 * of the graph, constants, bands off alignment, a Concat over a batch or a later axis, an output
 * of the graph); chains of CONCAT steps past seven inputs; DenseNet's growing Concats; nested
 * Concats. Slices and Splits that read one contiguous run of a scratch tensor become views of
 * it; the others are strided gathers (negative indices and steps, attributes and inputs).
 * Pad runs its three modes with crops and pads wider than the axis; Where broadcasts all three
 * operands, its condition a partition input or a constant.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cross_backend.h"

/* Relu of a fresh input: a value a step of the graph writes. */
static void relu_input(xb_case *c, const char *name, xb_dims shape)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%s_in", name);
    xb_input(c, raw, shape, -2, 2);
    xb_node(c, "Relu", raw, name);
}

/* Concat of n inputs of `shapes` along axis: produced (Relu'd inside the graph; past 8 inputs,
   which all have one shape, scaled copies of one input) or graph inputs, the result read by a
   Sigmoid (a scratch value) or a graph output itself. */
static void concat_case(xb_suite *s, int64_t axis, int n, const xb_dims *shapes, bool produced, bool read_by_relu)
{
    xb_case *c = xb_case_begin(s, 13, 0, "Concat of %d along %lld, %s inputs, %s", n, (long long)axis,
                               produced ? "produced" : "graph", read_by_relu ? "then Relu" : "as output");
    char list[1024] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        if (produced && n > 8) {
            char k[16], spec[48];
            snprintf(k, sizeof k, "k%d", i);
            if (i == 0) xb_input(c, "src", shapes[0], -2, 2);
            xb_weight_values(c, k, XB_SCALAR, (const float[]){0.25f * (float)(i + 1)});
            snprintf(spec, sizeof spec, "src,%s", k);
            xb_node(c, "Mul", spec, name);
        } else if (produced) {
            relu_input(c, name, shapes[i]);
        } else {
            xb_input(c, name, shapes[i], -2, 2);
        }
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", name);
    }
    xb_attr_int(c, xb_node(c, "Concat", list, read_by_relu ? "cat" : "y"), "axis", axis);
    if (read_by_relu) xb_node(c, "Sigmoid", "cat", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void concat_same(xb_suite *s, int64_t axis, int n, xb_dims shape, bool produced, bool read_by_relu)
{
    xb_dims shapes[32];
    for (int i = 0; i < n; i++) shapes[i] = shape;
    concat_case(s, axis, n, shapes, produced, read_by_relu);
}

/* An input twice, a constant and a graph input beside produced ones. */
static void case_concat_mixed(xb_suite *s)
{
    xb_case *c = xb_case_begin(s, 13, 0, "Concat of a value twice, a constant and a graph input");
    relu_input(c, "a", XB_DIMS(1, 16, 2, 2));
    xb_input(c, "g", XB_DIMS(1, 3, 2, 2), -1, 1);
    xb_weight(c, "w", XB_DIMS(1, 5, 2, 2), -1, 1);
    relu_input(c, "b", XB_DIMS(1, 16, 2, 2));
    xb_attr_int(c, xb_node(c, "Concat", "a,b,a,w,g,b", "cat"), "axis", 1);
    xb_node(c, "Neg", "cat", "y");
    xb_output(c, "y");
    xb_output(c, "a");
    xb_case_run(c);
}

/* DenseNet's dense block: every layer reads the Concat of all features before it and adds
   `growth` channels by a 1x1 Conv; the block's output is the Concat of them all. */
static void case_dense_block(xb_suite *s, int layers, int64_t growth, int64_t hw)
{
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "dense block of %d layers, growth %lld, %lldx%lld", layers,
                               (long long)growth, (long long)hw, (long long)hw);
    relu_input(c, "f0", XB_DIMS(1, 2 * growth, hw, hw));
    char list[1024] = "f0";
    size_t used = 2;
    for (int k = 1; k <= layers; k++) {
        char cat[16], w[16], spec[1100], f[16], pre[16];
        snprintf(cat, sizeof cat, "cat%d", k);
        snprintf(w, sizeof w, "w%d", k);
        snprintf(pre, sizeof pre, "pre%d", k);
        snprintf(f, sizeof f, "f%d", k);
        xb_attr_int(c, xb_node(c, "Concat", list, cat), "axis", 1);
        xb_node(c, "Relu", cat, pre);
        xb_weight(c, w, XB_DIMS(growth, (1 + k) * growth, 1, 1), -0.3f, 0.3f);
        snprintf(spec, sizeof spec, "%s,%s", pre, w);
        xb_node(c, "Conv", spec, f);
        used += (size_t)snprintf(list + used, sizeof list - used, ",%s", f);
    }
    xb_attr_int(c, xb_node(c, "Concat", list, "block"), "axis", 1);
    xb_node(c, "Relu", "block", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void case_concat_nested(xb_suite *s)
{
    xb_case *c = xb_case_begin(s, 13, 0, "Concat of a Concat");
    relu_input(c, "a", XB_DIMS(1, 16, 4));
    relu_input(c, "b", XB_DIMS(1, 32, 4));
    relu_input(c, "d", XB_DIMS(1, 16, 4));
    xb_attr_int(c, xb_node(c, "Concat", "a,b", "ab"), "axis", 1);
    xb_attr_int(c, xb_node(c, "Concat", "d,ab,d", "dabd"), "axis", -2);
    xb_node(c, "Relu", "dabd", "y");
    xb_node(c, "Sigmoid", "ab", "z");
    xb_output(c, "y");
    xb_output(c, "z");
    xb_case_run(c);
}

static void cases_concat(xb_suite *s)
{
    const xb_dims channels[3] = {XB_DIMS(1, 8, 4, 4), XB_DIMS(1, 16, 4, 4), XB_DIMS(1, 8, 4, 4)};
    concat_case(s, 1, 3, channels, true, true);
    concat_case(s, 1, 3, channels, true, false);
    concat_case(s, 1, 3, channels, false, true);
    concat_case(s, -3, 3, channels, true, true);
    const xb_dims last[2] = {XB_DIMS(2, 3, 5), XB_DIMS(2, 3, 7)};
    concat_case(s, -1, 2, last, true, true);
    concat_case(s, 2, 2, last, false, false);
    const xb_dims rows[3] = {XB_DIMS(2, 3), XB_DIMS(4, 3), XB_DIMS(1, 3)};
    concat_case(s, 0, 3, rows, true, true);
    const xb_dims batch[2] = {XB_DIMS(2, 16, 2, 2), XB_DIMS(2, 32, 2, 2)};
    concat_case(s, 1, 2, batch, true, true);
    concat_same(s, 1, 20, XB_DIMS(1, 4, 3, 3), true, true);   /* bands off alignment, a chain */
    concat_same(s, 1, 12, XB_DIMS(1, 16, 2, 2), true, false); /* a chain into a graph output */
    concat_same(s, 1, 15, XB_DIMS(1, 16, 2, 2), true, true);  /* a chain, every band in place */
    concat_same(s, 0, 9, XB_DIMS(3, 7), false, true);
    concat_same(s, 1, 1, XB_DIMS(1, 5), true, true);
    case_concat_mixed(s);
    case_dense_block(s, 6, 16, 2);
    case_dense_block(s, 9, 3, 3);
    case_concat_nested(s);
}

/* ---- Slice and Split ------------------------------------------------------------------------ */

/* Slice-10+ of a produced x (lists as int64 initializers; n = 0 drops an optional list). */
static void slice_case(xb_suite *s, int64_t opset, xb_dims x, size_t n, const int64_t *starts, const int64_t *ends,
                       const int64_t *axes, const int64_t *steps, bool read_by_relu)
{
    xb_case *c = xb_case_begin(s, opset, 0, "Slice-%lld of [%lld,%lld,...] over %zu axes%s%s%s", (long long)opset,
                               (long long)x.d[0], (long long)(x.rank > 1 ? x.d[1] : 0), n, axes ? "" : " (no axes)",
                               steps ? "" : " (no steps)", read_by_relu ? ", then Relu" : "");
    relu_input(c, "x", x);
    char spec[64] = "x,starts,ends";
    xb_weight_i64(c, "starts", XB_DIMS((int64_t)n), starts);
    xb_weight_i64(c, "ends", XB_DIMS((int64_t)n), ends);
    if (axes) xb_weight_i64(c, "axes", XB_DIMS((int64_t)n), axes);
    if (steps) xb_weight_i64(c, "steps", XB_DIMS((int64_t)n), steps);
    snprintf(spec, sizeof spec, "x,starts,ends%s%s", axes ? ",axes" : steps ? "," : "", steps ? ",steps" : "");
    xb_node(c, "Slice", spec, read_by_relu ? "sl" : "y");
    if (read_by_relu) xb_node(c, "Neg", "sl", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void case_slice_attrs(xb_suite *s)
{
    xb_case *c = xb_case_begin(s, 9, 0, "Slice-1 attributes, negative starts and ends");
    relu_input(c, "x", XB_DIMS(4, 9, 6));
    Onnx__NodeProto *n = xb_node(c, "Slice", "x", "y");
    xb_attr_ints(c, n, "starts", XB_INTS(-3, 1));
    xb_attr_ints(c, n, "ends", XB_INTS(1000, -1));
    xb_attr_ints(c, n, "axes", XB_INTS(1, 2));
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_slice(xb_suite *s)
{
    slice_case(s, 13, XB_DIMS(3, 10, 8), 2, (const int64_t[]){1, -7}, (const int64_t[]){3, 100},
               (const int64_t[]){0, -1}, (const int64_t[]){1, 2}, true);
    slice_case(s, 13, XB_DIMS(3, 10, 8), 1, (const int64_t[]){-1}, (const int64_t[]){-1000},
               (const int64_t[]){1}, (const int64_t[]){-3}, false);
    slice_case(s, 13, XB_DIMS(5, 6, 7), 3, (const int64_t[]){4, 5, 6}, (const int64_t[]){0, -7, 1},
               (const int64_t[]){0, 1, 2}, (const int64_t[]){-2, -1, -4}, true);
    /* channels 16..32 of [1, 32, 4, 4]: one aligned run, a view of the Relu's output */
    slice_case(s, 13, XB_DIMS(1, 32, 4, 4), 1, (const int64_t[]){16}, (const int64_t[]){32}, (const int64_t[]){1}, NULL,
               true);
    slice_case(s, 13, XB_DIMS(1, 32, 4, 4), 1, (const int64_t[]){3}, (const int64_t[]){7}, (const int64_t[]){-3}, NULL,
               true); /* one run off alignment: copied */
    slice_case(s, 13, XB_DIMS(1, 32, 4, 4), 1, (const int64_t[]){16}, (const int64_t[]){32}, (const int64_t[]){1}, NULL,
               false); /* a graph output: copied */
    slice_case(s, 11, XB_DIMS(6, 5), 2, (const int64_t[]){1, 0}, (const int64_t[]){5, 5}, NULL, NULL, true);
    slice_case(s, 10, XB_DIMS(2, 3, 4, 5), 2, (const int64_t[]){0, 1}, (const int64_t[]){INT64_MAX, 4},
               (const int64_t[]){-1, 2}, (const int64_t[]){4, 2}, true);
    case_slice_attrs(s);
}

/* Split of a produced x into parts along axis (opset 13: parts as an input; below: attribute;
   parts NULL: equal); `skip` >= 0 leaves that output unused, the others read by Relu or, when
   as_outputs, outputs of the graph. */
static void split_case(xb_suite *s, int64_t opset, xb_dims x, int64_t axis, int n, const int64_t *parts, int skip,
                       bool as_outputs)
{
    xb_case *c = xb_case_begin(s, opset, 0, "Split-%lld of [%lld,%lld,...] along %lld into %d%s%s%s", (long long)opset,
                               (long long)x.d[0], (long long)x.d[1], (long long)axis, n, parts ? "" : " equal parts",
                               skip >= 0 ? ", one unused" : "", as_outputs ? ", as outputs" : "");
    relu_input(c, "x", x);
    char outs[256] = "";
    size_t used = 0;
    for (int j = 0; j < n; j++) used += (size_t)snprintf(outs + used, sizeof outs - used, "%sp%d", j ? "," : "", j);
    Onnx__NodeProto *node;
    if (parts && opset >= 13) {
        xb_weight_i64(c, "parts", XB_DIMS((int64_t)n), parts);
        node = xb_node(c, "Split", "x,parts", outs);
    } else {
        node = xb_node(c, "Split", "x", outs);
        if (parts) xb_attr_ints(c, node, "split", (size_t)n, parts);
    }
    xb_attr_int(c, node, "axis", axis);
    for (int j = 0; j < n; j++) {
        if (j == skip) continue;
        char p[8], y[8];
        snprintf(p, sizeof p, "p%d", j);
        snprintf(y, sizeof y, "y%d", j);
        if (!as_outputs) xb_node(c, "Relu", p, y);
        xb_output(c, as_outputs ? p : y);
    }
    xb_case_run(c);
}

static void cases_split(xb_suite *s)
{
    split_case(s, 13, XB_DIMS(1, 16, 3, 4), 1, 3, (const int64_t[]){4, 8, 4}, -1, false); /* 192-byte parts: views */
    split_case(s, 13, XB_DIMS(1, 15, 3, 4), 1, 3, (const int64_t[]){2, 6, 7}, -1, false);
    split_case(s, 11, XB_DIMS(2, 3, 10), -1, 2, (const int64_t[]){3, 7}, -1, true);
    split_case(s, 13, XB_DIMS(6, 5), 0, 3, NULL, -1, false);
    split_case(s, 13, XB_DIMS(6, 5, 2), -3, 3, NULL, 1, false);
    split_case(s, 13, XB_DIMS(2, 64), 1, 2, NULL, 0, true);
}

/* ---- Pad ------------------------------------------------------------------------------------- */

static void pad_case(xb_suite *s, int64_t opset, const char *mode, xb_dims x, const int64_t *pads, const float *value)
{
    xb_case *c = xb_case_begin(s, opset, 0, "Pad-%lld %s of rank %u%s", (long long)opset, mode, x.rank,
                               value ? " with a value" : "");
    relu_input(c, "x", x);
    Onnx__NodeProto *n;
    if (opset >= 11) {
        xb_weight_i64(c, "pads", XB_DIMS(2 * (int64_t)x.rank), pads);
        if (value) xb_weight_values(c, "value", XB_SCALAR, value);
        n = xb_node(c, "Pad", value ? "x,pads,value" : "x,pads", "padded");
    } else {
        n = xb_node(c, "Pad", "x", "padded");
        xb_attr_ints(c, n, "pads", 2 * x.rank, pads);
        if (value) xb_attr_float(c, n, "value", *value);
    }
    xb_attr_string(c, n, "mode", mode);
    xb_node(c, "Neg", "padded", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_pad(xb_suite *s)
{
    pad_case(s, 13, "constant", XB_DIMS(1, 3, 5, 5), (const int64_t[]){0, 0, 1, 2, 0, 0, 2, 1}, (const float[]){1.5f});
    pad_case(s, 13, "constant", XB_DIMS(2, 3, 4), (const int64_t[]){1, 0, 3, 0, 2, 5}, NULL);
    pad_case(s, 13, "reflect", XB_DIMS(1, 2, 5, 6), (const int64_t[]){0, 0, 2, 3, 0, 0, 1, 4}, NULL);
    pad_case(s, 13, "reflect", XB_DIMS(3, 4), (const int64_t[]){5, 7, 6, 9}, NULL); /* wider than the axis */
    pad_case(s, 11, "edge", XB_DIMS(2, 3, 4), (const int64_t[]){0, -1, 2, 1, 1, -1}, NULL); /* crops */
    pad_case(s, 13, "edge", XB_DIMS(1, 1, 7), (const int64_t[]){0, 2, 3, 0, 1, 4}, NULL);
    pad_case(s, 2, "constant", XB_DIMS(4, 5), (const int64_t[]){1, 2, 3, 4}, (const float[]){-2.0f});
    pad_case(s, 2, "reflect", XB_DIMS(3, 6, 2), (const int64_t[]){1, -2, 1, 2, 3, 0}, NULL);
    /* pads of zero, as PyTorch writes before an AveragePool: no step at all */
    pad_case(s, 13, "constant", XB_DIMS(1, 4, 3, 3), (const int64_t[]){0, 0, 0, 0, 0, 0, 0, 0}, NULL);
}

/* ---- Where ----------------------------------------------------------------------------------- */

/* Where(x > 0, a, b), the condition from a portable Greater: a bool input of the delegate. */
static void where_case(xb_suite *s, xb_dims cond, xb_dims a, xb_dims b)
{
    xb_case *c = xb_case_begin(s, 13, 0, "Where of cond rank %u, a rank %u, b rank %u", cond.rank, a.rank, b.rank);
    xb_input(c, "x", cond, -1, 1);
    xb_weight_values(c, "zero", XB_SCALAR, (const float[]){0});
    xb_node(c, "Greater", "x,zero", "cond");
    relu_input(c, "a", a);
    xb_input(c, "b", b, -3, 3);
    xb_node(c, "Where", "cond,a,b", "w");
    xb_node(c, "Neg", "w", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

/* The condition a constant (a Cast of an initializer, folded at compile time). */
static void case_where_constant(xb_suite *s)
{
    xb_case *c = xb_case_begin(s, 13, 0, "Where with a constant condition [1, 4]");
    xb_weight_values(c, "mask", XB_DIMS(1, 4), (const float[]){1, 0, 0, 1});
    xb_attr_int(c, xb_node(c, "Cast", "mask", "cond"), "to", 9 /* BOOL */);
    relu_input(c, "a", XB_DIMS(3, 1));
    xb_weight_values(c, "ninf", XB_SCALAR, (const float[]){-1e9f});
    xb_node(c, "Where", "cond,a,ninf", "w");
    xb_node(c, "Neg", "w", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_where(xb_suite *s)
{
    where_case(s, XB_DIMS(2, 3, 4), XB_DIMS(2, 3, 4), XB_DIMS(4));
    where_case(s, XB_DIMS(1, 5), XB_DIMS(3, 1), XB_SCALAR);
    where_case(s, XB_DIMS(2, 1, 3, 1, 5), XB_DIMS(1, 4, 1, 2, 1), XB_DIMS(2, 4, 3, 2, 5));
    where_case(s, XB_DIMS(37), XB_DIMS(37), XB_DIMS(37));
    case_where_constant(s);
}

int main(void)
{
    xb_suite *s = xb_suite_create();
    cases_concat(s);
    cases_slice(s);
    cases_split(s);
    cases_pad(s);
    cases_where(s);
    return xb_suite_finish(s);
}
