/* gemm_f32.c — cache-blocked f32 GEMM in portable C (see gemm_f32.h for the contract).
 *
 * Layer: kernels/portable (internal). No intrinsics: the micro-kernel is plain C whose NR-wide
 * loop the compiler vectorizes for whatever ISA the build targets (see micro_kernel).
 *
 * Blocking (Goto/BLIS order), for each block the data that is reused most sits closest:
 *
 *   for jc in n by NC:                  B block  (KC x NC)  packed once, lives in L2
 *     for pc in k by KC:
 *       pack B[pc.., jc..] into NR-wide column panels      Bp: [panel][p][NR]
 *       for ic in m by MC:              A block  (MC x KC)  packed, lives in L1/L2
 *         pack A[ic.., pc..] into MR-high row panels       Ap: [panel][p][MR]
 *         for jr in nc by NR, ir in mc by MR:
 *           micro-kernel: MR x NR tile of C += Ap panel * Bp panel (kc long)
 *
 * Panels are zero-padded to full MR / NR, so the micro-kernel always computes a full tile; only
 * the store of an edge tile is clipped. beta is applied on the first k block only (later blocks
 * accumulate with beta = 1), alpha at every store.
 *
 * Threads (kiln_gemm_f32_parallel): the same blocks, each packed and then multiplied by all tasks
 * at once on disjoint panels, in the same shared buffers — no extra scratch, no packing done
 * twice, and the same sums (each tile is still one micro-kernel call per K block) for any count.
 */
#include "kernels/portable/gemm_f32.h"

#include <string.h>

#include "core/check.h"
#include "kernels/portable/parallel.h"

enum {
    GEMM_MR = 4,    /* rows of the register tile (micro_kernel spells out its 4 rows) */
    GEMM_NR = 16,   /* columns of the register tile: a multiple of every vector width */
    GEMM_KC = 256,  /* depth of one packed block */
    GEMM_MC = 128,  /* rows of one packed A block (multiple of MR) */
    GEMM_NC = 512,  /* columns of one packed B block (multiple of NR) */
};

size_t kiln_gemm_f32_scratch_size(int64_t m, int64_t n, int64_t k)
{
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    int64_t kc = kiln_min_i64(k, GEMM_KC);
    int64_t a_floats = kiln_round_up_i64(kiln_min_i64(m, GEMM_MC), GEMM_MR) * kc;
    int64_t b_floats = kiln_round_up_i64(kiln_min_i64(n, GEMM_NC), GEMM_NR) * kc;
    /* B first; A's offset is rounded to 64 bytes so both packs start cache-line aligned. */
    return (size_t)(kiln_round_up_i64(b_floats, 16) + a_floats) * sizeof(float);
}

/* Ap[panel][p][MR] from rows [0, mc) and depth [0, kc) of a; rows past mc are zero. */
static void pack_a(int64_t mc, int64_t kc, const float *a, int64_t rs, int64_t cs, float *restrict ap)
{
    for (int64_t i0 = 0; i0 < mc; i0 += GEMM_MR) {
        int64_t rows = kiln_min_i64(GEMM_MR, mc - i0);
        const float *src = a + i0 * rs;
        if (rows == GEMM_MR && cs == 1) {
            /* The common row-major case: MR contiguous row streams. */
            for (int64_t p = 0; p < kc; p++)
                for (int64_t i = 0; i < GEMM_MR; i++) ap[p * GEMM_MR + i] = src[i * rs + p];
        } else {
            for (int64_t p = 0; p < kc; p++) {
                for (int64_t i = 0; i < rows; i++) ap[p * GEMM_MR + i] = src[i * rs + p * cs];
                for (int64_t i = rows; i < GEMM_MR; i++) ap[p * GEMM_MR + i] = 0.0f;
            }
        }
        ap += GEMM_MR * kc;
    }
}

/* Bp[panel][p][NR] from depth [0, kc) and columns [0, nc) of b; columns past nc are zero. */
static void pack_b(int64_t kc, int64_t nc, const float *b, int64_t rs, int64_t cs, float *restrict bp)
{
    for (int64_t j0 = 0; j0 < nc; j0 += GEMM_NR) {
        int64_t cols = kiln_min_i64(GEMM_NR, nc - j0);
        const float *src = b + j0 * cs;
        if (cols == GEMM_NR && cs == 1) {
            for (int64_t p = 0; p < kc; p++) memcpy(bp + p * GEMM_NR, src + p * rs, GEMM_NR * sizeof(float));
        } else if (cols == GEMM_NR && rs == 1) {
            /* B is transposed (its columns are contiguous): read NR columns in parallel. */
            for (int64_t p = 0; p < kc; p++)
                for (int64_t j = 0; j < GEMM_NR; j++) bp[p * GEMM_NR + j] = src[j * cs + p];
        } else {
            for (int64_t p = 0; p < kc; p++) {
                for (int64_t j = 0; j < cols; j++) bp[p * GEMM_NR + j] = src[p * rs + j * cs];
                for (int64_t j = cols; j < GEMM_NR; j++) bp[p * GEMM_NR + j] = 0.0f;
            }
        }
        bp += GEMM_NR * kc;
    }
}

