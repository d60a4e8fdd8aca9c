/* conv.c — portable kernels of the conv family: Conv here, ConvTranspose in conv_transpose.c.
 *
 * Layer: kernels/portable. f32 only. Three strategies, chosen from the shapes alone:
 *  - pointwise (1x1 kernel, stride 1, no padding): the input planes already are the column
 *    matrix, so each group is one GEMM  Y_g (Cout_g, P) = W_g (Cout_g, Cin_g) * X_g (Cin_g, P);
 *  - depthwise (one input channel per group, group > 1): a direct loop, as a GEMM with K = taps
 *    would be mostly packing;
 *  - everything else: im2col in bounded blocks (conv_im2col.h) into scratch, each block
 *    multiplied into its slice of the output by the shared GEMM.
 * Bias is written into Y first and the GEMMs accumulate onto it (beta = 1). Threads split the
 * output: bias planes and depthwise channels by runs, im2col blocks by rows, GEMMs by tiles
 * (kiln_gemm_f32_parallel) — never K, so the bits do not depend on the thread count.
 *
 * Opset 1 and 11 differ only in type constraints, so one entry serves both.
 */
#include "core/check.h"
#include "kernels/portable/conv_geom.h"
#include "kernels/portable/conv_im2col.h"
#include "kernels/portable/conv_transpose.h"
#include "kernels/portable/families.h"
#include "kernels/portable/gemm_f32.h"
#include "kernels/portable/parallel.h"

typedef enum conv_strategy { CONV_POINTWISE, CONV_DEPTHWISE, CONV_IM2COL } conv_strategy;

typedef struct conv_plan {
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t taps;           /* kernel size */
    int64_t in_size, out_size;
    kiln_window win;
    conv_strategy strategy;
    int64_t block_rows, block_cols; /* im2col block */
} conv_plan;

