/* conv_im2col.c — bounded-block im2col and col2im (contract in conv_im2col.h).
 *
 * Layer: kernels/portable (internal). One column-matrix row is a fixed tap (c, kz, ky, kx); along
 * it the output pixels advance through lines of constant (od, oh). On such a line the tap's input
 * row is fixed, and the pixels whose input column falls inside the image form one contiguous
 * range [lo, hi) that depends only on kx — computed once per matrix row, so the per-element work
 * is a copy (a memcpy-like loop when the stride is 1) with no bounds tests.
 */
#include "kernels/portable/conv_im2col.h"

#include <string.h>
#include "core/check.h"

/* A position in the column matrix: the tap of row r and the first output pixel p0. */
typedef struct col_cursor {
    int64_t c, kz, ky, kx;
    int64_t od, oh, ow;
} col_cursor;

static col_cursor cursor_at(const kiln_window *w, int64_t r, int64_t p0)
{
    col_cursor cur;
    cur.kx = r % w->kernel[2];
    r /= w->kernel[2];
    cur.ky = r % w->kernel[1];
    r /= w->kernel[1];
    cur.kz = r % w->kernel[0];
    cur.c = r / w->kernel[0];
    cur.ow = p0 % w->out[2];
    p0 /= w->out[2];
    cur.oh = p0 % w->out[1];
    cur.od = p0 / w->out[1];
    return cur;
}

/* The image line (offset of its first element, or -1 when the tap lies in padding there) that
   the output line (od, oh) reads for this tap. */
static int64_t line_offset(const kiln_window *w, const col_cursor *cur)
{
    int64_t iz = cur->od * w->stride[0] - w->pad_begin[0] + cur->kz * w->dilation[0];
    int64_t iy = cur->oh * w->stride[1] - w->pad_begin[1] + cur->ky * w->dilation[1];
    if (iz < 0 || iz >= w->in[0] || iy < 0 || iy >= w->in[1]) return -1;
    return ((cur->c * w->in[0] + iz) * w->in[1] + iy) * w->in[2];
}

static void next_line(const kiln_window *w, col_cursor *cur)
{
    cur->ow = 0;
    if (++cur->oh == w->out[1]) {
        cur->oh = 0;
        cur->od++;
    }
}

/* One row of the block: cols pixels starting at cur's pixel. */
static void im2col_row(const kiln_window *w, const float *x, col_cursor cur, int64_t cols, float *dst)
{
    int64_t sx = w->stride[2];
    int64_t start = cur.kx * w->dilation[2] - w->pad_begin[2]; /* input column of ow = 0 */
    int64_t lo, hi;                                            /* pixels reading inside the image */
    kiln_window_taps(start, sx, w->out[2], w->in[2], &lo, &hi);
    for (int64_t j = 0; j < cols;) {
        int64_t end = cur.ow + kiln_min_i64(w->out[2] - cur.ow, cols - j); /* exclusive, on this line */
        float *d = dst + j;                                           /* d[ow - cur.ow] */
        int64_t line = line_offset(w, &cur);
        int64_t a = kiln_max_i64(cur.ow, kiln_min_i64(lo, end)), b = kiln_max_i64(a, kiln_min_i64(hi, end));
        if (line < 0) a = b = end;
        int64_t first = cur.ow;
        for (int64_t ow = first; ow < a; ow++) d[ow - first] = 0.0f;
        if (b > a) {
            const float *src = x + line;
            if (sx == 1)
                for (int64_t ow = a; ow < b; ow++) d[ow - first] = src[ow + start];
            else
                for (int64_t ow = a; ow < b; ow++) d[ow - first] = src[ow * sx + start];
        }
        for (int64_t ow = b; ow < end; ow++) d[ow - first] = 0.0f;
        j += end - cur.ow;
        next_line(w, &cur);
    }
}

void kiln_conv_im2col(const kiln_window *w, const float *x, int64_t r0, int64_t rows, int64_t p0, int64_t cols,
                      float *col)
{
    for (int64_t r = 0; r < rows; r++) im2col_row(w, x, cursor_at(w, r0 + r, p0), cols, col + r * cols);
}

static void col2im_row(const kiln_window *w, const float *src_row, col_cursor cur, int64_t cols, float *y)
{
    int64_t sx = w->stride[2];
    int64_t start = cur.kx * w->dilation[2] - w->pad_begin[2];
    int64_t lo, hi;
    kiln_window_taps(start, sx, w->out[2], w->in[2], &lo, &hi);
    for (int64_t j = 0; j < cols;) {
        int64_t end = cur.ow + kiln_min_i64(w->out[2] - cur.ow, cols - j);
        const float *s = src_row + j; /* s[ow - cur.ow] */
        int64_t line = line_offset(w, &cur);
        int64_t a = kiln_max_i64(cur.ow, kiln_min_i64(lo, end)), b = kiln_max_i64(a, kiln_min_i64(hi, end));
        if (line >= 0 && b > a) {
            float *dst = y + line;
            for (int64_t ow = a; ow < b; ow++) dst[ow * sx + start] += s[ow - cur.ow];
        }
        j += end - cur.ow;
        next_line(w, &cur);
    }
}

void kiln_conv_col2im_add(const kiln_window *w, const float *col, int64_t r0, int64_t rows, int64_t p0,
                          int64_t cols, float *y)
{
    for (int64_t r = 0; r < rows; r++) col2im_row(w, col + r * cols, cursor_at(w, r0 + r, p0), cols, y);
}

void kiln_conv_col_block(int64_t n_rows, int64_t n_cols, int64_t *rows, int64_t *cols)
{
    int64_t c = n_cols, total;
    bool large = __builtin_mul_overflow(n_rows, n_cols, &total) || total > KILN_IM2COL_TARGET;
    if (n_rows > 0 && large) {
        c = kiln_max_i64(64, KILN_IM2COL_TARGET / n_rows) / 16 * 16;
        /* Even out the blocks so the last one is not a sliver (a 4-column GEMM wastes most
           of each 16-wide register tile). */
        int64_t n_blocks = (n_cols + c - 1) / c;
        c = kiln_min_i64(n_cols, ((n_cols + n_blocks - 1) / n_blocks + 15) / 16 * 16);
    }
    int64_t r = n_rows;
    if (c > 0 && r > KILN_IM2COL_TARGET / c) r = kiln_max_i64(1, KILN_IM2COL_TARGET / c);
    *rows = r;
    *cols = c;
}
