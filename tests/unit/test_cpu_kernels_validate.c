/* test_cpu_kernels_validate.c — kiln_cpu_step_validate, the guard in front of every kernel of
 * the `cpu` backend's tables.
 *
 * Tests backends/cpu/kernels/validate.c and validate_data.c: validate() must reject params that are inconsistent,
 * sizes that are too small and params that do not describe exactly their output (a zero factor
 * beside a non-empty output), op by op from a valid base with one mutation each; and random
 * params it accepts must run on every table this CPU can run without a write past any buffer
 * (test_cpu_kernels_support.h). Exit status: 0 when everything passed.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_cpu_kernels_support.h"

/* ---- validation must refuse what the kernels could not run safely ---- */

static void expect_status(const char *label, uint32_t op, const void *params, tbuf **in, size_t n_in,
                          const size_t *in_sizes, tbuf **out, size_t n_out, uint32_t mr, uint32_t nr,
                          kiln_status want)
{
    const kiln_tensor *tin[KILN_CPU_MAX_STEP_TENSORS] = {0};
    kiln_tensor *tout[KILN_CPU_MAX_STEP_TENSORS] = {0};
    for (size_t i = 0; i < n_in; i++) tin[i] = in[i] ? &in[i]->t : NULL;
    for (size_t i = 0; i < n_out; i++) tout[i] = out[i] ? &out[i]->t : NULL;
    checks++;
    kiln_status st = kiln_cpu_step_validate(op, params, tin, n_in, in_sizes, tout, n_out, NULL, mr, nr);
    if (st != want) fail("validate %s: got %d, want %d", label, st, want);
}

#define REJECT(label, op, p, in, n_in, out, mr, nr)                                                 \
    expect_status(label, op, &(p), in, n_in, NULL, out, 1, mr, nr, KILN_ERROR_INCOMPATIBLE)
#define ACCEPT(label, op, p, in, n_in, out, mr, nr) expect_status(label, op, &(p), in, n_in, NULL, out, 1, mr, nr, KILN_OK)

/* Applies one mutation to a copy of the base params and expects a rejection. */
#define MUTATE(label, op, base, stmt, in, n_in, out, mr, nr)                                        \
    do {                                                                                         \
        __typeof__(base) p_ = base;                                                              \
        stmt;                                                                                    \
        REJECT(label, op, p_, in, n_in, out, mr, nr);                                            \
    } while (0)

