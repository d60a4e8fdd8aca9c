/* test_cross_backend_linear.c — cross-backend op conformance of the GEMM-based ops (Gemm,
 * MatMul, Conv) and of the fused chains the lowering builds around them, on every target this
 * machine can run, against the portable kernels (issue 3; the other ops are in
 * test_cross_backend.c).
 *
 * Layer: tests (harness: tests/support/cross_backend.h). Sizes 1, 3, 5, 7, 13, 17, 33, 65 leave
 * remainders against every GEMM register tile the targets use or have used (4x8, 6x16, 12x32);
 * a few cases pass the K block (256 floats of K on AVX-512, 512 elsewhere), the N block (1024), the
 * packed-A row block (128 KiB of filter rows) and the im2col pixel chunk (half of L2). Forms the
 * backend refuses are marked XB_MAY_STAY_PORTABLE: they must still run and match, but need not
 * delegate. Each line printed is one (case, target).
 */
#include <stdbool.h>
#include <stdio.h>

#include "cross_backend.h"

/* ---- Gemm and MatMul ---------------------------------------------------------------------------- */

typedef struct gemm_form {
    int64_t m, k, n;
    int trans_a, trans_b;
    float alpha, beta;      /* 0: attribute absent */
    int bias;               /* 0 none, 1 scalar [1], 2 [N], 3 [1,N], 4 [M,1], 5 [M,N] */
    bool b_input, c_input;  /* B / C as graph inputs rather than weights */
    int64_t opset;
} gemm_form;

static xb_dims gemm_bias_shape(const gemm_form *f)
{
    switch (f->bias) {
    case 1: return XB_DIMS(1);
    case 2: return XB_DIMS(f->n);
    case 3: return XB_DIMS(1, f->n);
    case 4: return XB_DIMS(f->m, 1);
    default: return XB_DIMS(f->m, f->n);
    }
}

static void gemm_case(xb_suite *s, const gemm_form *f)
{
    static const char *const bias_names[] = {"", " C=[1]", " C=[N]", " C=[1,N]", " C=[M,1]", " C=[M,N]"};
    char alpha[32] = "", beta[32] = "";
    if (f->alpha != 0) snprintf(alpha, sizeof alpha, " alpha=%g", f->alpha);
    if (f->beta != 0) snprintf(beta, sizeof beta, " beta=%g", f->beta);
    int64_t opset = f->opset ? f->opset : 13;
    xb_case *c = xb_case_begin(s, opset, XB_REDUCES, "Gemm-%lld M=%lld K=%lld N=%lld%s%s%s%s%s%s%s",
                               (long long)opset, (long long)f->m, (long long)f->k, (long long)f->n,
                               f->trans_a ? " transA" : "", f->trans_b ? " transB" : "", alpha, beta,
                               bias_names[f->bias], f->b_input ? " B-input" : "", f->c_input ? " C-input" : "");
    xb_input(c, "a", f->trans_a ? XB_DIMS(f->k, f->m) : XB_DIMS(f->m, f->k), -1, 1);
    xb_dims b = f->trans_b ? XB_DIMS(f->n, f->k) : XB_DIMS(f->k, f->n);
    if (f->b_input) xb_input(c, "b", b, -1, 1);
    else xb_weight(c, "b", b, -1, 1);
    if (f->bias && f->c_input) xb_input(c, "c", gemm_bias_shape(f), -1, 1);
    else if (f->bias) xb_weight(c, "c", gemm_bias_shape(f), -1, 1);
    Onnx__NodeProto *n = xb_node(c, "Gemm", f->bias ? "a,b,c" : "a,b", "y");
    if (f->trans_a) xb_attr_int(c, n, "transA", 1);
    if (f->trans_b) xb_attr_int(c, n, "transB", 1);
    if (f->alpha != 0) xb_attr_float(c, n, "alpha", f->alpha);
    if (f->beta != 0) xb_attr_float(c, n, "beta", f->beta);
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_gemm(xb_suite *s)
{
    static const gemm_form forms[] = {
        /* M   K   N  tA tB alpha beta bias B-in  C-in  opset */
        {13, 33, 17, 0, 0, 0, 0, 0, false, false, 0},
        {13, 33, 17, 1, 0, 0, 0, 2, false, false, 0},
        {13, 33, 17, 0, 1, 0, 0, 3, false, false, 0},
        {13, 33, 17, 1, 1, 0.5f, 2.0f, 2, false, false, 0},
        {7, 13, 33, 0, 0, 0, 0, 1, false, false, 0},
        {7, 13, 33, 0, 1, 0, 0, 4, false, false, 0},
        {7, 13, 33, 0, 0, 1.5f, -0.5f, 5, false, false, 0},
        {7, 13, 33, 0, 0, 0, 0, 5, false, true, 0},
        {17, 65, 3, 0, 0, 0, 0, 2, true, false, 0},
        {17, 65, 3, 1, 1, 0, 0, 3, true, true, 0},
        {13, 17, 7, 0, 0, 0, 0, 2, false, false, 9},
        {13, 17, 7, 0, 1, 0, 0, 0, false, false, 11},
        {1, 33, 65, 0, 0, 0, 0, 2, false, false, 0},
        {65, 33, 1, 0, 1, 0, 0, 0, false, false, 0},
        {3, 1, 7, 0, 0, 0, 0, 2, false, false, 0},
        {65, 65, 65, 0, 0, 0, 0, 2, false, false, 0},
        {37, 65, 70, 0, 0, 0, 0, 2, true, false, 0},
        {7, 520, 13, 0, 0, 0, 0, 2, false, false, 0},
        {7, 300, 13, 1, 0, 0, 0, 0, true, false, 0},
        {3, 5, 1030, 0, 0, 0, 0, 2, false, false, 0},
        {3, 5, 1030, 0, 1, 0, 0, 0, true, false, 0},
        {150, 20, 40, 0, 0, 0, 0, 2, true, false, 0},
        {130, 256, 129, 0, 0, 0, 0, 2, false, false, 0},   /* enough work for several threads */
        {130, 256, 129, 1, 1, 0, 0, 5, true, true, 0},
        /* large enough for one Strassen level (kiln_cpu_gemm_strassen_pays): B as seven sums */
        {1024, 1024, 1024, 0, 0, 0, 0, 2, false, false, 0},
        {1024, 1024, 1024, 1, 1, 0.5f, 2.0f, 5, false, false, 0},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) gemm_case(s, &forms[i]);
    /* Every pair of remainders against the 4x8, 6x16 and 12x32 tiles; B packed or not, both
       transpositions, with and without bias. */
    static const int64_t ms[] = {1, 5, 7, 13, 17, 33, 65}, ns[] = {1, 7, 13, 17, 33, 65};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
            size_t v = i + j;
            gemm_form f = {ms[i], v % 3 ? 17 : 5, ns[j], 0, (int)(v % 2), 0, 0, v % 4 ? 2 : 0, v % 2 == 0, false, 0};
            gemm_case(s, &f);
        }
    /* beta = 0 with C present: C is ignored (the form table's 0 means "attribute absent") */
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "Gemm-13 M=7 K=13 N=17 beta=0 C=[N]");
    xb_input(c, "a", XB_DIMS(7, 13), -1, 1);
    xb_weight(c, "b", XB_DIMS(13, 17), -1, 1);
    xb_weight(c, "c", XB_DIMS(17), -1, 1);
    xb_attr_float(c, xb_node(c, "Gemm", "a,b,c", "y"), "beta", 0.0f);
    xb_output(c, "y");
    xb_case_run(c);
}

