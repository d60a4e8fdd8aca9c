/* f32-gemm-strassen.c — one level of Strassen's algorithm around an ISA's microkernel, for
 * large GEMMs whose B is a weight (b_packed = KILN_CPU_PACKED_STRASSEN).
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags (see kernel_kit.h). C = A . B in
 * 2 x 2 quadrants takes seven half-size products instead of eight (kiln_cpu_strassen, pack.c):
 * 7/8 of the multiply-adds, for the same FMA rate. The usual costs of the method are paid
 * elsewhere or folded away:
 *   - B's sums are formed ahead of time: the compiler packs the seven sums (7/4 of B's bytes);
 *   - A's sums are formed while A is packed (the kit's pack_rows_sum), never as a matrix;
 *   - each product's tile goes from the microkernel's registers into its one or two C quadrants
 *     (the second through the tile's c2), stored on a quadrant's first product, added after:
 *     no temporary C, no second pass over a tile.
 * K / 2 fits one K block (validation), so a tile is finished by one microkernel call.
 *
 * Every task owns a range of rows of the half height, in both row halves of C, for all seven
 * products: no two tasks write one element and no barrier is needed between the products.
 *
 * Workspace of one task: the A block, mc x K/2 in MR panels.
 *
 * Numerics: each element of C sums four products of partial sums instead of K/2-long dot products
 * of inputs, so the rounding error bound grows with the norms of A and B rather than of the
 * individual terms (1.4-2x the classical error, root mean square, on uniform random data at
 * 1024-2048; see docs/kernels.md).
 */
#include <string.h>

#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"

/* Smallest half dimensions taken (1T, Zen 4, 12x32 tile, against the classical driver): halves
   of 512-1024 gained 4-13%; 256-448 gained 2-7% too, but B grows by 3/4 for those few percent
   (a BERT-base at sequence 512 would carry 1.7x its weights), so only products of 1024 and up
   take it. */
#define STRASSEN_MIN_HALF 512

bool kiln_cpu_gemm_strassen_pays(int64_t M, int64_t N, int64_t K)
{
    /* K / 2 <= 1024: one K block on every table (kiln_cpu_gemm_kc caps at 1024, which the 12x32
       and 6x16 tiles reach; validation checks the table's own). */
    return M % 2 == 0 && N % 2 == 0 && K % 2 == 0 && M / 2 >= STRASSEN_MIN_HALF && N / 2 >= STRASSEN_MIN_HALF &&
           K / 2 >= STRASSEN_MIN_HALF && K / 2 <= KILN_GEMM_KC_MAX;
}

size_t kiln_cpu_gemm_strassen_workspace(uint32_t mr, uint32_t nr, int64_t M, int64_t K, size_t l2)
{
    if (M < 2 || K < 2 || mr == 0 || nr == 0) return 0;
    int64_t hm = M / 2, hk = K / 2;
    /* The A block takes half of L2, at least one panel, at most the half height. */
    int64_t mc = (int64_t)(l2 / 2 / ((size_t)hk * sizeof(float))) / mr * mr;
    int64_t all = kiln_round_up_i64(hm, mr);
    mc = mc < (int64_t)mr ? (int64_t)mr : kiln_min_i64(mc, all);
    return kiln_gemm_ws_align((size_t)(mc * hk) * sizeof(float));
}

typedef struct strassen_job {
    const kiln_cpu_kit *kit;
    const kiln_cpu_gemm_params *p;
    const float *a, *b, *bias;
    float *y;
    const kiln_cpu_exec *exec;
    size_t tasks;
    int64_t rs, cs;                 /* A's strides (trans_a swaps them) */
    int64_t hm, hn, hk;             /* the halves of M, N, K */
    size_t b_product_floats;        /* one product's B sum, packed */
    atomic_int status;
} strassen_job;

/* Quadrant q of A at row r of the half height. */
static const float *a_at(const strassen_job *j, int q, int64_t r)
{
    return j->a + (q / 2 * j->hm + r) * j->rs + q % 2 * j->hk * j->cs;
}

