/* pool.c — portable kernels of the pool family: MaxPool, AveragePool, LpPool (windowed, here)
 * and the Global*Pool ops (pool_global.c).
 *
 * Layer: kernels/portable. MaxPool takes f32, f64, i8 and u8 (it only compares and copies);
 * the averaging pools take f32. Window geometry (kernel, strides, dilations, pads,
 * auto_pad, ceil_mode) comes from conv_geom.h, normalised to 3-D; each (n, c) plane is pooled
 * on its own. For every output pixel the taps inside the image are a box [lo, hi) per dim, so the
 * inner loops never test bounds.
 *
 * Versions: MaxPool gained Indices and storage_order at 8 and ceil_mode and dilations at 10;
 * AveragePool gained count_include_pad at 7 and ceil_mode at 10; LpPool's p is a float at 1 and
 * an int from 2. Absent attributes take their defaults, so one entry per op serves every opset.
 * Windows that see no input element (possible only with pads >= kernel) give the type's lowest
 * value and index -1 for MaxPool (as onnxruntime does) and 0 for the averaging pools.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/conv_geom.h"
#include "kernels/portable/families.h"
#include "kernels/portable/parallel.h"
#include "kernels/portable/pool_global.h"

typedef enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

typedef struct pool_plan {
    pool_kind kind;
    int64_t planes;             /* N * C */
    int64_t in_size, out_size;  /* elements per plane */
    kiln_window win;
    bool count_include_pad;     /* AveragePool */
    bool column_major_indices;  /* MaxPool storage_order == 1 */
    float p;                    /* LpPool */
} pool_plan;

/* The box of taps of output pixel o (per dim: start position and the valid tap range). */
typedef struct pool_box {
    int64_t start[KILN_WINDOW_SPATIAL], lo[KILN_WINDOW_SPATIAL], hi[KILN_WINDOW_SPATIAL];
} pool_box;

static void box_dim(const kiln_window *w, int d, int64_t o, pool_box *b)
{
    b->start[d] = o * w->stride[d] - w->pad_begin[d];
    kiln_window_taps(b->start[d], w->dilation[d], w->kernel[d], w->in[d], &b->lo[d], &b->hi[d]);
}

/* Taps of the box that fall inside the padded input (the count_include_pad divisor). */
static int64_t box_padded_count(const kiln_window *w, const pool_box *b)
{
    int64_t count = 1;
    for (int d = 0; d < KILN_WINDOW_SPATIAL; d++) {
        int64_t lo, hi;
        kiln_window_taps(b->start[d] + w->pad_begin[d], w->dilation[d], w->kernel[d],
                         w->in[d] + w->pad_begin[d] + w->pad_end[d], &lo, &hi);
        count *= hi - lo;
    }
    return count;
}

/* The plane offset of the largest element in the box (the first one on ties, NaN never wins),
   or -1 for an empty box. One instance per MaxPool dtype. */
