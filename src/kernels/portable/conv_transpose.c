/* conv_transpose.c — ConvTranspose (opsets 1 and 11; they differ only in type constraints).
 *
 * Layer: kernels/portable. f32 only.
 *
 * ConvTranspose is the adjoint of a forward Conv whose input is this op's output and whose output
 * is this op's input, with the same kernel, strides, dilations and pads. So each group is
 *   cols (Cout_g * taps, P) = W_g^T (Cout_g * taps, Cin_g) * X_g (Cin_g, P)
 * on the shared GEMM, followed by col2im, which adds every column element to the output pixel it
 * lands on — done over bounded blocks of input pixels and rows so the column buffer stays small.
 *
 * Output size per spatial dim, with full = stride * (in - 1) + output_padding + (k - 1) * dil + 1:
 *  - output_shape given: that size, and the total padding full - size is split with the odd
 *    element at the end for SAME_UPPER and at the beginning otherwise (may be negative: the
 *    output then extends past the full result and those pixels only get the bias);
 *  - SAME_UPPER / SAME_LOWER: in * stride, padding split the same way;
 *  - otherwise full - pad_begin - pad_end (VALID: no pads).
 */
#include "kernels/portable/conv_transpose.h"

#include <string.h>

#include "core/check.h"
#include "kernels/portable/conv_geom.h"
#include "kernels/portable/conv_im2col.h"
#include "kernels/portable/gemm_f32.h"

typedef struct convt_plan {
    int64_t batch, c_in, c_out, group, cin_g, cout_g;
    int64_t taps, in_size, out_size;
    kiln_window fwd;                /* the forward conv: fwd.in = our output, fwd.out = our input */
    int64_t block_rows, block_cols; /* column-matrix block */
} convt_plan;