/* Rows [r0, r0 + rows) of product pr's A sum into MR panels of hk floats each. */
static void pack_a_sum(const strassen_job *j, const kiln_cpu_strassen_product *pr, int64_t r0, int64_t rows, float *dst)
{
    const kiln_cpu_kit *kit = j->kit;
    const int64_t hk = j->hk;
    const bool two = pr->a_sign[1] != 0;
    const float s1 = (float)pr->a_sign[1];
    for (int64_t p0 = 0; p0 < rows; p0 += kit->mr, dst += hk * kit->mr) {
        int64_t live = kiln_min_i64(kit->mr, rows - p0);
        if (live < (int64_t)kit->mr) memset(dst, 0, (size_t)(hk * kit->mr) * sizeof(float));
        const float *x = a_at(j, pr->a_quad[0], r0 + p0), *y = a_at(j, pr->a_quad[1], r0 + p0);
        if (j->cs == 1 && !two) {
            kit->pack_rows(x, j->rs, live, hk, kit->mr, dst);
        } else if (j->cs == 1) {
            kit->pack_rows_sum(x, y, s1, j->rs, live, hk, kit->mr, dst);
        } else {
            for (int64_t k = 0; k < hk; k++)
                for (int64_t i = 0; i < live; i++)
                    dst[k * kit->mr + i] = x[i * j->rs + k * j->cs] + (two ? s1 * y[i * j->rs + k * j->cs] : 0.0f);
        }
    }
}

/* Product prod's epilogue for the tile at (r, c) of the half: into its first C quadrant — stored
   with the bias on the quadrant's first product, else added with its sign — and, in registers,
   added to its second quadrant (c2), which always has had a product before (kiln_cpu_strassen). */
static kiln_cpu_gemm_tile tile_for(const strassen_job *j, const kiln_cpu_strassen_product *pr, bool first, int64_t r,
                                   int64_t c, float **y)
{
    const kiln_cpu_gemm_params *p = j->p;
    int q = pr->c_quad[0];
    int64_t row0 = q / 2 * j->hm + r, col0 = q % 2 * j->hn + c;
    *y = j->y + row0 * p->ldy + col0;
    kiln_cpu_gemm_tile t = {.alpha = p->alpha * pr->c_sign[0], .beta = p->beta, .accumulate = !first};
    if (first) {
        if (p->bias_kind == KILN_CPU_BIAS_SCALAR) t.scalar = p->beta * j->bias[0];
        if (p->bias_kind == KILN_CPU_BIAS_PER_ROW) t.row_bias = j->bias + row0;
        if (p->bias_kind == KILN_CPU_BIAS_PER_COL) t.col_bias = j->bias + col0;
    }
    if (pr->c_sign[1]) {
        int q2 = pr->c_quad[1];
        t.c2 = j->y + (q2 / 2 * j->hm + r) * p->ldy + q2 % 2 * j->hn + c;
        t.alpha2 = p->alpha * pr->c_sign[1];
    }
    return t;
}

/* Product prod for rows [r0, r1) of the half height, A packed mc rows at a time; first: its
   first C quadrant has had no product yet. */
static void run_product(const strassen_job *j, int prod, bool first, int64_t r0, int64_t r1, int64_t mc,
                        float *ablock)
{
    const kiln_cpu_kit *kit = j->kit;
    const kiln_cpu_strassen_product *pr = &kiln_cpu_strassen[prod];
    const float *b = j->b + (size_t)prod * j->b_product_floats;
    int64_t js_cols = KILN_GEMM_B_STRIP_BYTES / (j->hk * (int64_t)sizeof(float)) / kit->nr * kit->nr;
    if (js_cols < (int64_t)kit->nr) js_cols = kit->nr;
    for (int64_t ic = r0; ic < r1; ic += mc) {
        int64_t rows = kiln_min_i64(mc, r1 - ic);
        pack_a_sum(j, pr, ic, rows, ablock);
        for (int64_t js = 0; js < j->hn; js += js_cols) {
            int64_t js_end = kiln_min_i64(j->hn, js + js_cols);
            for (int64_t ir = 0; ir < rows; ir += kit->mr) {
                size_t m = (size_t)kiln_min_i64(kit->mr, rows - ir);
                for (int64_t jr = js; jr < js_end; jr += kit->nr) {
                    float *y;
                    kiln_cpu_gemm_tile t = tile_for(j, pr, first, ic + ir, jr, &y);
                    kit->gemm((size_t)j->hk, ablock + ir * j->hk, b + (jr / kit->nr) * j->hk * kit->nr, y,
                              (size_t)j->p->ldy, m, (size_t)kiln_min_i64(kit->nr, j->hn - jr), &t);
                }
            }
        }
    }
}