typedef struct matmul_form {
    const char *what;
    xb_dims a, b;
    bool b_const;
    unsigned flags;
} matmul_form;

static void cases_matmul(xb_suite *s)
{
    static const matmul_form forms[] = {
        {"[33] x const [33,17]", XB_DIMS(33), XB_DIMS(33, 17), true, 0},
        {"[13,33] x [33]", XB_DIMS(13, 33), XB_DIMS(33), false, 0},
        {"[65] x [65]", XB_DIMS(65), XB_DIMS(65), false, 0},
        {"[13,33] x const [33,17]", XB_DIMS(13, 33), XB_DIMS(33, 17), true, 0},
        {"[13,33] x [33,17]", XB_DIMS(13, 33), XB_DIMS(33, 17), false, 0},
        {"[65,65] x const [65,65]", XB_DIMS(65, 65), XB_DIMS(65, 65), true, 0},
        {"[1,1] x [1,1]", XB_DIMS(1, 1), XB_DIMS(1, 1), false, 0},
        {"[3,7,33] x const [33,65]", XB_DIMS(3, 7, 33), XB_DIMS(33, 65), true, 0},
        {"[3,7,33] x [33,65]", XB_DIMS(3, 7, 33), XB_DIMS(33, 65), false, 0},
        {"[3,7,13] x [3,13,17]", XB_DIMS(3, 7, 13), XB_DIMS(3, 13, 17), false, 0},
        {"[2,3,7,13] x [2,3,13,17]", XB_DIMS(2, 3, 7, 13), XB_DIMS(2, 3, 13, 17), false, 0},
        {"[2,3,7,13] x [1,1,13,17]", XB_DIMS(2, 3, 7, 13), XB_DIMS(1, 1, 13, 17), false, 0},
        {"[1,7,13] x const [3,13,17]", XB_DIMS(1, 7, 13), XB_DIMS(3, 13, 17), true, 0},
        {"[7,13] x [2,3,13,17]", XB_DIMS(7, 13), XB_DIMS(2, 3, 13, 17), false, 0},
        {"[3,7,33] x [33]", XB_DIMS(3, 7, 33), XB_DIMS(33), false, 0},
        {"[33] x [3,33,7]", XB_DIMS(33), XB_DIMS(3, 33, 7), false, 0},
        {"[3,7,520] x [3,520,13]", XB_DIMS(3, 7, 520), XB_DIMS(3, 520, 13), false, 0},
        {"[2,7,1100] x [2,1100,13] (two K blocks)", XB_DIMS(2, 7, 1100), XB_DIMS(2, 1100, 13), false, 0},
        {"[2,7,300] x const [300,40] (K blocks)", XB_DIMS(2, 7, 300), XB_DIMS(300, 40), true, 0},
        {"[4,65,128] x [4,128,65] (threads)", XB_DIMS(4, 65, 128), XB_DIMS(4, 128, 65), false, 0},
        {"[2,1,7,13] x [1,3,13,17] (mixed broadcast)", XB_DIMS(2, 1, 7, 13), XB_DIMS(1, 3, 13, 17), false,
         XB_MAY_STAY_PORTABLE},
        {"[3,13,17] x [2,1,17,7] (mixed broadcast)", XB_DIMS(3, 13, 17), XB_DIMS(2, 1, 17, 7), false,
         XB_MAY_STAY_PORTABLE},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const matmul_form *f = &forms[i];
        xb_case *c = xb_case_begin(s, 13, XB_REDUCES | f->flags, "MatMul %s", f->what);
        xb_input(c, "a", f->a, -1, 1);
        if (f->b_const) xb_weight(c, "b", f->b, -1, 1);
        else xb_input(c, "b", f->b, -1, 1);
        xb_node(c, "MatMul", "a,b", "y");
        xb_output(c, "y");
        xb_case_run(c);
    }
}

