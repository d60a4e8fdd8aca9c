/* aot_ops_linear.c — Gemm, MatMul and Conv as GEMM / CONV2D steps.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h). Constant right-hand matrices are packed for
 * the target's register tile (PACK_B), convolution filters per group (PACK_A; tap-major for
 * tap-list convolutions), so the kernels
 * stream them without reshuffling at run time. MatMul's batch dims map onto one batch loop with
 * a stride per operand; a broadcast that cannot be written that way (A over some batch dims, B
 * over others) stays portable.
 */
#include "backends/cpu/aot/aot_ops.h"
#include "backends/cpu/kernels/cpu_kernels.h"
#include "kernels/portable/conv_geom.h"

/* Packing pads a GEMM's B to a multiple of the target's NR columns and a convolution's filters
 * to a multiple of MR rows (tiles of up to PACK_TILE_MAX on the targets so far). A narrow
 * operand would grow up to that many times; past PACK_PAD_LIMIT bytes of padding the program
 * should not carry it: such a B stays unpacked (the kernels pack it per call, as they do
 * activations), such a convolution stays portable. */
#define PACK_TILE_MAX 32
#define PACK_PAD_LIMIT ((int64_t)4 << 20)

static bool padding_acceptable(int64_t narrow, int64_t wide, int64_t groups)
{
    int64_t padded = (narrow + PACK_TILE_MAX - 1) / PACK_TILE_MAX * PACK_TILE_MAX;
    return (padded - narrow) * wide * groups * (int64_t)sizeof(float) <= PACK_PAD_LIMIT;
}

/* ---- Gemm ---------------------------------------------------------------------------------- */

/* How bias C (rank <= 2, unidirectionally broadcast to M x N) is read. */
static uint8_t bias_kind_of(const kiln_tensor *c)
{
    int64_t rows = c->rank == 2 ? c->shape[0] : 1;
    int64_t cols = c->rank >= 1 ? c->shape[c->rank - 1] : 1;
    if (rows == 1 && cols == 1) return KILN_CPU_BIAS_SCALAR;
    if (rows == 1) return KILN_CPU_BIAS_PER_COL;
    if (cols == 1) return KILN_CPU_BIAS_PER_ROW;
    return KILN_CPU_BIAS_FULL;
}

/* B as a weight packed into NR-column panels: recorded with the logical shape of op(B), K x N. */
static aot_operand packed_b(const kiln_tensor *b, int64_t k, int64_t n, bool trans)
{
    aot_operand o = aot_weight_raw(b);
    o.form = AOT_FORM_PACK_B;
    o.k = k;
    o.n = n;
    o.trans = trans;
    o.t.rank = 2;
    o.t.shape[0] = k;
    o.t.shape[1] = n;
    return o;
}

/* A GEMM step's weight B, packed; products large enough (kiln_cpu_gemm_strassen_pays) take one
   level of Strassen: B packed as its seven quadrant sums, 7/4 of its bytes for 7/8 of the
   multiply-adds. */
static aot_operand gemm_weight(const kiln_tensor *b, bool trans, kiln_cpu_gemm_params *p)
{
    aot_operand o = packed_b(b, p->K, p->N, trans);
    bool strassen = p->batch == 1 && kiln_cpu_gemm_strassen_pays(p->M, p->N, p->K);
    if (strassen) o.form = AOT_FORM_PACK_B_STRASSEN;
    p->b_packed = strassen ? KILN_CPU_PACKED_STRASSEN : 1;
    return o;
}

