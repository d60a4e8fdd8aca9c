/* f32-conv-taps.c — convolutions on tap lists: 3-D ones, and dilated 2-D ones (params taps = 1),
 * as GEMMs over the kit (see kernel_kit.h, cpu_ops.h).
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags; im2col and the microkernel come
 * from the kit. The filters of a group are one packed A (kiln_cpu_pack_a, MR panels) whose K runs
 * tap-major, (kd, kh, c, kw - kw_lo): each (kd, kh) pair of taps owns a contiguous block of
 * Kb = C/group * kw_n rows, which is the im2col of a one-row filter (KH = 1, KW = kw_n) over the
 * input frame the pair reads — the kit's own 2-D im2col, called once per pair.
 *
 * Tap lists. An output frame od sees the input through the depth taps [kd0, kd1) only (the
 * others read padding), and an output row oh through the row taps [kh0, kh1); output rows with
 * the same row taps form a region, and a chunk of a region's pixels gathers and multiplies only
 * the pairs of its frame's depth taps and its region's row taps: a dilated 3x3 filter at
 * dilation 24 over a 14x14 input reads one pair instead of nine. The filter columns no output
 * column ever reads the input through were left out when the filters were packed (kw_lo, kw_n:
 * a 3x3 filter at dilation 14 or more over a 14-wide input keeps only its middle column). The
 * pairs of a chunk are a K range of the filters when its row taps are all of KH, else one range
 * per depth tap: one GEMM per range, each after the first adding into Y (epilogue accumulate),
 * the bias with the first and the activation with the last (with a residual, has_residual: the
 * activation after it is added to the chunk's rows of Y).
 *
 * Depth without a 3-D im2col: the frame od reads through depth tap kd is input frame
 * id = od * stride_d - pad_front + kd * dil_d, and the im2col runs on the frame's first row with
 * a height of D * H, so its channel stride is the tensor's (D * H * W). Its row check no longer
 * sees the frame's edges, which is why regions are exact: every row of a region reads the input,
 * never padding, through each of its row taps (columns the im2col still zeroes itself).
 *
 * Workspace per task: one chunk, K x cols floats (K of all the taps, cols a multiple of NR),
 * sized from L2; cols is recovered from the workspace size at run time. Threads take runs of
 * (image, group, frame, chunk, output-channel range) items of about equal work (task_items);
 * no split cuts K, so no result bit depends on the thread count.
 */
#include <stdatomic.h>

#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"
#include "core/check.h"

/* Rows of K of one (kd, kh) pair of taps, and of all of them. */
static int64_t pair_k(const kiln_cpu_conv_params *p) { return p->C / p->group * p->kw_n; }
static int64_t taps_k(const kiln_cpu_conv_params *p) { return p->KD * p->KH * pair_k(p); }

size_t kiln_cpu_conv_taps_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2)
{
    (void)mr;
    int64_t pixels = p->OH * p->OW, K = taps_k(p);
    if (p->N == 0 || p->M == 0 || pixels == 0 || p->OD == 0 || K == 0) return 0;
    /* Half of L2 as the existing im2col chunks take it; but at least 8 NR panels when the
       pixels have them, or a large K (960 channels x 9 taps) would stream the whole filter
       block once per NR panel of pixels — the GEMM blocks K itself, so its B block stays
       kc x cols. */
    int64_t all = kiln_round_up_i64(pixels, nr);
    int64_t cols = (int64_t)(l2 / 2 / ((size_t)K * sizeof(float))) / nr * nr;
    cols = kiln_max_i64(cols, kiln_min_i64(8 * (int64_t)nr, all));
    cols = kiln_max_i64((int64_t)nr, kiln_min_i64(cols, all));
    return (size_t)(K * cols) * sizeof(float);
}

/* Output rows [oh0, oh1) that read the input through the same row taps [kh0, kh1). */
typedef struct taps_region {
    int64_t oh0, oh1, kh0, kh1;
} taps_region;

static void row_taps(const kiln_cpu_conv_params *p, int64_t oh, int64_t *lo, int64_t *hi)
{
    kiln_window_taps(oh * p->stride_h - p->pad_top, p->dil_h, p->KH, p->H, lo, hi);
}

