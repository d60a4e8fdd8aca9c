/* f32-conv2d-pixel-rows.c — convolutions with few output pixels, pixels as the GEMM's rows
 * (see kernel_kit.h).
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags; im2col, the microkernel and the
 * row packing come from the kit. The im2col strategy (f32-conv2d-driver.c) puts the output
 * pixels along the tile's NR columns: ResNet-18's 7x7 stage has 49 of them, two 32-wide panels
 * filled to 77%. Here the product is transposed, Y^T (pixels x M) = P (pixels x K) . W^T:
 * the pixels are A's rows (im2col panels MR wide; the microkernel runs only the rows a panel
 * has, in steps of 4, so 49 rows cost 49) and the output channels are B's columns (W packed as
 * B ahead of time, M a multiple of NR when the lowering picks this). Each tile's epilogue adds
 * the bias per column and applies ReLU; the result is transposed into Y by the kit's row packing
 * — or, with a residual, transposed first, then the residual added and the activation applied
 * to the chunk's rows of Y.
 * Precision bf16 (params bf16): W packed as bf16 pairs, P rounded to bf16 pairs by the GEMM
 * (f32-gemm-driver.c, run_bf16) into S.
 * Workspace per task: [ P: rows x K | T: rows x round_up(M, NR) | S: rows x ceil(K/2) (bf16) ]
 * floats, rows a multiple of MR
 * (all the pixels when they fit, so the weights stream once per image); the step may use fewer
 * rows per chunk (one chunk per thread), its P still whole MR panels.
 */
#include <stdatomic.h>

#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"
#include "core/check.h"


static int64_t conv_k(const kiln_cpu_conv_params *p) { return p->C * p->KH * p->KW; }

/* Floats of workspace per row of a chunk: P, T and, for bf16 filters, P's rows as bf16 pairs. */
static int64_t floats_per_row(uint32_t nr, const kiln_cpu_conv_params *p)
{
    return conv_k(p) + kiln_round_up_i64(p->M, nr) + (p->bf16 ? (conv_k(p) + 1) / 2 : 0);
}

size_t kiln_cpu_pixel_rows_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2)
{
    int64_t pixels = p->OH * p->OW, per_row = floats_per_row(nr, p);
    if (p->N == 0 || p->M == 0 || pixels == 0 || conv_k(p) == 0) return 0;
    /* All the pixels in one chunk up to twice L2 (the GEMM walks P in K blocks that fit, and
       every extra chunk reads all the weights again), else chunks of half of L2. */
    int64_t all = kiln_round_up_i64(pixels, mr), rows = all;
    if ((size_t)(all * per_row) * sizeof(float) > 2 * l2) {
        int64_t cap = (int64_t)(l2 / 2 / ((size_t)per_row * sizeof(float))) / mr * mr;
        cap = cap < (int64_t)mr ? (int64_t)mr : cap;
        rows = kiln_round_up_i64(kiln_ceil_div_i64(pixels, kiln_ceil_div_i64(pixels, cap)), mr);
    }
    return (size_t)(rows * per_row) * sizeof(float);
}

typedef struct rows_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    const kiln_cpu_exec *exec;
    int64_t rows, chunks, ranges;   /* rows per chunk, chunks per image, channel ranges per chunk */
    size_t tasks;
    atomic_int status;
} rows_job;

static void rows_task(void *arg, size_t task)
{
    rows_job *j = arg;
    const kiln_cpu_kit *kit = j->kit;
    const kiln_cpu_conv_params *p = j->p;
    const int64_t pixels = p->OH * p->OW, K = conv_k(p), ldt = kiln_round_up_i64(p->M, kit->nr);
    /* P holds whole MR panels: rows need not be a multiple of MR when the pixels are cut into
       one chunk per thread. */
    float *a = kiln_cpu_task_workspace(j->exec, task), *t = a + kiln_round_up_i64(j->rows, kit->mr) * K;
    float *s = p->bf16 ? t + j->rows * ldt : NULL;
    const size_t s_bytes = (size_t)(kiln_round_up_i64(j->rows, kit->mr) * ((K + 1) / 2)) * sizeof(float);
    int64_t lo, hi, gathered = -1;
    kiln_cpu_split(p->N * j->chunks * j->ranges, j->tasks, task, &lo, &hi);
    for (int64_t item = lo; item < hi; item++) {
        int64_t chunk_id = item / j->ranges, n = chunk_id / j->chunks, pix0 = chunk_id % j->chunks * j->rows;
        int64_t live = pixels - pix0 < j->rows ? pixels - pix0 : j->rows, c0, c1;
        if (chunk_id != gathered) {
            const float *xn = j->x + n * p->C * p->H * p->W;
            for (int64_t q = 0; q < live; q += kit->mr)
                kit->im2col(p, xn, pix0 + q, live - q < (int64_t)kit->mr ? live - q : kit->mr, kit->mr, a + q * K);
            gathered = chunk_id;
        }
        kiln_cpu_split_aligned(p->M, kit->nr, (size_t)j->ranges, (size_t)(item % j->ranges), &c0, &c1);
        if (c0 == c1) continue;
        /* With a residual the activation waits for it (after the transposition). */
        kiln_cpu_act act = j->res ? (kiln_cpu_act){.kind = KILN_CPU_ACT_NONE} : p->act;
        kiln_cpu_epilogue e = {1.0f, 1.0f, j->bias ? KILN_CPU_BIAS_PER_COL : KILN_CPU_BIAS_NONE,
                               j->bias ? j->bias + c0 : NULL, act, 0, 0};
        kiln_cpu_operand pa = {a, 0, 0, true, 0};
        kiln_cpu_operand wb = {j->w, 0, 0, p->bf16 ? KILN_CPU_PACKED_BF16 : 1, 0};
        wb.data += c0 / kit->nr * kiln_cpu_panel_words(&wb, K, kit->nr);
        kiln_status st = kiln_cpu_gemm_run(kit, live, c1 - c0, K, pa, wb, t + c0, ldt, &e, s, s ? s_bytes : 0);
        if (st != KILN_OK) {
            kiln_cpu_record_failure(&j->status, st);
            return;
        }
        /* T's rows are pixels, Y's channels: Y[c][pix0 + i] = T[i][c], a panel of width pixels. */
        float *y = j->y + (n * p->M + c0) * pixels + pix0;
        kit->pack_rows(t + c0, ldt, live, c1 - c0, (uint32_t)pixels, y);
        for (int64_t c = 0; j->res && c < c1 - c0; c++) {
            float *row = y + c * pixels;
            kit->binary(KILN_CPU_BIN_ADD, row, 1, j->res + (row - j->y), 1, row, (size_t)live);
            if (!kiln_cpu_act_is_identity(&p->act)) kit->act(&p->act, row, row, (size_t)live);
        }
    }
}

