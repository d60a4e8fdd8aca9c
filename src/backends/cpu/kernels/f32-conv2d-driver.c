/* f32-conv2d-driver.c — 2-D convolution as GEMMs over the kit (see kernel_kit.h, cpu_ops.h).
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags. Six strategies, fixed by the
 * params alone (Winograd, pixels as rows or tap lists when the lowering set them:
 * f32-conv2d-winograd.c, f32-conv2d-pixel-rows.c, f32-conv-taps.c):
 *  - depthwise (group == C == M): the kit's direct per-plane kernel;
 *  - pointwise (1x1, unit strides, no padding): per (image, group) one GEMM whose B is the
 *    input planes themselves, Y_g (M/g x HW) = W_g (M/g x C/g) . X_g (C/g x HW);
 *  - otherwise im2col in chunks of output pixels, written by the kit (kiln_cpu_im2col_fn)
 *    straight into the NR-panel layout the microkernel reads, so the GEMM packs nothing: W_g is
 *    packed ahead of time (A panels).
 * Workspace: the GEMM's B block (pointwise) or one im2col chunk of K x cols floats, where cols
 * (a multiple of NR) is sized from L2 and recovered from the workspace size at run time.
 * Packed W: group g's panels start at g * kiln_cpu_pack_a_size(M/g, C/g*KH*KW, MR) bytes.
 * Threads (kernel_kit.h) split the output: depthwise by planes, pointwise through
 * kiln_cpu_gemm_batch, im2col by (image, group, pixel chunk, output-channel range) items, each
 * task gathering into its own workspace slot; no split cuts K, so no result bit changes.
 */
#include <stdatomic.h>
#include <string.h>

#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"
#include "core/check.h"

/* Multiply-adds a depthwise task must have before waking a worker pays: the direct loop runs
   about one multiply-add a nanosecond, the GEMM-based strategies tens (KILN_GEMM_TASK_GRAIN,
   8x more). */
#define DEPTHWISE_GRAIN ((int64_t)1 << 15)

bool kiln_cpu_conv_is_pointwise(const kiln_cpu_conv_params *p)
{
    return p->KH == 1 && p->KW == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
           p->OH == p->H && p->OW == p->W;
}

static int64_t conv_k(const kiln_cpu_conv_params *p) { return p->C / p->group * p->KH * p->KW; }

/* Workspace floats per im2col column: the K gathered values and, with bf16 filters, their
   bf16 pairs for the GEMM (f32-gemm-driver.c, run_bf16_a). */
static int64_t floats_per_col(const kiln_cpu_conv_params *p)
{
    return conv_k(p) + (p->bf16 ? (conv_k(p) + 1) / 2 : 0);
}

/* Floats of group g's packed filters, and of one MR panel of them: f32 K-row panels, or bf16
   pair panels (ceil(K/2) rows of words). */
static size_t filter_group_floats(const kiln_cpu_conv_params *p, int64_t K, uint32_t mr)
{
    size_t bytes = p->bf16 ? kiln_cpu_pack_b_bf16_size(K, p->M / p->group, mr) : kiln_cpu_pack_a_size(p->M / p->group, K, mr);
    return bytes / sizeof(float);
}
static int64_t filter_panel_floats(const kiln_cpu_conv_params *p, int64_t K, uint32_t mr)
{
    return (p->bf16 ? (K + 1) / 2 : K) * (int64_t)mr;
}

size_t kiln_cpu_conv_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2)
{
    if (p->taps) return kiln_cpu_conv_taps_workspace(mr, nr, p, l2);
    int64_t pixels = p->OH * p->OW, K = conv_k(p);
    if (p->depthwise || p->N == 0 || p->M == 0 || pixels == 0 || K == 0) return 0;
    if (p->winograd) return kiln_cpu_winograd_workspace(mr, nr, p, l2);
    if (p->pixel_rows) return kiln_cpu_pixel_rows_workspace(mr, nr, p, l2);
    if (kiln_cpu_conv_is_pointwise(p)) return kiln_cpu_gemm_workspace(mr, nr, p->M / p->group, pixels, K, true, false, l2);
    int64_t cols = (int64_t)(l2 / 2 / ((size_t)K * sizeof(float))) / nr * nr;
    cols = cols < (int64_t)nr ? (int64_t)nr : kiln_min_i64(cols, kiln_round_up_i64(pixels, nr));
    return (size_t)(floats_per_col(p) * cols) * sizeof(float);
}

/* ---- im2col strategy: tasks over (image, group, pixel chunk, row range) ---- */

typedef struct im2col_cut {
    int64_t panels;                 /* NR panels of output pixels per chunk */
    int64_t chunks;                 /* chunks per (image, group) */
    int64_t tm;                     /* ranges of the group's output channels (whole MR panels) */
    size_t tasks;
} im2col_cut;