static kiln_status convt_check_inputs(const kiln_node *node, const kiln_tensor *x, const kiln_tensor *w,
                                      const kiln_tensor *b, convt_plan *p)
{
    if (x->dtype != w->dtype || (b && b->dtype != x->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    if (x->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (x->rank < 3 || w->rank != x->rank) return KILN_ERROR_SHAPE_MISMATCH;
    p->group = kiln_node_attr_int(node, "group", 1);
    if (p->group < 1) return KILN_ERROR_INVALID_ARGUMENT;
    p->batch = x->shape[0];
    p->c_in = x->shape[1];
    if (w->shape[0] != p->c_in || p->c_in % p->group != 0) return KILN_ERROR_SHAPE_MISMATCH;
    p->cin_g = p->c_in / p->group;
    p->cout_g = w->shape[1];
    if (__builtin_mul_overflow(p->cout_g, p->group, &p->c_out)) return KILN_ERROR_LIMIT;
    if (b && (b->rank != 1 || b->shape[0] != p->c_out)) return KILN_ERROR_SHAPE_MISMATCH;
    return KILN_OK;
}

/* Reads an optional INTS attribute of n_spatial values in [lo, KILN_WINDOW_MAX_DIM] into the
   normalised 3-D slots of dst; output_shape may also carry the N and C dims in front. */
static kiln_status convt_read_spatial(const kiln_node *node, const char *name, int n_spatial, int64_t lo,
                                      int64_t *dst, bool *present)
{
    const int64_t *v;
    size_t n = kiln_node_attr_ints(node, name, &v);
    *present = kiln_node_attr(node, name) != NULL;
    if (!*present) return KILN_OK;
    bool with_nc = strcmp(name, "output_shape") == 0 && n == (size_t)n_spatial + 2;
    if (n != (size_t)n_spatial && !with_nc) return KILN_ERROR_INVALID_ARGUMENT;
    const int64_t *spatial = with_nc ? v + 2 : v;
    for (int d = 0; d < n_spatial; d++) {
        if (spatial[d] < lo || spatial[d] > KILN_WINDOW_MAX_DIM) return KILN_ERROR_INVALID_ARGUMENT;
        dst[KILN_WINDOW_SPATIAL - n_spatial + d] = spatial[d];
    }
    return KILN_OK;
}

/* Turns w (attributes read, w->in = our input) into the forward window described above. */
static kiln_status convt_output_geometry(const kiln_node *node, kiln_window *w)
{
    int64_t out_pad[KILN_WINDOW_SPATIAL] = {0, 0, 0}, out_shape[KILN_WINDOW_SPATIAL] = {1, 1, 1};
    bool has_out_pad, has_out_shape;
    kiln_status st = convt_read_spatial(node, "output_padding", w->n_spatial, 0, out_pad, &has_out_pad);
    if (st != KILN_OK) return st;
    if ((st = convt_read_spatial(node, "output_shape", w->n_spatial, 0, out_shape, &has_out_shape)) != KILN_OK)
        return st;
    bool same = w->auto_pad == KILN_AUTO_PAD_SAME_UPPER || w->auto_pad == KILN_AUTO_PAD_SAME_LOWER;
    for (int d = 0; d < KILN_WINDOW_SPATIAL; d++) {
        int64_t full = w->stride[d] * (w->in[d] - 1) + out_pad[d] + (w->kernel[d] - 1) * w->dilation[d] + 1;
        int64_t size;
        if (w->auto_pad == KILN_AUTO_PAD_VALID) w->pad_begin[d] = w->pad_end[d] = 0;
        if (has_out_shape || same) {
            size = has_out_shape ? out_shape[d] : w->in[d] * w->stride[d];
            int64_t total = full - size, half = kiln_floor_div(total, 2);
            w->pad_begin[d] = w->auto_pad == KILN_AUTO_PAD_SAME_UPPER ? half : total - half;
            w->pad_end[d] = total - w->pad_begin[d];
        } else {
            size = full - w->pad_begin[d] - w->pad_end[d];
        }
        if (size < 0) return KILN_ERROR_SHAPE_MISMATCH;
        if (size > KILN_WINDOW_MAX_DIM) return KILN_ERROR_LIMIT;
        w->out[d] = w->in[d];
        w->in[d] = size;
    }
    return kiln_window_check_sizes(w);
}

static kiln_status convt_plan_make(const kiln_node *node, const kiln_tensor *const *in, convt_plan *p)
{
    const kiln_tensor *x = in[0], *w = node->n_inputs > 1 ? in[1] : NULL, *b = node->n_inputs > 2 ? in[2] : NULL;
    if (!x || !w) return KILN_ERROR_INVALID_ARGUMENT;
    kiln_status st = convt_check_inputs(node, x, w, b, p);
    if (st != KILN_OK) return st;
    int n_spatial = (int)x->rank - 2;
    if (n_spatial > KILN_WINDOW_SPATIAL) return KILN_ERROR_NOT_SUPPORTED;
    int64_t kernel[KILN_WINDOW_SPATIAL];
    if ((st = kiln_window_kernel_shape(node, n_spatial, &w->shape[2], kernel)) != KILN_OK) return st;
    for (int d = 0; d < n_spatial; d++)
        if (kernel[d] != w->shape[2 + d]) return KILN_ERROR_SHAPE_MISMATCH;
    if ((st = kiln_window_read_attrs(node, n_spatial, &x->shape[2], kernel, &p->fwd)) != KILN_OK) return st;
    if ((st = convt_output_geometry(node, &p->fwd)) != KILN_OK) return st;
    p->taps = kiln_window_kernel_size(&p->fwd);
    p->in_size = kiln_window_out_size(&p->fwd);
    p->out_size = kiln_window_in_size(&p->fwd);
    kiln_conv_col_block(p->cout_g * p->taps, p->in_size, &p->block_rows, &p->block_cols);
    return KILN_OK;
}

kiln_status kiln_conv_transpose_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      size_t *scratch_size)
{
    if (!out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    convt_plan p;
    kiln_status st = convt_plan_make(node, in, &p);
    if (st != KILN_OK) return st;
    int64_t shape[KILN_MAX_RANK] = {p.batch, p.c_out};
    int lead = KILN_WINDOW_SPATIAL - p.fwd.n_spatial;
    for (int d = 0; d < p.fwd.n_spatial; d++) shape[2 + d] = p.fwd.in[lead + d];
    kiln_tensor_set_shape(out[0], KILN_DTYPE_F32, in[0]->rank, shape);
    if (kiln_tensor_numel(out[0]) < 0) return KILN_ERROR_LIMIT;
    size_t col = (size_t)kiln_round_up_i64(p.block_rows * p.block_cols, 16) * sizeof(float);
    *scratch_size = col + kiln_gemm_f32_scratch_size(p.block_rows, p.block_cols, p.cin_g);
    return KILN_OK;
}

/* Y_g (cout_g, out) += col2im(W_g^T * X_g), one bounded block of the column matrix at a time. */
static void convt_group(const convt_plan *p, const float *x_g, const float *w_g, float *y_g, void *scratch,
                        const kiln_kernel_ctx *ctx)
{
    int64_t rows_total = p->cout_g * p->taps;
    float *col = scratch;
    void *gemm_scratch = col + kiln_round_up_i64(p->block_rows * p->block_cols, 16);
    for (int64_t p0 = 0; p0 < p->in_size; p0 += p->block_cols) {
        int64_t cols = p->in_size - p0 < p->block_cols ? p->in_size - p0 : p->block_cols;
        for (int64_t r0 = 0; r0 < rows_total; r0 += p->block_rows) {
            int64_t rows = rows_total - r0 < p->block_rows ? rows_total - r0 : p->block_rows;
            /* W_g is stored (cin_g, rows_total); its transpose swaps the strides. */
            kiln_gemm_f32_operand a = {w_g + r0, 1, rows_total}, b = {x_g + p0, p->in_size, 1};
            kiln_gemm_f32_parallel(rows, cols, p->cin_g, 1.0f, a, b, 0.0f, col, cols, gemm_scratch, ctx);
            kiln_conv_col2im_add(&p->fwd, col, r0, rows, p0, cols, y_g);
        }
    }
}

kiln_status kiln_conv_transpose_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                    kiln_kernel_ctx *ctx)
{
    convt_plan p;
    kiln_status st = convt_plan_make(node, in, &p);
    if (st != KILN_OK) return st;
    const float *x = in[0]->data, *w = in[1]->data;
    const float *bias = node->n_inputs > 2 && in[2] ? in[2]->data : NULL;
    float *y = out[0]->data;
    int64_t w_group = p.cin_g * p.cout_g * p.taps;
    for (int64_t n = 0; n < p.batch; n++) {
        float *y_n = y + n * p.c_out * p.out_size;
        for (int64_t c = 0; c < p.c_out; c++) {
            float v = bias ? bias[c] : 0.0f, *plane = y_n + c * p.out_size;
            for (int64_t i = 0; i < p.out_size; i++) plane[i] = v;
        }
        for (int64_t g = 0; g < p.group; g++)
            convt_group(&p, x + (n * p.c_in + g * p.cin_g) * p.in_size, w + g * w_group,
                        y_n + g * p.cout_g * p.out_size, ctx->scratch, ctx);
    }
    return KILN_OK;
}
