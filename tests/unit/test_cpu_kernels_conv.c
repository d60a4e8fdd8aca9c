/* test_cpu_kernels_conv.c — the CONV2D and POOL2D steps of the `cpu` backend's kernel tables
 * against naive references.
 *
 * Tests backends/cpu/kernels (the comparisons are described in test_cpu_kernels_support.h):
 * pointwise, im2col, grouped and depthwise convolutions with strides, dilations and pads (some
 * past a vector or past the kernel), weights packed per table at its MR, K in several blocks;
 * max and average pools, ceil mode, global pools, empty windows, windows as large as the
 * geometry bound, and NaN / infinities in max pools. Exit status: 0 when everything passed.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_cpu_kernels_support.h"

/* ---- CONV2D ---- */

typedef struct conv_case {
    int64_t N, C, H, W, M, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw, group;
    int bias, act;
} conv_case;

static int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t d, bool ceil_mode)
{
    int64_t span = in + pad - d * (k - 1) - 1;
    if (span < 0) return 0;
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

/* How the step is asked to compute: as the lowering picks by default (im2col, pointwise or
   depthwise), as Winograd F(2x2, 3x3) (3x3, unit strides, one group) with the tiles as the
   GEMMs' columns or rows, or with the pixels as the GEMM's rows (one group; filters packed as B). */
typedef enum conv_strategy { CONV_DEFAULT, CONV_WINOGRAD, CONV_WINOGRAD_ROWS, CONV_PIXEL_ROWS } conv_strategy;

/* Filters as bf16 pairs (precision bf16): the case then runs on the tables with a bf16 GEMM only,
   against the f32 reference with a tolerance for bf16 operands (8 bits of mantissa on both
   factors of every product; the Winograd transforms make the factors a few times larger). */
static void pack_bf16_filters(const table *tb, const float *w, const conv_case *c, bool winograd, bool pixel_rows,
                              int64_t K, tbuf **Wp)
{
    uint32_t width = pixel_rows ? tb->k->gemm_nr : tb->k->gemm_mr;
    int64_t rows = c->M / c->group, k = winograd ? c->C : K, sets = winograd ? 16 : c->group;
    size_t one = kiln_cpu_pack_b_bf16_size(k, rows, width);
    int64_t halves = (int64_t)((size_t)sets * one / 2);
    *Wp = tb_new(KILN_DTYPE_BF16, 1, &halves);
    uint32_t *dst = (*Wp)->t.data;
    if (pixel_rows && !winograd) {
        kiln_cpu_pack_b_bf16(w, K, c->M, 1, width, dst);
        return;
    }
    size_t f32_set = (winograd ? kiln_cpu_pack_winograd_size(rows, k, width) / 16 : kiln_cpu_pack_a_size(rows, k, width)) /
                     sizeof(float);
    float *f32 = malloc(f32_set * (size_t)sets * sizeof(float));
    if (winograd) kiln_cpu_pack_winograd(w, rows, k, width, f32);
    for (int64_t g = 0; !winograd && g < sets; g++) kiln_cpu_pack_a(w + g * rows * k, rows, k, 0, width, f32 + g * f32_set);
    for (int64_t set = 0; set < sets; set++)
        kiln_cpu_panels_to_bf16(f32 + set * f32_set, k, (rows + width - 1) / width, width, dst + set * (one / 4));
    free(f32);
}

/* residual (Winograd or pixel rows): input 3, of Y's shape, added before the activation. bf16:
   filters as bf16 pairs (not for depthwise cases). */
static void test_conv_case_prec(const conv_case *c, conv_strategy strategy, bool residual, bool bf16)
{
    bool winograd = strategy == CONV_WINOGRAD || strategy == CONV_WINOGRAD_ROWS;
    bool pixel_rows = strategy == CONV_PIXEL_ROWS || strategy == CONV_WINOGRAD_ROWS;
    char what[200];
    int64_t OH = window_out(c->H, c->KH, c->sh, c->pt + c->pb, c->dh, false);
    int64_t OW = window_out(c->W, c->KW, c->sw, c->pl + c->pr, c->dw, false);
    int64_t cg = c->C / c->group, mg = c->M / c->group, K = cg * c->KH * c->KW;
    bool depthwise = c->group == c->C && c->M == c->C && c->C > 0;
    snprintf(what, sizeof what, "conv N=%lld C=%lld %lldx%lld M=%lld k=%lldx%lld s=%lld,%lld p=%lld,%lld,%lld,%lld "
             "d=%lld,%lld g=%lld%s%s%s",
             (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->M, (long long)c->KH,
             (long long)c->KW, (long long)c->sh, (long long)c->sw, (long long)c->pt, (long long)c->pl,
             (long long)c->pb, (long long)c->pr, (long long)c->dh, (long long)c->dw, (long long)c->group,
             depthwise ? " dw" : winograd ? (pixel_rows ? " winograd rows" : " winograd") : pixel_rows ? " pixel rows" : "",
             residual ? " + residual" : "", bf16 ? " bf16" : "");
    int64_t nx = c->N * c->C * c->H * c->W, nw = c->M * K, ny = c->N * c->M * OH * OW;
    tbuf *X = tb_f32(nx), *Wraw = tb_f32(nw), *bias = c->bias ? tb_f32(c->M) : NULL, *Y = tb_f32(ny);
    tbuf *R = residual ? tb_f32(ny) : NULL;
    if (R) fill(tb_data(R), ny, 2.0f);
    fill(tb_data(X), nx, 1.0f);
    fill(tb_data(Wraw), nw, 1.0f);
    if (bias) fill(tb_data(bias), c->M, 1.0f);
    const kiln_cpu_act *act = &acts[c->act % N_ACTS];

    double *ref = malloc(sizeof(double) * (size_t)(ny + 1));
    const float *x = tb_data(X), *w = tb_data(Wraw);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t g = m / mg;
                    double s = bias ? tb_data(bias)[m] : 0.0;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t kh = 0; kh < c->KH; kh++)
                            for (int64_t kw = 0; kw < c->KW; kw++) {
                                int64_t ih = oh * c->sh - c->pt + kh * c->dh, iw = ow * c->sw - c->pl + kw * c->dw;
                                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                                s += (double)x[((n * c->C + g * cg + ci) * c->H + ih) * c->W + iw] *
                                     w[((m * cg + ci) * c->KH + kh) * c->KW + kw];
                            }
                    int64_t at = ((n * c->M + m) * OH + oh) * OW + ow;
                    ref[at] = act_ref(act, R ? s + tb_data(R)[at] : s);
                }

    for (size_t t = 0; t < n_tables; t++) {
        const table *tb = &tables[t];
        if (!tb->runnable || (bf16 && !tb->k->bf16)) continue;
        tbuf *Wp = Wraw;
        if (bf16) {
            pack_bf16_filters(tb, w, c, winograd, pixel_rows, K, &Wp);
        } else if (winograd) {
            uint32_t width = pixel_rows ? tb->k->gemm_nr : tb->k->gemm_mr;
            Wp = tb_f32((int64_t)(kiln_cpu_pack_winograd_size(c->M, c->C, width) / sizeof(float)));
            kiln_cpu_pack_winograd(w, c->M, c->C, width, tb_data(Wp));
        } else if (pixel_rows) {
            Wp = tb_f32((int64_t)(kiln_cpu_pack_b_size(K, c->M, tb->k->gemm_nr) / sizeof(float)));
            kiln_cpu_pack_b(w, K, c->M, 1, tb->k->gemm_nr, tb_data(Wp));
        } else if (!depthwise) {
            size_t group_bytes = kiln_cpu_pack_a_size(mg, K, tb->k->gemm_mr);
            Wp = tb_f32((int64_t)(group_bytes / sizeof(float) * (size_t)c->group));
            for (int64_t g = 0; g < c->group; g++)
                kiln_cpu_pack_a(w + g * mg * K, mg, K, 0, tb->k->gemm_mr,
                                tb_data(Wp) + (size_t)g * (group_bytes / sizeof(float)));
        }
        kiln_cpu_conv_params p = {.N = c->N, .C = c->C, .H = c->H, .W = c->W, .M = c->M, .OH = OH, .OW = OW,
                                  .KH = c->KH, .KW = c->KW, .stride_h = c->sh, .stride_w = c->sw, .pad_top = c->pt,
                                  .pad_left = c->pl, .dil_h = c->dh, .dil_w = c->dw, .group = c->group,
                                  .has_bias = (uint8_t)c->bias, .depthwise = depthwise, .winograd = winograd,
                                  .pixel_rows = pixel_rows, .has_residual = residual, .bf16 = bf16, .act = *act};
        tbuf *in[4] = {X, Wp, bias, R}, *out[1] = {Y};
        bool ran = run_step(tb, KILN_CPU_OP_CONV2D, &p, in, R ? 4 : 3, out, 1, what);
        if (ran && bf16) close_enough(tb_data(Y), ref, ny, 1e-2, 0.03 * sqrt((double)K), what, tb->k->isa);
        else if (ran) check_output(tb, tb_data(Y), ref, ny, SUM_RTOL, sum_atol(K), what);
        if (Wp != Wraw) tb_free(Wp);
    }
    free(ref);
    tb_free(X);
    tb_free(Wraw);
    tb_free(bias);
    tb_free(R);
    tb_free(Y);
}