/* The cut whose busiest task has the least work: multiply-adds of its (padded) tiles plus
   KILN_GEMM_PACK_COST per gathered element. Chunks are balanced (every chunk within one panel of the
   others) and no larger than one workspace slot holds (ws_panels); on one thread the least
   padding wins. */
static im2col_cut choose_im2col_cut(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, int64_t ws_panels,
                                    size_t max_tasks)
{
    int64_t K = conv_k(p), pp = (p->OH * p->OW + kit->nr - 1) / kit->nr, pmg = (p->M / p->group + kit->mr - 1) / kit->mr;
    int64_t first = (pp + ws_panels - 1) / ws_panels, images = p->N * p->group;
    im2col_cut best = {0};
    double best_cost = -1.0;
    for (int64_t tm = 1; tm <= (int64_t)max_tasks && tm <= pmg; tm++) {
        /* Up to 16 chunks per task beyond the fewest: finer chunks even out the tasks (25
           panels in 9 chunks of 3 left one of two threads a chunk short; ResNet-18's 28x28
           layers ran 1.45x faster on two threads, now 1.9x), and a bound keeps the search
           short for large images. */
        for (int64_t c = first; c <= pp && c <= first + 16 * (int64_t)max_tasks; c++) {
            int64_t panels = (pp + c - 1) / c, chunks = (pp + panels - 1) / panels;
            int64_t items = images * chunks * tm;
            size_t tasks = items < (int64_t)max_tasks ? (size_t)items : max_tasks;
            double item = (double)K * (double)(panels * kit->nr) *
                          (KILN_GEMM_PACK_COST + (double)((pmg + tm - 1) / tm * kit->mr));
            double cost = (double)((items + (int64_t)tasks - 1) / (int64_t)tasks) * item;
            if (best_cost < 0.0 || cost < best_cost) {
                best_cost = cost;
                best = (im2col_cut){panels, chunks, tm, tasks};
            }
        }
    }
    return best;
}

typedef struct conv_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_conv_params *p;
    const float *x, *w, *bias;
    float *y;
    const kiln_cpu_exec *exec;
    im2col_cut cut;
    atomic_int status;
} conv_job;

/* Task t: its run of items, gathering a chunk into its own slot only when the previous item
   did not leave that very chunk there. */
static void im2col_task(void *arg, size_t task)
{
    conv_job *j = arg;
    const kiln_cpu_kit *kit = j->kit;
    const kiln_cpu_conv_params *p = j->p;
    int64_t pixels = p->OH * p->OW, K = conv_k(p), mg = p->M / p->group, cg = p->C / p->group;
    int64_t per_image = j->cut.chunks * j->cut.tm, lo, hi, gathered = -1;
    size_t w_group = filter_group_floats(p, K, kit->mr);
    float *buf = kiln_cpu_task_workspace(j->exec, task);
    /* bf16 filters: the chunk's bf16 pairs after its f32 columns (run_bf16_a). */
    const int64_t cols = j->cut.panels * kit->nr;
    float *pairs = p->bf16 ? buf + K * cols : NULL;
    const size_t pairs_bytes = (size_t)((K + 1) / 2 * cols) * sizeof(float);
    kiln_cpu_split(p->N * p->group * per_image, j->cut.tasks, task, &lo, &hi);
    for (int64_t item = lo; item < hi; item++) {
        int64_t image = item / per_image, chunk = item % per_image / j->cut.tm, range = item % j->cut.tm;
        int64_t n = image / p->group, g = image % p->group, r0, r1;
        int64_t pix0 = chunk * j->cut.panels * kit->nr;
        int64_t live = kiln_min_i64(j->cut.panels * kit->nr, pixels - pix0);
        if (item / j->cut.tm != gathered) {
            const float *xg = j->x + (n * p->C + g * cg) * p->H * p->W;
            for (int64_t q = 0; q < live; q += kit->nr)
                kit->im2col(p, xg, pix0 + q, kiln_min_i64(kit->nr, live - q), kit->nr, buf + q * K);
            gathered = item / j->cut.tm;
        }
        kiln_cpu_split_aligned(mg, kit->mr, (size_t)j->cut.tm, (size_t)range, &r0, &r1);
        if (r0 == r1) continue;
        kiln_cpu_epilogue e = {1.0f, 1.0f, j->bias ? KILN_CPU_BIAS_PER_ROW : KILN_CPU_BIAS_NONE,
                               j->bias ? j->bias + g * mg + r0 : NULL, p->act, 0, 0};
        kiln_cpu_operand a = {j->w + (size_t)g * w_group + (size_t)(r0 / kit->mr * filter_panel_floats(p, K, kit->mr)),
                              0, 0, p->bf16 ? KILN_CPU_PACKED_BF16 : 1, 0};
        kiln_cpu_operand b = {buf, 0, 0, true, 0};
        float *y = j->y + (n * p->M + g * mg + r0) * pixels + pix0;
        kiln_status st = kiln_cpu_gemm_run(kit, r1 - r0, live, K, a, b, y, pixels, &e, pairs, pairs ? pairs_bytes : 0);
        if (st != KILN_OK) {
            kiln_cpu_record_failure(&j->status, st);
            return;
        }
    }
}