static void test_validate_gemm(void)
{
    kiln_cpu_gemm_params base = {.M = 5, .N = 7, .K = 3, .batch = 2, .lda = 3, .ldb = 7, .ldy = 7,
                                       .a_batch_stride = 15, .b_batch_stride = 21, .y_batch_stride = 35,
                                       .alpha = 1, .beta = 1, .bias_kind = KILN_CPU_BIAS_PER_COL};
    tbuf *A = tb_f32(30), *B = tb_f32(42), *bias = tb_f32(7), *Y = tb_f32(70);
    int64_t shape_i32 = 70;
    tbuf *Yi = tb_new(KILN_DTYPE_I32, 1, &shape_i32);
    tbuf *in[3] = {A, B, bias}, *out[1] = {Y}, *out_i[1] = {Yi}, *in_nobias[3] = {A, B, NULL};
    const uint32_t mr = 4, nr = 8;
    ACCEPT("gemm base", KILN_CPU_OP_GEMM, base, in, 3, out, mr, nr);
    MUTATE("gemm M<0", KILN_CPU_OP_GEMM, base, p_.M = -1, in, 3, out, mr, nr);
    MUTATE("gemm lda<K", KILN_CPU_OP_GEMM, base, p_.K = 4, in, 3, out, mr, nr);
    MUTATE("gemm lda small", KILN_CPU_OP_GEMM, base, p_.lda = 2, in, 3, out, mr, nr);
    MUTATE("gemm ldy<N", KILN_CPU_OP_GEMM, base, p_.ldy = 6, in, 3, out, mr, nr);
    MUTATE("gemm batches overlap", KILN_CPU_OP_GEMM, base, p_.y_batch_stride = 34, in, 3, out, mr, nr);
    MUTATE("gemm shared output", KILN_CPU_OP_GEMM, base, p_.y_batch_stride = 0, in, 3, out, mr, nr);
    /* Batches sharing rows in disjoint bands of columns (a product writing attention's merged
       heads): batch stride N, row stride batch * N. */
    kiln_cpu_gemm_params bands = base;
    bands.y_batch_stride = 7, bands.ldy = 14;
    ACCEPT("gemm batches in column bands", KILN_CPU_OP_GEMM, bands, in, 3, out, mr, nr);
    MUTATE("gemm column bands overlap", KILN_CPU_OP_GEMM, bands, p_.y_batch_stride = 6, in, 3, out, mr, nr);
    MUTATE("gemm column bands past the row", KILN_CPU_OP_GEMM, bands, p_.ldy = 13, in, 3, out, mr, nr);
    MUTATE("gemm A too small", KILN_CPU_OP_GEMM, base, p_.batch = 3, in, 3, out, mr, nr);
    MUTATE("gemm B too small", KILN_CPU_OP_GEMM, base, p_.b_batch_stride = 22, in, 3, out, mr, nr);
    MUTATE("gemm bias kind", KILN_CPU_OP_GEMM, base, p_.bias_kind = 5, in, 3, out, mr, nr);
    MUTATE("gemm full bias too small", KILN_CPU_OP_GEMM, base, p_.bias_kind = KILN_CPU_BIAS_FULL, in, 3, out, mr, nr);
    MUTATE("gemm act kind", KILN_CPU_OP_GEMM, base, p_.act.kind = KILN_CPU_ACT_COUNT, in, 3, out, mr, nr);
    MUTATE("gemm trans flag", KILN_CPU_OP_GEMM, base, p_.trans_a = 2, in, 3, out, mr, nr);
    MUTATE("gemm packed batched", KILN_CPU_OP_GEMM, base, p_.b_packed = 1, in, 3, out, mr, nr);
    MUTATE("gemm huge", KILN_CPU_OP_GEMM, base, (p_.M = (int64_t)1 << 47, p_.ldy = p_.N = (int64_t)1 << 47), in, 3,
           out, mr, nr);
    MUTATE("gemm negative stride", KILN_CPU_OP_GEMM, base, p_.a_batch_stride = -15, in, 3, out, mr, nr);
    REJECT("gemm bias absent", KILN_CPU_OP_GEMM, base, in_nobias, 3, out, mr, nr);
    REJECT("gemm bias not passed", KILN_CPU_OP_GEMM, base, in, 2, out, mr, nr);
    REJECT("gemm output dtype", KILN_CPU_OP_GEMM, base, in, 3, out_i, mr, nr);
    /* The params describe exactly Y's elements: neither fewer than Y has, nor none at all for a
       non-empty Y (a zero factor fits any buffer while the other factors, loop bounds, could be
       anything). */
    tbuf *Y71 = tb_f32(71), *out71[1] = {Y71}, *out_two[2] = {Y, Y};
    REJECT("gemm Y larger than described", KILN_CPU_OP_GEMM, base, in, 3, out71, mr, nr);
    MUTATE("gemm empty batch, non-empty Y", KILN_CPU_OP_GEMM, base, (p_.batch = 0, p_.M = (int64_t)1 << 40), in, 3,
           out, mr, nr);
    expect_status("gemm two outputs", KILN_CPU_OP_GEMM, &base, in, 3, NULL, out_two, 2, mr, nr, KILN_ERROR_INCOMPATIBLE);
    kiln_cpu_gemm_params packed = base;
    packed.b_packed = 1;
    packed.b_batch_stride = 0;
    ACCEPT("gemm packed", KILN_CPU_OP_GEMM, packed, in, 3, out, mr, nr);
    REJECT("gemm packed at a wider NR", KILN_CPU_OP_GEMM, packed, in, 3, out, mr, 64);
    REJECT("gemm packed NR 0", KILN_CPU_OP_GEMM, packed, in, 3, out, mr, 0);
    /* Precision bf16: B as bf16 pair panels, in a BF16 tensor of at least their bytes. */
    kiln_cpu_gemm_params bf16 = packed;
    bf16.b_packed = KILN_CPU_PACKED_BF16;
    int64_t halves = (int64_t)(kiln_cpu_pack_b_bf16_size(3, 7, nr) / 2), short_halves = halves - 1;
    tbuf *Bh = tb_new(KILN_DTYPE_BF16, 1, &halves), *Bh_short = tb_new(KILN_DTYPE_BF16, 1, &short_halves);
    tbuf *in_bf16[3] = {A, Bh, bias}, *in_bf16_short[3] = {A, Bh_short, bias};
    ACCEPT("gemm bf16 packed", KILN_CPU_OP_GEMM, bf16, in_bf16, 3, out, mr, nr);
    REJECT("gemm bf16 packed, f32 tensor", KILN_CPU_OP_GEMM, bf16, in, 3, out, mr, nr);
    REJECT("gemm bf16 packed, short", KILN_CPU_OP_GEMM, bf16, in_bf16_short, 3, out, mr, nr);
    MUTATE("gemm packed kind 4", KILN_CPU_OP_GEMM, bf16, p_.b_packed = 4, in_bf16, 3, out, mr, nr);
    MUTATE("gemm bf16 packed batched", KILN_CPU_OP_GEMM, bf16, p_.b_batch_stride = 21, in_bf16, 3, out, mr, nr);
    tb_free(Bh);
    tb_free(Bh_short);
    /* One Strassen level: batch 1, even M, N, K, K/2 within the table's K block, the seven sums. */
    kiln_cpu_gemm_params st = {.M = 6, .N = 8, .K = 4, .batch = 1, .lda = 4, .ldb = 8, .ldy = 8, .alpha = 1,
                               .beta = 1, .b_packed = KILN_CPU_PACKED_STRASSEN, .bias_kind = KILN_CPU_BIAS_PER_COL};
    int64_t sums = (int64_t)(kiln_cpu_pack_b_strassen_size(4, 8, nr) / 4);
    tbuf *As = tb_f32(24), *Bs = tb_f32(sums), *Bs_short = tb_f32(sums - 1), *bias_s = tb_f32(8), *Ys = tb_f32(48);
    tbuf *in_s[3] = {As, Bs, bias_s}, *in_s_short[3] = {As, Bs_short, bias_s}, *out_s[1] = {Ys};
    ACCEPT("gemm strassen", KILN_CPU_OP_GEMM, st, in_s, 3, out_s, mr, nr);
    REJECT("gemm strassen, B short", KILN_CPU_OP_GEMM, st, in_s_short, 3, out_s, mr, nr);
    MUTATE("gemm strassen, M odd", KILN_CPU_OP_GEMM, st, (p_.M = 5, p_.ldy = 8), in_s, 3, out_s, mr, nr);
    MUTATE("gemm strassen, K odd", KILN_CPU_OP_GEMM, st, (p_.K = 3, p_.lda = 4), in_s, 3, out_s, mr, nr);
    MUTATE("gemm strassen, batched", KILN_CPU_OP_GEMM, st, (p_.batch = 2, p_.M = 3), in_s, 3, out_s, mr, nr);
    /* K blocks are at most 1024 long: K = 2050 is refused with buffers that would fit it */
    kiln_cpu_gemm_params st_long = st;
    st_long.M = 2, st_long.K = st_long.lda = 2050;
    tbuf *Al = tb_f32(2 * 2050), *Bl = tb_f32((int64_t)(kiln_cpu_pack_b_strassen_size(2050, 8, nr) / 4)), *Yl = tb_f32(16);
    tbuf *in_l[3] = {Al, Bl, bias_s}, *out_l[1] = {Yl};
    REJECT("gemm strassen, K/2 past the K block", KILN_CPU_OP_GEMM, st_long, in_l, 3, out_l, mr, nr);
    st_long.b_packed = 1;
    ACCEPT("gemm K = 2050 classical", KILN_CPU_OP_GEMM, st_long, in_l, 3, out_l, mr, nr);
    tb_free(Al);
    tb_free(Bl);
    tb_free(Yl);
    tb_free(As);
    tb_free(Bs);
    tb_free(Bs_short);
    tb_free(bias_s);
    tb_free(Ys);
    /* Sizes given by the caller: the buffers, not the shapes, bound the access. */
    size_t sizes[3] = {30 * 4, 42 * 4, 7 * 4};
    expect_status("gemm sizes exact", KILN_CPU_OP_GEMM, &base, in, 3, sizes, out, 1, mr, nr, KILN_OK);
    sizes[1] = 42 * 4 - 1;
    expect_status("gemm B size short", KILN_CPU_OP_GEMM, &base, in, 3, sizes, out, 1, mr, nr, KILN_ERROR_INCOMPATIBLE);
    tb_free(A);
    tb_free(B);
    tb_free(bias);
    tb_free(Y);
    tb_free(Y71);
    tb_free(Yi);
}

