/* f32-gemm-parallel.c — a batch of equal-shape GEMMs cut into tiles for the exec's threads.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags (see kernel_kit.h). The work is
 * batch x tm x tn tiles: each product cut into tm row ranges (whole MR panels, so a packed A
 * stays addressable) and tn column ranges (whole NR panels, likewise for a packed B). Tiles are
 * numbered batch-major and each task takes a contiguous run of them, so a batch of at least as
 * many products as threads is shared out whole (tm = tn = 1) while a single product is cut —
 * along N when A is small (M = 1 decode shapes: each thread streams its half of the weights),
 * along M when that repeats less packing. The choice minimises a cost model: the largest
 * task's padded multiply-adds plus KILN_GEMM_PACK_COST (gemm-blocking.h) per element it packs
 * (A once per NC block of its columns — once in all when B is packed ahead of time — and B once
 * per K block when it is not) plus B_READ_COST per element of a B packed ahead of time that it
 * reads.
 */
#include <stdatomic.h>

#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"

/* One element of a B packed ahead of time, read by a task from memory, costs about one
   multiply-add: a task reads the weights of all its columns once, so cutting a product along M
   makes every task read all of B. Without this term M = 64 LLM shapes (64 MiB of weights) were
   cut along M on two threads and ran at 82% of the FMA peak, along N 92% (bf16: 0.8x -> 1.0x
   oneDNN). */
#define B_READ_COST 1.0
typedef struct gemm_cut {
    int64_t tm, tn;                 /* row ranges x column ranges per product */
    size_t tasks;
} gemm_cut;

/* Cost of the largest tile of a product cut tm x tn. */
static double tile_cost(const kiln_cpu_kit *kit, const kiln_cpu_gemm_problem *p, int64_t tm, int64_t tn)
{
    int64_t rows = kiln_ceil_div_i64(kiln_ceil_div_i64(p->M, kit->mr), tm) * kit->mr;
    int64_t cols = kiln_ceil_div_i64(kiln_ceil_div_i64(p->N, kit->nr), tn) * kit->nr;
    double cost = (double)rows * (double)cols * (double)p->K;
    /* A is packed again for each NC block of columns, unless B is packed ahead of time: then
       the driver's one block spans all columns. */
    int64_t a_passes = p->b.packed ? 1 : kiln_ceil_div_i64(cols, KILN_GEMM_NC_MAX);
    if (!p->a.packed) cost += KILN_GEMM_PACK_COST * (double)(rows < p->M ? rows : p->M) * (double)p->K * (double)a_passes;
    if (!p->b.packed) cost += KILN_GEMM_PACK_COST * (double)p->K * (double)(cols < p->N ? cols : p->N);
    else cost += B_READ_COST * (double)p->K * (double)(cols < p->N ? cols : p->N);
    return cost;
}

static gemm_cut choose_cut(const kiln_cpu_kit *kit, int64_t batch, const kiln_cpu_gemm_problem *p, size_t max_tasks)
{
    gemm_cut best = {1, 1, 1};
    if (max_tasks <= 1) return best;
    int64_t pm = kiln_ceil_div_i64(p->M, kit->mr), pn = kiln_ceil_div_i64(p->N, kit->nr);
    double best_cost = -1.0;
    for (int64_t tm = 1; tm <= (int64_t)max_tasks && tm <= pm; tm++) {
        for (int64_t tn = 1; tm * tn <= (int64_t)max_tasks && tn <= pn; tn++) {
            int64_t tiles = batch * tm * tn;
            size_t tasks = tiles < (int64_t)max_tasks ? (size_t)tiles : max_tasks;
            double cost = (double)kiln_ceil_div_i64(tiles, (int64_t)tasks) * tile_cost(kit, p, tm, tn);
            if (best_cost < 0.0 || cost < best_cost) {
                best_cost = cost;
                best = (gemm_cut){tm, tn, tasks};
            }
        }
    }
    return best;
}