/* tile[MR][NR] = Ap panel (kc x MR) ^T * Bp panel (kc x NR).
 *
 * Written for the vectorizer: one accumulator row per tile row (MR = 4 rows, spelled out) and a
 * plain j loop over NR that gcc and clang turn into NR / width vector multiply-adds, with the
 * four a values broadcast once per step. Measured with the layer's -O3 on baseline x86-64
 * (SSE2), this shape beat 4x8, 6x8, 8x8, 3x16 and the same loops written as acc[MR][NR] with
 * unroll pragmas (those made gcc's SLP vectorizer shuffle every B vector, and clang spill). */
static void micro_kernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float tile[GEMM_MR][GEMM_NR])
{
    float c0[GEMM_NR] = {0}, c1[GEMM_NR] = {0}, c2[GEMM_NR] = {0}, c3[GEMM_NR] = {0};
    for (int64_t p = 0; p < kc; p++) {
        const float *restrict b = bp + p * GEMM_NR;
        float a0 = ap[p * GEMM_MR], a1 = ap[p * GEMM_MR + 1], a2 = ap[p * GEMM_MR + 2], a3 = ap[p * GEMM_MR + 3];
        for (int j = 0; j < GEMM_NR; j++) {
            c0[j] += a0 * b[j];
            c1[j] += a1 * b[j];
            c2[j] += a2 * b[j];
            c3[j] += a3 * b[j];
        }
    }
    for (int j = 0; j < GEMM_NR; j++) {
        tile[0][j] = c0[j];
        tile[1][j] = c1[j];
        tile[2][j] = c2[j];
        tile[3][j] = c3[j];
    }
}

/* C[0..rows, 0..cols] = alpha * tile + beta * C, with beta == 0 never reading C. */
static void store_tile(int64_t rows, int64_t cols, float alpha, float beta, float tile[GEMM_MR][GEMM_NR],
                       float *c, int64_t ldc)
{
    for (int64_t i = 0; i < rows; i++) {
        float *restrict row = c + i * ldc;
        const float *t = tile[i];
        if (beta == 0.0f)
            for (int64_t j = 0; j < cols; j++) row[j] = alpha * t[j];
        else if (beta == 1.0f)
            for (int64_t j = 0; j < cols; j++) row[j] += alpha * t[j];
        else
            for (int64_t j = 0; j < cols; j++) row[j] = alpha * t[j] + beta * row[j];
    }
}

/* C (m, n) = beta * C, the whole result when k == 0 or alpha == 0. */
static void scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++) {
        float *row = c + i * ldc;
        if (beta == 0.0f) memset(row, 0, (size_t)n * sizeof(float));
        else if (beta != 1.0f)
            for (int64_t j = 0; j < n; j++) row[j] *= beta;
    }
}

/* One packed A block times one packed B block into C (mc x nc). */
static void block_multiply(int64_t mc, int64_t nc, int64_t kc, float alpha, float beta, const float *ap,
                           const float *bp, float *c, int64_t ldc)
{
    float tile[GEMM_MR][GEMM_NR];
    for (int64_t j0 = 0; j0 < nc; j0 += GEMM_NR) {
        int64_t cols = kiln_min_i64(GEMM_NR, nc - j0);
        const float *b_panel = bp + j0 * kc;
        for (int64_t i0 = 0; i0 < mc; i0 += GEMM_MR) {
            int64_t rows = kiln_min_i64(GEMM_MR, mc - i0);
            micro_kernel(kc, ap + i0 * kc, b_panel, tile);
            store_tile(rows, cols, alpha, beta, tile, c + i0 * ldc + j0, ldc);
        }
    }
}

void kiln_gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, kiln_gemm_f32_operand a,
                   kiln_gemm_f32_operand b, float beta, float *c, int64_t ldc, void *scratch)
{
    if (m <= 0 || n <= 0) return;
    if (k <= 0 || alpha == 0.0f) {
        scale_c(m, n, beta, c, ldc);
        return;
    }
    int64_t kc_max = kiln_min_i64(k, GEMM_KC);
    float *bp = scratch;
    float *ap = bp + kiln_round_up_i64(kiln_round_up_i64(kiln_min_i64(n, GEMM_NC), GEMM_NR) * kc_max, 16);
    for (int64_t jc = 0; jc < n; jc += GEMM_NC) {
        int64_t nc = kiln_min_i64(GEMM_NC, n - jc);
        for (int64_t pc = 0; pc < k; pc += GEMM_KC) {
            int64_t kc = kiln_min_i64(GEMM_KC, k - pc);
            float beta_block = pc == 0 ? beta : 1.0f;
            pack_b(kc, nc, b.data + pc * b.row_stride + jc * b.col_stride, b.row_stride, b.col_stride, bp);
            for (int64_t ic = 0; ic < m; ic += GEMM_MC) {
                int64_t mc = kiln_min_i64(GEMM_MC, m - ic);
                pack_a(mc, kc, a.data + ic * a.row_stride + pc * a.col_stride, a.row_stride, a.col_stride, ap);
                block_multiply(mc, nc, kc, alpha, beta_block, ap, bp, c + ic * ldc + jc, ldc);
            }
        }
    }
}