#define ARGMAX_BOX(NAME, T)                                                                       \
    static int64_t NAME(const kiln_window *w, const pool_box *b, const void *plane)              \
    {                                                                                            \
        const T *x = plane;                                                                      \
        T best = 0;                                                                              \
        int64_t at = -1;                                                                         \
        for (int64_t kz = b->lo[0]; kz < b->hi[0]; kz++) {                                       \
            int64_t iz = b->start[0] + kz * w->dilation[0];                                      \
            for (int64_t ky = b->lo[1]; ky < b->hi[1]; ky++) {                                   \
                int64_t iy = b->start[1] + ky * w->dilation[1];                                  \
                int64_t line = (iz * w->in[1] + iy) * w->in[2];                                  \
                for (int64_t kx = b->lo[2]; kx < b->hi[2]; kx++) {                               \
                    int64_t off = line + b->start[2] + kx * w->dilation[2];                      \
                    if (at < 0 || x[off] > best) {                                               \
                        best = x[off];                                                           \
                        at = off;                                                                \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        return at;                                                                               \
    }
ARGMAX_BOX(argmax_box_f32, float)
ARGMAX_BOX(argmax_box_f64, double)
ARGMAX_BOX(argmax_box_i8, int8_t)
ARGMAX_BOX(argmax_box_u8, uint8_t)
#undef ARGMAX_BOX

typedef int64_t (*argmax_box_fn)(const kiln_window *w, const pool_box *b, const void *plane);

static argmax_box_fn argmax_box_for(kiln_dtype t)
{
    switch (t) {
    case KILN_DTYPE_F32: return argmax_box_f32;
    case KILN_DTYPE_F64: return argmax_box_f64;
    case KILN_DTYPE_I8: return argmax_box_i8;
    case KILN_DTYPE_U8: return argmax_box_u8;
    default: return NULL;
    }
}

/* The value of an empty window: the lowest finite value of the type. */
static void store_lowest(kiln_dtype t, void *dst)
{
    switch (t) {
    case KILN_DTYPE_F32: *(float *)dst = -FLT_MAX; break;
    case KILN_DTYPE_F64: *(double *)dst = -DBL_MAX; break;
    case KILN_DTYPE_I8: *(int8_t *)dst = INT8_MIN; break;
    default: *(uint8_t *)dst = 0; break;
    }
}

/* A row-major plane offset re-expressed in column-major order (storage_order = 1). */
static int64_t column_major_offset(const kiln_window *w, int64_t off)
{
    int64_t ix = off % w->in[2], iy = off / w->in[2] % w->in[1], iz = off / (w->in[2] * w->in[1]);
    return (ix * w->in[1] + iy) * w->in[0] + iz;
}

/* Sum of f(x) over the box, f = identity (AVG) or |x|^p (LP), and the count of taps summed. */
static float sum_box(const kiln_window *w, const pool_box *b, const float *x, pool_kind kind, float p,
                     int64_t *count)
{
    float sum = 0.0f;
    for (int64_t kz = b->lo[0]; kz < b->hi[0]; kz++) {
        int64_t iz = b->start[0] + kz * w->dilation[0];
        for (int64_t ky = b->lo[1]; ky < b->hi[1]; ky++) {
            int64_t iy = b->start[1] + ky * w->dilation[1];
            const float *row = x + (iz * w->in[1] + iy) * w->in[2];
            for (int64_t kx = b->lo[2]; kx < b->hi[2]; kx++) {
                float v = row[b->start[2] + kx * w->dilation[2]];
                if (kind == POOL_AVG) sum += v;
                else if (p == 2.0f) sum += v * v;
                else if (p == 1.0f) sum += fabsf(v);
                else sum += powf(fabsf(v), p);
            }
        }
    }
    *count = (b->hi[0] - b->lo[0]) * (b->hi[1] - b->lo[1]) * (b->hi[2] - b->lo[2]);
    return sum;
}

static float finish_sum(const pool_plan *p, const pool_box *b, float sum, int64_t count)
{
    if (p->kind == POOL_LP) return p->p == 2.0f ? sqrtf(sum) : p->p == 1.0f ? sum : powf(sum, 1.0f / p->p);
    if (p->count_include_pad) count = box_padded_count(&p->win, b);
    return count > 0 ? sum / (float)count : 0.0f;
}

static kiln_status pool_plan_make(const kiln_node *node, pool_kind kind, const kiln_tensor *x, pool_plan *p)
{
    if (!x) return KILN_ERROR_INVALID_ARGUMENT;
    if (kind == POOL_MAX ? !argmax_box_for(x->dtype) : x->dtype != KILN_DTYPE_F32) return KILN_ERROR_NOT_SUPPORTED;
    if (x->rank < 3) return KILN_ERROR_SHAPE_MISMATCH;
    int n_spatial = (int)x->rank - 2;
    if (n_spatial > KILN_WINDOW_SPATIAL) return KILN_ERROR_NOT_SUPPORTED;
    int64_t kernel[KILN_WINDOW_SPATIAL];
    kiln_status st = kiln_window_kernel_shape(node, n_spatial, NULL, kernel);
    if (st != KILN_OK) return st;
    if ((st = kiln_window_read_attrs(node, n_spatial, &x->shape[2], kernel, &p->win)) != KILN_OK) return st;
    bool ceil_mode = kiln_node_attr_int(node, "ceil_mode", 0) != 0;
    if ((st = kiln_window_forward_shape(&p->win, ceil_mode)) != KILN_OK) return st;
    p->kind = kind;
    if (__builtin_mul_overflow(x->shape[0], x->shape[1], &p->planes)) return KILN_ERROR_LIMIT;
    p->in_size = kiln_window_in_size(&p->win);
    p->out_size = kiln_window_out_size(&p->win);
    p->count_include_pad = kiln_node_attr_int(node, "count_include_pad", 0) != 0;
    int64_t storage_order = kiln_node_attr_int(node, "storage_order", 0);
    if (storage_order != 0 && storage_order != 1) return KILN_ERROR_INVALID_ARGUMENT;
    p->column_major_indices = storage_order == 1;
    p->p = kiln_node_attr_float(node, "p", 2.0f);
    if (kind == POOL_LP && !(p->p > 0.0f)) return KILN_ERROR_INVALID_ARGUMENT;
    return KILN_OK;
}

static kiln_status pool_infer(const kiln_node *node, pool_kind kind, const kiln_tensor *const *in,
                              kiln_tensor *const *out, size_t *scratch_size)
{
    pool_plan p;
    kiln_status st = pool_plan_make(node, kind, in[0], &p);
    if (st != KILN_OK) return st;
    int64_t shape[KILN_MAX_RANK] = {in[0]->shape[0], in[0]->shape[1]};
    int lead = KILN_WINDOW_SPATIAL - p.win.n_spatial;
    for (int d = 0; d < p.win.n_spatial; d++) shape[2 + d] = p.win.out[lead + d];
    for (size_t j = 0; j < node->n_outputs && j < 2; j++) {
        if (!out[j]) continue;
        if (j == 1 && kind != POOL_MAX) return KILN_ERROR_INVALID_ARGUMENT;
        kiln_tensor_set_shape(out[j], j == 0 ? in[0]->dtype : KILN_DTYPE_I64, in[0]->rank, shape);
        if (kiln_tensor_numel(out[j]) < 0) return KILN_ERROR_LIMIT;
    }
    if (node->n_outputs > 2) return KILN_ERROR_INVALID_ARGUMENT;
    if (!out[0]) *scratch_size = (size_t)p.out_size * kiln_dtype_size(in[0]->dtype);
    return KILN_OK;
}

/* One (n, c) MaxPool plane of elem_size-byte elements; index (may be NULL) gets the flat
   indices over the whole input, i.e. offset by index_base. */
static void max_pool_plane(const pool_plan *p, argmax_box_fn argmax, kiln_dtype dtype, size_t elem_size,
                           const char *x, char *y, int64_t *index, int64_t index_base)
{
    const kiln_window *w = &p->win;
    pool_box b;
    int64_t o = 0;
    for (int64_t od = 0; od < w->out[0]; od++) {
        box_dim(w, 0, od, &b);
        for (int64_t oh = 0; oh < w->out[1]; oh++) {
            box_dim(w, 1, oh, &b);
            for (int64_t ow = 0; ow < w->out[2]; ow++, o++) {
                box_dim(w, 2, ow, &b);
                int64_t at = argmax(w, &b, x);
                if (at >= 0) memcpy(y + (size_t)o * elem_size, x + (size_t)at * elem_size, elem_size);
                else store_lowest(dtype, y + (size_t)o * elem_size);
                if (index) index[o] = at < 0 ? -1 : index_base + (p->column_major_indices ? column_major_offset(w, at) : at);
            }
        }
    }
}

/* One (n, c) plane of AveragePool or LpPool. */
static void average_pool_plane(const pool_plan *p, const float *x, float *y)
{
    const kiln_window *w = &p->win;
    pool_box b;
    int64_t o = 0;
    for (int64_t od = 0; od < w->out[0]; od++) {
        box_dim(w, 0, od, &b);
        for (int64_t oh = 0; oh < w->out[1]; oh++) {
            box_dim(w, 1, oh, &b);
            for (int64_t ow = 0; ow < w->out[2]; ow++, o++) {
                box_dim(w, 2, ow, &b);
                int64_t count;
                float sum = sum_box(w, &b, x, p->kind, p->p, &count);
                y[o] = finish_sum(p, &b, sum, count);
            }
        }
    }
}

typedef struct pool_job {
    const pool_plan *p;
    pool_kind kind;
    kiln_dtype dtype;
    size_t elem;
    const char *x;
    char *y;            /* NULL: values go to `scratch` (one plane) */
    int64_t *indices;
    void *scratch;
} pool_job;

/* Planes [lo, hi). */
static void pool_planes(const void *arg, int64_t lo, int64_t hi)
{
    const pool_job *j = arg;
    const pool_plan *p = j->p;
    for (int64_t c = lo; c < hi; c++) {
        char *y = j->y ? j->y + (size_t)(c * p->out_size) * j->elem : j->scratch;
        const char *x_c = j->x + (size_t)(c * p->in_size) * j->elem;
        if (j->kind == POOL_MAX)
            max_pool_plane(p, argmax_box_for(j->dtype), j->dtype, j->elem, x_c, y,
                           j->indices ? j->indices + c * p->out_size : NULL, c * p->in_size);
        else
            average_pool_plane(p, (const float *)x_c, (float *)y);
    }
}

/* Threads take runs of planes — unless only Indices is used: the values then all go to the one
   scratch plane (see pool_infer), which tasks cannot share. */
static kiln_status pool_run(const kiln_node *node, pool_kind kind, const kiln_tensor *const *in,
                            kiln_tensor *const *out, kiln_kernel_ctx *ctx)
{
    pool_plan p;
    kiln_status st = pool_plan_make(node, kind, in[0], &p);
    if (st != KILN_OK) return st;
    kiln_dtype dtype = in[0]->dtype;
    pool_job j = {&p, kind, dtype, kiln_dtype_size(dtype), in[0]->data, out[0] ? out[0]->data : NULL,
                  node->n_outputs > 1 && out[1] ? out[1]->data : NULL, ctx->scratch};
    int64_t taps = kiln_window_kernel_size(&p.win);
    kiln_par_rows(j.y ? ctx : NULL, p.planes, p.out_size * taps, (int64_t)1 << 15, pool_planes, &j);
    return KILN_OK;
}

#define POOL_ENTRY_POINTS(NAME, KIND)                                                                  \
    static kiln_status NAME##_infer(const kiln_node *node, const kiln_tensor *const *in,              \
                                    kiln_tensor *const *out, size_t *scratch_size)                    \
    {                                                                                                  \
        return pool_infer(node, KIND, in, out, scratch_size);                                          \
    }                                                                                                  \
    static kiln_status NAME##_run(const kiln_node *node, const kiln_tensor *const *in,                \
                                  kiln_tensor *const *out, kiln_kernel_ctx *ctx)                      \
    {                                                                                                  \
        return pool_run(node, KIND, in, out, ctx);                                                     \
    }
POOL_ENTRY_POINTS(max_pool, POOL_MAX)
POOL_ENTRY_POINTS(average_pool, POOL_AVG)
POOL_ENTRY_POINTS(lp_pool, POOL_LP)
#undef POOL_ENTRY_POINTS

const kiln_kernel kiln_kernels_pool[] = {
    {"MaxPool", 1, max_pool_infer, max_pool_run, {{0, 1, 1, 1, 1}, {8, 1, 1, 1, 2}},
     "auto_pad:s ceil_mode:i dilations:I kernel_shape:I pads:I storage_order:i strides:I"},
    {"AveragePool", 1, average_pool_infer, average_pool_run, {{0, 1, 1, 1, 1}},
     "auto_pad:s ceil_mode:i count_include_pad:i dilations:I kernel_shape:I pads:I strides:I"},
    {"LpPool", 1, lp_pool_infer, lp_pool_run, {{0, 1, 1, 1, 1}},
     "auto_pad:s ceil_mode:i dilations:I kernel_shape:I p:if pads:I strides:I"},
    {"GlobalAveragePool", 1, kiln_global_average_pool_infer, kiln_global_average_pool_run, {{0, 1, 1, 1, 1}}, ""},
    {"GlobalMaxPool", 1, kiln_global_max_pool_infer, kiln_global_max_pool_run, {{0, 1, 1, 1, 1}}, ""},
    {"GlobalLpPool", 1, kiln_global_lp_pool_infer, kiln_global_lp_pool_run, {{0, 1, 1, 1, 1}}, "p:if"},
    {0},
};
