/* test_cross_backend_conv.c — cross-backend op conformance of the tap-list convolutions (3-D
 * ones and dilated 1-D and 2-D ones, backends/cpu/kernels/f32-conv-taps.c) on every target this
 * machine can run, against the portable kernels (the other Conv forms are in
 * test_cross_backend_linear.c).
 *
 * Layer: tests (harness: tests/support/cross_backend.h). What the cases drive both ways: depth
 * taps that read padding for some output frames (pads, strides) and none (no pad); row regions
 * of one row and of many; filter columns no output column sees the input through (dropped at
 * compile time) and ones only some see (zeroed by the im2col); dilations 1 to 36 against inputs
 * of 14 and fewer rows, where whole filters read padding only and a step is bias and activation
 * alone (dilated 2-D convolutions whose tap lists would skip under a fifth of the work, such as
 * dilation 2 or 3 here, run on the 2-D strategies instead, and are compared all the same);
 * groups, no bias, fused Relu and Sigmoid and a fused residual Add (depthwise 3-D stays portable, and is checked all the
 * same); K over the K block (256 floats of K on AVX-512, 512 elsewhere) with several K ranges
 * per chunk (each after the first accumulating), output channels against the tile heights,
 * pixels past one chunk, and work enough for the harness's threads. Each line printed is one
 * (case, target).
 */
#include <stdio.h>

#include "cross_backend.h"

#define NONE XB_SCALAR /* an attribute left out */

