/* f32-conv2d-winograd.c — 3x3 convolutions by Winograd F(2x2, 3x3) (see kernel_kit.h).
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags; the transforms and the GEMM
 * microkernel come from the kit. Each 2x2 block of outputs (a tile) costs 16 multiplies per
 * input channel instead of 36: the input patches are transformed (V = B^T d B, 16 values per
 * tile and channel), multiplied as 16 GEMMs M_pos (M x tiles) = U_pos (M x C, the filters
 * transformed at compile time) . V_pos (C x tiles), and transformed back (Y = A^T M A). The
 * work is cut into chunks of tiles (a multiple of NR, sized so V and M stay within half of L2 —
 * or within 4 x L2 when the filters themselves pass half of L2, see kiln_cpu_winograd_workspace),
 * and a chunk's output channels into ranges when there are fewer chunks than threads.
 *
 * Two orientations of the GEMMs. Tiles as columns (NR panels of tiles, U as A panels of MR
 * output channels), or — params pixel_rows — tiles as rows, M_pos^T (tiles x M) = V_pos^T .
 * U_pos^T: V in MR panels of tiles, U packed as B (NR panels of channels), each product
 * transposed into M by the kit's row packing. Few tiles fill NR-wide panels poorly (ResNet-18's
 * 14x14 layers: 49 tiles in 64 columns), while the microkernel runs only the rows a panel has,
 * in steps of 4.
 * Precision bf16 (params bf16): U as bf16 pair panels (for NR with the tiles as rows, else for
 * MR), each V_pos rounded to bf16 pairs by the GEMM into S.
 * Workspace per task: [ V: 16 x C x TC | M: 16 x M x TC | T: TC x round_up(M, NR) (rows only) |
 * S: TC x ceil(C/2) (bf16 only) ] floats, TC tiles per chunk (a multiple of NR, or of MR for
 * rows).
 */
#include <stdatomic.h>

#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"
#include "core/check.h"


static int64_t tiles_of(const kiln_cpu_conv_params *p) { return kiln_ceil_div_i64(p->OH, 2) * kiln_ceil_div_i64(p->OW, 2); }

/* Bytes of workspace per tile of a chunk: V, M, and with the tiles as rows T (plus, for bf16
   filters, V_pos's row as bf16 pairs). */
static size_t bytes_per_tile(uint32_t nr, const kiln_cpu_conv_params *p)
{
    int64_t t = p->pixel_rows ? kiln_ceil_div_i64(p->M, nr) * nr : 0, s = p->bf16 ? (p->C + 1) / 2 : 0;
    return (size_t)(16 * (p->C + p->M) + t + s) * sizeof(float);
}

/* The tile panel width: V's panels of tiles are NR columns, or MR rows. */
static uint32_t tile_unit(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p) { return p->pixel_rows ? mr : nr; }

size_t kiln_cpu_winograd_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2)
{
    int64_t tiles = tiles_of(p), unit = tile_unit(mr, nr, p);
    if (p->N == 0 || p->M == 0 || tiles == 0) return 0;
    /* Chunks of half of L2 keep V and M there; but every chunk reads all the filters again, so
       when those pass half of L2 themselves (ResNet-18's 28x28 to 7x7 layers: 1, 4 and 16 MiB)
       a chunk may take up to four times L2: V and M then stream from L3 one position at a time,
       and the filters are read once or twice per image instead of 9, 5 and 2 times (the 7x7
       layer at two threads: 1.04 -> 0.75 ms; ResNet-18 26.6 -> 25.4 ms at one thread, 14.8 ->
       13.85 at two). */
    double filters = 16.0 * (double)p->C * (double)p->M * sizeof(float);
    size_t budget = filters > (double)(l2 / 2) ? 4 * l2 : l2 / 2;
    int64_t tc = (int64_t)(budget / bytes_per_tile(nr, p)) / unit * unit, all = kiln_ceil_div_i64(tiles, unit) * unit;
    tc = tc < unit ? unit : tc > all ? all : tc;
    return (size_t)tc * bytes_per_tile(nr, p);
}