static void test_validate_conv_pool(void)
{
    const uint32_t mr = 4, nr = 8;
    kiln_cpu_conv_params base = {.N = 1, .C = 4, .H = 5, .W = 5, .M = 6, .OH = 5, .OW = 5, .KH = 3, .KW = 3,
                                       .stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1, .dil_h = 1,
                                       .dil_w = 1, .group = 2, .has_bias = 1};
    size_t group_floats = kiln_cpu_pack_a_size(3, 18, mr) / 4;
    tbuf *X = tb_f32(100), *W = tb_f32((int64_t)group_floats * 2), *bias = tb_f32(6), *Y = tb_f32(150);
    tbuf *in[3] = {X, W, bias}, *out[1] = {Y};
    ACCEPT("conv base", KILN_CPU_OP_CONV2D, base, in, 3, out, mr, nr);
    REJECT("conv packed at a wider MR", KILN_CPU_OP_CONV2D, base, in, 3, out, 8, nr);
    MUTATE("conv group divides", KILN_CPU_OP_CONV2D, base, p_.group = 3, in, 3, out, mr, nr);
    MUTATE("conv group 0", KILN_CPU_OP_CONV2D, base, p_.group = 0, in, 3, out, mr, nr);
    MUTATE("conv stride 0", KILN_CPU_OP_CONV2D, base, p_.stride_w = 0, in, 3, out, mr, nr);
    MUTATE("conv dilation 0", KILN_CPU_OP_CONV2D, base, p_.dil_h = 0, in, 3, out, mr, nr);
    MUTATE("conv kernel 0", KILN_CPU_OP_CONV2D, base, p_.KH = 0, in, 3, out, mr, nr);
    MUTATE("conv pad < 0", KILN_CPU_OP_CONV2D, base, p_.pad_left = -1, in, 3, out, mr, nr);
    MUTATE("conv not depthwise", KILN_CPU_OP_CONV2D, base, p_.depthwise = 1, in, 3, out, mr, nr);
    MUTATE("conv Y too small", KILN_CPU_OP_CONV2D, base, p_.OH = 6, in, 3, out, mr, nr);
    MUTATE("conv X too small", KILN_CPU_OP_CONV2D, base, p_.H = 6, in, 3, out, mr, nr);
    MUTATE("conv W too small", KILN_CPU_OP_CONV2D, base, p_.KW = 4, in, 3, out, mr, nr);
    MUTATE("conv bias flag", KILN_CPU_OP_CONV2D, base, p_.has_bias = 2, in, 3, out, mr, nr);
    MUTATE("conv geometry", KILN_CPU_OP_CONV2D, base, p_.stride_h = (int64_t)1 << 31, in, 3, out, mr, nr);
    MUTATE("conv act", KILN_CPU_OP_CONV2D, base, p_.act.kind = 99, in, 3, out, mr, nr);
    REJECT("conv bias missing", KILN_CPU_OP_CONV2D, base, in, 2, out, mr, nr);
    MUTATE("conv no images, non-empty Y", KILN_CPU_OP_CONV2D, base, (p_.N = 0, p_.OH = (int64_t)1 << 29), in, 3, out,
           mr, nr);
    /* A non-empty Y reads X: an empty X (here no input channels) would leave H, W unbounded. */
    MUTATE("conv no input channels", KILN_CPU_OP_CONV2D, base, p_.C = 0, in, 3, out, mr, nr);
    MUTATE("conv empty rows", KILN_CPU_OP_CONV2D, base, p_.H = 0, in, 3, out, mr, nr);
    kiln_cpu_conv_params dw = base;
    dw.group = dw.C = dw.M = 4;
    dw.depthwise = 1;
    tbuf *Y100 = tb_f32(100), *Y80 = tb_f32(80), *out100[1] = {Y100}, *out80[1] = {Y80};
    ACCEPT("conv depthwise", KILN_CPU_OP_CONV2D, dw, in, 3, out100, mr, nr);
    MUTATE("conv depthwise, bf16 flag", KILN_CPU_OP_CONV2D, dw, p_.bf16 = 1, in, 3, out100, mr, nr);
    REJECT("conv depthwise Y larger than described", KILN_CPU_OP_CONV2D, dw, in, 3, out, mr, nr);
    MUTATE("conv depthwise M != C", KILN_CPU_OP_CONV2D, dw, (p_.M = 8, p_.OH = 2), in, 3, out80, mr, nr);
    tb_free(Y100);
    tb_free(Y80);

    /* Pixels as rows: one group, filters as B panels for NR; Winograd: U for MR, or for NR with
       the tiles as rows; a residual (input 3, Y's shape) with Winograd only. */
    kiln_cpu_conv_params rows = base;
    rows.group = 1;
    rows.pixel_rows = 1;
    tbuf *WB = tb_f32((int64_t)(kiln_cpu_pack_b_size(36, 6, nr) / 4)), *rin[3] = {X, WB, bias};
    ACCEPT("conv pixel rows", KILN_CPU_OP_CONV2D, rows, rin, 3, out, mr, nr);
    REJECT("conv pixel rows at a wider NR", KILN_CPU_OP_CONV2D, rows, rin, 3, out, mr, 2 * nr);
    MUTATE("conv pixel rows grouped", KILN_CPU_OP_CONV2D, rows, p_.group = 2, rin, 3, out, mr, nr);
    MUTATE("conv pixel rows flag", KILN_CPU_OP_CONV2D, rows, p_.pixel_rows = 2, rin, 3, out, mr, nr);
    kiln_cpu_conv_params rows16 = rows;
    rows16.bf16 = 1;
    int64_t halves16 = (int64_t)(kiln_cpu_pack_b_bf16_size(36, 6, nr) / 2);
    tbuf *WB16 = tb_new(KILN_DTYPE_BF16, 1, &halves16), *rin16[3] = {X, WB16, bias};
    ACCEPT("conv pixel rows, bf16 filters", KILN_CPU_OP_CONV2D, rows16, rin16, 3, out, mr, nr);
    REJECT("conv pixel rows, bf16 flag on f32 filters", KILN_CPU_OP_CONV2D, rows16, rin, 3, out, mr, nr);
    MUTATE("conv bf16 flag", KILN_CPU_OP_CONV2D, rows16, p_.bf16 = 2, rin16, 3, out, mr, nr);
    tb_free(WB16);
    kiln_cpu_conv_params wino = rows;
    wino.pixel_rows = 0;
    wino.winograd = 1;
    tbuf *WA = tb_f32((int64_t)(kiln_cpu_pack_winograd_size(6, 4, mr) / 4));
    tbuf *WN = tb_f32((int64_t)(kiln_cpu_pack_winograd_size(6, 4, nr) / 4));
    tbuf *win[4] = {X, WA, bias, Y}, *wnin[4] = {X, WN, bias, Y};
    ACCEPT("conv winograd", KILN_CPU_OP_CONV2D, wino, win, 3, out, mr, nr);
    MUTATE("conv winograd 5x5", KILN_CPU_OP_CONV2D, wino, (p_.KH = 5, p_.pad_top = 2), win, 3, out, mr, nr);
    kiln_cpu_conv_params wino_rows = wino;
    wino_rows.pixel_rows = 1;
    ACCEPT("conv winograd, tiles as rows", KILN_CPU_OP_CONV2D, wino_rows, wnin, 3, out, mr, nr);
    REJECT("conv winograd, tiles as rows, filters for MR", KILN_CPU_OP_CONV2D, wino_rows, win, 3, out, 2, 2 * nr);
    kiln_cpu_conv_params res = wino;
    res.has_residual = 1;
    ACCEPT("conv winograd + residual", KILN_CPU_OP_CONV2D, res, win, 4, out, mr, nr);
    REJECT("conv residual missing", KILN_CPU_OP_CONV2D, res, win, 3, out, mr, nr);
    MUTATE("conv residual, direct im2col", KILN_CPU_OP_CONV2D, res, p_.winograd = 0, win, 4, out, mr, nr);
    kiln_cpu_conv_params rows_res = rows;
    rows_res.has_residual = 1;
    tbuf *rrin[4] = {X, WB, bias, Y};
    ACCEPT("conv pixel rows + residual", KILN_CPU_OP_CONV2D, rows_res, rrin, 4, out, mr, nr);
    MUTATE("conv residual flag", KILN_CPU_OP_CONV2D, res, p_.has_residual = 2, win, 4, out, mr, nr);
    tbuf *Ysmall = tb_f32(149), *rsmall[4] = {X, WA, bias, Ysmall};
    REJECT("conv residual too small", KILN_CPU_OP_CONV2D, res, rsmall, 4, out, mr, nr);
    tb_free(WB);
    tb_free(WA);
    tb_free(WN);
    tb_free(Ysmall);

    /* Tap lists: a 3-D convolution [1,4,3,5,5] -> [1,6,3,5,5], 3x3x3 pad 1, two groups, the
       filters tap-major (K = 3 * 3 * 2 * 3 = 54 a group); the depth fields are zero elsewhere. */
    kiln_cpu_conv_params taps = base;
    taps.taps = 1;
    taps.D = 3, taps.OD = 3, taps.KD = 3, taps.stride_d = 1, taps.pad_front = 1, taps.dil_d = 1;
    taps.kw_lo = 0, taps.kw_n = 3;
    tbuf *TX = tb_f32(300), *TW = tb_f32((int64_t)(kiln_cpu_pack_a_size(3, 54, mr) / 4) * 2), *TY = tb_f32(450);
    tbuf *tin[3] = {TX, TW, bias}, *tout[1] = {TY};
    ACCEPT("conv taps 3-D", KILN_CPU_OP_CONV2D, taps, tin, 3, tout, mr, nr);
    MUTATE("conv taps flag", KILN_CPU_OP_CONV2D, taps, p_.taps = 2, tin, 3, tout, mr, nr);
    MUTATE("conv taps X too small", KILN_CPU_OP_CONV2D, taps, p_.D = 4, tin, 3, tout, mr, nr);
    MUTATE("conv taps Y larger than described", KILN_CPU_OP_CONV2D, taps, p_.OD = 2, tin, 3, tout, mr, nr);
    MUTATE("conv taps depth kernel 0", KILN_CPU_OP_CONV2D, taps, p_.KD = 0, tin, 3, tout, mr, nr);
    MUTATE("conv taps depth stride 0", KILN_CPU_OP_CONV2D, taps, p_.stride_d = 0, tin, 3, tout, mr, nr);
    MUTATE("conv taps depth dilation 0", KILN_CPU_OP_CONV2D, taps, p_.dil_d = 0, tin, 3, tout, mr, nr);
    MUTATE("conv taps pad < 0", KILN_CPU_OP_CONV2D, taps, p_.pad_front = -1, tin, 3, tout, mr, nr);
    MUTATE("conv taps columns past the filter", KILN_CPU_OP_CONV2D, taps, p_.kw_lo = 1, tin, 3, tout, mr, nr);
    MUTATE("conv taps W too small", KILN_CPU_OP_CONV2D, taps, p_.KD = 4, tin, 3, tout, mr, nr);
    MUTATE("conv taps winograd", KILN_CPU_OP_CONV2D, taps, p_.winograd = 1, tin, 3, tout, mr, nr);
    MUTATE("conv taps bf16", KILN_CPU_OP_CONV2D, taps, p_.bf16 = 1, tin, 3, tout, mr, nr);
    MUTATE("conv taps residual missing", KILN_CPU_OP_CONV2D, taps, p_.has_residual = 1, tin, 3, tout, mr, nr);
    kiln_cpu_conv_params taps_res = taps;
    taps_res.has_residual = 1;
    tbuf *TR = tb_f32(450), *TR_short = tb_f32(449), *trin[4] = {NULL, NULL, bias, TR}, *trshort[4] = {NULL, NULL, bias, TR_short};
    trin[0] = trshort[0] = TX;
    trin[1] = trshort[1] = TW;
    ACCEPT("conv taps + residual", KILN_CPU_OP_CONV2D, taps_res, trin, 4, tout, mr, nr);
    REJECT("conv taps residual too small", KILN_CPU_OP_CONV2D, taps_res, trshort, 4, tout, mr, nr);
    tb_free(TR);
    tb_free(TR_short);
    kiln_cpu_conv_params one_col = taps;
    one_col.kw_lo = 1, one_col.kw_n = 1; /* K = 18 a group: fits the larger filter buffer */
    ACCEPT("conv taps, middle column kept", KILN_CPU_OP_CONV2D, one_col, tin, 3, tout, mr, nr);
    MUTATE("conv depth field without taps", KILN_CPU_OP_CONV2D, base, p_.KD = 1, in, 3, out, mr, nr);
    MUTATE("conv columns without taps", KILN_CPU_OP_CONV2D, base, p_.kw_n = 3, in, 3, out, mr, nr);
    tb_free(TX);
    tb_free(TW);
    tb_free(TY);

    kiln_cpu_pool_params pool = {.N = 1, .C = 2, .H = 6, .W = 6, .OH = 3, .OW = 3, .KH = 2, .KW = 2,
                                       .stride_h = 2, .stride_w = 2, .dil_h = 1, .dil_w = 1};
    tbuf *PX = tb_f32(72), *PY = tb_f32(18), *pin[1] = {PX}, *pout[1] = {PY};
    ACCEPT("pool base", KILN_CPU_OP_POOL2D, pool, pin, 1, pout, mr, nr);
    MUTATE("pool kind", KILN_CPU_OP_POOL2D, pool, p_.kind = 2, pin, 1, pout, mr, nr);
    MUTATE("pool stride 0", KILN_CPU_OP_POOL2D, pool, p_.stride_h = 0, pin, 1, pout, mr, nr);
    MUTATE("pool Y too small", KILN_CPU_OP_POOL2D, pool, p_.OW = 4, pin, 1, pout, mr, nr);
    MUTATE("pool X too small", KILN_CPU_OP_POOL2D, pool, p_.C = 3, pin, 1, pout, mr, nr);
    MUTATE("pool flag", KILN_CPU_OP_POOL2D, pool, p_.count_include_pad = 3, pin, 1, pout, mr, nr);
    MUTATE("pool pad < 0", KILN_CPU_OP_POOL2D, pool, p_.pad_bottom = -1, pin, 1, pout, mr, nr);
    MUTATE("pool no images, non-empty Y", KILN_CPU_OP_POOL2D, pool, (p_.N = 0, p_.KH = (int64_t)1 << 29), pin, 1, pout,
           mr, nr);
    MUTATE("pool empty rows", KILN_CPU_OP_POOL2D, pool, p_.H = 0, pin, 1, pout, mr, nr);
    /* ONNX windows: the dilated kernel fits the padded input, at most ceil(room/stride)+1 of them. */
    MUTATE("pool window past the padded input", KILN_CPU_OP_POOL2D, pool, p_.KH = 7, pin, 1, pout, mr, nr);
    MUTATE("pool dilated window past the input", KILN_CPU_OP_POOL2D, pool, p_.dil_w = 6, pin, 1, pout, mr, nr);
    MUTATE("pool more windows than the input has", KILN_CPU_OP_POOL2D, pool, (p_.OH = 9, p_.OW = 1), pin, 1, pout, mr,
           nr);
    kiln_cpu_pool_params padded = pool;
    padded.KH = 7, padded.pad_top = 2, padded.pad_bottom = 2, padded.stride_h = 1;
    ACCEPT("pool window within the pads", KILN_CPU_OP_POOL2D, padded, pin, 1, pout, mr, nr);
    tb_free(X);
    tb_free(W);
    tb_free(bias);
    tb_free(Y);
    tb_free(PX);
    tb_free(PY);
}