static void cases_3d(xb_suite *s)
{
    static const xb_conv_form forms[] = {
        {"3-D 3x3x3 pad 1 [2,3,5,7,9] -> 7", XB_DIMS(2, 3, 5, 7, 9), 7, 1, XB_DIMS(3, 3, 3), NONE,
         XB_DIMS(1, 1, 1, 1, 1, 1), NONE, 0, 0, 0},
        {"3-D 3x3x3 no pad, no bias [1,4,5,6,7] -> 13", XB_DIMS(1, 4, 5, 6, 7), 13, 1, XB_DIMS(3, 3, 3), NONE, NONE,
         NONE, 0, 1, 0},
        {"3-D 3x7x7 strides 1,2,2 pads 1,3,3 (r3d_18's stem) [1,3,4,17,17] -> 16", XB_DIMS(1, 3, 4, 17, 17), 16, 1,
         XB_DIMS(3, 7, 7), XB_DIMS(1, 2, 2), XB_DIMS(1, 3, 3, 1, 3, 3), NONE, 0, 0, "Relu"},
        {"3-D 3x3x3 stride 2 pad 1 [1,8,5,9,9] -> 17", XB_DIMS(1, 8, 5, 9, 9), 17, 1, XB_DIMS(3, 3, 3),
         XB_DIMS(2, 2, 2), XB_DIMS(1, 1, 1, 1, 1, 1), NONE, 0, 0, 0},
        {"3-D 1x1x1 stride 2 (downsample) [2,6,4,7,7] -> 12", XB_DIMS(2, 6, 4, 7, 7), 12, 1, XB_DIMS(1, 1, 1),
         XB_DIMS(2, 2, 2), NONE, NONE, 0, 0, 0},
        {"3-D 1x1x1 [1,33,3,5,5] -> 5", XB_DIMS(1, 33, 3, 5, 5), 5, 1, XB_DIMS(1, 1, 1), NONE, NONE, NONE, 0, 0, 0},
        {"3-D 2x3x4 pads 1,0,2,0,2,1 [1,3,4,6,8] -> 9", XB_DIMS(1, 3, 4, 6, 8), 9, 1, XB_DIMS(2, 3, 4), NONE,
         XB_DIMS(1, 0, 2, 0, 2, 1), NONE, 0, 0, 0},
        {"3-D 3x3x3 dilations 2,1,3 pad 2,1,3 [1,4,6,7,11] -> 5", XB_DIMS(1, 4, 6, 7, 11), 5, 1, XB_DIMS(3, 3, 3),
         NONE, XB_DIMS(2, 1, 3, 2, 1, 3), XB_DIMS(2, 1, 3), 0, 0, 0},
        {"3-D 3x3x3 pad 2 over a depth of 1 [1,3,1,5,5] -> 4", XB_DIMS(1, 3, 1, 5, 5), 4, 1, XB_DIMS(3, 3, 3), NONE,
         XB_DIMS(2, 2, 2, 2, 2, 2), NONE, 0, 0, 0},
        {"3-D grouped 2 3x3x3 pad 1 [1,6,3,5,7] -> 10", XB_DIMS(1, 6, 3, 5, 7), 10, 2, XB_DIMS(3, 3, 3), NONE,
         XB_DIMS(1, 1, 1, 1, 1, 1), NONE, 0, 0, "Relu"},
        {"3-D auto_pad SAME_UPPER 3x3x3 stride 2 [1,3,5,8,8] -> 4", XB_DIMS(1, 3, 5, 8, 8), 4, 1, XB_DIMS(3, 3, 3),
         XB_DIMS(2, 2, 2), NONE, NONE, "SAME_UPPER", 0, 0},
        /* K = 64 * 27 = 1728 over the K block, and with edges several K ranges per chunk */
        {"3-D K = 1728 [1,64,3,6,6] -> 33", XB_DIMS(1, 64, 3, 6, 6), 33, 1, XB_DIMS(3, 3, 3), NONE,
         XB_DIMS(1, 1, 1, 1, 1, 1), NONE, 0, 0, "Relu"},
        {"3-D M = 65 against the tile heights [1,2,2,5,5] -> 65", XB_DIMS(1, 2, 2, 5, 5), 65, 1, XB_DIMS(3, 3, 3),
         NONE, XB_DIMS(1, 1, 1, 1, 1, 1), NONE, 0, 0, 0},
        {"threads: 3-D 3x3x3 pad 1 [1,16,8,24,24] -> 32", XB_DIMS(1, 16, 8, 24, 24), 32, 1, XB_DIMS(3, 3, 3), NONE,
         XB_DIMS(1, 1, 1, 1, 1, 1), NONE, 0, 0, "Relu"},
        {"threads: 3-D few chunks [1,128,2,7,7] -> 128", XB_DIMS(1, 128, 2, 7, 7), 128, 1, XB_DIMS(3, 3, 3), NONE,
         XB_DIMS(1, 1, 1, 1, 1, 1), NONE, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) xb_conv_case(s, &forms[i]);
    /* Depthwise 3-D stays on the portable kernels (aot_ops_linear.c); it must still run and match. */
    xb_case *c = xb_case_begin(s, 11, XB_REDUCES | XB_MAY_STAY_PORTABLE, "Conv 3-D depthwise 3x3x3 pad 1 [2,5,3,6,6]");
    xb_input(c, "x", XB_DIMS(2, 5, 3, 6, 6), -1, 1);
    xb_weight(c, "w", XB_DIMS(5, 1, 3, 3, 3), -1, 1);
    Onnx__NodeProto *n = xb_node(c, "Conv", "x,w", "y");
    xb_attr_int(c, n, "group", 5);
    xb_attr_ints(c, n, "pads", XB_INTS(1, 1, 1, 1, 1, 1));
    xb_output(c, "y");
    xb_case_run(c);
}

/* A 3x3x3 convolution of x [1,C,4,7,9] to C channels (pads 1, or dilation 2 with pads 2), then
   Add(x) and Relu: one step with the input as its residual. */
static void residual_case(xb_suite *s, int64_t c_in, bool dilated)
{
    xb_case *c = xb_case_begin(s, 13, XB_REDUCES, "Conv 3-D 3x3x3%s + Add input + Relu [1,%lld,4,7,9]",
                               dilated ? " dilation 2" : "", (long long)c_in);
    xb_input(c, "x", XB_DIMS(1, c_in, 4, 7, 9), -1, 1);
    xb_weight(c, "w", XB_DIMS(c_in, c_in, 3, 3, 3), -1, 1);
    xb_weight(c, "b", XB_DIMS(c_in), -1, 1);
    Onnx__NodeProto *n = xb_node(c, "Conv", "x,w,b", "conv");
    int64_t d = dilated ? 2 : 1;
    xb_attr_ints(c, n, "pads", XB_INTS(d, d, d, d, d, d));
    xb_attr_ints(c, n, "dilations", XB_INTS(d, d, d));
    xb_node(c, "Add", "conv,x", "s");
    xb_node(c, "Relu", "s", "y");
    xb_output(c, "y");
    xb_case_run(c);
}

static void cases_dilated(xb_suite *s)
{
    /* A 3x3 filter over 14x14 at dilations 1 (no tap lists: Winograd at 32 channels) to 36, pads
       equal to the dilation, as DeepLab's ASPP has them: from 14 on only the middle tap sees
       the input. */
    static const int64_t dilations[] = {1, 2, 3, 6, 7, 12, 13, 14, 24, 36};
    for (size_t i = 0; i < sizeof dilations / sizeof dilations[0]; i++) {
        int64_t d = dilations[i];
        char what[96];
        snprintf(what, sizeof what, "3x3 dilation %lld pad %lld [1,40,14,14] -> 33", (long long)d, (long long)d);
        xb_conv_form f = {what, XB_DIMS(1, 40, 14, 14), 33, 1, XB_DIMS(3, 3), NONE, XB_DIMS(d, d, d, d),
                          XB_DIMS(d, d), 0, 0, i % 2 ? "Relu" : 0};
        xb_conv_case(s, &f);
    }
    static const xb_conv_form forms[] = {
        {"3x3 dilation 2 no pad, no bias [2,5,13,17] -> 7", XB_DIMS(2, 5, 13, 17), 7, 1, XB_DIMS(3, 3), NONE, NONE,
         XB_DIMS(2, 2), 0, 1, 0},
        {"3x3 dilations 3,2 strides 2,3 pads 1,4,2,0 [1,3,17,19] -> 9", XB_DIMS(1, 3, 17, 19), 9, 1, XB_DIMS(3, 3),
         XB_DIMS(2, 3), XB_DIMS(1, 4, 2, 0), XB_DIMS(3, 2), 0, 0, 0},
        {"3x3 dilation 36 pad 36 over 5x5: bias alone [1,4,5,5] -> 6", XB_DIMS(1, 4, 5, 5), 6, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(36, 36, 36, 36), XB_DIMS(36, 36), 0, 0, "Relu"},
        {"5x5 dilation 4 pad 2 [1,3,17,21] -> 5", XB_DIMS(1, 3, 17, 21), 5, 1, XB_DIMS(5, 5), NONE, XB_DIMS(2, 2, 2, 2),
         XB_DIMS(4, 4), 0, 0, 0},
        {"3x3 dilation 2 grouped 4 [1,8,9,9] -> 12", XB_DIMS(1, 8, 9, 9), 12, 4, XB_DIMS(3, 3), NONE,
         XB_DIMS(2, 2, 2, 2), XB_DIMS(2, 2), 0, 0, 0},
        {"depthwise 3x3 dilation 6 pad 6 [1,9,14,14]", XB_DIMS(1, 9, 14, 14), 9, 9, XB_DIMS(3, 3), NONE,
         XB_DIMS(6, 6, 6, 6), XB_DIMS(6, 6), 0, 0, 0},
        {"3x3 dilation 16 pad 16, 1600 pixels past one chunk [1,3,40,40] -> 8", XB_DIMS(1, 3, 40, 40), 8, 1,
         XB_DIMS(3, 3), NONE, XB_DIMS(16, 16, 16, 16), XB_DIMS(16, 16), 0, 0, 0},
        {"3x3 dilation 4 pad 4, K = 576 [1,64,9,9] -> 65", XB_DIMS(1, 64, 9, 9), 65, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(4, 4, 4, 4), XB_DIMS(4, 4), 0, 0, 0},
        {"3x3 dilation 1,2 pad 1,2 [1,5,7,11] -> 7", XB_DIMS(1, 5, 7, 11), 7, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(1, 2, 1, 2), XB_DIMS(1, 2), 0, 0, 0},
        {"threads: 3x3 dilation 12 pad 12 [1,96,14,14] -> 64", XB_DIMS(1, 96, 14, 14), 64, 1, XB_DIMS(3, 3), NONE,
         XB_DIMS(12, 12, 12, 12), XB_DIMS(12, 12), 0, 0, "Relu"},
        {"1-D k3 dilation 4 pad 4 [2,6,33] -> 9", XB_DIMS(2, 6, 33), 9, 1, XB_DIMS(3), NONE, XB_DIMS(4, 4),
         XB_DIMS(4), 0, 0, 0},
        {"1-D k3 dilation 24 pad 24 [1,7,20] -> 5", XB_DIMS(1, 7, 20), 5, 1, XB_DIMS(3), NONE, XB_DIMS(24, 24),
         XB_DIMS(24), 0, 0, "Sigmoid"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) xb_conv_case(s, &forms[i]);
}

int main(void)
{
    xb_suite *s = xb_suite_create();
    cases_3d(s);
    cases_dilated(s);
    residual_case(s, 5, false);
    residual_case(s, 40, true); /* K = 1080: several K blocks, then the residual */
    return xb_suite_finish(s);
}