/* ---- Conv ----------------------------------------------------------------------------------------- */

#define NONE XB_SCALAR /* an attribute left out */

static void cases_conv(xb_suite *s)
{
    static const xb_conv_form forms[] = {
        {"3x3 pad 1 [2,3,13,17] -> 7", XB_DIMS(2, 3, 13, 17), 7, 1, XB_DIMS(3, 3), NONE, XB_DIMS(1, 1, 1, 1), NONE,
         0, 0, 0},
        {"3x3 no pad, no bias [1,3,13,17] -> 17", XB_DIMS(1, 3, 13, 17), 17, 1, XB_DIMS(3, 3), NONE, NONE, NONE, 0, 1, 0},
        {"3x3 stride 2 pads 0,1,1,0 [2,5,13,17] -> 13", XB_DIMS(2, 5, 13, 17), 13, 1, XB_DIMS(3, 3), XB_DIMS(2, 2),
         XB_DIMS(0, 1, 1, 0), NONE, 0, 0, 0},
        {"3x5 strides 2,3 pads 1,2,2,1 [1,4,17,33] -> 7", XB_DIMS(1, 4, 17, 33), 7, 1, XB_DIMS(3, 5), XB_DIMS(2, 3),
         XB_DIMS(1, 2, 2, 1), NONE, 0, 0, 0},
        {"3x3 pad 2 [1,3,13,17] -> 7", XB_DIMS(1, 3, 13, 17), 7, 1, XB_DIMS(3, 3), NONE, XB_DIMS(2, 2, 2, 2), NONE,
         0, 0, 0},
        {"5x5 stride 2 pad 3 [2,3,13,17] -> 5", XB_DIMS(2, 3, 13, 17), 5, 1, XB_DIMS(5, 5), XB_DIMS(2, 2),
         XB_DIMS(3, 3, 3, 3), NONE, 0, 0, 0},
        {"3x3 dilation 2 pad 2 [1,3,13,17] -> 7", XB_DIMS(1, 3, 13, 17), 7, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(2, 2, 2, 2), XB_DIMS(2, 2), 0, 0, 0},
        {"3x3 dilations 2,3 stride 2 [1,2,17,17] -> 5", XB_DIMS(1, 2, 17, 17), 5, 1, XB_DIMS(3, 3), XB_DIMS(2, 2), NONE,
         XB_DIMS(2, 3), 0, 0, 0},
        {"grouped 3 3x3 pad 1 [2,6,7,13] -> 9", XB_DIMS(2, 6, 7, 13), 9, 3, XB_DIMS(3, 3), NONE, XB_DIMS(1, 1, 1, 1),
         NONE, 0, 0, 0},
        {"grouped 2 1x1 [1,8,7,7] -> 34", XB_DIMS(1, 8, 7, 7), 34, 2, XB_DIMS(1, 1), NONE, NONE, NONE, 0, 0, 0},
        {"depthwise 3x3 pad 1 [2,13,7,17]", XB_DIMS(2, 13, 7, 17), 13, 13, XB_DIMS(3, 3), NONE, XB_DIMS(1, 1, 1, 1),
         NONE, 0, 0, 0},
        {"depthwise 3x3 stride 2 pad 1 [1,17,13,13]", XB_DIMS(1, 17, 13, 13), 17, 17, XB_DIMS(3, 3), XB_DIMS(2, 2),
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"depthwise 5x5 dilation 2 pad 4 [1,7,17,33] no bias", XB_DIMS(1, 7, 17, 33), 7, 7, XB_DIMS(5, 5), NONE,
         XB_DIMS(4, 4, 4, 4), XB_DIMS(2, 2), 0, 1, 0},
        {"depthwise 3x1 pads 1,0,0,0 [1,3,5,65]", XB_DIMS(1, 3, 5, 65), 3, 3, XB_DIMS(3, 1), NONE, XB_DIMS(1, 0, 0, 0),
         NONE, 0, 0, 0},
        {"depthwise multiplier 2 3x3 [1,5,9,9] -> 10", XB_DIMS(1, 5, 9, 9), 10, 5, XB_DIMS(3, 3), NONE, NONE, NONE,
         0, 0, 0},
        {"pointwise 1x1 [2,33,7,7] -> 17", XB_DIMS(2, 33, 7, 7), 17, 1, XB_DIMS(1, 1), NONE, NONE, NONE, 0, 0, 0},
        {"pointwise 1x1 [1,3,13,13] -> 65", XB_DIMS(1, 3, 13, 13), 65, 1, XB_DIMS(1, 1), NONE, NONE, NONE, 0, 0, 0},
        {"1x1 stride 2 [1,7,13,13] -> 13", XB_DIMS(1, 7, 13, 13), 13, 1, XB_DIMS(1, 1), XB_DIMS(2, 2), NONE, NONE,
         0, 0, 0},
        {"auto_pad SAME_UPPER 3x3 stride 2 [1,3,13,16] -> 7", XB_DIMS(1, 3, 13, 16), 7, 1, XB_DIMS(3, 3), XB_DIMS(2, 2),
         NONE, NONE, "SAME_UPPER", 0, 0},
        {"auto_pad SAME_LOWER 2x2 [1,3,7,7] -> 5", XB_DIMS(1, 3, 7, 7), 5, 1, XB_DIMS(2, 2), NONE, NONE, NONE,
         "SAME_LOWER", 0, 0},
        {"auto_pad VALID 3x3 [1,3,7,9] -> 5", XB_DIMS(1, 3, 7, 9), 5, 1, XB_DIMS(3, 3), NONE, NONE, NONE, "VALID", 0, 0},
        {"5x5 pad 2 over a 3x3 input [1,2,3,3] -> 3", XB_DIMS(1, 2, 3, 3), 3, 1, XB_DIMS(5, 5), NONE,
         XB_DIMS(2, 2, 2, 2), NONE, 0, 0, 0},
        {"K = 64*3*3 = 576 > K block [1,64,9,9] -> 17", XB_DIMS(1, 64, 9, 9), 17, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"M = 140 past the packed-A block [1,3,9,9] -> 140", XB_DIMS(1, 3, 9, 9), 140, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"1600 pixels past the im2col chunk [1,3,40,40] -> 8", XB_DIMS(1, 3, 40, 40), 8, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        /* Winograd F(2x2, 3x3): 3x3, unit strides, C and M >= 32, at least 32 tiles. */
        {"Winograd 3x3 pad 1 [2,32,15,17] -> 40", XB_DIMS(2, 32, 15, 17), 40, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"Winograd 3x3 no pad, no bias [1,48,14,16] -> 33", XB_DIMS(1, 48, 14, 16), 33, 1, XB_DIMS(3, 3), NONE, NONE,
         NONE, 0, 1, 0},
        {"Winograd, 66 tiles as rows, pads 2,0,1,2 [1,64,21,12] -> 64", XB_DIMS(1, 64, 21, 12), 64, 1, XB_DIMS(3, 3),
         NONE, XB_DIMS(2, 0, 1, 2), NONE, 0, 0, 0},
        {"Winograd, 16 tiles as rows [2,32,7,7] -> 64", XB_DIMS(2, 32, 7, 7), 64, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        /* Pixels as rows: one group, few pixels (under 95% of 32-wide panels), M a multiple of 32. */
        {"pixels as rows 3x3 pad 1 [1,16,7,7] -> 64", XB_DIMS(1, 16, 7, 7), 64, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"pixels as rows 3x3 stride 2 [2,16,14,14] -> 32, no bias", XB_DIMS(2, 16, 14, 14), 32, 1, XB_DIMS(3, 3),
         XB_DIMS(2, 2), XB_DIMS(1, 1, 1, 1), NONE, 0, 1, 0},
        {"pixels as rows 1x1 stride 2 [1,48,13,13] -> 96", XB_DIMS(1, 48, 13, 13), 96, 1, XB_DIMS(1, 1), XB_DIMS(2, 2),
         NONE, NONE, 0, 0, 0},
        {"1-D k3 pad 1 [2,5,33] -> 7", XB_DIMS(2, 5, 33), 7, 1, XB_DIMS(3), NONE, XB_DIMS(1, 1), NONE, 0, 0, 0},
        {"1-D k5 stride 2 dilation 2 pads 3,1 [1,4,65] -> 9", XB_DIMS(1, 4, 65), 9, 1, XB_DIMS(5), XB_DIMS(2),
         XB_DIMS(3, 1), XB_DIMS(2), 0, 0, 0},
        {"1-D depthwise k3 pad 1 [2,13,17]", XB_DIMS(2, 13, 17), 13, 13, XB_DIMS(3), NONE, XB_DIMS(1, 1), NONE, 0, 0, 0},
        {"1-D pointwise [3,17,7] -> 33", XB_DIMS(3, 17, 7), 33, 1, XB_DIMS(1), NONE, NONE, NONE, 0, 0, 0},
        /* large enough for the kernels to split the work over the harness's threads */
        {"threads: 3x3 pad 1 [1,16,32,32] -> 33", XB_DIMS(1, 16, 32, 32), 33, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"threads: depthwise 3x3 pad 1 [2,64,40,40]", XB_DIMS(2, 64, 40, 40), 64, 64, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"threads: Winograd, 49 tiles as rows [1,128,14,14] -> 128", XB_DIMS(1, 128, 14, 14), 128, 1, XB_DIMS(3, 3),
         NONE, XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        /* tile panels shared out evenly, chunks not crossing an image (225 tiles an image) */
        {"threads: Winograd, 2 images [2,64,30,30] -> 64", XB_DIMS(2, 64, 30, 30), 64, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"threads: pixels as rows 3x3 stride 2 [1,128,14,14] -> 256", XB_DIMS(1, 128, 14, 14), 256, 1, XB_DIMS(3, 3),
         XB_DIMS(2, 2), XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0},
        {"threads: pointwise [2,64,24,24] -> 65", XB_DIMS(2, 64, 24, 24), 65, 1, XB_DIMS(1, 1), NONE, NONE, NONE, 0, 0, 0},
        {"1x1 on 1x1 [1,65,1,1] -> 33", XB_DIMS(1, 65, 1, 1), 33, 1, XB_DIMS(1, 1), NONE, NONE, NONE, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) xb_conv_case(s, &forms[i]);
    /* Depthwise rows of every length against the vector widths, stride 1 and 2; and output
       channels against the tile heights at a few row lengths. */
    static const int64_t widths[] = {1, 2, 3, 5, 8, 9, 15, 16, 17, 31, 32, 33};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        for (int64_t stride = 1; stride <= 2; stride++) {
            char what[96];
            snprintf(what, sizeof what, "depthwise 3x3 stride %lld pad 1 [1,3,4,%lld]", (long long)stride,
                     (long long)widths[i]);
            xb_conv_form f = {what, XB_DIMS(1, 3, 4, widths[i]), 3, 3, XB_DIMS(3, 3), XB_DIMS(stride, stride),
                           XB_DIMS(1, 1, 1, 1), NONE, 0, 0, 0};
            xb_conv_case(s, &f);
        }
    static const int64_t channels[] = {1, 3, 7, 13, 17, 33}, rows[] = {1, 5, 17};
    for (size_t i = 0; i < sizeof channels / sizeof channels[0]; i++)
        for (size_t j = 0; j < sizeof rows / sizeof rows[0]; j++) {
            char what[96];
            snprintf(what, sizeof what, "3x3 pad 1 [1,2,3,%lld] -> %lld", (long long)rows[j], (long long)channels[i]);
            xb_conv_form f = {what, XB_DIMS(1, 2, 3, rows[j]), channels[i], 1, XB_DIMS(3, 3), NONE, XB_DIMS(1, 1, 1, 1),
                           NONE, 0, 0, 0};
            xb_conv_case(s, &f);
        }
}

/* ---- fused chains and partitions -------------------------------------------------------------------- */

/* Conv [1,C,13,17] 3x3 pad 1 -> BatchNormalization -> tail ("Relu", "Clip6", "SiLU" or NULL). */
static void conv_bn_case(xb_suite *s, int64_t c_in, int64_t m, int64_t group, bool bias, const char *tail)
{
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "Conv%s%s %lld->%lld group %lld + BatchNormalization%s%s",
                               bias ? "" : " (no bias)", group == c_in ? " depthwise" : "", (long long)c_in,
                               (long long)m, (long long)group, tail ? " + " : "", tail ? tail : "");
    xb_input(c, "x", XB_DIMS(2, c_in, 13, 17), -1, 1);
    xb_weight(c, "w", XB_DIMS(m, c_in / group, 3, 3), -1, 1);
    if (bias) xb_weight(c, "b", XB_DIMS(m), -1, 1);
    xb_weight(c, "gamma", XB_DIMS(m), -2, 2);
    xb_weight(c, "beta", XB_DIMS(m), -1, 1);
    xb_weight(c, "mean", XB_DIMS(m), -1, 1);
    xb_weight(c, "var", XB_DIMS(m), 0.2f, 2);
    xb_weight_values(c, "zero", XB_SCALAR, (const float[]){0.0f});
    xb_weight_values(c, "six", XB_SCALAR, (const float[]){6.0f});
    Onnx__NodeProto *n = xb_node(c, "Conv", bias ? "x,w,b" : "x,w", "conv");
    xb_attr_ints(c, n, "pads", XB_INTS(1, 1, 1, 1));
    if (group != 1) xb_attr_int(c, n, "group", group);
    xb_node(c, "BatchNormalization", "conv,gamma,beta,mean,var", tail ? "bn" : "y");
    if (tail && tail[0] == 'R') xb_node(c, "Relu", "bn", "y");
    if (tail && tail[0] == 'C') xb_node(c, "Clip", "bn,zero,six", "y");
    if (tail && tail[0] == 'S') {
        xb_node(c, "Sigmoid", "bn", "sig");
        xb_node(c, "Mul", "bn,sig", "y");
    }
    xb_output(c, "y");
    xb_case_run(c);
}

/* Gemm (no C) [13,K]x[K,17] into "g", then the nodes `tail` adds (with their operands), ending
   in "y". A K past the K block puts the fused epilogue after several partial sums. */
static void gemm_chain(xb_suite *s, int64_t k, const char *what, void (*tail)(xb_case *c))
{
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "Gemm [13,%lld]x[%lld,17] + %s", (long long)k, (long long)k, what);
    xb_input(c, "a", XB_DIMS(13, k), -1, 1);
    xb_weight(c, "b", XB_DIMS(k, 17), -1, 1);
    xb_node(c, "Gemm", "a,b", "g");
    tail(c);
    xb_output(c, "y");
    xb_case_run(c);
}

static void tail_add_bias_relu(xb_case *c)
{
    xb_weight(c, "bias", XB_DIMS(17), -1, 1);
    xb_node(c, "Add", "g,bias", "s");
    xb_node(c, "Relu", "s", "y");
}

static void tail_add_residual_relu(xb_case *c)
{
    xb_input(c, "r", XB_DIMS(13, 17), -1, 1);
    xb_node(c, "Add", "g,r", "s");
    xb_node(c, "Relu", "s", "y");
}

static void tail_mul_scalar(xb_case *c)
{
    xb_weight_values(c, "k", XB_SCALAR, (const float[]){0.125f});
    xb_node(c, "Mul", "g,k", "y");
}

static void tail_div_scalar_tanh(xb_case *c)
{
    xb_weight_values(c, "k", XB_SCALAR, (const float[]){3.0f});
    xb_node(c, "Div", "g,k", "d");
    xb_node(c, "Tanh", "d", "y");
}

/* GELU in the erf form exporters write: 0.5 * x * (1 + erf(x / sqrt 2)), reading "g". */
static void tail_gelu(xb_case *c)
{
    xb_weight_values(c, "sqrt2", XB_SCALAR, (const float[]){1.41421356f});
    xb_weight_values(c, "one", XB_SCALAR, (const float[]){1.0f});
    xb_weight_values(c, "half", XB_SCALAR, (const float[]){0.5f});
    xb_node(c, "Div", "g,sqrt2", "d");
    xb_node(c, "Erf", "d", "e");
    xb_node(c, "Add", "e,one", "p");
    xb_node(c, "Mul", "g,p", "q");
    xb_node(c, "Mul", "q,half", "y");
}

/* GELU in the tanh form PyTorch exports (approximate="tanh", GPT-2's), reading "g":
   0.5 * g * (1 + tanh(sqrt(2/pi) * (g + 0.044715 * g * g * g))). */
static void tail_gelu_tanh(xb_case *c)
{
    xb_weight_values(c, "c", XB_SCALAR, (const float[]){0.044715f});
    xb_weight_values(c, "k", XB_SCALAR, (const float[]){0.7978845834732056f});
    xb_weight_values(c, "one", XB_SCALAR, (const float[]){1.0f});
    xb_weight_values(c, "half", XB_SCALAR, (const float[]){0.5f});
    xb_node(c, "Mul", "g,g", "g2");
    xb_node(c, "Mul", "g,g2", "g3");
    xb_node(c, "Mul", "c,g3", "cg3");
    xb_node(c, "Add", "g,cg3", "inner");
    xb_node(c, "Mul", "k,inner", "arg");
    xb_node(c, "Tanh", "arg", "t");
    xb_node(c, "Add", "one,t", "t1");
    xb_node(c, "Mul", "g,t1", "q");
    xb_node(c, "Mul", "half,q", "y");
}

static void cases_fused(xb_suite *s)
{
    conv_bn_case(s, 3, 7, 1, true, "Relu");
    conv_bn_case(s, 5, 17, 1, false, NULL);
    conv_bn_case(s, 13, 13, 13, true, "Clip6");
    conv_bn_case(s, 6, 9, 3, true, "SiLU");
    conv_bn_case(s, 64, 17, 1, true, "Relu"); /* K = 576: the epilogue after several K blocks */
    for (int64_t k = 33; k <= 520; k += 487) {
        gemm_chain(s, k, "Add [17] + Relu", tail_add_bias_relu);
        gemm_chain(s, k, "Add input [13,17] + Relu", tail_add_residual_relu);
        gemm_chain(s, k, "Mul 0.125", tail_mul_scalar);
        gemm_chain(s, k, "Div 3 + Tanh", tail_div_scalar_tanh);
        gemm_chain(s, k, "GELU (erf)", tail_gelu);
        gemm_chain(s, k, "GELU (tanh)", tail_gelu_tanh);
    }

    /* One Strassen level with the residual Add fused (a FULL bias) and Relu after all products */
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "MatMul [1024,1024] x const [1024,1024] + Add input + Relu");
    xb_input(c, "a", XB_DIMS(1024, 1024), -1, 1);
    xb_weight(c, "b", XB_DIMS(1024, 1024), -1, 1);
    xb_input(c, "r", XB_DIMS(1024, 1024), -1, 1);
    xb_node(c, "MatMul", "a,b", "g");
    xb_node(c, "Add", "g,r", "s");
    xb_node(c, "Relu", "s", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, 0, "Sigmoid(x) * x (SiLU) [3,65]");
    xb_input(c, "x", XB_DIMS(3, 65), -8, 8);
    xb_node(c, "Sigmoid", "x", "sig");
    xb_node(c, "Mul", "x,sig", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_REDUCES, "Conv 3x3 + Add residual + Relu [2,7,13,17]");
    xb_input(c, "x", XB_DIMS(2, 7, 13, 17), -1, 1);
    xb_weight(c, "w", XB_DIMS(7, 7, 3, 3), -0.5f, 0.5f);
    xb_weight(c, "b", XB_DIMS(7), -1, 1);
    xb_attr_ints(c, xb_node(c, "Conv", "x,w,b", "conv"), "pads", XB_INTS(1, 1, 1, 1));
    xb_node(c, "Add", "conv,x", "s");
    xb_node(c, "Relu", "s", "y");
    xb_output(c, "y");
    xb_case_run(c);

    /* The same at Winograd sizes: the Add becomes the convolution's residual (tiles as columns,
       then as rows), the residual either operand of the Add. */
    static const struct { const char *what; int64_t c, hw; const char *add; } winograd_residual[] = {
        {"Winograd Conv 3x3 + Add residual + Relu [1,32,16,16]", 32, 16, "conv,x"},
        {"Winograd Conv 3x3 (tiles as rows) + Add residual + Relu [2,32,7,7]", 32, 7, "x,conv"},
    };
    for (size_t i = 0; i < sizeof winograd_residual / sizeof winograd_residual[0]; i++) {
        int64_t ch = winograd_residual[i].c, hw = winograd_residual[i].hw;
        c = xb_case_begin(s, 13, XB_REDUCES, "%s", winograd_residual[i].what);
        xb_input(c, "x", XB_DIMS(hw == 7 ? 2 : 1, ch, hw, hw), -1, 1);
        xb_weight(c, "w", XB_DIMS(ch, ch, 3, 3), -0.2f, 0.2f);
        xb_weight(c, "b", XB_DIMS(ch), -1, 1);
        xb_attr_ints(c, xb_node(c, "Conv", "x,w,b", "conv"), "pads", XB_INTS(1, 1, 1, 1));
        xb_node(c, "Add", winograd_residual[i].add, "s");
        xb_node(c, "Relu", "s", "y");
        xb_output(c, "y");
        xb_case_run(c);
    }

    /* A pixels-as-rows convolution (stride 2 to 7x7, 64 channels) takes the Add as its residual. */
    c = xb_case_begin(s, 13, XB_REDUCES, "Conv 3x3 stride 2 (pixels as rows) + Add input + Relu [1,16,14,14]");
    xb_input(c, "x", XB_DIMS(1, 16, 14, 14), -1, 1);
    xb_input(c, "r", XB_DIMS(1, 64, 7, 7), -1, 1);
    xb_weight(c, "w", XB_DIMS(64, 16, 3, 3), -0.3f, 0.3f);
    xb_weight(c, "b", XB_DIMS(64), -1, 1);
    Onnx__NodeProto *strided = xb_node(c, "Conv", "x,w,b", "conv");
    xb_attr_ints(c, strided, "pads", XB_INTS(1, 1, 1, 1));
    xb_attr_ints(c, strided, "strides", XB_INTS(2, 2));
    xb_node(c, "Add", "r,conv", "s");
    xb_node(c, "Relu", "s", "y");
    xb_output(c, "y");
    xb_case_run(c);

    c = xb_case_begin(s, 13, XB_REDUCES, "MatMul [2,7,33]x[33,17] + Add [17] + Relu");
    xb_input(c, "a", XB_DIMS(2, 7, 33), -1, 1);
    xb_weight(c, "b", XB_DIMS(33, 17), -1, 1);
    xb_weight(c, "bias", XB_DIMS(17), -1, 1);
    xb_node(c, "MatMul", "a,b", "mm");
    xb_node(c, "Add", "mm,bias", "s");
    xb_node(c, "Relu", "s", "y");
    xb_output(c, "y");
    xb_case_run(c);

    /* A small CNN: every step kind in one partition, intermediates planned in scratch. */
    c = xb_case_begin(s, 13, XB_REDUCES, "Conv+Relu+MaxPool+Flatten+Gemm+Softmax [2,3,13,13]");
    xb_input(c, "x", XB_DIMS(2, 3, 13, 13), -1, 1);
    xb_weight(c, "w", XB_DIMS(8, 3, 3, 3), -0.5f, 0.5f);
    xb_weight(c, "fc", XB_DIMS(10, 8 * 5 * 5), -0.2f, 0.2f); /* 13 -> 11 (conv) -> 5 (pool) */
    xb_weight(c, "fcb", XB_DIMS(10), -1, 1);
    xb_node(c, "Conv", "x,w", "conv");
    xb_node(c, "Relu", "conv", "r");
    Onnx__NodeProto *n = xb_node(c, "MaxPool", "r", "p");
    xb_attr_ints(c, n, "kernel_shape", XB_INTS(2, 2));
    xb_attr_ints(c, n, "strides", XB_INTS(2, 2));
    xb_node(c, "Flatten", "p", "f");
    xb_attr_int(c, xb_node(c, "Gemm", "f,fc,fcb", "logits"), "transB", 1);
    xb_node(c, "Softmax", "logits", "y");
    xb_output(c, "y");
    xb_case_run(c);

    /* A transformer MLP block: LayerNorm -> MatMul -> GELU -> MatMul -> residual Add. */
    c = xb_case_begin(s, 17, XB_REDUCES, "LayerNorm+MatMul+GELU+MatMul+Add [2,5,33]");
    xb_input(c, "x", XB_DIMS(2, 5, 33), -2, 2);
    xb_weight(c, "scale", XB_DIMS(33), 0.5f, 1.5f);
    xb_weight(c, "shift", XB_DIMS(33), -0.2f, 0.2f);
    xb_weight(c, "w1", XB_DIMS(33, 65), -0.3f, 0.3f);
    xb_weight(c, "w2", XB_DIMS(65, 33), -0.3f, 0.3f);
    xb_node(c, "LayerNormalization", "x,scale,shift", "ln");
    xb_node(c, "MatMul", "ln,w1", "g");
    tail_gelu(c); /* g -> y, the hidden activation; the block's output is "out" */
    xb_node(c, "MatMul", "y,w2", "h");
    xb_node(c, "Add", "h,x", "out");
    xb_output(c, "out");
    xb_case_run(c);

    c = xb_case_begin(s, 13, 0, "two outputs: Relu -> y1, Sigmoid(y1) -> y2 [7,13]");
    xb_input(c, "x", XB_DIMS(7, 13), -2, 2);
    xb_node(c, "Relu", "x", "y1");
    xb_node(c, "Sigmoid", "y1", "y2");
    xb_output(c, "y1");
    xb_output(c, "y2");
    xb_case_run(c);

    c = xb_case_begin(s, 13, 0, "Relu -> Floor (portable) -> Sigmoid: two partitions [7,13]");
    xb_input(c, "x", XB_DIMS(7, 13), -3, 3);
    xb_node(c, "Relu", "x", "r");
    xb_node(c, "Floor", "r", "f");
    xb_node(c, "Sigmoid", "f", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

/* ReduceMean over the last axis alone is a GEMM against a column of ones; other axes stay
   portable. Opset 13 names the axes in an attribute, 18 in an input. */
static void reduce_mean_case(xb_suite *s, int64_t opset, int64_t axis, int64_t keepdims, xb_dims x)
{
    bool last = axis == -1 || axis == (int64_t)x.rank - 1;
    xb_case *c = xb_case_begin(s, opset, XB_REDUCES | (last ? 0 : XB_MAY_STAY_PORTABLE),
                               "ReduceMean opset %lld axis %lld keepdims %lld", (long long)opset, (long long)axis,
                               (long long)keepdims);
    xb_input(c, "x", x, -2, 3);
    Onnx__NodeProto *n;
    if (opset >= 18) {
        xb_weight_i64(c, "axes", XB_DIMS(1), (const int64_t[]){axis});
        n = xb_node(c, "ReduceMean", "x,axes", "y");
    } else {
        n = xb_node(c, "ReduceMean", "x", "y");
        xb_attr_ints(c, n, "axes", 1, (const int64_t[]){axis});
    }
    xb_attr_int(c, n, "keepdims", keepdims);
    xb_output(c, "y");
    xb_case_run(c);
}

/* LLaMA's RMSNorm as PyTorch exports it: x * (1 / sqrt(mean(x^2) + eps)) * w, which the lowering
   fuses into one LAYERNORM step with rms set; the reciprocal as Div(1, .) or Reciprocal, the
   weight on either side of the last Mul. */
static void rmsnorm_case(xb_suite *s, xb_dims x, bool reciprocal_op, bool weight_first)
{
    int64_t n = x.d[x.rank - 1];
    xb_case *c = xb_case_begin(s, 17, XB_REDUCES, "RMSNorm [..,%lld] %s, weight %s", (long long)n,
                               reciprocal_op ? "Reciprocal" : "Div(1, .)", weight_first ? "first" : "second");
    xb_input(c, "x", x, -3, 3);
    xb_weight_values(c, "two", XB_SCALAR, (const float[]){2.0f});
    xb_weight_values(c, "eps", XB_SCALAR, (const float[]){1e-6f});
    xb_weight_values(c, "one", XB_SCALAR, (const float[]){1.0f});
    xb_weight(c, "w", XB_DIMS(n), 0.5f, 1.5f);
    xb_node(c, "Pow", "x,two", "sq");
    xb_attr_ints(c, xb_node(c, "ReduceMean", "sq", "ms"), "axes", 1, (const int64_t[]){-1});
    xb_node(c, "Add", "ms,eps", "v");
    xb_node(c, "Sqrt", "v", "r");
    if (reciprocal_op)
        xb_node(c, "Reciprocal", "r", "inv");
    else
        xb_node(c, "Div", "one,r", "inv");
    xb_node(c, "Mul", "x,inv", "xn");
    xb_node(c, "Mul", weight_first ? "w,xn" : "xn,w", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_rows(xb_suite *s)
{
    reduce_mean_case(s, 13, -1, 1, XB_DIMS(3, 5, 33));
    reduce_mean_case(s, 13, 1, 0, XB_DIMS(7, 65));
    reduce_mean_case(s, 18, -1, 0, XB_DIMS(2, 9, 17));
    reduce_mean_case(s, 18, 0, 1, XB_DIMS(4, 6));
    rmsnorm_case(s, XB_DIMS(2, 5, 64), false, false);
    rmsnorm_case(s, XB_DIMS(3, 33), true, true);
    rmsnorm_case(s, XB_DIMS(1, 4, 130), false, true);
}

int main(void)
{
    xb_suite *s = xb_suite_create();
    cases_gemm(s);
    cases_matmul(s);
    cases_conv(s);
    cases_fused(s);
    cases_rows(s);
    return xb_suite_finish(s);
}