static kiln_status conv_check_inputs(const kiln_node *node, const kiln_tensor *x, const kiln_tensor *w,
                                     const kiln_tensor *b, conv_plan *p)
{
    if (x->dtype != w->dtype || (b && b->dtype != x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    if (x->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (x->rank < 3 || w->rank != x->rank) return KILN_ERROR_SHAPE_MISMATCH;
    p->group = kiln_node_attr_int(node, "group", 1);
    if (p->group < 1) return KILN_ERROR_INVALID_ARGUMENT;
    p->batch = x->shape[0];
    p->c_in = x->shape[1];
    p->c_out = w->shape[0];
    if (p->c_in % p->group != 0 || p->c_out % p->group != 0) return KILN_ERROR_SHAPE_MISMATCH;
    p->cin_g = p->c_in / p->group;
    p->cout_g = p->c_out / p->group;
    if (w->shape[1] != p->cin_g) return KILN_ERROR_SHAPE_MISMATCH;
    if (b && (b->rank != 1 || b->shape[0] != p->c_out)) return KILN_ERROR_SHAPE_MISMATCH;
    return KILN_OK;
}

static bool conv_is_pointwise(const kiln_window *w)
{
    for (int d = 0; d < KILN_WINDOW_SPATIAL; d++)
        if (w->kernel[d] != 1 || w->stride[d] != 1 || w->pad_begin[d] != 0 || w->pad_end[d] != 0) return false;
    return true;
}

static kiln_status conv_plan_make(const kiln_node *node, const kiln_tensor *const *in, conv_plan *p)
{
    const kiln_tensor *x = in[0], *w = node->n_inputs > 1 ? in[1] : NULL, *b = node->n_inputs > 2 ? in[2] : NULL;
    if (!x || !w) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_status st = conv_check_inputs(node, x, w, b, p);
    if (st != KILN_OK) return st;
    int n_spatial = (int)x->rank - 2;
    if (n_spatial > KILN_WINDOW_SPATIAL) return KILN_ERROR_NOT_SUPPORTED;
    int64_t kernel[KILN_WINDOW_SPATIAL];
    if ((st = kiln_window_kernel_shape(node, n_spatial, &w->shape[2], kernel)) != KILN_OK) return st;
    for (int d = 0; d < n_spatial; d++)
        if (kernel[d] != w->shape[2 + d]) return KILN_ERROR_SHAPE_MISMATCH;
    if ((st = kiln_window_read_attrs(node, n_spatial, &x->shape[2], kernel, &p->win)) != KILN_OK) return st;
    if ((st = kiln_window_forward_shape(&p->win, false)) != KILN_OK) return st;
    p->taps = kiln_window_kernel_size(&p->win);
    p->in_size = kiln_window_in_size(&p->win);
    p->out_size = kiln_window_out_size(&p->win);
    p->block_rows = p->block_cols = 0;
    if (conv_is_pointwise(&p->win)) {
        p->strategy = CONV_POINTWISE;
    } else if (p->cin_g == 1 && p->group > 1) {
        p->strategy = CONV_DEPTHWISE;
    } else {
        p->strategy = CONV_IM2COL;
        kiln_conv_col_block(p->cin_g * p->taps, p->out_size, &p->block_rows, &p->block_cols);
    }
    return KILN_OK;
}

static size_t conv_scratch_bytes(const conv_plan *p)
{
    switch (p->strategy) {
    case CONV_POINTWISE: return kiln_gemm_f32_scratch_size(p->cout_g, p->out_size, p->cin_g);
    case CONV_DEPTHWISE: return 0;
    case CONV_IM2COL: break;
    }
    size_t col = (size_t)kiln_round_up_i64(p->block_rows * p->block_cols, 16) * sizeof(float);
    return col + kiln_gemm_f32_scratch_size(p->cout_g, p->block_cols, p->block_rows);
}

static kiln_status conv_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size)
{
    if (!out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    conv_plan p;
    kiln_status st = conv_plan_make(node, in, &p);
    if (st != KILN_OK) return st;
    int64_t shape[KILN_MAX_RANK] = {p.batch, p.c_out};
    for (int d = 0; d < p.win.n_spatial; d++) shape[2 + d] = p.win.out[KILN_WINDOW_SPATIAL - p.win.n_spatial + d];
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, in[0]->rank, shape);
    if (kiln_tensor_numel(out[0]) < 0) return KILN_ERROR_LIMIT;
    *scratch_size = conv_scratch_bytes(&p);
    return KILN_OK;
}

/* Elements (copies, multiply-adds) a task must have before waking a worker pays; im2col blocks
   hold at most KILN_IM2COL_TARGET elements, so their gather is cut at a finer grain, as is the
   direct depthwise loop (about a nanosecond a tap). */
#define CONV_GRAIN ((int64_t)1 << 16)
#define GATHER_GRAIN ((int64_t)1 << 14)

typedef struct bias_job {
    float *y;
    int64_t n;
    const float *bias;
} bias_job;

/* Planes [lo, hi) of y (plane size n) set to their bias value, or 0. */
static void fill_bias_planes(const void *arg, int64_t lo, int64_t hi)
{
    const bias_job *j = arg;
    for (int64_t c = lo; c < hi; c++) {
        float v = j->bias ? j->bias[c] : 0.0f, *plane = j->y + c * j->n;
        for (int64_t i = 0; i < j->n; i++) plane[i] = v;
    }
}

typedef struct im2col_job {
    const kiln_window *win;
    const float *x;
    int64_t r0, p0, cols;
    float *col;
} im2col_job;

/* Rows [lo, hi) of the block (rows r0 + lo ..) of the column matrix. */
static void im2col_rows(const void *arg, int64_t lo, int64_t hi)
{
    const im2col_job *j = arg;
    kiln_conv_im2col(j->win, j->x, j->r0 + lo, hi - lo, j->p0, j->cols, j->col + lo * j->cols);
}

/* Y_g (cout_g, out) += W_g (cout_g, cin_g * taps) * im2col(X_g), one bounded block at a time;
   the gather splits the block's rows over the threads, the GEMM its output. */
static void conv_group_im2col(const conv_plan *p, const float *x_g, const float *w_g, float *y_g, void *scratch,
                              const kiln_kernel_ctx *ctx)
{
    int64_t rows_total = p->cin_g * p->taps;
    float *col = scratch;
    void *gemm_scratch = col + kiln_round_up_i64(p->block_rows * p->block_cols, 16);
    for (int64_t p0 = 0; p0 < p->out_size; p0 += p->block_cols) {
        int64_t cols = p->out_size - p0 < p->block_cols ? p->out_size - p0 : p->block_cols;
        for (int64_t r0 = 0; r0 < rows_total; r0 += p->block_rows) {
            int64_t rows = rows_total - r0 < p->block_rows ? rows_total - r0 : p->block_rows;
            im2col_job gather = {&p->win, x_g, r0, p0, cols, col};
            kiln_par_rows(ctx, rows, cols, GATHER_GRAIN, im2col_rows, &gather);
            kiln_gemm_f32_operand a = {w_g + r0, rows_total, 1}, b = {col, cols, 1};
            kiln_gemm_f32_parallel(p->cout_g, cols, rows, 1.0f, a, b, 1.0f, y_g + p0, p->out_size, gemm_scratch, ctx);
        }
    }
}

/* One output plane of a depthwise conv: for every tap, the output pixels that read inside the
   image form a range along each line, accumulated as one strided axpy (contiguous when the
   stride is 1, so it vectorizes). y already holds the bias. */
static void conv_plane_depthwise(const kiln_window *w, const float *x, const float *wk, float *y)
{
    int64_t ow_n = w->out[2];
    for (int64_t od = 0; od < w->out[0]; od++) {
        int64_t z_lo, z_hi, start_z = od * w->stride[0] - w->pad_begin[0];
        kiln_window_taps(start_z, w->dilation[0], w->kernel[0], w->in[0], &z_lo, &z_hi);
        for (int64_t oh = 0; oh < w->out[1]; oh++) {
            int64_t y_lo, y_hi, start_y = oh * w->stride[1] - w->pad_begin[1];
            kiln_window_taps(start_y, w->dilation[1], w->kernel[1], w->in[1], &y_lo, &y_hi);
            float *restrict dst = y + (od * w->out[1] + oh) * ow_n;
            for (int64_t kz = z_lo; kz < z_hi; kz++) {
                for (int64_t ky = y_lo; ky < y_hi; ky++) {
                    int64_t iz = start_z + kz * w->dilation[0], iy = start_y + ky * w->dilation[1];
                    const float *restrict src = x + (iz * w->in[1] + iy) * w->in[2];
                    const float *wrow = wk + (kz * w->kernel[1] + ky) * w->kernel[2];
                    for (int64_t kx = 0; kx < w->kernel[2]; kx++) {
                        int64_t start_x = kx * w->dilation[2] - w->pad_begin[2], lo, hi;
                        kiln_window_taps(start_x, w->stride[2], ow_n, w->in[2], &lo, &hi);
                        float wv = wrow[kx];
                        if (w->stride[2] == 1)
                            for (int64_t ow = lo; ow < hi; ow++) dst[ow] += wv * src[ow + start_x];
                        else
                            for (int64_t ow = lo; ow < hi; ow++) dst[ow] += wv * src[ow * w->stride[2] + start_x];
                    }
                }
            }
        }
    }
}

typedef struct depthwise_job {
    const conv_plan *p;
    const float *x, *w;     /* the image's input planes; all filters */
    float *y;               /* the image's output planes (holding the bias) */
} depthwise_job;

/* Output channels [lo, hi) of one image; channel c reads input plane c / cout_g. */
static void depthwise_planes(const void *arg, int64_t lo, int64_t hi)
{
    const depthwise_job *j = arg;
    const conv_plan *p = j->p;
    for (int64_t c = lo; c < hi; c++)
        conv_plane_depthwise(&p->win, j->x + c / p->cout_g * p->in_size, j->w + c * p->taps, j->y + c * p->out_size);
}

static kiln_status conv_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    conv_plan p;
    kiln_status st = conv_plan_make(node, in, &p);
    if (st != KILN_OK) return st;
    const float *x = in[0]->data, *w = in[1]->data;
    const float *bias = node->n_inputs > 2 && in[2] ? in[2]->data : NULL;
    float *y = out[0]->data;
    int64_t w_group = p.cout_g * p.cin_g * p.taps; /* weights of one group */
    for (int64_t n = 0; n < p.batch; n++) {
        float *y_n = y + n * p.c_out * p.out_size;
        const float *x_n = x + n * p.c_in * p.in_size;
        bias_job fill = {y_n, p.out_size, bias};
        kiln_par_rows(ctx, p.c_out, p.out_size, CONV_GRAIN, fill_bias_planes, &fill);
        if (p.strategy == CONV_DEPTHWISE) {
            /* One input channel per group: the filters of channel c start at c * taps. */
            depthwise_job dw = {&p, x_n, w, y_n};
            kiln_par_rows(ctx, p.c_out, p.out_size * p.taps, GATHER_GRAIN, depthwise_planes, &dw);
            continue;
        }
        for (int64_t g = 0; g < p.group; g++) {
            const float *x_g = x_n + g * p.cin_g * p.in_size;
            const float *w_g = w + g * w_group;
            float *y_g = y_n + g * p.cout_g * p.out_size;
            if (p.strategy == CONV_POINTWISE) {
                kiln_gemm_f32_operand a = {w_g, p.cin_g, 1}, b = {x_g, p.in_size, 1};
                kiln_gemm_f32_parallel(p.cout_g, p.out_size, p.cin_g, 1.0f, a, b, 1.0f, y_g, p.out_size, ctx->scratch,
                                       ctx);
            } else {
                conv_group_im2col(&p, x_g, w_g, y_g, ctx->scratch, ctx);
            }
        }
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_conv[] = {
    {"Conv", 1, conv_infer, conv_run, {{0, 2, 3, 1, 1}},
     "auto_pad:s dilations:I group:i kernel_shape:I pads:I strides:I"},
    {"ConvTranspose", 1, kiln_conv_transpose_infer, kiln_conv_transpose_run, {{0, 2, 3, 1, 1}},
     "auto_pad:s dilations:I group:i kernel_shape:I output_padding:I output_shape:I pads:I strides:I"},
    {0},
};