typedef struct wino_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_conv_params *p;
    const float *x, *u, *bias, *res;
    float *y;
    const kiln_cpu_exec *exec;
    int64_t tc, chunks, ranges;     /* tiles per chunk, chunks per image, channel ranges per chunk */
    uint32_t unit, channel_unit;    /* tile panel width; channel range granularity (MR, or NR) */
    size_t tasks;
    atomic_int status;
} wino_job;

/* The 16 products of a chunk for output channels [r0, r1), into M (through T with the tiles as
   rows; S: V_pos as bf16 pairs, for bf16 filters). */
static kiln_status chunk_products(const wino_job *j, const float *v, float *m, float *t, float *s, int64_t live,
                                  int64_t r0, int64_t r1)
{
    const kiln_cpu_kit *kit = j->kit;
    const kiln_cpu_conv_params *p = j->p;
    const int64_t C = p->C, M = p->M, tc = j->tc, ldt = kiln_ceil_div_i64(M, kit->nr) * kit->nr;
    const uint32_t w = p->pixel_rows ? kit->nr : kit->mr; /* U's panel width */
    const size_t u_bytes = p->bf16 ? kiln_cpu_pack_b_bf16_size(C, M, w) : kiln_cpu_pack_a_size(M, C, w);
    const size_t u_stride = u_bytes / sizeof(float);
    const size_t s_bytes = (size_t)(tc * ((C + 1) / 2)) * sizeof(float);
    const size_t v_stride = (size_t)(C * tc), m_stride = (size_t)(M * tc);
    kiln_cpu_epilogue e = {1.0f, 1.0f, KILN_CPU_BIAS_NONE, NULL, {.kind = KILN_CPU_ACT_NONE}, 0, 0};
    for (int pos = 0; pos < 16; pos++) {
        kiln_cpu_operand vo = {v + pos * v_stride, 0, 0, true, 0}, uo = {j->u + pos * u_stride, 0, 0, true, 0};
        if (p->bf16) uo.packed = KILN_CPU_PACKED_BF16;
        uo.data += r0 / w * kiln_cpu_panel_words(&uo, C, w);
        kiln_status st;
        if (!p->pixel_rows) {
            st = kiln_cpu_gemm_run(kit, r1 - r0, live, C, uo, vo, m + pos * m_stride + r0 * tc, tc, &e, s,
                                   s ? s_bytes : 0);
        } else {
            st = kiln_cpu_gemm_run(kit, live, r1 - r0, C, vo, uo, t + r0, ldt, &e, s, s ? s_bytes : 0);
            /* T's rows are tiles, M's channels: M_pos[c][jj] = T[jj][c]. */
            if (st == KILN_OK) kit->pack_rows(t + r0, ldt, live, r1 - r0, (uint32_t)tc, m + pos * m_stride + r0 * tc);
        }
        if (st != KILN_OK) return st;
    }
    return KILN_OK;
}

/* With whole chunks per task (ranges == 1) each task takes an even share of the N x panels tile
   panels (panels of `unit` tiles), in chunks of at most tc tiles within one image: the chunk
   starting at panel q of the share [q, hi) — its image, first tile and tiles — and the panel
   after it. Equal chunks shared out whole left ResNet-18's 56x56 layers (13 chunks of 64 tiles)
   7 : 6 on two threads. */
static int64_t next_chunk(const wino_job *j, int64_t tiles, int64_t q, int64_t hi, int64_t *n, int64_t *t0,
                          int64_t *live)
{
    int64_t panels = kiln_ceil_div_i64(tiles, j->unit), end = q + j->tc / j->unit;
    *n = q / panels;
    if (end > (*n + 1) * panels) end = (*n + 1) * panels;
    if (end > hi) end = hi;
    *t0 = q % panels * j->unit;
    int64_t stop = (end - *n * panels) * j->unit;
    *live = (stop < tiles ? stop : tiles) - *t0;
    return end;
}

/* One chunk of image n, tiles [t0, t0 + live), output channels [r0, r1): input transform (unless
   the task's V already holds it), the 16 products, output transform. */