static void test_validate_rows(void)
{
    const uint32_t mr = 4, nr = 8;
    tbuf *X10 = tb_f32(10), *Y10 = tb_f32(10), *in1[1] = {X10}, *out1[1] = {Y10};
    kiln_cpu_unary_params unary = {.count = 10, .act = {KILN_CPU_ACT_TANH, 0, 0}};
    ACCEPT("unary base", KILN_CPU_OP_UNARY, unary, in1, 1, out1, mr, nr);
    MUTATE("unary count", KILN_CPU_OP_UNARY, unary, p_.count = 11, in1, 1, out1, mr, nr);
    MUTATE("unary count < 0", KILN_CPU_OP_UNARY, unary, p_.count = -1, in1, 1, out1, mr, nr);
    MUTATE("unary act", KILN_CPU_OP_UNARY, unary, p_.act.kind = 50, in1, 1, out1, mr, nr);
    REJECT("unary no input", KILN_CPU_OP_UNARY, unary, in1, 0, out1, mr, nr);
    MUTATE("unary count short", KILN_CPU_OP_UNARY, unary, p_.count = 9, in1, 1, out1, mr, nr);

    tbuf *A = tb_f32(12), *B = tb_f32(4), *Y = tb_f32(12), *in2[2] = {A, B}, *out2[1] = {Y};
    kiln_cpu_binary_params bin = {.kind = KILN_CPU_BIN_ADD, .rank = 2, .out_shape = {3, 4},
                                        .a_strides = {4, 1}, .b_strides = {0, 1}};
    ACCEPT("binary base", KILN_CPU_OP_BINARY, bin, in2, 2, out2, mr, nr);
    MUTATE("binary A stride", KILN_CPU_OP_BINARY, bin, p_.a_strides[0] = 5, in2, 2, out2, mr, nr);
    MUTATE("binary negative stride", KILN_CPU_OP_BINARY, bin, p_.b_strides[1] = -1, in2, 2, out2, mr, nr);
    MUTATE("binary rank", KILN_CPU_OP_BINARY, bin, p_.rank = 9, in2, 2, out2, mr, nr);
    MUTATE("binary kind", KILN_CPU_OP_BINARY, bin, p_.kind = 7, in2, 2, out2, mr, nr);
    MUTATE("binary Y too small", KILN_CPU_OP_BINARY, bin, p_.out_shape[1] = 5, in2, 2, out2, mr, nr);
    MUTATE("binary overflow", KILN_CPU_OP_BINARY, bin, (p_.out_shape[0] = (int64_t)1 << 40, p_.out_shape[1] = (int64_t)1 << 40), in2, 2, out2, mr, nr);
    MUTATE("binary empty dim, non-empty Y", KILN_CPU_OP_BINARY, bin, (p_.out_shape[0] = 0, p_.out_shape[1] = (int64_t)1 << 40),
           in2, 2, out2, mr, nr);

    tbuf *S24 = tb_f32(24), *T24 = tb_f32(24), *sin[1] = {S24}, *sout[1] = {T24};
    kiln_cpu_softmax_params sm = {.outer = 2, .n = 3, .inner = 4};
    ACCEPT("softmax base", KILN_CPU_OP_SOFTMAX, sm, sin, 1, sout, mr, nr);
    MUTATE("softmax too big", KILN_CPU_OP_SOFTMAX, sm, p_.inner = 5, sin, 1, sout, mr, nr);
    MUTATE("softmax flag", KILN_CPU_OP_SOFTMAX, sm, p_.log = 2, sin, 1, sout, mr, nr);
    MUTATE("softmax overflow", KILN_CPU_OP_SOFTMAX, sm, (p_.outer = (int64_t)1 << 40, p_.n = (int64_t)1 << 40), sin, 1,
           sout, mr, nr);
    MUTATE("softmax empty, non-empty Y", KILN_CPU_OP_SOFTMAX, sm, (p_.outer = 0, p_.n = (int64_t)1 << 40), sin, 1, sout,
           mr, nr);

    tbuf *LX = tb_f32(16), *LS = tb_f32(8), *LS7 = tb_f32(7), *LB = tb_f32(8), *LY = tb_f32(16);
    tbuf *lin[3] = {LX, LS, LB}, *lin_short[3] = {LX, LS7, LB}, *lout[1] = {LY};
    kiln_cpu_layernorm_params ln = {.outer = 2, .n = 8, .epsilon = 1e-5f, .has_bias = 1};
    ACCEPT("layernorm base", KILN_CPU_OP_LAYERNORM, ln, lin, 3, lout, mr, nr);
    REJECT("layernorm scale short", KILN_CPU_OP_LAYERNORM, ln, lin_short, 3, lout, mr, nr);
    REJECT("layernorm bias missing", KILN_CPU_OP_LAYERNORM, ln, lin, 2, lout, mr, nr);
    MUTATE("layernorm epsilon", KILN_CPU_OP_LAYERNORM, ln, p_.epsilon = NAN, lin, 3, lout, mr, nr);
    MUTATE("layernorm rms flag", KILN_CPU_OP_LAYERNORM, ln, p_.rms = 2, lin, 3, lout, mr, nr);
    MUTATE("layernorm rows", KILN_CPU_OP_LAYERNORM, ln, p_.outer = 3, lin, 3, lout, mr, nr);
    MUTATE("layernorm empty rows, non-empty Y", KILN_CPU_OP_LAYERNORM, ln, (p_.outer = (int64_t)1 << 40, p_.n = 0), lin, 3,
           lout, mr, nr);
    tbuf *LR = tb_f32(16), *LR15 = tb_f32(15);
    tbuf *lin_r[4] = {LX, LS, LB, LR}, *lin_r_short[4] = {LX, LS, LB, LR15};
    kiln_cpu_layernorm_params ln_r = ln;
    ln_r.has_residual = 1;
    ACCEPT("layernorm residual", KILN_CPU_OP_LAYERNORM, ln_r, lin_r, 4, lout, mr, nr);
    REJECT("layernorm residual missing", KILN_CPU_OP_LAYERNORM, ln_r, lin, 3, lout, mr, nr);
    REJECT("layernorm residual short", KILN_CPU_OP_LAYERNORM, ln_r, lin_r_short, 4, lout, mr, nr);
    MUTATE("layernorm residual flag", KILN_CPU_OP_LAYERNORM, ln_r, p_.has_residual = 2, lin_r, 4, lout, mr, nr);

    tbuf *FX = tb_f32(12), *FS = tb_f32(3), *FT = tb_f32(3), *FY = tb_f32(12);
    tbuf *fin[3] = {FX, FS, FT}, *fin_nt[3] = {FX, FS, NULL}, *fout[1] = {FY};
    kiln_cpu_affine_params af = {.N = 1, .C = 3, .inner = 4};
    ACCEPT("affine base", KILN_CPU_OP_CHANNEL_AFFINE, af, fin, 3, fout, mr, nr);
    MUTATE("affine channels", KILN_CPU_OP_CHANNEL_AFFINE, af, (p_.C = 4, p_.inner = 3), fin, 3, fout, mr, nr);
    REJECT("affine shift missing", KILN_CPU_OP_CHANNEL_AFFINE, af, fin_nt, 3, fout, mr, nr);
    MUTATE("affine empty planes, non-empty Y", KILN_CPU_OP_CHANNEL_AFFINE, af, (p_.N = (int64_t)1 << 40, p_.inner = 0),
           fin, 3, fout, mr, nr);

    int64_t n16 = 16;
    tbuf *CX = tb_new(KILN_DTYPE_U8, 1, &n16), *CY = tb_new(KILN_DTYPE_U8, 1, &n16), *cin[1] = {CX}, *cout[1] = {CY};
    kiln_cpu_copy_params cp = {.bytes = 16};
    ACCEPT("copy base", KILN_CPU_OP_COPY, cp, cin, 1, cout, mr, nr);
    MUTATE("copy too long", KILN_CPU_OP_COPY, cp, p_.bytes = 17, cin, 1, cout, mr, nr);
    MUTATE("copy negative", KILN_CPU_OP_COPY, cp, p_.bytes = -1, cin, 1, cout, mr, nr);
    MUTATE("copy short of Y", KILN_CPU_OP_COPY, cp, p_.bytes = 15, cin, 1, cout, mr, nr);

    tbuf *TX = tb_f32(12), *TY = tb_f32(12), *tin[1] = {TX}, *tout[1] = {TY};
    kiln_cpu_transpose_params tr = {.rank = 2, .elem_size = 4, .in_shape = {3, 4}, .perm = {1, 0}};
    ACCEPT("transpose base", KILN_CPU_OP_TRANSPOSE, tr, tin, 1, tout, mr, nr);
    MUTATE("transpose perm repeats", KILN_CPU_OP_TRANSPOSE, tr, p_.perm[1] = 1, tin, 1, tout, mr, nr);
    MUTATE("transpose perm range", KILN_CPU_OP_TRANSPOSE, tr, p_.perm[0] = 2, tin, 1, tout, mr, nr);
    MUTATE("transpose elem size", KILN_CPU_OP_TRANSPOSE, tr, p_.elem_size = 2, tin, 1, tout, mr, nr);
    MUTATE("transpose too big", KILN_CPU_OP_TRANSPOSE, tr, p_.in_shape[1] = 5, tin, 1, tout, mr, nr);
    MUTATE("transpose rank", KILN_CPU_OP_TRANSPOSE, tr, p_.rank = 9, tin, 1, tout, mr, nr);
    MUTATE("transpose empty dim, non-empty Y", KILN_CPU_OP_TRANSPOSE, tr, (p_.in_shape[0] = 0, p_.in_shape[1] = (int64_t)1 << 40),
           tin, 1, tout, mr, nr);

    REJECT("unknown op", 0, cp, cin, 1, cout, mr, nr);
    REJECT("unknown op", KILN_CPU_OP_COUNT, cp, cin, 1, cout, mr, nr);

    tbuf *all[] = {X10, Y10, A, B, Y, S24, T24, LX, LS, LS7, LB, LY, LR, LR15, FX, FS, FT, FY, CX, CY, TX, TY};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tb_free(all[i]);
}

