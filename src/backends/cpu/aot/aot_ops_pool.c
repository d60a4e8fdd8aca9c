/* aot_ops_pool.c — MaxPool, AveragePool and the global pools as POOL2D steps.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h). NCHW, 2-D, and 1-D as a 2-D pool over one
 * row (H = 1, KH = 1: the window geometry normalises that way already). The window geometry is the
 * portable kernels' own (conv_geom.h: auto_pad, ceil_mode, dilations), so both agree on every
 * output size and pad. The end pads recorded are the effective ones, which with ceil_mode may
 * leave the last window hanging past them: POOL2D skips cells outside the input and, for
 * count_include_pad, counts only cells inside the padded input, as the portable kernel does.
 * Pools with a window that sees no input element (pads at least as large as the kernel) stay
 * portable, whose result for them is a convention rather than arithmetic.
 */
#include <string.h>

#include "backends/cpu/aot/aot_ops.h"
#include "kernels/portable/conv_geom.h"

/* Every output position along dim d of the window sees at least one input element. */
static bool windows_non_empty(const kiln_window *w, int d)
{
    for (int64_t o = 0; o < w->out[d]; o++) {
        int64_t lo, hi;
        kiln_window_taps(o * w->stride[d] - w->pad_begin[d], w->dilation[d], w->kernel[d], w->in[d], &lo, &hi);
        if (lo == hi) return false;
    }
    return true;
}

static bool window_geometry(const kiln_node *node, const kiln_tensor *x, kiln_window *w)
{
    int64_t kernel[2];
    int n_spatial = (int)x->rank - 2;
    if (kiln_window_kernel_shape(node, n_spatial, NULL, kernel) != KILN_OK) return false;
    if (kiln_window_read_attrs(node, n_spatial, &x->shape[2], kernel, w) != KILN_OK) return false;
    bool ceil_mode = kiln_node_attr_int(node, "ceil_mode", 0) != 0;
    if (kiln_window_forward_shape(w, ceil_mode) != KILN_OK) return false;
    return windows_non_empty(w, 1) && windows_non_empty(w, 2);
}

bool aot_describe_pool(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    const kiln_tensor *x = in[0];
    if ((x->rank != 3 && x->rank != 4) || y->rank != x->rank || node->n_inputs != 1) return false;
    bool global = strncmp(node->op, "Global", 6) == 0;
    bool max = strstr(node->op, "MaxPool") != NULL;
    kiln_cpu_pool_params *p = &d->params.pool;
    p->N = x->shape[0], p->C = x->shape[1];
    p->H = x->rank == 4 ? x->shape[2] : 1, p->W = x->shape[x->rank - 1];
    p->kind = max ? KILN_CPU_POOL_MAX : KILN_CPU_POOL_AVG;
    if (global) {
        p->OH = p->OW = 1;
        p->KH = p->H, p->KW = p->W;
        p->stride_h = p->stride_w = p->dil_h = p->dil_w = 1;
    } else {
        kiln_window w;
        if (!window_geometry(node, x, &w)) return false;
        p->OH = w.out[1], p->OW = w.out[2], p->KH = w.kernel[1], p->KW = w.kernel[2];
        p->stride_h = w.stride[1], p->stride_w = w.stride[2];
        p->pad_top = w.pad_begin[1], p->pad_left = w.pad_begin[2];
        p->pad_bottom = w.pad_end[1], p->pad_right = w.pad_end[2];
        p->dil_h = w.dilation[1], p->dil_w = w.dilation[2];
        p->count_include_pad = !max && kiln_node_attr_int(node, "count_include_pad", 0) != 0;
    }
    if (y->shape[0] != p->N || y->shape[1] != p->C || y->shape[y->rank - 1] != p->OW) return false;
    if (y->rank == 4 ? y->shape[2] != p->OH : p->OH != 1) return false;
    d->op = KILN_CPU_OP_POOL2D;
    d->n_inputs = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    return true;
}
