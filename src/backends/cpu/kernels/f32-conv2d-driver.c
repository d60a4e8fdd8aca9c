/* f32-conv2d-driver.c — 2-D convolution as GEMMs over the kit (see kernel_kit.h, cpu_ops.h).
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags. Three strategies, fixed by the
 * params alone:
 *  - depthwise (group == C == M): the kit's direct per-plane kernel;
 *  - pointwise (1x1, unit strides, no padding): per (image, group) one GEMM whose B is the
 *    input planes themselves, Y_g (M/g x HW) = W_g (M/g x C/g) . X_g (C/g x HW);
 *  - otherwise im2col in chunks of output pixels, written straight into the NR-panel layout the
 *    microkernel reads, so the GEMM packs nothing: W_g is packed ahead of time (A panels).
 * Workspace: the GEMM's B block (pointwise) or one im2col chunk of K x cols floats, where cols
 * (a multiple of NR) is sized from L2 and recovered from the workspace size at run time.
 * Packed W: group g's panels start at g * kiln_cpu_pack_a_size(M/g, C/g*KH*KW, MR) bytes.
 */
#include <string.h>

#include "backends/cpu/kernels/kernel_kit.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* floor(a / b) for b > 0 and any sign of a. */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

bool kiln_cpu_conv_is_pointwise(const kiln_cpu_conv_params *p)
{
    return p->KH == 1 && p->KW == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
           p->OH == p->H && p->OW == p->W;
}

static int64_t conv_k(const kiln_cpu_conv_params *p) { return p->C / p->group * p->KH * p->KW; }

size_t kiln_cpu_conv_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2)
{
    int64_t pixels = p->OH * p->OW, K = conv_k(p);
    if (p->depthwise || p->N == 0 || p->M == 0 || pixels == 0 || K == 0) return 0;
    if (kiln_cpu_conv_is_pointwise(p)) return kiln_cpu_gemm_workspace(mr, nr, p->M / p->group, pixels, K, true, false, l2);
    int64_t cols = (int64_t)(l2 / 2 / ((size_t)K * sizeof(float))) / nr * nr;
    cols = cols < (int64_t)nr ? (int64_t)nr : min64(cols, round_up(pixels, nr));
    return (size_t)(K * cols) * sizeof(float);
}

/* im2col of output pixels [pix0, pix0 + live) of one group into one NR panel: row k =
   (c, kh, kw) of the K rows holds nr floats, the input value each pixel sees through tap k (0 in
   the padding, and in the columns past `live`). Pixels are taken in runs along one output row,
   so each run of a tap is a strided (usually contiguous) copy with zeroed ends. */
static void im2col_panel(const kiln_cpu_conv_params *p, const float *x, int64_t pix0, int64_t live, uint32_t nr,
                         float *dst)
{
    int64_t K = conv_k(p), cin = p->C / p->group;
    if (live < (int64_t)nr) memset(dst, 0, (size_t)(K * nr) * sizeof(float));
    for (int64_t j = 0; j < live;) {
        int64_t oh = (pix0 + j) / p->OW, ow0 = (pix0 + j) % p->OW;
        int64_t run = min64(live - j, p->OW - ow0);
        for (int64_t c = 0; c < cin; c++) {
            for (int64_t kh = 0; kh < p->KH; kh++) {
                int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
                for (int64_t kw = 0; kw < p->KW; kw++) {
                    float *d = dst + ((c * p->KH + kh) * p->KW + kw) * nr + j;
                    if (ih < 0 || ih >= p->H) {
                        memset(d, 0, (size_t)run * sizeof(float));
                        continue;
                    }
                    const float *row = x + (c * p->H + ih) * p->W;
                    int64_t iw0 = ow0 * p->stride_w - p->pad_left + kw * p->dil_w;
                    /* Taps t with 0 <= iw0 + t * stride < W. */
                    int64_t lo = iw0 >= 0 ? 0 : (-iw0 + p->stride_w - 1) / p->stride_w;
                    int64_t hi = min64(run, floor_div(p->W - 1 - iw0, p->stride_w) + 1);
                    if (hi < lo) hi = lo;
                    for (int64_t t = 0; t < lo; t++) d[t] = 0.0f;
                    if (p->stride_w == 1) {
                        if (hi > lo) memcpy(d + lo, row + iw0 + lo, (size_t)(hi - lo) * sizeof(float));
                    } else {
                        for (int64_t t = lo; t < hi; t++) d[t] = row[iw0 + t * p->stride_w];
                    }
                    for (int64_t t = hi; t < run; t++) d[t] = 0.0f;
                }
            }
        }
        j += run;
    }
}