/* ---- random params: whatever validate accepts must run inside its buffers ---- */

static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)((frand() + 1.0f) * 0.5f * (float)(hi - lo + 1)) % (hi - lo + 1); }
static int64_t rnd_dim(void) { return rnd_in(0, 12) == 0 ? rnd_in(-1, 0) : rnd_in(1, 7); }
static int64_t rnd_pos(void) { return rnd_in(0, 12) == 0 ? 0 : rnd_in(1, 3); }

/* The output elements random params describe (-1 when some dim is negative). */
static int64_t random_described_count(uint32_t op, const void *params)
{
    int64_t dims[KILN_CPU_MAX_RANK], n = 0, count = 1;
    if (op == KILN_CPU_OP_GEMM) {
        const kiln_cpu_gemm_params *p = params;
        dims[n++] = p->batch, dims[n++] = p->M, dims[n++] = p->N;
    } else if (op == KILN_CPU_OP_CONV2D) {
        const kiln_cpu_conv_params *p = params;
        dims[n++] = p->N, dims[n++] = p->M, dims[n++] = p->OH, dims[n++] = p->OW;
    } else if (op == KILN_CPU_OP_POOL2D) {
        const kiln_cpu_pool_params *p = params;
        dims[n++] = p->N, dims[n++] = p->C, dims[n++] = p->OH, dims[n++] = p->OW;
    } else {
        const kiln_cpu_binary_params *p = params;
        for (uint32_t d = 0; d < p->rank; d++) dims[n++] = p->out_shape[d];
    }
    for (int64_t i = 0; i < n; i++) {
        if (dims[i] < 0) return -1;
        count *= dims[i];
    }
    return count;
}