static void test_conv_case(const conv_case *c, conv_strategy strategy, bool residual)
{
    test_conv_case_prec(c, strategy, residual, false);
}

static void test_conv(void)
{
    static const conv_case cases[] = {
        /* N  C   H   W   M  KH KW sh sw pt pl pb pr dh dw  g  bias act */
        {1, 3, 5, 7, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0},     /* pointwise */
        {2, 17, 6, 6, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1},   /* pointwise, remainders */
        {1, 4, 7, 7, 6, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2},     /* 1x1 stride 2: im2col */
        {2, 3, 7, 9, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {1, 5, 11, 13, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 3},
        {1, 4, 9, 10, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 4},   /* dilation */
        {1, 3, 8, 9, 5, 1, 5, 1, 2, 0, 2, 0, 1, 1, 1, 1, 1, 5},    /* 1x5, asymmetric pads */
        {1, 6, 8, 8, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 6},    /* grouped */
        {1, 4, 6, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 7},    /* depth multiplier 2 */
        {2, 7, 9, 11, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, 1},   /* depthwise */
        {1, 5, 12, 13, 5, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 5, 1, 2},  /* depthwise stride 2 */
        {1, 3, 14, 37, 3, 5, 5, 1, 1, 4, 4, 4, 4, 2, 2, 3, 0, 8},  /* depthwise 5x5 dilated */
        {1, 17, 5, 40, 17, 3, 3, 1, 3, 2, 0, 1, 2, 1, 1, 17, 1, 0}, /* depthwise stride 3 */
        {1, 3, 9, 45, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, 1, 0},    /* depthwise stride 2, wide rows */
        {1, 2, 5, 100, 2, 3, 3, 1, 3, 1, 1, 1, 1, 1, 1, 2, 0, 1},   /* depthwise stride 3, wide rows */
        {1, 2, 4, 40, 2, 1, 19, 1, 1, 0, 20, 0, 18, 1, 1, 2, 1, 0}, /* depthwise 1x19: pads past a vector */
        {1, 3, 6, 37, 3, 3, 3, 1, 2, 1, 17, 1, 17, 1, 1, 3, 1, 2},  /* depthwise stride 2, pads past a vector */
        {1, 2, 9, 112, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1},   /* depthwise 3x3, 112-wide rows */
        {1, 2, 3, 3, 4, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1, 1},    /* pads past the kernel */
        {1, 32, 20, 20, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* K = 288 */
        {1, 64, 7, 6, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5},   /* K = 576 */
        {1, 130, 6, 5, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* K = 1170: two K blocks (kc <= 1024) */
        {0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},    /* no images */
        {1, 3, 2, 2, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0},    /* window larger than input: 0 x 0 */
        {1, 3, 4, 4, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},    /* no output channels */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_case *c = &cases[i];
        test_conv_case(c, CONV_DEFAULT, false);
        bool depthwise = c->group == c->C && c->M == c->C && c->C > 0;
        if (!depthwise) test_conv_case_prec(c, CONV_DEFAULT, false, true);
    }
    /* Depthwise 3x3 and 5x5 at stride 1 and 2 (the unrolled path of template/f32-dwconv2d.h):
       widths of one partial vector (7, 14), of a full one and a partial one (28, 37) and of whole
       vectors (32, 64 at stride 1), pads 0 to 2 and asymmetric ones (some taps of the edge
       vectors reach part of their lanes, at 37 the last vector's a single lane), output heights
       of exactly one block of 4 rows, of 5 and 7 (the last block overlaps the one before) and
       below one block (the row-at-a-time path), a plane narrower than the window (a tap that
       reaches no lane), two images, and every activation fused into the store. */
    static const conv_case dw_unrolled[] = {
        /* N  C   H   W   M  KH KW sh sw pt pl pb pr dh dw  g  bias act */
        {1, 3, 7, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 2},
        {1, 3, 14, 14, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, 1, 7},
        {2, 3, 28, 28, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1},
        {1, 2, 9, 64, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 8},
        {1, 2, 6, 32, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2, 1, 0},
        {1, 2, 11, 37, 2, 3, 3, 2, 2, 0, 1, 2, 0, 1, 1, 2, 1, 3},
        {1, 2, 10, 65, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 4},
        {1, 3, 7, 7, 3, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 3, 1, 7},
        {1, 3, 14, 14, 3, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 3, 1, 8},
        {1, 2, 28, 28, 2, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 2, 1, 5},
        {1, 2, 8, 37, 2, 5, 5, 1, 1, 2, 1, 2, 3, 1, 1, 2, 0, 6},
        {1, 2, 15, 40, 2, 5, 5, 2, 2, 1, 2, 0, 2, 1, 1, 2, 1, 1},
        {1, 2, 4, 33, 2, 3, 3, 1, 1, 0, 1, 0, 1, 1, 1, 2, 1, 2}, /* OH = 2: below one block */
        {1, 2, 5, 5, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 2, 1, 1},  /* OH = 4: one block */
        {1, 2, 9, 2, 2, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 2, 1, 3},  /* OW = 2 < window: tap 0 reaches no lane */
    };
    for (size_t i = 0; i < sizeof dw_unrolled / sizeof dw_unrolled[0]; i++) {
        test_conv_case(&dw_unrolled[i], CONV_DEFAULT, false);
        for (int act = 0; act < (int)N_ACTS && i < 2; act++) {
            conv_case c = dw_unrolled[i];
            c.act = act;
            test_conv_case(&c, CONV_DEFAULT, false);
        }
    }
    /* Winograd F(2x2, 3x3): odd and even output sizes (partial tiles), pads 0 to 2, tile rows
       wider than a vector and than a V panel, chunks of tiles and row ranges, every activation. */
    static const conv_case winograd[] = {
        /* N  C   H   W   M  KH KW sh sw pt pl pb pr dh dw  g  bias act */
        {1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},
        {2, 5, 7, 9, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {1, 4, 9, 8, 6, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 2},
        {1, 6, 5, 11, 7, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 3},
        {1, 8, 3, 75, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4},  /* tile rows of 38 */
        {1, 16, 28, 28, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* 196 tiles */
        {2, 64, 7, 7, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5},  /* 16 tiles, ranges */
        {1, 1040, 4, 4, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* K = C = 1040: two K blocks */
        {1, 3, 1, 1, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},    /* 1x1 output: one partial tile */
    };
    for (size_t i = 0; i < sizeof winograd / sizeof winograd[0]; i++) {
        for (int residual = 0; residual < 2; residual++) {
            test_conv_case(&winograd[i], CONV_WINOGRAD, residual);
            test_conv_case(&winograd[i], CONV_WINOGRAD_ROWS, residual);
        }
        test_conv_case_prec(&winograd[i], CONV_WINOGRAD_ROWS, true, true);
        test_conv_case_prec(&winograd[i], CONV_WINOGRAD, true, true);
    }
    /* Pixels as rows: pixel counts that end in short row panels (49 = 4 x 12 + 1), strides,
       dilation, channels that end in a partial panel, two K blocks, chunks of pixels (1156
       of them; on the smallest workspace every table's chunk is one MR panel), two images, a
       1x1 filter, activations fused and not. */
    static const conv_case pixel_rows[] = {
        /* N  C   H   W   M  KH KW sh sw pt pl pb pr dh dw  g  bias act */
        {1, 8, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {2, 16, 14, 14, 45, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 5},
        {1, 64, 9, 9, 40, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 3},
        {1, 5, 3, 3, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0},
        {1, 64, 34, 34, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2},
        {1, 3, 10, 10, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 1},
        {1, 120, 6, 6, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* K = 1080: two K blocks */
        {0, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},
        {1, 3, 4, 4, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof pixel_rows / sizeof pixel_rows[0]; i++) {
        for (int residual = 0; residual < 2; residual++) test_conv_case(&pixel_rows[i], CONV_PIXEL_ROWS, residual);
        test_conv_case_prec(&pixel_rows[i], CONV_PIXEL_ROWS, true, true);
    }
}

/* ---- POOL2D ---- */

typedef struct pool_case {
    int64_t N, C, H, W, KH, KW, sh, sw, pt, pl, pb, pr, dh, dw;
    uint32_t kind, count_include_pad;
    bool ceil_mode, global;
} pool_case;

static void test_pool_case(const pool_case *c)
{
    char what[160];
    int64_t KH = c->global ? c->H : c->KH, KW = c->global ? c->W : c->KW;
    int64_t OH = c->global ? 1 : window_out(c->H, KH, c->sh, c->pt + c->pb, c->dh, c->ceil_mode);
    int64_t OW = c->global ? 1 : window_out(c->W, KW, c->sw, c->pl + c->pr, c->dw, c->ceil_mode);
    snprintf(what, sizeof what, "pool %s N=%lld C=%lld %lldx%lld k=%lldx%lld out=%lldx%lld cip=%u",
             c->kind ? "avg" : "max", (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W,
             (long long)KH, (long long)KW, (long long)OH, (long long)OW, c->count_include_pad);
    int64_t nx = c->N * c->C * c->H * c->W, ny = c->N * c->C * OH * OW;
    tbuf *X = tb_f32(nx), *Y = tb_f32(ny);
    fill(tb_data(X), nx, 3.0f);
    double *ref = malloc(sizeof(double) * (size_t)(ny + 1));
    const float *x = tb_data(X);
    for (int64_t pl = 0; pl < c->N * c->C; pl++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double best = -3.402823466e38, sum = 0;
                int64_t present = 0, padded = 0;
                for (int64_t kh = 0; kh < KH; kh++)
                    for (int64_t kw = 0; kw < KW; kw++) {
                        int64_t ih = oh * c->sh - c->pt + kh * c->dh, iw = ow * c->sw - c->pl + kw * c->dw;
                        bool in_pad = ih >= -c->pt && ih < c->H + c->pb && iw >= -c->pl && iw < c->W + c->pr;
                        padded += in_pad;
                        if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                        double v = x[(pl * c->H + ih) * c->W + iw];
                        best = v > best ? v : best;
                        sum += v;
                        present++;
                    }
                int64_t count = c->count_include_pad ? padded : present;
                ref[(pl * OH + oh) * OW + ow] = c->kind == KILN_CPU_POOL_MAX ? best : count ? sum / (double)count : 0;
            }
    kiln_cpu_pool_params p = {.N = c->N, .C = c->C, .H = c->H, .W = c->W, .OH = OH, .OW = OW, .KH = KH > 0 ? KH : 1,
                              .KW = KW > 0 ? KW : 1, .stride_h = c->sh, .stride_w = c->sw, .pad_top = c->pt,
                              .pad_left = c->pl, .pad_bottom = c->pb, .pad_right = c->pr, .dil_h = c->dh,
                              .dil_w = c->dw, .kind = c->kind, .count_include_pad = c->count_include_pad};
    for (size_t t = 0; t < n_tables; t++) {
        const table *tb = &tables[t];
        tbuf *in[1] = {X}, *out[1] = {Y};
        if (tb->runnable && run_step(tb, KILN_CPU_OP_POOL2D, &p, in, 1, out, 1, what))
            check_output(tb, tb_data(Y), ref, ny, 1e-5, 1e-6, what);
    }
    free(ref);
    tb_free(X);
    tb_free(Y);
}

/* Windows as large as the geometry bound (2^30) hanging into pads as large: validation accepts
   them (they fit the padded input), and the kernel must neither walk the taps in the padding nor
   overflow estimating its work. Windows start at -2^30 (all padding), -2^29 and 0. */
static void test_pool_huge_window(void)
{
    const int64_t big = (int64_t)1 << 30;
    int64_t x_shape[4] = {1, 1, 4, 4}, y_shape[4] = {1, 1, 3, 3};
    tbuf *X = tb_new(KILN_DTYPE_F32, 4, x_shape), *Y = tb_new(KILN_DTYPE_F32, 4, y_shape);
    fill(tb_data(X), 16, 3.0f);
    float most = -FLT_MAX;
    for (int i = 0; i < 16; i++) most = tb_data(X)[i] > most ? tb_data(X)[i] : most;
    kiln_cpu_pool_params p = {.N = 1, .C = 1, .H = 4, .W = 4, .OH = 3, .OW = 3, .KH = big, .KW = big,
                              .stride_h = big / 2, .stride_w = big / 2, .pad_top = big, .pad_left = big,
                              .pad_bottom = big, .pad_right = big, .dil_h = 1, .dil_w = 1, .kind = KILN_CPU_POOL_MAX};
    for (size_t t = 0; t < n_tables; t++) {
        tbuf *in[1] = {X}, *out[1] = {Y};
        if (!tables[t].runnable || !run_step(&tables[t], KILN_CPU_OP_POOL2D, &p, in, 1, out, 1, "pool huge window"))
            continue;
        const float *y = tb_data(Y);
        checks++;
        if (y[0] != -FLT_MAX || y[4] != most || y[8] != most)
            fail("pool huge window [%s]: got %g %g %g", tables[t].k->isa, y[0], y[4], y[8]);
    }
    tb_free(X);
    tb_free(Y);
}

static void test_pool(void)
{
    static const pool_case cases[] = {
        /* N C  H   W  KH KW sh sw pt pl pb pr dh dw kind cip ceil global */
        {1, 3, 7, 9, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0, false, false},
        {2, 5, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, false, false},
        {1, 4, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, false, false},
        {1, 4, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, false, false},
        {1, 2, 6, 7, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, true, false}, /* ceil: windows past the pads */
        {1, 2, 6, 7, 3, 3, 2, 2, 1, 0, 1, 0, 1, 1, 0, 0, true, false},
        {1, 3, 10, 11, 3, 2, 1, 2, 2, 1, 2, 1, 2, 3, 0, 0, false, false}, /* dilation */
        {1, 3, 10, 11, 3, 2, 1, 2, 2, 1, 2, 1, 2, 3, 1, 1, false, false},
        {2, 3, 5, 4, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, false, true},  /* global average */
        {2, 3, 5, 4, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, false, true},  /* global max */
        {1, 1, 2, 2, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 0, 0, false, false}, /* empty windows */
        {1, 1, 2, 2, 2, 2, 1, 1, 3, 3, 3, 3, 1, 1, 1, 0, false, false},
        {0, 3, 5, 5, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, false, false},
        {1, 2, 23, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, false, false}, /* ResNet stem pool, wide rows */
        {1, 2, 9, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false, false},   /* unit stride: whole vectors */
        {1, 2, 7, 50, 2, 3, 1, 3, 0, 2, 0, 2, 1, 1, 0, 0, false, false},   /* stride 3: gathers */
        {1, 2, 4, 40, 1, 19, 1, 1, 0, 20, 0, 18, 1, 1, 0, 0, false, false}, /* 1x19: past the cached widths */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_pool_case(&cases[i]);
}

/* Max pools with NaN and infinities: every table must give the generic table's result bit for
   bit (a NaN first tap stays, a later NaN never wins, -inf is a value like any other). */
static void test_pool_nan(void)
{
    enum { H = 6, W = 37 };
    int64_t x_shape[4] = {1, 1, H, W}, y_shape[4] = {1, 1, H, W};
    tbuf *X = tb_new(KILN_DTYPE_F32, 4, x_shape), *Y = tb_new(KILN_DTYPE_F32, 4, y_shape),
         *R = tb_new(KILN_DTYPE_F32, 4, y_shape);
    float *x = tb_data(X);
    fill(x, H * W, 3.0f);
    for (int i = 0; i < H * W; i += 7) x[i] = NAN;
    for (int i = 3; i < H * W; i += 11) x[i] = -INFINITY;
    for (int i = 0; i < W; i++) x[2 * W + i] = -INFINITY; /* a whole row of -inf */
    kiln_cpu_pool_params p = {.N = 1, .C = 1, .H = H, .W = W, .OH = H, .OW = W, .KH = 3, .KW = 3, .stride_h = 1,
                              .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                              .dil_h = 1, .dil_w = 1, .kind = KILN_CPU_POOL_MAX};
    tbuf *in[1] = {X}, *ref_out[1] = {R}, *out[1] = {Y};
    checks++;
    if (strcmp(tables[0].k->isa, "generic") != 0) fail("pool NaN: table 0 is %s, not generic", tables[0].k->isa);
    if (run_step(&tables[0], KILN_CPU_OP_POOL2D, &p, in, 1, ref_out, 1, "pool NaN (generic)")) {
        for (size_t t = 1; t < n_tables; t++) {
            if (!tables[t].runnable || !run_step(&tables[t], KILN_CPU_OP_POOL2D, &p, in, 1, out, 1, "pool NaN"))
                continue;
            checks++;
            if (memcmp(tb_data(Y), tb_data(R), sizeof(float) * H * W) != 0)
                fail("pool NaN [%s]: differs from the generic table's bits", tables[t].k->isa);
        }
    }
    tb_free(X);
    tb_free(Y);
    tb_free(R);
}

int main(void)
{
    tables_init();
    test_conv();
    test_pool();
    test_pool_huge_window();
    test_pool_nan();
    return kernel_tests_report("test_cpu_kernels_conv");
}