/* One image and group by im2col chunks of `cols` pixels. */
static kiln_status conv_group_im2col(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x,
                                     const float *w, const kiln_cpu_epilogue *e, float *y, float *buf, int64_t cols)
{
    int64_t pixels = p->OH * p->OW, K = conv_k(p), mg = p->M / p->group;
    for (int64_t pix0 = 0; pix0 < pixels; pix0 += cols) {
        int64_t live = min64(cols, pixels - pix0);
        for (int64_t q = 0; q < live; q += kit->nr)
            im2col_panel(p, x, pix0 + q, min64(kit->nr, live - q), kit->nr, buf + q * K);
        kiln_cpu_operand a = {w, 0, 0, true}, b = {buf, 0, 0, true};
        kiln_status st = kiln_cpu_gemm_run(kit, mg, live, K, a, b, y + pix0, pixels, e, NULL, 0);
        if (st != KILN_OK) return st;
    }
    return KILN_OK;
}

static void conv_depthwise(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x, const float *w,
                           const float *bias, float *y)
{
    int64_t in_plane = p->H * p->W, out_plane = p->OH * p->OW, taps = p->KH * p->KW;
    for (int64_t n = 0; n < p->N; n++) {
        for (int64_t c = 0; c < p->C; c++) {
            const float *xc = x + (n * p->C + c) * in_plane;
            float *yc = y + (n * p->C + c) * out_plane;
            kit->dwconv(p, xc, w + c * taps, bias ? bias[c] : 0.0f, yc);
            if (!kiln_cpu_act_is_identity(&p->act)) kit->act(&p->act, yc, yc, (size_t)out_plane);
        }
    }
}

kiln_status kiln_cpu_conv2d_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_conv_params *p = params;
    const float *x = in[0]->data, *w = in[1]->data, *bias = p->has_bias ? in[2]->data : NULL;
    float *y = out[0]->data;
    if (p->depthwise) {
        conv_depthwise(kit, p, x, w, bias, y);
        return KILN_OK;
    }
    int64_t cg = p->C / p->group, mg = p->M / p->group, K = conv_k(p);
    int64_t in_plane = p->H * p->W, pixels = p->OH * p->OW;
    if (p->N == 0 || mg == 0 || pixels == 0) return KILN_OK; /* Y is empty */
    size_t w_group = kiln_cpu_pack_a_size(mg, K, kit->mr) / sizeof(float);
    /* With K == 0 the GEMM only writes the bias: nothing to gather. */
    bool direct = kiln_cpu_conv_is_pointwise(p) || K == 0;
    int64_t cols = 0;
    if (!direct) {
        cols = min64((int64_t)(exec->workspace_size / ((size_t)K * sizeof(float))) / kit->nr * kit->nr,
                     round_up(pixels, kit->nr));
        if (cols < 1) return KILN_ERROR_INVALID_ARGUMENT;
    }
    for (int64_t n = 0; n < p->N; n++) {
        for (int64_t g = 0; g < p->group; g++) {
            const float *xg = x + (n * p->C + g * cg) * in_plane;
            float *yg = y + (n * p->M + g * mg) * pixels;
            kiln_cpu_epilogue e = {1.0f, 1.0f, bias ? KILN_CPU_BIAS_PER_ROW : KILN_CPU_BIAS_NONE,
                                   bias ? bias + g * mg : NULL, p->act};
            kiln_cpu_operand a = {w + (size_t)g * w_group, 0, 0, true};
            kiln_status st;
            if (direct) {
                kiln_cpu_operand b = {xg, in_plane, 1, false};
                st = kiln_cpu_gemm_run(kit, mg, pixels, K, a, b, yg, pixels, &e, exec->workspace, exec->workspace_size);
            } else {
                st = conv_group_im2col(kit, p, xg, a.data, &e, yg, exec->workspace, cols);
            }
            if (st != KILN_OK) return st;
        }
    }
    return KILN_OK;
}