/* Rows [r0, r1) of both row halves: y = beta * the FULL bias, which every product then adds to. */
static void fill_full_bias(const strassen_job *j, int64_t r0, int64_t r1)
{
    for (int half = 0; half < 2; half++) {
        int64_t row = half * j->hm + r0;
        kiln_cpu_epilogue e = {.alpha = 1.0f, .beta = j->p->beta, .bias_kind = KILN_CPU_BIAS_FULL,
                               .bias = j->bias + row * j->p->N, .ldbias = j->p->N};
        kiln_cpu_gemm_fill_bias(r1 - r0, j->p->N, j->y + row * j->p->ldy, j->p->ldy, &e);
    }
}

static void strassen_task(void *arg, size_t task)
{
    strassen_job *j = arg;
    const kiln_cpu_kit *kit = j->kit;
    int64_t r0, r1;
    kiln_cpu_split_aligned(j->hm, kit->mr, j->tasks, task, &r0, &r1);
    if (r0 == r1) return;
    int64_t mc = (int64_t)(j->exec->workspace_size / ((size_t)j->hk * sizeof(float))) / kit->mr * kit->mr;
    char *ws = kiln_cpu_task_workspace(j->exec, task);
    if (mc < (int64_t)kit->mr || !ws) {
        kiln_cpu_record_failure(&j->status, KILN_ERROR_INVALID_ARGUMENT);
        return;
    }
    float *ablock = (float *)(void *)ws;
    bool prefilled = j->p->bias_kind == KILN_CPU_BIAS_FULL;
    if (prefilled) fill_full_bias(j, r0, r1);
    unsigned written = 0;
    for (int prod = 0; prod < KILN_CPU_STRASSEN_PRODUCTS; prod++) {
        int q = kiln_cpu_strassen[prod].c_quad[0];
        run_product(j, prod, !prefilled && !(written & 1u << q), r0, r1, mc, ablock);
        written |= 1u << q;
    }
    for (int half = 0; half < 2 && !kiln_cpu_act_is_identity(&j->p->act); half++) {
        for (int64_t r = r0; r < r1; r++) {
            float *row = j->y + (half * j->hm + r) * j->p->ldy;
            kit->act(&j->p->act, row, row, (size_t)j->p->N);
        }
    }
}

kiln_status kiln_cpu_gemm_strassen_step(const kiln_cpu_kit *kit, const kiln_cpu_gemm_params *p, const float *a,
                                        const float *b, const float *bias, float *y, const kiln_cpu_exec *exec)
{
    strassen_job j = {
        .kit = kit, .p = p, .a = a, .b = b, .bias = bias, .y = y, .exec = exec,
        .rs = p->trans_a ? 1 : p->lda, .cs = p->trans_a ? p->lda : 1,
        .hm = p->M / 2, .hn = p->N / 2, .hk = p->K / 2,
        .b_product_floats = kiln_cpu_pack_b_strassen_size(p->K, p->N, kit->nr) / KILN_CPU_STRASSEN_PRODUCTS / sizeof(float),
        .status = KILN_OK,
    };
    double work = (double)j.hm * (double)p->N * (double)p->K;
    j.tasks = kiln_cpu_task_count(exec, kiln_cpu_work_units(work), KILN_GEMM_TASK_GRAIN, true);
    kiln_cpu_parallel(exec, j.tasks, strassen_task, &j);
    return (kiln_status)atomic_load(&j.status);
}