/* Tile (r0..r1 rows, c0..c1 columns) of p as a problem of its own. */
static kiln_cpu_gemm_problem sub_problem(const kiln_cpu_kit *kit, const kiln_cpu_gemm_problem *p, int64_t r0,
                                         int64_t r1, int64_t c0, int64_t c1)
{
    kiln_cpu_gemm_problem s = *p;
    s.M = r1 - r0;
    s.N = c1 - c0;
    if (p->K > 0) { /* with K == 0 neither operand is read, nor are its strides validated */
        s.a.data += p->a.packed ? r0 / kit->mr * kiln_cpu_panel_words(&p->a, p->K, kit->mr) : r0 * p->a.rs;
        s.b.data += p->b.packed ? c0 / kit->nr * kiln_cpu_panel_words(&p->b, p->K, kit->nr) : c0 * p->b.cs;
    }
    s.y += r0 * p->ldy + c0;
    switch (p->e.bias_kind) {
    case KILN_CPU_BIAS_PER_COL: s.e.bias += c0; break;
    case KILN_CPU_BIAS_PER_ROW: s.e.bias += r0; break;
    case KILN_CPU_BIAS_FULL:
        s.e.ldbias = p->e.ldbias ? p->e.ldbias : p->N;
        s.e.bias += r0 * s.e.ldbias + c0;
        break;
    default: break;
    }
    return s;
}

typedef struct gemm_job {
    const kiln_cpu_kit *kit;
    kiln_cpu_gemm_batch_fn get;
    const void *src;
    const kiln_cpu_exec *exec;
    int64_t batch;
    gemm_cut cut;
    atomic_int status;              /* first failure of any task */
} gemm_job;

static void gemm_task(void *arg, size_t task)
{
    gemm_job *j = arg;
    const kiln_cpu_kit *kit = j->kit;
    int64_t per_product = j->cut.tm * j->cut.tn, lo, hi;
    kiln_cpu_split(j->batch * per_product, j->cut.tasks, task, &lo, &hi);
    void *ws = kiln_cpu_task_workspace(j->exec, task);
    for (int64_t t = lo; t < hi; t++) {
        kiln_cpu_gemm_problem p;
        j->get(j->src, t / per_product, &p);
        int64_t ti = t % per_product / j->cut.tn, tj = t % j->cut.tn, r0, r1, c0, c1;
        kiln_cpu_split_aligned(p.M, kit->mr, (size_t)j->cut.tm, (size_t)ti, &r0, &r1);
        kiln_cpu_split_aligned(p.N, kit->nr, (size_t)j->cut.tn, (size_t)tj, &c0, &c1);
        if (r0 == r1 || c0 == c1) continue;
        kiln_cpu_gemm_problem s = per_product == 1 ? p : sub_problem(kit, &p, r0, r1, c0, c1);
        kiln_status st = kiln_cpu_gemm_run(kit, s.M, s.N, s.K, s.a, s.b, s.y, s.ldy, &s.e, ws, j->exec->workspace_size);
        if (st != KILN_OK) {
            kiln_cpu_record_failure(&j->status, st);
            return;
        }
    }
}

kiln_status kiln_cpu_gemm_batch(const kiln_cpu_kit *kit, int64_t batch, kiln_cpu_gemm_batch_fn get, const void *src,
                                const kiln_cpu_exec *exec)
{
    if (batch <= 0) return KILN_OK;
    kiln_cpu_gemm_problem first;
    get(src, 0, &first);
    if (first.M <= 0 || first.N <= 0) return KILN_OK;
    int64_t k = first.K > 0 ? first.K : 1;
    double work = (double)batch * (double)first.M * (double)first.N * (double)k;
    int64_t units = kiln_cpu_work_units(work);
    size_t max_tasks = kiln_cpu_task_count(exec, units, KILN_GEMM_TASK_GRAIN, true);
    gemm_job job = {kit, get, src, exec, batch, choose_cut(kit, batch, &first, max_tasks), KILN_OK};
    kiln_cpu_parallel(exec, job.cut.tasks, gemm_task, &job);
    return (kiln_status)atomic_load(&job.status);
}