/* ---- pointwise strategy: one GEMM per (image, group), shared out by kiln_cpu_gemm_batch ---- */

static void pointwise_problem(const void *src, int64_t image, kiln_cpu_gemm_problem *out)
{
    const conv_job *j = src;
    const kiln_cpu_conv_params *p = j->p;
    int64_t n = image / p->group, g = image % p->group, cg = p->C / p->group, mg = p->M / p->group;
    int64_t in_plane = p->H * p->W, pixels = p->OH * p->OW, K = conv_k(p);
    size_t w_group = filter_group_floats(p, K, j->kit->mr);
    *out = (kiln_cpu_gemm_problem){
        .M = mg, .N = pixels, .K = K,
        .a = {j->w + (size_t)g * w_group, 0, 0, p->bf16 ? KILN_CPU_PACKED_BF16 : 1, 0},
        .b = {j->x + (n * p->C + g * cg) * in_plane, in_plane, 1, false, 0},
        .y = j->y + (n * p->M + g * mg) * pixels,
        .ldy = pixels,
        .e = {1.0f, 1.0f, j->bias ? KILN_CPU_BIAS_PER_ROW : KILN_CPU_BIAS_NONE, j->bias ? j->bias + g * mg : NULL,
              p->act, 0, 0},
    };
}

/* ---- depthwise strategy: tasks over runs of (image, channel) planes ---- */

static void depthwise_task(void *arg, size_t task)
{
    conv_job *j = arg;
    const kiln_cpu_conv_params *p = j->p;
    int64_t in_plane = p->H * p->W, out_plane = p->OH * p->OW, taps = p->KH * p->KW, lo, hi;
    kiln_cpu_split(p->N * p->C, j->cut.tasks, task, &lo, &hi);
    for (int64_t plane = lo; plane < hi; plane++) {
        int64_t c = plane % p->C;
        float *yc = j->y + plane * out_plane;
        /* The kernel applies p->act too, in registers. */
        j->kit->dwconv(p, j->x + plane * in_plane, j->w + c * taps, j->bias ? j->bias[c] : 0.0f, yc);
    }
}

kiln_status kiln_cpu_conv2d_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_conv_params *p = params;
    conv_job j = {.kit = kit, .p = p, .x = in[0]->data, .w = in[1]->data, .y = out[0]->data, .exec = exec};
    j.bias = p->has_bias ? in[2]->data : NULL;
    atomic_init(&j.status, KILN_OK);
    if (p->taps)
        return kiln_cpu_conv_taps_step(kit, p, j.x, j.w, j.bias, p->has_residual ? in[3]->data : NULL, j.y, exec);
    int64_t pixels = p->OH * p->OW, K = conv_k(p);
    /* Y is empty: return before any loop whose other bounds validation leaves unchecked. */
    if (p->N == 0 || p->M == 0 || pixels == 0) return KILN_OK;
    if (p->depthwise) {
        double work = (double)(p->N * p->C * pixels) * (double)(p->KH * p->KW);
        j.cut.tasks = kiln_cpu_task_count(exec, kiln_cpu_work_units(work), DEPTHWISE_GRAIN, false);
        kiln_cpu_parallel(exec, j.cut.tasks, depthwise_task, &j);
        return KILN_OK;
    }
    if (p->winograd && K > 0)
        return kiln_cpu_winograd_step(kit, p, j.x, j.w, j.bias, p->has_residual ? in[3]->data : NULL, j.y, exec);
    if (p->pixel_rows && K > 0)
        return kiln_cpu_pixel_rows_step(kit, p, j.x, j.w, j.bias, p->has_residual ? in[3]->data : NULL, j.y, exec);
    /* With K == 0 the GEMM only writes the bias: nothing to gather. */
    if (kiln_cpu_conv_is_pointwise(p) || K == 0) return kiln_cpu_gemm_batch(kit, p->N * p->group, pointwise_problem, &j, exec);
    int64_t ws_panels = (int64_t)(exec->workspace_size / ((size_t)(floats_per_col(p) * kit->nr) * sizeof(float)));
    if (ws_panels < 1) return KILN_ERROR_INVALID_ARGUMENT;
    double work = (double)(p->N * p->M * pixels) * (double)K;
    size_t max_tasks = kiln_cpu_task_count(exec, kiln_cpu_work_units(work), KILN_GEMM_TASK_GRAIN, true);
    j.cut = choose_im2col_cut(kit, p, ws_panels, max_tasks);
    kiln_cpu_parallel(exec, j.cut.tasks, im2col_task, &j);
    return (kiln_status)atomic_load(&j.status);
}