/* Random GEMM, CONV2D, POOL2D and BINARY params near consistency, over buffers of random
   sizes. Accepted steps run on every table (under ASan any stray access aborts; otherwise the
   canaries catch stray writes). Most draws are rejected, which is the point. */
static void test_validate_random(void)
{
    int accepted = 0;
    for (int it = 0; it < 6000; it++) {
        union {
            kiln_cpu_gemm_params gemm;
            kiln_cpu_conv_params conv;
            kiln_cpu_pool_params pool;
            kiln_cpu_binary_params bin;
        } u;
        memset(&u, 0, sizeof u);
        uint32_t op = (uint32_t)(it % 4 == 0 ? KILN_CPU_OP_GEMM : it % 4 == 1 ? KILN_CPU_OP_CONV2D
                                                               : it % 4 == 2 ? KILN_CPU_OP_POOL2D : KILN_CPU_OP_BINARY);
        if (op == KILN_CPU_OP_GEMM) {
            kiln_cpu_gemm_params *p = &u.gemm;
            p->M = rnd_dim(), p->N = rnd_dim(), p->K = rnd_dim(), p->batch = rnd_in(0, 2);
            p->trans_a = (uint8_t)rnd_in(0, 1), p->trans_b = (uint8_t)rnd_in(0, 1), p->b_packed = (uint8_t)rnd_in(0, 1);
            p->bias_kind = (uint8_t)rnd_in(0, 4);
            p->lda = (p->trans_a ? p->M : p->K) + rnd_in(-1, 1), p->ldb = (p->trans_b ? p->K : p->N) + rnd_in(-1, 1);
            p->ldy = p->N + rnd_in(-1, 1);
            p->a_batch_stride = (p->trans_a ? p->K : p->M) * p->lda + rnd_in(-1, 1);
            p->b_batch_stride = p->b_packed ? 0 : (p->trans_b ? p->N : p->K) * p->ldb + rnd_in(-1, 1);
            p->y_batch_stride = p->M * p->ldy + rnd_in(-1, 1), p->bias_batch_stride = p->M * p->N;
            p->alpha = p->beta = 1.0f;
            p->act.kind = (uint32_t)rnd_in(0, KILN_CPU_ACT_COUNT);
        } else if (op == KILN_CPU_OP_CONV2D) {
            kiln_cpu_conv_params *p = &u.conv;
            p->N = rnd_dim(), p->C = rnd_dim(), p->H = rnd_dim(), p->W = rnd_dim(), p->M = rnd_dim();
            p->KH = rnd_pos(), p->KW = rnd_pos(), p->stride_h = rnd_pos(), p->stride_w = rnd_pos();
            p->dil_h = rnd_pos(), p->dil_w = rnd_pos(), p->pad_top = rnd_in(-1, 2), p->pad_left = rnd_in(-1, 2);
            p->group = rnd_in(0, 3) == 0 ? p->C : rnd_in(0, 2);
            p->depthwise = (uint8_t)(p->group == p->C && rnd_in(0, 1)), p->has_bias = (uint8_t)rnd_in(0, 1);
            if (p->depthwise) p->M = p->C;
            p->OH = rnd_dim(), p->OW = rnd_dim();
            p->act.kind = (uint32_t)rnd_in(0, 4);
        } else if (op == KILN_CPU_OP_POOL2D) {
            kiln_cpu_pool_params *p = &u.pool;
            p->N = rnd_dim(), p->C = rnd_dim(), p->H = rnd_dim(), p->W = rnd_dim(), p->OH = rnd_dim(), p->OW = rnd_dim();
            p->KH = rnd_pos(), p->KW = rnd_pos(), p->stride_h = rnd_pos(), p->stride_w = rnd_pos();
            p->dil_h = rnd_pos(), p->dil_w = rnd_pos(), p->pad_top = rnd_in(-1, 2), p->pad_left = rnd_in(0, 2);
            p->pad_bottom = rnd_in(0, 2), p->pad_right = rnd_in(0, 2);
            p->kind = (uint32_t)rnd_in(0, 2), p->count_include_pad = (uint32_t)rnd_in(0, 1);
        } else {
            kiln_cpu_binary_params *p = &u.bin;
            p->kind = (uint32_t)rnd_in(0, 7), p->rank = (uint32_t)rnd_in(0, 3);
            for (uint32_t d = 0; d < p->rank; d++) {
                p->out_shape[d] = rnd_dim();
                p->a_strides[d] = rnd_in(-1, 6);
                p->b_strides[d] = rnd_in(0, 1) ? 0 : rnd_in(0, 6);
            }
        }
        tbuf *t[4];
        for (int i = 0; i < 4; i++) t[i] = tb_f32(rnd_in(0, 3) ? rnd_in(0, 300) : rnd_in(0, 1500));
        for (int i = 0; i < 3; i++) fill(tb_data(t[i]), t[i]->t.shape[0], 2.0f);
        /* Usually the output's shape holds exactly the elements the params describe (validation
           wants that) in a buffer of its random size, at least as large. */
        int64_t described = random_described_count(op, &u);
        if (rnd_in(0, 3) && described >= 0 && described <= t[3]->t.shape[0]) t[3]->t.shape[0] = described;
        tbuf *in[3] = {t[0], t[1], rnd_in(0, 4) ? t[2] : NULL}, *out[1] = {t[3]};
        size_t n_in = (size_t)rnd_in(1, 3);
        size_t in_sizes[3] = {t[0]->bytes, t[1]->bytes, t[2]->bytes}, out_sizes[1] = {t[3]->bytes};
        for (size_t k = 0; k < n_tables; k++) {
            const table *tb = &tables[k];
            const kiln_tensor *tin[3] = {&in[0]->t, &in[1]->t, in[2] ? &in[2]->t : NULL};
            kiln_tensor *tout[1] = {&out[0]->t};
            if (!tb->runnable || kiln_cpu_step_validate(op, &u, tin, n_in, in_sizes, tout, 1, out_sizes, tb->k->gemm_mr,
                                                        tb->k->gemm_nr) != KILN_OK)
                continue;
            accepted++;
            size_t ws = kiln_cpu_workspace_size(tb->k, op, &u, tb->target->l1_size, it % 3 ? tb->target->l2_size : 0);
            void *mem = malloc(ws ? ws : 1);
            kiln_cpu_exec exec = {.workspace = mem, .workspace_size = ws};
            if (tb->k->ops[op](&u, tin, tout, &exec) != KILN_OK) fail("random op %u [%s]: accepted step failed", op, tb->k->isa);
            free(mem);
            for (int i = 0; i < 4; i++)
                if (!tb_canary_ok(t[i])) fail("random op %u [%s]: wrote past buffer %d", op, tb->k->isa, i);
        }
        for (int i = 0; i < 4; i++) tb_free(t[i]);
    }
    checks++;
    if (accepted < 100) fail("random params: only %d steps accepted, the generator is off", accepted);
}

