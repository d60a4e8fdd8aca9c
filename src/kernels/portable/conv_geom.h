/* conv_geom.h — the sliding-window geometry shared by Conv, ConvTranspose and the pools.
 *
 * Layer: kernels/portable (internal).
 *
 * Every window op is normalised to three spatial dims: a model's 1-D or 2-D op becomes a 3-D one
 * whose leading dims have size 1, kernel 1, stride 1, dilation 1 and no padding. The loops then
 * exist once, in 3-D, and cost nothing extra for the unit dims. Spatial dim d of the model is
 * index 3 - n_spatial + d of the arrays below.
 *
 * Invariants after a successful kiln_window_read_attrs/kiln_window_forward_shape: every stride,
 * dilation and kernel dim is in [1, KILN_WINDOW_MAX_DIM], pads in [0, KILN_WINDOW_MAX_DIM] (only
 * ConvTranspose makes them negative, on purpose), so no index arithmetic below can overflow.
 */
#ifndef KILN_KERNELS_PORTABLE_CONV_GEOM_H
#define KILN_KERNELS_PORTABLE_CONV_GEOM_H

#include "core/window_taps.h" /* kiln_window_taps, kiln_floor_div, kiln_ceil_div */
#include "kernels/portable/kernel.h"

#define KILN_WINDOW_SPATIAL 3
/* Bound on attribute values and spatial sizes; far above any real model, far below overflow. */
#define KILN_WINDOW_MAX_DIM ((int64_t)1 << 30)

typedef enum kiln_auto_pad {
    KILN_AUTO_PAD_NOTSET,
    KILN_AUTO_PAD_SAME_UPPER,
    KILN_AUTO_PAD_SAME_LOWER,
    KILN_AUTO_PAD_VALID,
} kiln_auto_pad;

typedef struct kiln_window {
    int n_spatial;                          /* spatial dims the model has, 1..3 */
    kiln_auto_pad auto_pad;
    int64_t in[KILN_WINDOW_SPATIAL];        /* input spatial size */
    int64_t out[KILN_WINDOW_SPATIAL];       /* output spatial size */
    int64_t kernel[KILN_WINDOW_SPATIAL];
    int64_t stride[KILN_WINDOW_SPATIAL];
    int64_t dilation[KILN_WINDOW_SPATIAL];
    int64_t pad_begin[KILN_WINDOW_SPATIAL];
    int64_t pad_end[KILN_WINDOW_SPATIAL];
} kiln_window;

/* Fills w from the node's strides, dilations, pads and auto_pad attributes, the input spatial
   sizes in_spatial (n_spatial of them) and the kernel size kernel (n_spatial). out is left 0.
   KILN_ERROR_INVALID_ARGUMENT for attributes of the wrong length or out of range,
   KILN_ERROR_NOT_SUPPORTED for more than three spatial dims. */
kiln_status kiln_window_read_attrs(const kiln_node *node, int n_spatial, const int64_t *in_spatial,
                                   const int64_t *kernel, kiln_window *w);

/* The output size and final pads of a forward window op (Conv, pools), applying auto_pad and,
   for pools, ceil_mode. KILN_ERROR_SHAPE_MISMATCH when the window does not fit the input. */
kiln_status kiln_window_forward_shape(kiln_window *w, bool ceil_mode);

/* KILN_ERROR_LIMIT when the products of in, out and kernel sizes (or out * kernel, in * kernel)
   overflow int64; KILN_OK otherwise. kiln_window_forward_shape calls it. */
kiln_status kiln_window_check_sizes(const kiln_window *w);

/* The kernel size from the kernel_shape attribute (n_spatial values, each >= 1), or from
   fallback (may be NULL) when the attribute is absent. KILN_ERROR_INVALID_ARGUMENT when the
   attribute is malformed or absent without a fallback. */
kiln_status kiln_window_kernel_shape(const kiln_node *node, int n_spatial, const int64_t *fallback,
                                     int64_t *kernel);

/* Total output spatial size (product of out). */
int64_t kiln_window_out_size(const kiln_window *w);
int64_t kiln_window_in_size(const kiln_window *w);
int64_t kiln_window_kernel_size(const kiln_window *w);

#endif /* KILN_KERNELS_PORTABLE_CONV_GEOM_H */