/* The busiest task's work for chunks of `rows` pixels (`chunks` per image) and `ranges` channel
   ranges per chunk: per item, its rows times its channels times K, plus the gathering of its
   chunk (KILN_GEMM_PACK_COST an element, as in the im2col strategy): a task that takes part of
   the channels still gathers all of its pixels. */
static double busiest(const rows_job *j, int64_t rows, int64_t chunks, int64_t ranges, size_t tasks)
{
    const kiln_cpu_conv_params *p = j->p;
    int64_t items = p->N * chunks * ranges, pixels = p->OH * p->OW;
    double worst = 0.0;
    for (size_t t = 0; t < tasks; t++) {
        int64_t lo, hi, c0, c1;
        double sum = 0.0;
        kiln_cpu_split(items, tasks, t, &lo, &hi);
        for (int64_t item = lo; item < hi; item++) {
            int64_t pix0 = item / ranges % chunks * rows, live = pixels - pix0 < rows ? pixels - pix0 : rows;
            kiln_cpu_split_aligned(p->M, j->kit->nr, (size_t)ranges, (size_t)(item % ranges), &c0, &c1);
            sum += (double)live * (double)conv_k(p) * ((double)(c1 - c0) + KILN_GEMM_PACK_COST);
        }
        worst = sum > worst ? sum : worst;
    }
    return worst;
}

kiln_status kiln_cpu_pixel_rows_step(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x,
                                     const float *w, const float *bias, const float *res, float *y,
                                     kiln_cpu_exec *exec)
{
    const int64_t pixels = p->OH * p->OW;
    if (p->N == 0 || p->M == 0 || pixels == 0) return KILN_OK;
    int64_t rows = (int64_t)(exec->workspace_size / ((size_t)floats_per_row(kit->nr, p) * sizeof(float))) /
                   kit->mr * kit->mr;
    if (rows < (int64_t)kit->mr || pixels > (int64_t)UINT32_MAX) return KILN_ERROR_INVALID_ARGUMENT;
    rows_job j = {.kit = kit, .p = p, .x = x, .w = w, .bias = bias, .res = res, .y = y, .exec = exec};
    double work = (double)p->N * (double)pixels * (double)conv_k(p) * (double)p->M;
    size_t max_tasks = kiln_cpu_task_count(exec, kiln_cpu_work_units(work), KILN_GEMM_TASK_GRAIN, true);
    /* Candidates: the chunks the workspace holds, their channels cut into ranges (whole NR
       panels) when there are fewer chunks than threads — each task then streams only its share
       of the weights but gathers the whole chunk — or the pixels cut into one chunk per thread
       (each task gathers only its pixels but streams all the weights). ResNet-18's 14x14
       stride-2 layer ran 1.47x faster on two threads with ranges, 1.7x with chunks. */
    int64_t split = kiln_ceil_div_i64(pixels, (int64_t)max_tasks);
    const int64_t chunk_rows[2] = {rows, split < rows ? split : rows};
    double best = -1.0;
    int64_t panels = kiln_ceil_div_i64(p->M, kit->nr);
    for (int c = 0; c < 2; c++) {
        int64_t chunks = kiln_ceil_div_i64(pixels, chunk_rows[c]);
        for (int64_t r = 1; r <= (int64_t)max_tasks && r <= panels; r++) {
            int64_t items = p->N * chunks * r;
            size_t tasks = items < (int64_t)max_tasks ? (size_t)items : max_tasks;
            double cost = busiest(&j, chunk_rows[c], chunks, r, tasks);
            if (best < 0.0 || cost < best) {
                best = cost;
                j.rows = chunk_rows[c];
                j.chunks = chunks;
                j.ranges = r;
                j.tasks = tasks;
            }
        }
    }
    atomic_init(&j.status, KILN_OK);
    kiln_cpu_parallel(exec, j.tasks, rows_task, &j);
    return (kiln_status)atomic_load(&j.status);
}