bool aot_describe_gemm(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *a = in[0], *b = aot_input(node, in, 1), *c = aot_input(node, in, 2);
    if (!aot_is_f32(b) || a->rank != 2 || b->rank != 2) return false;
    bool trans_a = kiln_node_attr_int(node, "transA", 0) != 0, trans_b = kiln_node_attr_int(node, "transB", 0) != 0;
    int64_t m = trans_a ? a->shape[1] : a->shape[0], k = trans_a ? a->shape[0] : a->shape[1];
    int64_t kb = trans_b ? b->shape[1] : b->shape[0], n = trans_b ? b->shape[0] : b->shape[1];
    if (kb != k || y->rank != 2 || y->shape[0] != m || y->shape[1] != n) return false;
    float beta = kiln_node_attr_float(node, "beta", 1.0f);
    kiln_cpu_gemm_params *p = &d->params.gemm;
    d->op = KILN_CPU_OP_GEMM;
    d->n_inputs = 3;
    p->M = m, p->N = n, p->K = k, p->batch = 1;
    p->lda = trans_a ? m : k;
    p->ldy = n;
    p->alpha = kiln_node_attr_float(node, "alpha", 1.0f);
    p->trans_a = trans_a;
    d->in[0] = aot_operand_of(node, in, 0);
    if (b->data && padding_acceptable(n, k, 1)) {
        d->in[1] = gemm_weight(b, trans_b, p);
        p->ldb = n;
    } else {
        d->in[1] = aot_operand_of(node, in, 1);
        p->trans_b = trans_b;
        p->ldb = trans_b ? k : n;
    }
    d->in[2] = (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
    if (c && beta != 0.0f) {
        if (!aot_is_f32(c) || c->rank > 2) return false;
        p->bias_kind = bias_kind_of(c);
        p->beta = beta;
        d->in[2] = aot_operand_of(node, in, 2);
    }
    return true;
}

/* ---- MatMul (numpy semantics) ---------------------------------------------------------------- */

/* Product of t's batch dims (all but the last two; none for rank <= 2). */
static int64_t batch_count(const kiln_tensor *t)
{
    int64_t n = 1;
    for (uint32_t d = 0; d + 2 < t->rank; d++) n *= t->shape[d];
    return n;
}

/* The element stride between consecutive batch entries of an operand holding `count` of the
 * output's `total` entries: dense (every entry) or broadcast (one shared); -1 when neither.
 * Shapes were broadcast-checked by inference, so a count equal to the total means the operand's
 * batch dims are the output's, in the same order. */
static int64_t batch_stride(int64_t count, int64_t total, int64_t matrix_size)
{
    if (total == 1 || count == 1) return 0;
    return count == total ? matrix_size : -1;
}

bool aot_describe_matmul(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *a = in[0], *b = aot_input(node, in, 1);
    if (!aot_is_f32(b) || a->rank < 1 || b->rank < 1) return false;
    int64_t m = a->rank == 1 ? 1 : a->shape[a->rank - 2], k = a->shape[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2], n = b->rank == 1 ? 1 : b->shape[b->rank - 1];
    if (kb != k) return false;
    int64_t total = aot_numel(y) / (m * n);
    int64_t a_stride = batch_stride(batch_count(a), total, m * k);
    int64_t b_stride = batch_stride(batch_count(b), total, k * n);
    if (a_stride < 0 || b_stride < 0 || total * m * n != aot_numel(y)) return false;
    kiln_cpu_gemm_params *p = &d->params.gemm;
    d->op = KILN_CPU_OP_GEMM;
    d->n_inputs = 3;
    p->M = m, p->N = n, p->K = k, p->batch = total;
    p->lda = k, p->ldb = n, p->ldy = n;
    p->a_batch_stride = a_stride, p->b_batch_stride = b_stride, p->y_batch_stride = total > 1 ? m * n : 0;
    p->alpha = 1.0f;
    p->beta = 1.0f;
    if (b_stride == 0 && (a_stride != 0 || total == 1)) {
        /* B shared and A dense over the batch: one (batch * M) x K by K x N product. */
        p->M = total * m;
        p->batch = 1;
        p->a_batch_stride = p->y_batch_stride = 0;
    }
    d->in[0] = aot_operand_of(node, in, 0);
    bool pack = b->data && b_stride == 0 && padding_acceptable(n, k, 1);
    d->in[1] = pack ? gemm_weight(b, false, p) : aot_operand_of(node, in, 1);
    d->in[2] = (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
    return true;
}

/* ---- Conv (1-D, 2-D and 3-D, NCHW / NCDHW) ------------------------------------------------------------------ */

/* Output positions (pixels, or Winograd tiles) as the GEMM's rows when as columns they would
   fill their last 32-wide panel poorly (under 95% of the panels: ResNet-18's 14x14 Winograd
   layers have 49 tiles in 64 columns) and the output channels fill whole panels (M a multiple of
   32, hence of every table's NR). */
static bool positions_as_rows(int64_t positions, int64_t M)
{
    return M % 32 == 0 && positions >= 1 && positions * 100 < (positions + 31) / 32 * 32 * 95;
}

/* Winograd F(2x2, 3x3) (16 multiplies per 2x2 outputs and input channel instead of 36) for 3x3
   convolutions with unit strides and dilation and one group, when there are channels enough for
   the 16 GEMMs to amortise the transforms (ResNet's 3x3 layers: 64 to 512) and tiles enough: 32
   (one GEMM panel of columns), or 16 as rows. ResNet-18's 7x7 stage (16 tiles) measured no
   faster with the tiles as columns (half of each panel empty), 2.33 -> 1.49 ms a layer as rows,
   for 16/9 the weights (its program: 55 -> 76 MB). */
static bool winograd_pays(const kiln_cpu_conv_params *p)
{
    int64_t tiles = (p->OH + 1) / 2 * ((p->OW + 1) / 2);
    return p->KH == 3 && p->KW == 3 && p->stride_h == 1 && p->stride_w == 1 && p->dil_h == 1 && p->dil_w == 1 &&
           p->group == 1 && p->C >= 32 && p->M >= 32 && (tiles >= 32 || (tiles >= 16 && positions_as_rows(tiles, p->M)));
}

/* Pixels as the GEMM's rows (f32-conv2d-pixel-rows.c) when positions_as_rows says so
   (ResNet-18's 7x7 stage, 49 pixels in 64 columns, and its 14x14 stride-2 layers, 196 in 224);
   at most 1024 pixels, where the im2col of all of them stays within a few L2s. One group only,
   and not pointwise: there the
   input planes are B as they are, and the gather this path needs made MobileNetV2's 1x1 layers
   at 14x14 and 7x7 no faster on one thread and 9% slower on two. */
static bool pixel_rows_pay(const kiln_cpu_conv_params *p)
{
    int64_t pixels = p->OH * p->OW;
    bool pointwise = p->KH == 1 && p->KW == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
                     p->pad_left == 0 && p->OH == p->H && p->OW == p->W;
    return p->group == 1 && !p->depthwise && !pointwise && pixels <= 1024 && positions_as_rows(pixels, p->M);
}

/* The filter columns [*lo, *lo + *n) that some output column sees the input through; the
   columns outside read padding only, for every output (a 3x3 filter at dilation 14 or more over
   a 14-wide input keeps its middle column). Read with kiln_window_taps' roles swapped: the
   output columns whose input lands. */
static void kept_columns(const kiln_cpu_conv_params *p, int64_t *lo, int64_t *n)
{
    int64_t first = -1, last = -1;
    for (int64_t kw = 0; kw < p->KW; kw++) {
        int64_t o_lo, o_hi;
        kiln_window_taps(kw * p->dil_w - p->pad_left, p->stride_w, p->OW, p->W, &o_lo, &o_hi);
        if (o_lo == o_hi) continue;
        if (first < 0) first = kw;
        last = kw;
    }
    *lo = first < 0 ? 0 : first;
    *n = first < 0 ? 0 : last - first + 1;
}

/* Whether a dilated 2-D convolution's tap lists pay: when they skip at least a fifth of the
   work (the rows' taps that only read padding, the filter columns no output column needs).
   Otherwise the 2-D strategies below run it (their im2col zeroes the padding): with few pixels
   they put them along the GEMM's rows, which a 960->256 3x3 conv on 14x14 at dilation 2 (10%
   of its taps in the padding) ran 15% faster than on tap lists, 196 pixels in 224 columns. */
static bool taps_pay(const kiln_cpu_conv_params *p)
{
    int64_t lo, n, rows = 0;
    kept_columns(p, &lo, &n);
    for (int64_t oh = 0; oh < p->OH; oh++) {
        int64_t kh0, kh1;
        kiln_window_taps(oh * p->stride_h - p->pad_top, p->dil_h, p->KH, p->H, &kh0, &kh1);
        rows += kh1 - kh0;
    }
    return 5 * rows * n <= 4 * p->OH * p->KH * p->KW;
}

/* The filters of a tap-list convolution (f32-conv-taps.c), [M, C/group, KD, KH, KW] reordered
   to rows of K = KD * KH * C/group * kw_n in the order (kd, kh, c, kw - kw_lo), the kept columns
   only; NULL when arena is (the decision alone) or out of memory. */
static float *taps_filters(const kiln_cpu_conv_params *p, const float *w, kiln_arena *arena)
{
    const int64_t cg = p->C / p->group, K = p->KD * p->KH * cg * p->kw_n;
    float *out = arena ? KILN_ARENA_ARRAY(arena, float, (size_t)(p->M * K) + 1) : NULL;
    if (!out) return NULL;
    for (int64_t m = 0; m < p->M; m++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t kd = 0; kd < p->KD; kd++)
                for (int64_t kh = 0; kh < p->KH; kh++)
                    for (int64_t i = 0; i < p->kw_n; i++)
                        out[m * K + ((kd * p->KH + kh) * cg + c) * p->kw_n + i] =
                            w[(((m * cg + c) * p->KD + kd) * p->KH + kh) * p->KW + p->kw_lo + i];
    return out;
}

/* Tap lists for 3-D convolutions and dilated 2-D ones where they pay (depthwise 2-D ones keep
   their direct kernel, which skips padding itself): the depth axis, the kept filter columns, and the
   filters as one packed A per group. */
static bool describe_taps(const kiln_window *win, const kiln_tensor *w, kiln_arena *arena, aot_step_desc *d)
{
    kiln_cpu_conv_params *p = &d->params.conv;
    p->taps = 1;
    p->D = win->in[0], p->OD = win->out[0], p->KD = win->kernel[0];
    p->stride_d = win->stride[0], p->pad_front = win->pad_begin[0], p->dil_d = win->dilation[0];
    kept_columns(p, &p->kw_lo, &p->kw_n);
    int64_t cg = p->C / p->group, K = p->KD * p->KH * cg * p->kw_n;
    if (!padding_acceptable(p->M / p->group, K, p->group)) return false;
    d->in[1] = aot_weight_raw(w);
    d->in[1].t.rank = 2; /* the reordered filters, [M, K] */
    d->in[1].t.shape[0] = p->M;
    d->in[1].t.shape[1] = K;
    d->in[1].t.data = taps_filters(p, w->data, arena);
    d->in[1].form = AOT_FORM_PACK_A;
    d->in[1].groups = p->group;
    d->in[1].rows = p->M / p->group;
    d->in[1].k = K;
    return true;
}

/* A 1-D convolution is the 2-D one over a single row: H = 1, KH = 1, no vertical stride, pad or
   dilation. The window geometry (conv_geom.h) already works that way: the model's spatial dims
   are the last ones of its three, the leading ones unit; a 3-D one is a tap-list convolution
   with its depth axis. */
bool aot_describe_conv(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, kiln_arena *arena,
                       aot_step_desc *d)
{
    const kiln_tensor *x = in[0], *w = aot_input(node, in, 1), *bias = aot_input(node, in, 2);
    int n_spatial = (int)x->rank - 2;
    if (n_spatial < 1 || n_spatial > 3 || !aot_is_f32(w) || w->rank != x->rank || !w->data || y->rank != x->rank)
        return false;
    if (bias && (!aot_is_f32(bias) || !bias->data || aot_numel(bias) != w->shape[0])) return false;
    int64_t group = kiln_node_attr_int(node, "group", 1);
    int64_t c = x->shape[1], m = w->shape[0];
    if (group < 1 || c % group != 0 || m % group != 0 || w->shape[1] != c / group) return false;
    /* One input channel per group in 3-D (depthwise): a GEMM of a few rows per group, twice as
       slow as the portable direct loop (64 channels, 3x3x3 over 16x28x28: 11 -> 22 ms), so it
       stays there until the cpu backend has a direct 3-D depthwise kernel. */
    if (n_spatial == 3 && group == c) return false;
    int64_t kernel[3];
    kiln_window win;
    if (kiln_window_kernel_shape(node, n_spatial, &w->shape[2], kernel) != KILN_OK) return false;
    for (int i = 0; i < n_spatial; i++)
        if (kernel[i] != w->shape[2 + i]) return false;
    if (kiln_window_read_attrs(node, n_spatial, &x->shape[2], kernel, &win) != KILN_OK) return false;
    if (kiln_window_forward_shape(&win, false) != KILN_OK) return false;
    if (y->shape[0] != x->shape[0] || y->shape[1] != m) return false;
    for (int i = 0; i < n_spatial; i++)
        if (y->shape[2 + i] != win.out[3 - n_spatial + i]) return false;
    kiln_cpu_conv_params *p = &d->params.conv;
    d->op = KILN_CPU_OP_CONV2D;
    d->n_inputs = 3;
    p->N = x->shape[0], p->C = c, p->H = win.in[1], p->W = win.in[2];
    p->M = m, p->OH = win.out[1], p->OW = win.out[2], p->KH = win.kernel[1], p->KW = win.kernel[2];
    p->stride_h = win.stride[1], p->stride_w = win.stride[2];
    p->pad_top = win.pad_begin[1], p->pad_left = win.pad_begin[2];
    p->dil_h = win.dilation[1], p->dil_w = win.dilation[2];
    p->group = group;
    p->depthwise = n_spatial < 3 && group == c && c == m;
    d->in[0] = aot_operand_of(node, in, 0);
    d->in[1] = aot_weight_raw(w);
    d->in[2] = bias ? aot_weight_raw(bias) : (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
    p->has_bias = bias != NULL;
    if (p->depthwise) {
        d->in[1].t.rank = 3; /* [C, KH, KW]: the same bytes without the unit dim */
        d->in[1].t.shape[1] = p->KH;
        d->in[1].t.shape[2] = p->KW;
    } else if (n_spatial == 3 || ((p->dil_h > 1 || p->dil_w > 1) && taps_pay(p))) {
        return describe_taps(&win, w, arena, d);
    } else if (winograd_pays(p)) {
        /* Filters transformed once here; the step needs no im2col (f32-conv2d-winograd.c). */
        p->winograd = 1;
        p->pixel_rows = positions_as_rows((p->OH + 1) / 2 * ((p->OW + 1) / 2), m);
        d->in[1].form = p->pixel_rows ? AOT_FORM_WINOGRAD_B : AOT_FORM_WINOGRAD;
        d->in[1].rows = m;
        d->in[1].k = c;
    } else if (pixel_rows_pay(p)) {
        p->pixel_rows = 1;
        d->in[1] = packed_b(w, c * p->KH * p->KW, m, true);
    } else {
        if (!padding_acceptable(m / group, (c / group) * p->KH * p->KW, group)) return false;
        d->in[1].form = AOT_FORM_PACK_A;
        d->in[1].groups = group;
        d->in[1].rows = m / group;
        d->in[1].k = (c / group) * p->KH * p->KW;
    }
    return true;
}