static taps_region region_at(const kiln_cpu_conv_params *p, int64_t oh)
{
    taps_region r = {.oh0 = oh};
    row_taps(p, oh, &r.kh0, &r.kh1);
    for (r.oh1 = oh + 1; r.oh1 < p->OH; r.oh1++) {
        int64_t lo, hi;
        row_taps(p, r.oh1, &lo, &hi);
        if (lo != r.kh0 || hi != r.kh1) break;
    }
    return r;
}

/* Chunks of at most cols pixels of region r (whole rows of OW pixels). */
static int64_t region_chunks(const kiln_cpu_conv_params *p, const taps_region *r, int64_t cols)
{
    return kiln_ceil_div_i64((r->oh1 - r->oh0) * p->OW, cols);
}

/* Chunk j of a frame: its region and its first pixel (of the frame) and count. */
static taps_region chunk_at(const kiln_cpu_conv_params *p, int64_t cols, int64_t j, int64_t *pix0, int64_t *live)
{
    taps_region r = region_at(p, 0);
    for (int64_t n = region_chunks(p, &r, cols); j >= n; n = region_chunks(p, &r, cols)) {
        j -= n;
        r = region_at(p, r.oh1);
    }
    int64_t first = r.oh0 * p->OW + j * cols, end = r.oh1 * p->OW;
    *pix0 = first;
    *live = kiln_min_i64(cols, end - first);
    return r;
}

typedef struct taps_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_conv_params *p;
    const float *x, *w, *bias, *res;  /* res: NULL, or added before the activation */
    float *y;
    const kiln_cpu_exec *exec;
    int64_t cols;                   /* pixels per chunk, a multiple of NR */
    int64_t frame_chunks;           /* chunks of one output frame */
    int64_t tm;                     /* output-channel ranges per chunk (whole MR panels) */
    size_t tasks;
    atomic_int status;
} taps_job;

/* The chunk's pairs of taps into buf: for each NR panel of its pixels, the pairs (kd, kh) in
   order, each Kb rows of the im2col of a one-row filter over input frame id. */
static void gather(const taps_job *j, const float *xg, int64_t od, int64_t kd0, int64_t kd1, const taps_region *r,
                   int64_t pix0, int64_t live, float *buf)
{
    const kiln_cpu_conv_params *p = j->p;
    const kiln_cpu_kit *kit = j->kit;
    const int64_t kb = pair_k(p), nkh = r->kh1 - r->kh0, kr = (kd1 - kd0) * nkh * kb;
    kiln_cpu_conv_params row = {.N = 1, .C = p->C / p->group, .H = p->D * p->H, .W = p->W, .M = 1, .OH = p->OH,
                                .OW = p->OW, .KH = 1, .KW = p->kw_n, .stride_h = p->stride_h,
                                .stride_w = p->stride_w, .pad_left = p->pad_left - p->kw_lo * p->dil_w,
                                .dil_h = 1, .dil_w = p->dil_w, .group = 1};
    for (int64_t q = 0; q < live; q += kit->nr) {
        float *panel = buf + q * kr;
        for (int64_t kd = kd0; kd < kd1; kd++) {
            const float *frame = xg + (od * p->stride_d - p->pad_front + kd * p->dil_d) * p->H * p->W;
            for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
                row.pad_top = p->pad_top - kh * p->dil_h;
                kit->im2col(&row, frame, pix0 + q, kiln_min_i64(kit->nr, live - q), kit->nr,
                            panel + ((kd - kd0) * nkh + kh - r->kh0) * kb * kit->nr);
            }
        }
    }
}

/* Rows [r0, r1) of the group's output channels over the chunk: one GEMM per K range of its
   pairs (see the file comment). */
