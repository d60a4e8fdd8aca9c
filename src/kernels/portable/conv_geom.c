/* conv_geom.c — attribute parsing and output-shape rules of the sliding-window ops.
 * Layer: kernels/portable (internal). See conv_geom.h for the 3-D normalisation. */
#include "kernels/portable/conv_geom.h"

#include <string.h>

/* Reads an INTS attribute of exactly want values within [lo, KILN_WINDOW_MAX_DIM] into the last
   want slots of dst (leading slots keep their neutral value); absent leaves dst untouched. */
static kiln_status read_ints(const kiln_node *node, const char *name, size_t want, int64_t lo, int64_t *dst)
{
    const int64_t *v;
    size_t n = kiln_node_attr_ints(node, name, &v);
    if (!kiln_node_attr(node, name)) return KILN_OK;
    if (n != want) return KILN_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > KILN_WINDOW_MAX_DIM) return KILN_ERROR_INVALID_ARGUMENT;
        dst[KILN_WINDOW_SPATIAL - want + i] = v[i];
    }
    return KILN_OK;
}

static kiln_status read_auto_pad(const kiln_node *node, kiln_auto_pad *out)
{
    const char *s = kiln_node_attr_string(node, "auto_pad", "NOTSET");
    if (strcmp(s, "NOTSET") == 0 || s[0] == '\0') *out = KILN_AUTO_PAD_NOTSET;
    else if (strcmp(s, "SAME_UPPER") == 0) *out = KILN_AUTO_PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0) *out = KILN_AUTO_PAD_SAME_LOWER;
    else if (strcmp(s, "VALID") == 0) *out = KILN_AUTO_PAD_VALID;
    else return KILN_ERROR_INVALID_ARGUMENT;
    return KILN_OK;
}

kiln_status kiln_window_kernel_shape(const kiln_node *node, int n_spatial, const int64_t *fallback,
                                     int64_t *kernel)
{
    const int64_t *v;
    size_t n = kiln_node_attr_ints(node, "kernel_shape", &v);
    if (!kiln_node_attr(node, "kernel_shape")) {
        if (!fallback) return KILN_ERROR_INVALID_ARGUMENT;
        memcpy(kernel, fallback, (size_t)n_spatial * sizeof *kernel);
        return KILN_OK;
    }
    if (n != (size_t)n_spatial) return KILN_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < 1 || v[i] > KILN_WINDOW_MAX_DIM) return KILN_ERROR_INVALID_ARGUMENT;
        kernel[i] = v[i];
    }
    return KILN_OK;
}

kiln_status kiln_window_read_attrs(const kiln_node *node, int n_spatial, const int64_t *in_spatial,
                                   const int64_t *kernel, kiln_window *w)
{
    if (n_spatial < 1) return KILN_ERROR_SHAPE_MISMATCH;
    if (n_spatial > KILN_WINDOW_SPATIAL) return KILN_ERROR_NOT_SUPPORTED;
    memset(w, 0, sizeof *w);
    w->n_spatial = n_spatial;
    int lead = KILN_WINDOW_SPATIAL - n_spatial;
    for (int d = 0; d < KILN_WINDOW_SPATIAL; d++) {
        w->in[d] = w->kernel[d] = w->stride[d] = w->dilation[d] = 1;
        if (d < lead) continue;
        w->in[d] = in_spatial[d - lead];
        w->kernel[d] = kernel[d - lead];
        if (w->kernel[d] < 1) return KILN_ERROR_SHAPE_MISMATCH; /* a weight with an empty kernel dim */
        if (w->in[d] > KILN_WINDOW_MAX_DIM || w->kernel[d] > KILN_WINDOW_MAX_DIM) return KILN_ERROR_LIMIT;
    }
    kiln_status st;
    size_t ns = (size_t)n_spatial;
    if ((st = read_ints(node, "strides", ns, 1, w->stride)) != KILN_OK) return st;
    if ((st = read_ints(node, "dilations", ns, 1, w->dilation)) != KILN_OK) return st;
    if ((st = read_auto_pad(node, &w->auto_pad)) != KILN_OK) return st;
    /* pads are [x1_begin, x2_begin, ..., x1_end, x2_end, ...]. */
    const int64_t *pads;
    size_t n_pads = kiln_node_attr_ints(node, "pads", &pads);
    if (kiln_node_attr(node, "pads")) {
        if (n_pads != 2 * ns) return KILN_ERROR_INVALID_ARGUMENT;
        for (size_t i = 0; i < n_pads; i++)
            if (pads[i] < 0 || pads[i] > KILN_WINDOW_MAX_DIM) return KILN_ERROR_INVALID_ARGUMENT;
        for (int d = 0; d < n_spatial; d++) {
            w->pad_begin[lead + d] = pads[d];
            w->pad_end[lead + d] = pads[ns + (size_t)d];
        }
    }
    return KILN_OK;
}