static kiln_status run_chunk(const wino_job *j, float *ws, int64_t n, int64_t t0, int64_t live, int64_t r0, int64_t r1,
                             bool transform)
{
    const kiln_cpu_kit *kit = j->kit;
    const kiln_cpu_conv_params *p = j->p;
    const int64_t C = p->C, M = p->M, tc = j->tc;
    float *v = ws, *m = v + 16 * C * tc, *t = m + 16 * M * tc;
    float *s = p->bf16 ? t + (p->pixel_rows ? tc * kiln_ceil_div_i64(M, kit->nr) * kit->nr : 0) : NULL;
    if (transform) kit->wino_in(p, j->x + n * C * p->H * p->W, t0, live, j->unit, v, (size_t)(C * tc));
    KILN_TRY(chunk_products(j, v, m, t, s, live, r0, r1));
    int64_t plane0 = (n * M + r0) * p->OH * p->OW;
    kit->wino_out(p, m + r0 * tc, (size_t)(M * tc), tc, r1 - r0, t0, live, j->bias ? j->bias + r0 : NULL,
                  j->res ? j->res + plane0 : NULL, j->y + plane0);
    return KILN_OK;
}

static void wino_task(void *arg, size_t task)
{
    wino_job *j = arg;
    const kiln_cpu_conv_params *p = j->p;
    const int64_t tiles = tiles_of(p);
    float *ws = kiln_cpu_task_workspace(j->exec, task);
    int64_t lo, hi, transformed = -1, n, t0, live;
    kiln_status st = KILN_OK;
    if (j->ranges == 1) {
        kiln_cpu_split(p->N * kiln_ceil_div_i64(tiles, j->unit), j->tasks, task, &lo, &hi);
        for (int64_t q = lo; q < hi && st == KILN_OK;) {
            q = next_chunk(j, tiles, q, hi, &n, &t0, &live);
            st = run_chunk(j, ws, n, t0, live, 0, p->M, true);
        }
    }
    /* Channel ranges: items (chunk, range), a chunk's V transformed once per task taking part. */
    kiln_cpu_split(j->ranges > 1 ? p->N * j->chunks * j->ranges : 0, j->tasks, task, &lo, &hi);
    for (int64_t item = lo; item < hi && st == KILN_OK; item++) {
        int64_t chunk_id = item / j->ranges, r0, r1;
        n = chunk_id / j->chunks, t0 = chunk_id % j->chunks * j->tc;
        live = tiles - t0 < j->tc ? tiles - t0 : j->tc;
        kiln_cpu_split_aligned(p->M, j->channel_unit, (size_t)j->ranges, (size_t)(item % j->ranges), &r0, &r1);
        if (r0 == r1) continue;
        st = run_chunk(j, ws, n, t0, live, r0, r1, chunk_id != transformed);
        transformed = chunk_id;
    }
    if (st != KILN_OK) kiln_cpu_record_failure(&j->status, st);
}

/* The busiest task's work when items (chunk, channel range) are shared out in runs, as
   wino_task takes them: per item, its padded tiles (to NR columns, or to the microkernel's steps
   of 4 rows) times (its channels + TRANSFORM_ROWS), the transform of a tile costing about as
   much as that many channels of its GEMMs. */