/* CONCAT, SLICE, PAD and WHERE (validate_data.c): bands past the row, reads past the input in
   either direction, a mode out of range, a condition of the wrong dtype. */
static void test_validate_data(void)
{
    const uint32_t mr = 4, nr = 8;
    tbuf *A = tb_f32(6), *B = tb_f32(4), *Y = tb_f32(10), *in2[2] = {A, B}, *out1[1] = {Y};
    kiln_cpu_concat_params cat = {.n = 2, .elem_size = 4, .outer = 2, .out_row = 5, .row = {3, 2},
                                  .offset = {0, 3}, .in_row = {3, 2}};
    ACCEPT("concat base", KILN_CPU_OP_CONCAT, cat, in2, 2, out1, mr, nr);
    MUTATE("concat band past the row", KILN_CPU_OP_CONCAT, cat, p_.offset[1] = 4, in2, 2, out1, mr, nr);
    MUTATE("concat input row short", KILN_CPU_OP_CONCAT, cat, p_.in_row[0] = 2, in2, 2, out1, mr, nr);
    MUTATE("concat input too small", KILN_CPU_OP_CONCAT, cat, p_.in_row[1] = 3, in2, 2, out1, mr, nr);
    MUTATE("concat n", KILN_CPU_OP_CONCAT, cat, p_.n = 3, in2, 2, out1, mr, nr);
    MUTATE("concat elem size", KILN_CPU_OP_CONCAT, cat, p_.elem_size = 2, in2, 2, out1, mr, nr);
    MUTATE("concat output count", KILN_CPU_OP_CONCAT, cat, p_.out_row = 4, in2, 2, out1, mr, nr);

    tbuf *X = tb_f32(24), *S = tb_f32(6), *in1[1] = {X}, *sout[1] = {S};
    kiln_cpu_slice_params sl = {.rank = 2, .elem_size = 4, .offset = 23, .out_shape = {2, 3}, .strides = {-12, -4}};
    ACCEPT("slice backwards", KILN_CPU_OP_SLICE, sl, in1, 1, sout, mr, nr);
    MUTATE("slice before the input", KILN_CPU_OP_SLICE, sl, p_.offset = 15, in1, 1, sout, mr, nr);
    kiln_cpu_slice_params fwd = {.rank = 2, .elem_size = 4, .offset = 3, .out_shape = {2, 3}, .strides = {12, 4}};
    ACCEPT("slice forwards to the last element", KILN_CPU_OP_SLICE, fwd, in1, 1, sout, mr, nr);
    MUTATE("slice past the input", KILN_CPU_OP_SLICE, fwd, p_.offset = 4, in1, 1, sout, mr, nr);
    MUTATE("slice rank", KILN_CPU_OP_SLICE, sl, p_.rank = 9, in1, 1, sout, mr, nr);
    MUTATE("slice overflow", KILN_CPU_OP_SLICE, sl, p_.strides[0] = INT64_MIN, in1, 1, sout, mr, nr);

    tbuf *P = tb_f32(20), *pout[1] = {P}, *X6 = tb_f32(6), *pin[1] = {X6};
    kiln_cpu_pad_params pad = {.rank = 2, .mode = KILN_CPU_PAD_REFLECT, .in_shape = {2, 3}, .out_shape = {4, 5},
                               .begin = {1, -1}};
    ACCEPT("pad base", KILN_CPU_OP_PAD, pad, pin, 1, pout, mr, nr);
    MUTATE("pad mode", KILN_CPU_OP_PAD, pad, p_.mode = 3, pin, 1, pout, mr, nr);
    MUTATE("pad input too small", KILN_CPU_OP_PAD, pad, p_.in_shape[1] = 4, pin, 1, pout, mr, nr);
    MUTATE("pad reflect of an empty axis", KILN_CPU_OP_PAD, pad, p_.in_shape[0] = 0, pin, 1, pout, mr, nr);
    MUTATE("pad output count", KILN_CPU_OP_PAD, pad, p_.out_shape[0] = 5, pin, 1, pout, mr, nr);

    int64_t three = 3;
    tbuf *C = tb_new(KILN_DTYPE_BOOL, 1, &three), *W = tb_f32(6), *wa = tb_f32(2), *wb = tb_f32(1);
    tbuf *win[3] = {C, wa, wb}, *wout[1] = {W}, *bad[3] = {wb, wa, wb};
    kiln_cpu_where_params wh = {.rank = 2, .out_shape = {2, 3}, .cond_strides = {0, 1}, .a_strides = {1, 0},
                                .b_strides = {0, 0}};
    ACCEPT("where base", KILN_CPU_OP_WHERE, wh, win, 3, wout, mr, nr);
    MUTATE("where cond past its tensor", KILN_CPU_OP_WHERE, wh, p_.cond_strides[0] = 1, win, 3, wout, mr, nr);
    MUTATE("where rank", KILN_CPU_OP_WHERE, wh, p_.rank = KILN_CPU_WHERE_MAX_RANK + 1, win, 3, wout, mr, nr);
    MUTATE("where negative stride", KILN_CPU_OP_WHERE, wh, p_.b_strides[1] = -1, win, 3, wout, mr, nr);
    REJECT("where f32 condition", KILN_CPU_OP_WHERE, wh, bad, 3, wout, mr, nr);
    tbuf *all[] = {A, B, Y, X, S, P, X6, C, W, wa, wb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tb_free(all[i]);
}

int main(void)
{
    tables_init();
    test_validate_gemm();
    test_validate_conv_pool();
    test_validate_rows();
    test_validate_data();
    test_validate_random();
    return kernel_tests_report("test_cpu_kernels_validate");
}