/* SAME_*: output ceil(in / stride), the padding needed to reach it split in two with the odd
   element at the end (UPPER) or at the beginning (LOWER). */
static void same_padding(kiln_window *w, int d)
{
    int64_t span = (w->kernel[d] - 1) * w->dilation[d] + 1;
    w->out[d] = kiln_ceil_div(w->in[d], w->stride[d]);
    int64_t total = (w->out[d] - 1) * w->stride[d] + span - w->in[d];
    if (total < 0) total = 0;
    int64_t small = total / 2, large = total - small;
    w->pad_begin[d] = w->auto_pad == KILN_AUTO_PAD_SAME_UPPER ? small : large;
    w->pad_end[d] = w->auto_pad == KILN_AUTO_PAD_SAME_UPPER ? large : small;
}

kiln_status kiln_window_forward_shape(kiln_window *w, bool ceil_mode)
{
    for (int d = 0; d < KILN_WINDOW_SPATIAL; d++) {
        int64_t span = (w->kernel[d] - 1) * w->dilation[d] + 1;
        if (w->auto_pad == KILN_AUTO_PAD_SAME_UPPER || w->auto_pad == KILN_AUTO_PAD_SAME_LOWER) {
            same_padding(w, d);
            continue;
        }
        if (w->auto_pad == KILN_AUTO_PAD_VALID) w->pad_begin[d] = w->pad_end[d] = 0;
        int64_t room = w->in[d] + w->pad_begin[d] + w->pad_end[d] - span;
        if (room < 0) return KILN_ERROR_SHAPE_MISMATCH;
        if (ceil_mode) {
            w->out[d] = kiln_ceil_div(room, w->stride[d]) + 1;
            /* A last window that would start inside the end padding is dropped (the rule
               PyTorch and onnxruntime share), so every window sees at least one element. */
            if ((w->out[d] - 1) * w->stride[d] >= w->in[d] + w->pad_begin[d]) w->out[d]--;
        } else {
            w->out[d] = room / w->stride[d] + 1;
        }
    }
    return kiln_window_check_sizes(w);
}

/* Product of three sizes, or -1 on int64 overflow. */
static int64_t checked_product3(const int64_t *v)
{
    int64_t p = 1;
    for (int d = 0; d < KILN_WINDOW_SPATIAL; d++)
        if (v[d] < 0 || __builtin_mul_overflow(p, v[d], &p)) return -1;
    return p;
}

kiln_status kiln_window_check_sizes(const kiln_window *w)
{
    int64_t in = checked_product3(w->in), out = checked_product3(w->out), k = checked_product3(w->kernel);
    int64_t prod;
    /* out * kernel bounds the im2col and col2im index space; in is indexed directly. */
    if (in < 0 || out < 0 || k < 0 || __builtin_mul_overflow(out, k, &prod) || __builtin_mul_overflow(in, k, &prod))
        return KILN_ERROR_LIMIT;
    return KILN_OK;
}

static int64_t product3(const int64_t *v) { return v[0] * v[1] * v[2]; }
int64_t kiln_window_out_size(const kiln_window *w) { return product3(w->out); }
int64_t kiln_window_in_size(const kiln_window *w) { return product3(w->in); }
int64_t kiln_window_kernel_size(const kiln_window *w) { return product3(w->kernel); }