#define TRANSFORM_ROWS 8
static double busiest(const wino_job *j, int64_t tiles, int64_t panels, size_t tasks)
{
    int64_t items = j->p->N * j->chunks * j->ranges;
    double worst = 0.0;
    for (size_t t = 0; t < tasks && j->ranges == 1; t++) { /* wino_task's even share of panels */
        int64_t lo, hi, n, t0, live;
        double sum = 0.0;
        kiln_cpu_split(j->p->N * kiln_ceil_div_i64(tiles, j->unit), tasks, t, &lo, &hi);
        for (int64_t q = lo; q < hi;) {
            q = next_chunk(j, tiles, q, hi, &n, &t0, &live);
            int64_t padded = j->p->pixel_rows ? kiln_ceil_div_i64(live, 4) * 4 : kiln_ceil_div_i64(live, j->unit) * j->unit;
            sum += (double)padded * (double)(panels * j->channel_unit + TRANSFORM_ROWS);
        }
        worst = sum > worst ? sum : worst;
    }
    for (size_t t = 0; t < tasks && j->ranges > 1; t++) {
        int64_t lo, hi;
        double sum = 0.0;
        kiln_cpu_split(items, tasks, t, &lo, &hi);
        for (int64_t item = lo; item < hi; item++) {
            int64_t t0 = item / j->ranges % j->chunks * j->tc, live = tiles - t0 < j->tc ? tiles - t0 : j->tc;
            int64_t r0, r1, padded = j->p->pixel_rows ? kiln_ceil_div_i64(live, 4) * 4 : kiln_ceil_div_i64(live, j->unit) * j->unit;
            kiln_cpu_split_aligned(panels * j->channel_unit, j->channel_unit, (size_t)j->ranges,
                                   (size_t)(item % j->ranges), &r0, &r1);
            sum += (double)padded * (double)(r1 - r0 + TRANSFORM_ROWS);
        }
        worst = sum > worst ? sum : worst;
    }
    return worst;
}

/* Channel ranges per chunk (1 .. max_tasks, at most one per panel) and the task count: the least
   busiest-task work. With fewer or unequal chunks than threads (49 tiles: chunks of 32 and 17),
   cutting the output channels evens the tasks out, at the price of transforming a chunk's V in
   every task that takes part of it. */
/* Tasks for r channel ranges: one per item, at most max_tasks; items are tile panels with whole
   chunks (r = 1), else (chunk, range) pairs. */
static size_t tasks_for(const wino_job *j, int64_t tiles, int64_t r, size_t max_tasks)
{
    int64_t items = r == 1 ? j->p->N * kiln_ceil_div_i64(tiles, j->unit) : j->p->N * j->chunks * r;
    return items < (int64_t)max_tasks ? (size_t)items : max_tasks;
}

static void choose_ranges(wino_job *j, int64_t tiles, int64_t panels, size_t max_tasks)
{
    double best = -1.0;
    int64_t best_ranges = 1;
    for (int64_t r = 1; r <= (int64_t)max_tasks && r <= panels; r++) {
        j->ranges = r;
        double cost = busiest(j, tiles, panels, tasks_for(j, tiles, r, max_tasks));
        if (best < 0.0 || cost < best) {
            best = cost;
            best_ranges = r;
        }
    }
    j->ranges = best_ranges;
    j->tasks = tasks_for(j, tiles, best_ranges, max_tasks);
}

kiln_status kiln_cpu_winograd_step(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x,
                                   const float *u, const float *bias, const float *res, float *y, kiln_cpu_exec *exec)
{
    int64_t tiles = tiles_of(p);
    if (p->N == 0 || p->M == 0 || tiles == 0) return KILN_OK;
    const uint32_t unit = tile_unit(kit->mr, kit->nr, p);
    int64_t tc = (int64_t)(exec->workspace_size / bytes_per_tile(kit->nr, p)) / unit * unit;
    if (tc < (int64_t)unit || tc > (int64_t)UINT32_MAX) return KILN_ERROR_INVALID_ARGUMENT;
    wino_job j = {.kit = kit, .p = p, .x = x, .u = u, .bias = bias, .res = res, .y = y, .exec = exec, .tc = tc,
                  .unit = unit};
    j.channel_unit = p->pixel_rows ? kit->nr : kit->mr;
    j.chunks = kiln_ceil_div_i64(tiles, tc);
    double work = (double)p->N * (double)tiles * 16.0 * (double)p->C * (double)p->M;
    size_t max_tasks = kiln_cpu_task_count(exec, kiln_cpu_work_units(work), KILN_GEMM_TASK_GRAIN, true);
    choose_ranges(&j, tiles, kiln_ceil_div_i64(p->M, j.channel_unit), max_tasks);
    atomic_init(&j.status, KILN_OK);
    kiln_cpu_parallel(exec, j.tasks, wino_task, &j);
    return (kiln_status)atomic_load(&j.status);
}
