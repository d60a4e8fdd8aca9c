/* f32-pool2d-generic.c — the POOL2D step (max, average, global) of every table, and the
 * generic table's max-pool rows.
 *
 * Layer: backends/cpu/kernels/generic. Max pools run the kit's rows (kiln_cpu_maxpool_fn: the
 * vector tables have their own, template/f32-maxpool2d.h), average pools the plain C here,
 * which only they reach. As the portable pools (pool.c, pool_global.c): each
 * window keeps only its taps inside the input; max takes the first maximum (NaN never wins
 * after the first tap) and gives -FLT_MAX for an empty window; average sums in double and
 * divides by the taps present, or with count_include_pad by the taps inside the padded input
 * (never those past the pads, which ceil mode can add), and gives 0 for an empty window.
 * Threads take runs of output rows (kernel_kit.h).
 */
#include <float.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

/* The taps of one output position along one axis. */
typedef struct axis_taps {
    int64_t start, lo, hi, padded;  /* padded: taps inside [-pad_begin, in + pad_end) */
} axis_taps;

static axis_taps axis_window(int64_t o, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dil, int64_t k,
                             int64_t in)
{
    axis_taps t = {.start = o * stride - pad_begin};
    kiln_window_taps(t.start, dil, k, in, &t.lo, &t.hi);
    int64_t plo, phi;
    kiln_window_taps(t.start + pad_begin, dil, k, in + pad_begin + pad_end, &plo, &phi);
    t.padded = phi - plo;
    return t;
}

static float max_window(const kiln_cpu_pool_params *p, const float *x, const axis_taps *h, const axis_taps *w)
{
    float best = -FLT_MAX;
    bool any = false;
    for (int64_t kh = h->lo; kh < h->hi; kh++) {
        const float *row = x + (h->start + kh * p->dil_h) * p->W;
        for (int64_t kw = w->lo; kw < w->hi; kw++) {
            float v = row[w->start + kw * p->dil_w];
            if (!any || v > best) best = v;
            any = true;
        }
    }
    return best;
}

/* The sum of x[0..n) in double over four independent chains: one chain of dependent adds ran
   one add per add latency (4 cycles), and the global average pools of EfficientNet-B0's
   squeeze-excitation blocks took 10% of its time at one thread. */
static double sum_run(const float *x, int64_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < n; i++) s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

static float average_window(const kiln_cpu_pool_params *p, const float *x, const axis_taps *h, const axis_taps *w)
{
    double sum = 0.0;
    const int64_t cols = w->hi - w->lo, first = w->start + w->lo * p->dil_w;
    if (p->dil_w == 1 && p->dil_h == 1 && first == 0 && cols == p->W) {
        /* Whole rows, one after the other (a global pool): one run over them all. */
        sum = sum_run(x + (h->start + h->lo) * p->W, (h->hi - h->lo) * p->W);
    } else {
        for (int64_t kh = h->lo; kh < h->hi; kh++) {
            const float *row = x + (h->start + kh * p->dil_h) * p->W;
            if (p->dil_w == 1) sum += sum_run(row + first, cols);
            else
                for (int64_t kw = w->lo; kw < w->hi; kw++) sum += row[w->start + kw * p->dil_w];
        }
    }
    int64_t count = p->count_include_pad ? h->padded * w->padded : (h->hi - h->lo) * (w->hi - w->lo);
    return count > 0 ? (float)(sum / (double)count) : 0.0f;
}

/* Rows [oh_lo, oh_hi) of one plane through window (max or average). */
static void pool_rows(const kiln_cpu_pool_params *p, const float *x, float *y, int64_t oh_lo, int64_t oh_hi,
                      float (*window)(const kiln_cpu_pool_params *, const float *, const axis_taps *,
                                      const axis_taps *))
{
    for (int64_t oh = oh_lo; oh < oh_hi; oh++) {
        float *yr = y + oh * p->OW;
        axis_taps h = axis_window(oh, p->stride_h, p->pad_top, p->pad_bottom, p->dil_h, p->KH, p->H);
        for (int64_t ow = 0; ow < p->OW; ow++) {
            axis_taps w = axis_window(ow, p->stride_w, p->pad_left, p->pad_right, p->dil_w, p->KW, p->W);
            yr[ow] = window(p, x, &h, &w);
        }
    }
}

void kiln_cpu_f32_maxpool2d__generic(const kiln_cpu_pool_params *p, const float *x, float *y, int64_t oh_lo,
                                     int64_t oh_hi)
{
    pool_rows(p, x, y, oh_lo, oh_hi, max_window);
}

/* Window taps a task must have before waking a worker pays (a tap costs about a nanosecond). */
#define POOL_GRAIN ((int64_t)1 << 15)

typedef struct pool_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_pool_params *p;
    const float *x;
    float *y;
    size_t tasks;
} pool_job;

/* Output rows [lo, hi) of all N x C x OH rows, plane by plane. */
static void pool_task(void *arg, size_t task)
{
    const pool_job *j = arg;
    const kiln_cpu_pool_params *p = j->p;
    int64_t in_plane = p->H * p->W, out_plane = p->OH * p->OW, lo, hi;
    kiln_cpu_split(p->N * p->C * p->OH, j->tasks, task, &lo, &hi);
    while (lo < hi) {
        int64_t plane = lo / p->OH, oh_lo = lo % p->OH, oh_hi = hi - plane * p->OH < p->OH ? hi - plane * p->OH : p->OH;
        const float *x = j->x + plane * in_plane;
        float *y = j->y + plane * out_plane;
        if (p->kind == KILN_CPU_POOL_MAX)
            j->kit->maxpool(p, x, y, oh_lo, oh_hi);
        else
            pool_rows(p, x, y, oh_lo, oh_hi, average_window);
        lo += oh_hi - oh_lo;
    }
}

kiln_status kiln_cpu_pool2d_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_pool_params *p = params;
    /* Y is empty: return before multiplying counts that validation bounds only as a product. */
    if (p->N == 0 || p->C == 0 || p->OH == 0 || p->OW == 0) return KILN_OK;
    pool_job j = {kit, p, in[0]->data, out[0]->data, 1};
    /* A window has at most min(K, in) taps inside the input per axis, however large the kernel
       (validation bounds it only by the padded input); the estimate is formed in double, as
       outputs times taps need not fit int64. */
    double taps = (double)(p->KH < p->H ? p->KH : p->H) * (double)(p->KW < p->W ? p->KW : p->W);
    double work = (double)(p->N * p->C * p->OH * p->OW) * taps;
    j.tasks = kiln_cpu_task_count(exec, kiln_cpu_work_units(work), POOL_GRAIN, false);
    kiln_cpu_parallel(exec, j.tasks, pool_task, &j);
    return KILN_OK;
}