static kiln_status multiply(const taps_job *j, int64_t g, int64_t kd0, int64_t kd1, const taps_region *r, int64_t r0,
                            int64_t r1, const float *buf, int64_t live, float *y)
{
    const kiln_cpu_conv_params *p = j->p;
    const kiln_cpu_kit *kit = j->kit;
    const int64_t mg = p->M / p->group, K = taps_k(p), kb = pair_k(p), nkh = r->kh1 - r->kh0;
    const int64_t kr = (kd1 - kd0) * nkh * kb, ldy = p->OD * p->OH * p->OW;
    const float *a0 = j->w + (size_t)g * (kiln_cpu_pack_a_size(mg, K, kit->mr) / sizeof(float)) +
                      (size_t)(r0 / kit->mr * K * kit->mr);
    /* With a residual the activation waits for it. */
    const kiln_cpu_act act = j->res ? (kiln_cpu_act){.kind = KILN_CPU_ACT_NONE} : p->act;
    kiln_cpu_epilogue e = {1.0f, 1.0f, j->bias ? KILN_CPU_BIAS_PER_ROW : KILN_CPU_BIAS_NONE,
                           j->bias ? j->bias + g * mg + r0 : NULL, act, 0, 0};
    kiln_cpu_operand none = {buf, 0, 0, true, 0};
    kiln_status st = KILN_OK;
    if (kr == 0) st = kiln_cpu_gemm_run(kit, r1 - r0, live, 0, none, none, y, ldy, &e, NULL, 0);
    /* All row taps: the pairs of the depth taps [kd0, kd1) are one K range; else one each. */
    const bool whole = nkh == p->KH;
    const int64_t runs = whole ? 1 : kd1 - kd0, len = whole ? kr : nkh * kb;
    for (int64_t i = 0; i < runs && kr > 0 && st == KILN_OK; i++) {
        int64_t a_k = whole ? kd0 * p->KH * kb : ((kd0 + i) * p->KH + r->kh0) * kb, b_k = i * len;
        kiln_cpu_operand a = {a0 + a_k * kit->mr, 0, 0, true, K};
        kiln_cpu_operand b = {buf + b_k * kit->nr, 0, 0, true, kr};
        kiln_cpu_epilogue ei = e;
        if (i > 0) ei.accumulate = 1, ei.bias_kind = KILN_CPU_BIAS_NONE, ei.bias = NULL;
        if (i + 1 < runs) ei.act = (kiln_cpu_act){.kind = KILN_CPU_ACT_NONE};
        st = kiln_cpu_gemm_run(kit, r1 - r0, live, len, a, b, y, ldy, &ei, NULL, 0);
    }
    for (int64_t i = 0; j->res && st == KILN_OK && i < r1 - r0; i++) {
        float *row = y + i * ldy;
        kit->binary(KILN_CPU_BIN_ADD, row, 1, j->res + (row - j->y), 1, row, (size_t)live);
        if (!kiln_cpu_act_is_identity(&p->act)) kit->act(&p->act, row, row, (size_t)live);
    }
    return st;
}

/* Task t's run of items [*lo, *hi): the items in order, each owned by the task its middle of
   work falls in, so the runs are contiguous and about equal in work. An item's work is its
   padded pixels times its pairs' rows of K (one for a chunk of bias alone) times its output
   channels plus KILN_GEMM_PACK_COST a gathered element, as the im2col strategy counts it: a
   dilated conv over 14x14 has three chunks of 28, 140 and 28 pixels through 6, 3 and 6 pairs,
   which cut by count left one of two threads 588 units and the other 168. */
static void task_items(const taps_job *j, size_t task, int64_t *lo, int64_t *hi)
{
    const kiln_cpu_conv_params *p = j->p;
    const int64_t frames = p->N * p->group * p->OD, mg = p->M / p->group, kb = pair_k(p);
    double total = 0.0, done = 0.0;
    *lo = *hi = -1;
    for (int pass = 0; pass < 2; pass++) {
        int64_t item = 0;
        for (int64_t f = 0; f < frames; f++) {
            int64_t kd0, kd1;
            kiln_window_taps(f % p->OD * p->stride_d - p->pad_front, p->dil_d, p->KD, p->D, &kd0, &kd1);
            for (taps_region r = region_at(p, 0);; r = region_at(p, r.oh1)) {
                int64_t kr = kiln_max_i64((kd1 - kd0) * (r.kh1 - r.kh0) * kb, 1), px = (r.oh1 - r.oh0) * p->OW;
                for (int64_t q = 0; q < px; q += j->cols) {
                    double cols = (double)kiln_round_up_i64(kiln_min_i64(j->cols, px - q), j->kit->nr);
                    for (int64_t range = 0; range < j->tm; range++, item++) {
                        int64_t r0, r1;
                        kiln_cpu_split_aligned(mg, j->kit->mr, (size_t)j->tm, (size_t)range, &r0, &r1);
                        double w = cols * (double)kr * ((double)(r1 - r0) + KILN_GEMM_PACK_COST);
                        if (pass == 1) {
                            size_t owner = total > 0.0 ? (size_t)((done + w / 2) / total * (double)j->tasks) : 0;
                            if (owner >= j->tasks) owner = j->tasks - 1;
                            if (owner == task && *lo < 0) *lo = item;
                            if (owner <= task) *hi = item + 1;
                        }
                        done += w;
                    }
                }
                if (r.oh1 == p->OH) break;
            }
        }
        total = done;
        done = 0.0;
    }
    if (*lo < 0) *lo = *hi = 0;
}

