/* conv_im2col.h — image <-> column-matrix transforms that turn convolutions into GEMMs.
 *
 * Layer: kernels/portable (internal). Used by Conv (im2col) and ConvTranspose (col2im).
 *
 * For a window w (conv_geom.h) over an image of `channels` planes of w->in, the full column
 * matrix has channels * kernel_size rows and out_size columns: row r = (c, kz, ky, kx) in
 * row-major order (the layout of a Conv weight's trailing dims), column p = output pixel
 * (od, oh, ow) in row-major order, and the value is the input element under that tap of that
 * output pixel, or 0 in the padding. The functions work on a block of it — rows [r0, r0 + rows)
 * and columns [p0, p0 + cols) — so callers can bound the buffer. The block is stored row-major
 * with row stride cols.
 */
#ifndef KILN_KERNELS_PORTABLE_CONV_IM2COL_H
#define KILN_KERNELS_PORTABLE_CONV_IM2COL_H

#include "kernels/portable/conv_geom.h"

/* col = block of the column matrix of image x (channels, w->in...). */
void kiln_conv_im2col(const kiln_window *w, const float *x, int64_t r0, int64_t rows, int64_t p0, int64_t cols,
                      float *col);

/* The adjoint: adds every element of the block col to the image element it was read from
   (padding taps are dropped). y is (channels, w->in...). */
void kiln_conv_col2im_add(const kiln_window *w, const float *col, int64_t r0, int64_t rows, int64_t p0,
                          int64_t cols, float *y);

/* Block sizes for a column matrix of n_rows x n_cols: columns per block (*cols, a multiple of 16
   unless it is all of n_cols) and rows per block (*rows) such that a block holds about
   KILN_IM2COL_TARGET floats. Few columns make the GEMM inefficient, so the column count stays
   >= 64 and rows give way first. */
#define KILN_IM2COL_TARGET ((int64_t)64 * 1024)
void kiln_conv_col_block(int64_t n_rows, int64_t n_cols, int64_t *rows, int64_t *cols);

#endif /* KILN_KERNELS_PORTABLE_CONV_IM2COL_H */