/* ---- threads: the same blocks, each packed and multiplied by all tasks together ----
 *
 * The packing buffers are shared: for every (jc, pc, ic) block the tasks first pack disjoint
 * panels of it (A's, and B's on the block's first ic), then — after the parallel_for returned,
 * which is the barrier — multiply disjoint parts of it: its NR column panels when there are
 * enough of them for every task (small M, as in decode shapes), its MR row panels otherwise.
 * Every packed element is packed once, as with one thread, in the scratch one thread needs. */

/* Multiply-adds a task must have before waking a worker pays. */
#define GEMM_GRAIN ((int64_t)1 << 17)

typedef struct gemm_job {
    int64_t m, n, k;
    float alpha, beta;
    kiln_gemm_f32_operand a, b;
    float *c, *ap, *bp;
    int64_t ldc;
    size_t tasks;
    /* the current block */
    int64_t jc, nc, pc, kc, ic, mc;
    bool pack_b;
} gemm_job;

static void pack_task(void *arg, size_t task)
{
    const gemm_job *j = arg;
    int64_t lo, hi;
    kiln_par_split_aligned(j->mc, GEMM_MR, j->tasks, task, &lo, &hi);
    if (hi > lo)
        pack_a(hi - lo, j->kc, j->a.data + (j->ic + lo) * j->a.row_stride + j->pc * j->a.col_stride, j->a.row_stride,
               j->a.col_stride, j->ap + lo * j->kc);
    if (!j->pack_b) return;
    kiln_par_split_aligned(j->nc, GEMM_NR, j->tasks, task, &lo, &hi);
    if (hi > lo)
        pack_b(j->kc, hi - lo, j->b.data + j->pc * j->b.row_stride + (j->jc + lo) * j->b.col_stride, j->b.row_stride,
               j->b.col_stride, j->bp + lo * j->kc);
}

static void multiply_task(void *arg, size_t task)
{
    const gemm_job *j = arg;
    float beta = j->pc == 0 ? j->beta : 1.0f, *c = j->c + j->ic * j->ldc + j->jc;
    int64_t lo, hi;
    if ((j->nc + GEMM_NR - 1) / GEMM_NR >= (int64_t)j->tasks) {
        kiln_par_split_aligned(j->nc, GEMM_NR, j->tasks, task, &lo, &hi);
        if (hi > lo) block_multiply(j->mc, hi - lo, j->kc, j->alpha, beta, j->ap, j->bp + lo * j->kc, c + lo, j->ldc);
    } else {
        kiln_par_split_aligned(j->mc, GEMM_MR, j->tasks, task, &lo, &hi);
        if (hi > lo)
            block_multiply(hi - lo, j->nc, j->kc, j->alpha, beta, j->ap + lo * j->kc, j->bp, c + lo * j->ldc, j->ldc);
    }
}

void kiln_gemm_f32_parallel(int64_t m, int64_t n, int64_t k, float alpha, kiln_gemm_f32_operand a,
                            kiln_gemm_f32_operand b, float beta, float *c, int64_t ldc, void *scratch,
                            const kiln_kernel_ctx *ctx)
{
    size_t tasks = 1;
    if (m > 0 && n > 0 && k > 0 && alpha != 0.0f) {
        double work = (double)m * (double)n * (double)k;
        tasks = kiln_par_tasks(ctx, work > 9e18 ? INT64_MAX : (int64_t)work, GEMM_GRAIN);
    }
    if (tasks <= 1) {
        kiln_gemm_f32(m, n, k, alpha, a, b, beta, c, ldc, scratch);
        return;
    }
    gemm_job j = {.m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c, .ldc = ldc,
                  .tasks = tasks, .bp = scratch};
    j.ap = j.bp + kiln_round_up_i64(kiln_round_up_i64(kiln_min_i64(n, GEMM_NC), GEMM_NR) * kiln_min_i64(k, GEMM_KC), 16);
    for (j.jc = 0; j.jc < n; j.jc += GEMM_NC) {
        j.nc = kiln_min_i64(GEMM_NC, n - j.jc);
        for (j.pc = 0; j.pc < k; j.pc += GEMM_KC) {
            j.kc = kiln_min_i64(GEMM_KC, k - j.pc);
            for (j.ic = 0; j.ic < m; j.ic += GEMM_MC) {
                j.mc = kiln_min_i64(GEMM_MC, m - j.ic);
                j.pack_b = j.ic == 0;
                kiln_par_run(ctx, tasks, pack_task, &j);
                kiln_par_run(ctx, tasks, multiply_task, &j);
            }
        }
    }
}