static void taps_task(void *arg, size_t task)
{
    taps_job *j = arg;
    const kiln_cpu_conv_params *p = j->p;
    const int64_t mg = p->M / p->group, cg = p->C / p->group, pixels = p->OH * p->OW;
    float *buf = kiln_cpu_task_workspace(j->exec, task);
    int64_t lo, hi, gathered = -1;
    task_items(j, task, &lo, &hi);
    for (int64_t item = lo; item < hi; item++) {
        int64_t chunk_id = item / j->tm, frame = chunk_id / j->frame_chunks;
        int64_t n = frame / (p->group * p->OD), g = frame / p->OD % p->group, od = frame % p->OD;
        int64_t pix0, live, kd0, kd1, r0, r1;
        taps_region r = chunk_at(p, j->cols, chunk_id % j->frame_chunks, &pix0, &live);
        kiln_window_taps(od * p->stride_d - p->pad_front, p->dil_d, p->KD, p->D, &kd0, &kd1);
        if (chunk_id != gathered && kd1 > kd0 && r.kh1 > r.kh0 && p->kw_n > 0) {
            gather(j, j->x + (n * p->C + g * cg) * p->D * p->H * p->W, od, kd0, kd1, &r, pix0, live, buf);
            gathered = chunk_id;
        }
        kiln_cpu_split_aligned(mg, j->kit->mr, (size_t)j->tm, (size_t)(item % j->tm), &r0, &r1);
        if (r0 == r1) continue;
        float *y = j->y + ((n * p->M + g * mg + r0) * p->OD + od) * pixels + pix0;
        kiln_status st = multiply(j, g, kd0, kd1, &r, r0, r1, buf, live, y);
        if (st != KILN_OK) {
            kiln_cpu_record_failure(&j->status, st);
            return;
        }
    }
}

kiln_status kiln_cpu_conv_taps_step(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x,
                                    const float *w, const float *bias, const float *res, float *y,
                                    kiln_cpu_exec *exec)
{
    const int64_t pixels = p->OH * p->OW, K = taps_k(p);
    if (p->N == 0 || p->M == 0 || pixels == 0 || p->OD == 0) return KILN_OK;
    taps_job j = {.kit = kit, .p = p, .x = x, .w = w, .bias = bias, .res = res, .y = y, .exec = exec};
    /* No taps at all (every filter column reads padding only): chunks of whole frames, no
       workspace, Y the bias. */
    j.cols = K == 0 ? pixels : (int64_t)(exec->workspace_size / ((size_t)K * sizeof(float))) / kit->nr * kit->nr;
    if (j.cols < 1) return KILN_ERROR_INVALID_ARGUMENT;
    for (taps_region r = region_at(p, 0);; r = region_at(p, r.oh1)) {
        j.frame_chunks += region_chunks(p, &r, j.cols);
        if (r.oh1 == p->OH) break;
    }
    const int64_t chunks = p->N * p->group * p->OD * j.frame_chunks;
    double work = (double)(p->N * p->M * p->OD * pixels) * (double)kiln_max_i64(K, 1);
    size_t max_tasks = kiln_cpu_task_count(exec, kiln_cpu_work_units(work), KILN_GEMM_TASK_GRAIN, K > 0);
    /* Fewer than 2 chunks a thread: the output channels are cut too (each task gathering its
       chunks again), so that the tasks can be cut about equal (task_items). */
    j.tm = chunks >= 2 * (int64_t)max_tasks || max_tasks == 1
               ? 1
               : kiln_min_i64(kiln_ceil_div_i64(2 * (int64_t)max_tasks, chunks),
                              kiln_ceil_div_i64(p->M / p->group, kit->mr));
    j.tasks = (size_t)kiln_min_i64(chunks * j.tm, (int64_t)max_tasks);
    atomic_init(&j.status, KILN_OK);
    kiln_cpu_parallel(exec, j.tasks, taps_task, &j);
    return (kiln_status)atomic_load(&j.status);
}
