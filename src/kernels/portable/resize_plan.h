/* resize_plan.h — what Resize and Upsample compute from a node before touching data
 * (resize_plan.c): the output size of each axis and the 1-D filter taps of each output index.
 * Layer: kernels/portable (internal to resize.c and resize_plan.c). */
#ifndef KILN_KERNELS_PORTABLE_RESIZE_PLAN_H
#define KILN_KERNELS_PORTABLE_RESIZE_PLAN_H

#include "kernels/portable/kernel.h"

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } resize_mode;
typedef enum {
    COORD_HALF_PIXEL, COORD_HALF_PIXEL_SYMMETRIC, COORD_PYTORCH_HALF_PIXEL, COORD_ALIGN_CORNERS,
    COORD_ASYMMETRIC, COORD_TF_HALF_PIXEL_FOR_NN, COORD_TF_CROP_AND_RESIZE,
} resize_coord;
/* NEAREST_SIMPLE is opset 10's and Upsample's rule: floor when upsampling, ceil when not. */
typedef enum { NEAREST_ROUND_PREFER_FLOOR, NEAREST_ROUND_PREFER_CEIL, NEAREST_FLOOR, NEAREST_CEIL, NEAREST_SIMPLE } resize_nearest;

typedef struct resize_plan {
    resize_mode mode;
    resize_coord coord;
    resize_nearest nearest;
    float cubic_a, extrapolation;
    bool exclude_outside, antialias;
    uint32_t rank;
    int64_t in_dim[KILN_MAX_RANK], out_dim[KILN_MAX_RANK];
    double scale[KILN_MAX_RANK];                   /* output / input, per axis */
    double roi_start[KILN_MAX_RANK], roi_end[KILN_MAX_RANK]; /* tf_crop_and_resize only */
    const kiln_tensor *roi;                        /* NULL or the roi input (read at run time) */
    int64_t axes[KILN_MAX_RANK];                   /* opset 18 `axes`: the axes scales/sizes name */
    size_t n_axes;
} resize_plan;


/* The taps of one axis: for output index j, taps n_taps entries from j * n_taps, each a source
   index in [0, in_dim) and a weight; extrapolate[j] when tf_crop_and_resize left the input. */
typedef struct axis_taps {
    int64_t n_taps;
    int64_t *index;     /* (out_dim, n_taps) */
    float *weight;      /* (out_dim, n_taps) */
    uint8_t *extrapolate; /* (out_dim) */
} axis_taps;

/* The plan of a Resize or Upsample node over its inputs, the same in infer() and run().
   KILN_ERROR_SHAPE_UNKNOWN when scales or sizes are not known yet; INVALID_ARGUMENT,
   SHAPE_MISMATCH, DTYPE_MISMATCH, LIMIT for a node ONNX does not allow or kiln cannot address. */
kiln_status kiln_resize_plan_make(const kiln_node *node, const kiln_tensor *const *in, resize_plan *p);
/* Taps per output index on axis a (1 for nearest, 2 or 4 for linear and cubic, more when an
   antialiased filter is stretched over a downscale). */
int64_t kiln_resize_taps_count(const resize_plan *p, int a);
/* Fills t (n_taps set, arrays of out_dim * n_taps) for axis a. */
void kiln_resize_taps_fill(const resize_plan *p, int a, axis_taps *t);

#endif
