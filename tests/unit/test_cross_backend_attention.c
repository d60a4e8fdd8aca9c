/* test_cross_backend_attention.c — attention and the residual joins of transformer blocks as
 * exporters write them, on every cpu target against the portable kernels (harness:
 * tests/support/cross_backend.h).
 *
 * The head split (Reshape + Transpose of the projections) and the head merge (Transpose +
 * Reshape of the context) are read and written by the batched GEMMs through strides
 * (aot_views.c, fuse_output_transpose in aot_fuse.c) and the additive mask is the scores' bias;
 * the cases also cover what must fall back to Transpose steps: a batch of sequences (two batch
 * dims), a Transpose another op reads too, a product that is one GEMM over the whole batch, and a
 * plain matrix transpose read as a transposed operand. An Add of two same-shaped tensors read
 * only by a LayerNormalization becomes one LAYERNORM step with a residual (aot_fuse.c); the
 * cases vary what may and may not fuse. test_compile_lowering pins which steps each form gets.
 */
#include <stdbool.h>
#include <stdio.h>

#include "cross_backend.h"

/* x [batch, tokens, heads * d] -> multi-head self-attention with an additive mask input
   [batch, 1, 1, tokens] -> output projection -> y. */
static void attention_case(xb_suite *s, int64_t batch, int64_t tokens, int64_t heads, int64_t d)
{
    int64_t h = heads * d;
    xb_case *c = xb_case_begin(s, 17, XB_REDUCES, "attention batch %lld, %lld tokens, %lld heads of %lld",
                               (long long)batch, (long long)tokens, (long long)heads, (long long)d);
    xb_input(c, "x", XB_DIMS(batch, tokens, h), -1, 1);
    xb_input(c, "mask", XB_DIMS(batch, 1, 1, tokens), -3, 0);
    static const char *proj[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        char w[8], b[8], mm[8], add[8], split[16], spec[32];
        snprintf(w, sizeof w, "w%s", proj[i]);
        snprintf(b, sizeof b, "b%s", proj[i]);
        snprintf(mm, sizeof mm, "%s_mm", proj[i]);
        snprintf(add, sizeof add, "%s_add", proj[i]);
        snprintf(split, sizeof split, "%s_heads", proj[i]);
        xb_weight(c, w, XB_DIMS(h, h), -0.3f, 0.3f);
        xb_weight(c, b, XB_DIMS(h), -0.2f, 0.2f);
        snprintf(spec, sizeof spec, "x,%s", w);
        xb_node(c, "MatMul", spec, mm);
        snprintf(spec, sizeof spec, "%s,%s", b, mm);
        xb_node(c, "Add", spec, add);
        xb_weight_i64(c, split, XB_DIMS(4), (const int64_t[]){batch, tokens, heads, d});
        snprintf(spec, sizeof spec, "%s,%s", add, split);
        xb_node(c, "Reshape", spec, proj[i]);
    }
    xb_attr_ints(c, xb_node(c, "Transpose", "q", "qt"), "perm", XB_INTS(0, 2, 1, 3));
    xb_attr_ints(c, xb_node(c, "Transpose", "k", "kt"), "perm", XB_INTS(0, 2, 3, 1));
    xb_attr_ints(c, xb_node(c, "Transpose", "v", "vt"), "perm", XB_INTS(0, 2, 1, 3));
    xb_weight_values(c, "scale", XB_SCALAR, (const float[]){2.8284271f});
    xb_node(c, "MatMul", "qt,kt", "scores");
    xb_node(c, "Div", "scores,scale", "scaled");
    xb_node(c, "Add", "scaled,mask", "masked");
    xb_node(c, "Softmax", "masked", "p");
    xb_node(c, "MatMul", "p,vt", "ctx");
    xb_attr_ints(c, xb_node(c, "Transpose", "ctx", "ctx_t"), "perm", XB_INTS(0, 2, 1, 3));
    xb_weight_i64(c, "merge", XB_DIMS(3), (const int64_t[]){batch, tokens, h});
    xb_node(c, "Reshape", "ctx_t,merge", "merged");
    xb_weight(c, "wo", XB_DIMS(h, h), -0.3f, 0.3f);
    xb_node(c, "MatMul", "merged,wo", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_attention(xb_suite *s)
{
    attention_case(s, 1, 64, 4, 32); /* the BERT-like encoder's shapes */
    attention_case(s, 1, 13, 3, 8);  /* partial tiles everywhere */
    attention_case(s, 1, 5, 2, 33);  /* d past a vector, K of the scores product odd */
    attention_case(s, 2, 13, 3, 8);  /* two batch dims: the Transposes stay steps */
}

/* The head-split Transpose read by a MatMul and by a Relu: the step is emitted (once) for the
   Relu, the product reads the view or the tensor — the same numbers either way. */
static void case_shared_transpose(xb_suite *s)
{
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "Transpose read by MatMul and Relu [1,9,2,8]");
    xb_input(c, "x", XB_DIMS(1, 9, 2, 8), -1, 1);
    xb_input(c, "b", XB_DIMS(1, 2, 8, 5), -1, 1);
    xb_attr_ints(c, xb_node(c, "Transpose", "x", "xt"), "perm", XB_INTS(0, 2, 1, 3));
    xb_node(c, "MatMul", "xt,b", "y1");
    xb_node(c, "Relu", "xt", "y2");
    xb_output(c, "y1");
    xb_output(c, "y2");
    xb_case_run(c);
}

/* A head-split Transpose times a constant: the batch folds into one GEMM of 3 * 9 rows, which
   the view's rows of 9 cannot be; the Transpose stays a step. */
static void case_merged_batch(xb_suite *s)
{
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "Transpose [9,3,8] -> [3,9,8] x const [8,6]");
    xb_input(c, "x", XB_DIMS(9, 3, 8), -1, 1);
    xb_weight(c, "w", XB_DIMS(8, 6), -1, 1);
    xb_attr_ints(c, xb_node(c, "Transpose", "x", "xt"), "perm", XB_INTS(1, 0, 2));
    xb_node(c, "MatMul", "xt,w", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

/* Matrix transposes as operands: A^T B and A B^T with both inputs computed (the GEMM's trans
   flags), and a Gemm whose A is a transpose. */
static void case_matrix_transposes(xb_suite *s)
{
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "MatMul(Transpose [21,17], Transpose [11,21])");
    xb_input(c, "a", XB_DIMS(21, 17), -1, 1);
    xb_input(c, "b", XB_DIMS(11, 21), -1, 1);
    xb_node(c, "Transpose", "a", "at");
    xb_node(c, "Transpose", "b", "bt");
    xb_node(c, "MatMul", "at,bt", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_REDUCES, "Gemm(Transpose [40,7], const [19,40] transB) + bias");
    xb_input(c, "a", XB_DIMS(40, 7), -1, 1);
    xb_weight(c, "w", XB_DIMS(19, 40), -1, 1);
    xb_weight(c, "bias", XB_DIMS(19), -1, 1);
    xb_node(c, "Transpose", "a", "at");
    xb_attr_int(c, xb_node(c, "Gemm", "at,w,bias", "y"), "transB", 1);
    xb_output(c, "y");
    xb_case_run(c);
}

/* Add(a, b) -> LayerNormalization over the last axis [2,5,33]; `a` and `b` name the Add's
   operands ("x", "r": inputs; "w": a constant), scale_input makes the scale a graph input, and
   keep_sum makes the sum an output as well (then it is not fused). */
static void residual_layernorm_case(xb_suite *s, const char *a, const char *b, bool scale_input, bool keep_sum)
{
    xb_case *c = xb_case_begin(s, 17, 0, "Add(%s, %s) -> LayerNormalization%s%s [2,5,33]", a, b,
                               scale_input ? ", scale an input" : "", keep_sum ? ", sum an output too" : "");
    xb_input(c, "x", XB_DIMS(2, 5, 33), -2, 2);
    xb_input(c, "r", XB_DIMS(2, 5, 33), -2, 2);
    xb_weight(c, "w", XB_DIMS(2, 5, 33), -2, 2);
    if (scale_input)
        xb_input(c, "scale", XB_DIMS(33), 0.5f, 1.5f);
    else
        xb_weight(c, "scale", XB_DIMS(33), 0.5f, 1.5f);
    xb_weight(c, "shift", XB_DIMS(33), -0.2f, 0.2f);
    char spec[16];
    snprintf(spec, sizeof spec, "%s,%s", a, b);
    xb_node(c, "Add", spec, "sum");
    xb_node(c, "LayerNormalization", "sum,scale,shift", "y");
    xb_output(c, "y");
    if (keep_sum) xb_output(c, "sum");
    xb_case_run(c);
}

static void cases_residual_layernorm(xb_suite *s)
{
    residual_layernorm_case(s, "x", "r", false, false);
    residual_layernorm_case(s, "r", "x", true, false);
    residual_layernorm_case(s, "w", "x", false, false);
    residual_layernorm_case(s, "x", "x", false, false);
    residual_layernorm_case(s, "x", "r", false, true);

    /* a broadcast Add (a bias row) is not a residual: Add and LayerNormalization stay two steps */
    xb_case *c = xb_case_begin(s, 17, 0, "Add(x, row [33]) -> LayerNormalization [2,5,33]");
    xb_input(c, "x", XB_DIMS(2, 5, 33), -2, 2);
    xb_weight(c, "row", XB_DIMS(33), -2, 2);
    xb_weight(c, "scale", XB_DIMS(33), 0.5f, 1.5f);
    xb_node(c, "Add", "x,row", "sum");
    xb_node(c, "LayerNormalization", "sum,scale", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

int main(void)
{
    xb_suite *s = xb_suite_create();
    cases_attention(s);
    case_shared_transpose(s);
    case_merged_batch(s);
    case_matrix_transposes(s);
    cases_residual_layernorm(s);
    return xb_suite_finish(s);
}
