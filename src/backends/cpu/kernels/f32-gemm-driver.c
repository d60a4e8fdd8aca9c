/* f32-gemm-driver.c — the blocked f32 GEMM around an ISA's microkernel (see kernel_kit.h).
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags; the microkernel and the
 * activation come from the kit. Workspace map when an operand is not packed ahead of time:
 *
 *   workspace: [ B block: kc x nc, NR panels (b_bytes, 64-aligned) | A block: mc x kc, MR panels ]
 *
 * or, for a short A (M <= MR) against a B packed ahead of time (decode shapes), one full-K MR
 * panel of A, so that the weights stream panel after panel, each read once front to back.
 *
 * Panels past M (or N) are zero-filled, so microkernels always run whole tiles and only their
 * stores are clipped. The summation order depends on kc alone (see kernel_kit.h). The blocking
 * constants are gemm-blocking.h's; this file calls only the kit (the GEMM step that feeds it
 * is f32-gemm-step.c).
 */
#include <string.h>

#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"

int64_t kiln_cpu_gemm_kc(uint32_t nr)
{
    /* kc x nr = 32768 floats (kc <= 1024): longer K blocks mean fewer passes over C and fewer
       tile epilogues per FMA (at kc = 512 a 12x32 tile spent about a tenth of its time loading
       and storing C). The MR panel of A (kc x MR: 48 KiB for 12x32) then streams from L2 beside
       the B strip, 48 bytes per 24 FMAs. On Zen 4 the 12x32 tile ran 1024-2048 at 92-94% of the
       FMA peak with kc = 512, 95-96% with 1024 (256: 3-7% slower than 512); 2048 was no faster.
       The 6x16 tile is at the 1024 cap. */
    int64_t kc = 32768 / (int64_t)(nr ? nr : 1);
    return kc < KILN_GEMM_KC_MIN ? KILN_GEMM_KC_MIN : kc > KILN_GEMM_KC_MAX ? KILN_GEMM_KC_MAX : kc;
}

/* K in blocks of at most kiln_cpu_gemm_kc, all of about the same length (a multiple of 8): a
   short last block (K = 576 as 512 + 64) would pay a full pass over C for a few FMAs per tile. */
static int64_t plan_kc(uint32_t nr, int64_t K)
{
    int64_t cap = kiln_cpu_gemm_kc(nr);
    if (K <= cap) return K < 1 ? 1 : K;
    int64_t blocks = kiln_ceil_div_i64(K, cap);
    return kiln_min_i64(cap, kiln_round_up_i64(kiln_ceil_div_i64(K, blocks), 8));
}

/* nc only bounds the buffer B is packed into. A B packed ahead of time needs none, and then one
   block spans all of N: the A block is packed once per K block instead of once per N block,
   and the B micro-panels it meets (kc x NR each, used by every MR panel of the A block while in
   L1/L2) are read from L3 or memory just once per A block — a trickle beside the FMAs. */
static int64_t plan_nc(uint32_t nr, int64_t N, bool b_packed)
{
    int64_t all = kiln_round_up_i64(N < 1 ? 1 : N, nr);
    if (b_packed) return all;
    return kiln_min_i64(all, KILN_GEMM_NC_MAX / nr * nr > 0 ? KILN_GEMM_NC_MAX / nr * nr : nr);
}

/* Bytes of the one full-K MR panel that a short A (M <= MR: decode rows) is packed into when B
   is packed ahead of time, so that B can be streamed panel after panel, each read once from
   start to end (see run_short_a); 0 when the path does not apply or the panel would not stay
   within half of L2. */
static size_t short_a_panel_bytes(uint32_t mr, int64_t M, int64_t K, bool b_packed, size_t l2)
{
    if (!b_packed || M > (int64_t)mr || K > (int64_t)(l2 / 2 / (mr * sizeof(float)))) return 0;
    return kiln_gemm_ws_align((size_t)K * mr * sizeof(float));
}

size_t kiln_cpu_gemm_workspace(uint32_t mr, uint32_t nr, int64_t M, int64_t N, int64_t K, bool a_packed,
                               bool b_packed, size_t l2)
{
    if (M <= 0 || N <= 0 || K <= 0 || mr == 0 || nr == 0) return 0;
    int64_t kc = plan_kc(nr, K), nc = plan_nc(nr, N, b_packed);
    size_t b_bytes = b_packed ? 0 : kiln_gemm_ws_align((size_t)(kc * nc) * sizeof(float));
    if (a_packed) return b_bytes;
    /* The A block takes half of L2, at least one panel, at most all of M. */
    int64_t mc = (int64_t)(l2 / 2 / ((size_t)kc * sizeof(float))) / mr * mr;
    mc = mc < (int64_t)mr ? (int64_t)mr : kiln_min_i64(mc, kiln_round_up_i64(M, mr));
    size_t blocked = kiln_gemm_ws_align((size_t)(mc * kc) * sizeof(float)) + b_bytes;
    size_t panel = short_a_panel_bytes(mr, M, K, b_packed, l2);
    return panel > blocked ? panel : blocked;
}

bool kiln_cpu_gemm_plan_fit(uint32_t mr, uint32_t nr, int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed,
                            size_t budget, kiln_cpu_gemm_plan *plan)
{
    plan->kc = plan_kc(nr, K);
    plan->nc = plan_nc(nr, N, b_packed);
    plan->b_bytes = b_packed ? 0 : kiln_gemm_ws_align((size_t)(plan->kc * plan->nc) * sizeof(float));
    plan->mc = kiln_round_up_i64(M < 1 ? 1 : M, mr);
    plan->a_bytes = 0;
    if (budget < plan->b_bytes) return false;
    if (a_packed) {
        /* No buffer, but keep the rows one B micro-panel meets within L2 (128 KiB of A). */
        int64_t cap = (int64_t)(KILN_GEMM_PACKED_A_BLOCK_BYTES / ((size_t)plan->kc * sizeof(float))) / mr * mr;
        plan->mc = kiln_min_i64(plan->mc, cap < (int64_t)mr ? (int64_t)mr : cap);
        return true;
    }
    int64_t mc = (int64_t)((budget - plan->b_bytes) / ((size_t)plan->kc * sizeof(float))) / mr * mr;
    if (mc < (int64_t)mr) return false;
    plan->mc = kiln_min_i64(mc, plan->mc);
    plan->a_bytes = (size_t)(plan->mc * plan->kc) * sizeof(float);
    return true;
}

/* `rows` rows x kc columns of a strided operand (src at the first) into panels of `width` rows:
   panel p holds kc groups of width floats; rows past `rows` are zero. Used for A (width MR) and,
   with rows and columns swapped through the strides, for B (width NR). Contiguous rows (A as
   activations) are the kit's transposition; contiguous columns (B as a MatMul holds it) a copy
   per k. */
static void pack_panels(const kiln_cpu_kit *kit, const float *src, int64_t rs, int64_t cs, int64_t rows, int64_t kc,
                        uint32_t width, float *dst)
{
    for (int64_t p0 = 0; p0 < rows; p0 += width, dst += kc * width) {
        int64_t live = kiln_min_i64(width, rows - p0);
        if (live < (int64_t)width) memset(dst, 0, (size_t)(kc * width) * sizeof(float));
        if (cs == 1) {
            kit->pack_rows(src + p0 * rs, rs, live, kc, width, dst);
            continue;
        }
        if (rs == 1) { /* contiguous rows of the panel (a row-major B): one copy per k */
            for (int64_t k = 0; k < kc; k++) memcpy(dst + k * width, src + k * cs + p0, (size_t)live * sizeof(float));
            continue;
        }
        for (int64_t k = 0; k < kc; k++) {
            const float *col = src + k * cs + p0 * rs;
            for (int64_t i = 0; i < live; i++) dst[k * width + i] = col[i * rs];
        }
    }
}

static bool act_fuses(const kiln_cpu_act *act)
{
    return kiln_cpu_act_is_identity(act) || act->kind == KILN_CPU_ACT_RELU;
}

/* Y = beta * bias for K == 0 (the product is empty) or as the start value of a FULL bias. */
void kiln_cpu_gemm_fill_bias(int64_t M, int64_t N, float *y, int64_t ldy, const kiln_cpu_epilogue *e)
{
    for (int64_t i = 0; i < M; i++) {
        float *row = y + i * ldy;
        for (int64_t j = 0; j < N; j++) {
            float v = 0.0f;
            switch (e->bias_kind) {
            case KILN_CPU_BIAS_SCALAR: v = e->bias[0]; break;
            case KILN_CPU_BIAS_PER_COL: v = e->bias[j]; break;
            case KILN_CPU_BIAS_PER_ROW: v = e->bias[i]; break;
            case KILN_CPU_BIAS_FULL: v = e->bias[i * (e->ldbias ? e->ldbias : N) + j]; break;
            default: break;
            }
            row[j] = e->bias_kind == KILN_CPU_BIAS_NONE ? 0.0f : e->beta * v;
        }
    }
}

/* Everything one call needs besides the loop indices. */
typedef struct gemm_ctx {
    const kiln_cpu_kit *kit;
    int64_t M, N, K;
    kiln_cpu_operand a, b;
    float *y;
    int64_t ldy;
    const kiln_cpu_epilogue *e;
    kiln_cpu_gemm_plan plan;
    float *abuf, *bbuf;
    bool prefilled;                 /* Y already holds beta * FULL bias */
} gemm_ctx;

/* Rows of k from one packed panel of o to the next: the K o was laid out for. */
static int64_t panel_k(const kiln_cpu_operand *o, int64_t K) { return o->panel_k ? o->panel_k : K; }

/* The tile epilogue of the tile at (i0, j0) for the K block [pc, pc + kc). */
static kiln_cpu_gemm_tile tile_for(const gemm_ctx *g, int64_t i0, int64_t j0, bool first, bool last)
{
    const kiln_cpu_epilogue *e = g->e;
    kiln_cpu_gemm_tile t = {.alpha = e->alpha, .beta = e->beta};
    t.accumulate = !first || g->prefilled;
    t.relu = last && e->act.kind == KILN_CPU_ACT_RELU;
    if (first && !g->prefilled) {
        if (e->bias_kind == KILN_CPU_BIAS_SCALAR) t.scalar = e->beta * e->bias[0];
        if (e->bias_kind == KILN_CPU_BIAS_PER_ROW) t.row_bias = e->bias + i0;
        if (e->bias_kind == KILN_CPU_BIAS_PER_COL) t.col_bias = e->bias + j0;
    }
    return t;
}

/* All tiles of the (ic, jc) block for K block [pc, pc + kc). */
static void run_block(const gemm_ctx *g, int64_t ic, int64_t mc, int64_t jc, int64_t nc, int64_t pc, int64_t kc)
{
    const kiln_cpu_kit *kit = g->kit;
    bool first = pc == 0, last = pc + kc == g->K;
    const float *apan;
    int64_t a_step; /* floats between consecutive MR panels */
    /* Rows of A with contiguous k are read in place when the block has at most two column tiles:
       packing (about a cycle per element) then costs a sixth to a third of the FMAs it serves
       (attention's products, N = 32 and 64: 3.24 -> 2.59 and 3.30 -> 3.14 us a head). With
       more tiles a packed panel wins: 12 rows each in its own stream of lines lost 2.5% at
       N = 128. */
    bool a_in_place = !g->a.packed && g->a.cs == 1 && nc <= 2 * (int64_t)kit->nr;
    if (g->a.packed) {
        a_step = panel_k(&g->a, g->K) * kit->mr;
        apan = g->a.data + (ic / kit->mr) * a_step + pc * kit->mr;
    } else if (a_in_place) {
        apan = g->a.data + ic * g->a.rs + pc;
        a_step = kit->mr * g->a.rs;
    } else {
        pack_panels(kit, g->a.data + ic * g->a.rs + pc * g->a.cs, g->a.rs, g->a.cs, mc, kc, kit->mr, g->abuf);
        apan = g->abuf;
        a_step = kc * kit->mr;
    }
    const float *bpan;
    int64_t b_step;
    if (g->b.packed) {
        b_step = panel_k(&g->b, g->K) * kit->nr;
        bpan = g->b.data + (jc / kit->nr) * b_step + pc * kit->nr;
    } else {
        bpan = g->bbuf;
        b_step = kc * kit->nr;
    }
    /* Column strips of KILN_GEMM_B_STRIP_BYTES; in each, every MR panel of A meets the strip's B
       micro-panels (from L2) in turn. A block of one or two MR panels takes strips of one
       micro-panel: then each B micro-panel meets its A panels back to back and is read once.
       A B packed ahead of time streams from memory in such products (ResNet-18's 7x7
       Winograd layers: 16 tiles as rows, 1 MiB of filters per position) and the second A
       panel read it again from L3: 1.80 -> 1.71 ms a layer. */
    int64_t js_cols = KILN_GEMM_B_STRIP_BYTES / (kc * (int64_t)sizeof(float)) / kit->nr * kit->nr;
    if (js_cols < (int64_t)kit->nr || mc <= 2 * (int64_t)kit->mr) js_cols = kit->nr;
    for (int64_t js = 0; js < nc; js += js_cols) {
        int64_t js_end = kiln_min_i64(nc, js + js_cols);
        for (int64_t ir = 0; ir < mc; ir += kit->mr) {
            const float *a = apan + (ir / kit->mr) * a_step;
            size_t m = (size_t)kiln_min_i64(kit->mr, mc - ir);
            for (int64_t jr = js; jr < js_end; jr += kit->nr) {
                kiln_cpu_gemm_tile t = tile_for(g, ic + ir, jc + jr, first, last);
                if (a_in_place) t.a_step = 1, t.a_ld = (size_t)g->a.rs;
                float *c = g->y + (ic + ir) * g->ldy + jc + jr;
                kit->gemm((size_t)kc, a, bpan + (jr / kit->nr) * b_step, c, (size_t)g->ldy, m,
                          (size_t)kiln_min_i64(kit->nr, nc - jr), &t);
            }
        }
    }
    if (last && !act_fuses(&g->e->act)) {
        for (int64_t i = 0; i < mc; i++) {
            float *row = g->y + (ic + i) * g->ldy + jc;
            kit->act(&g->e->act, row, row, (size_t)nc);
        }
    }
}

/* M <= MR with B packed ahead of time and room for A's whole row panel: the products of decode
   shapes, bound by the stream of weights. A is packed once for all of K (its K blocks sit at
   kc * MR steps, as run_block's would) — or, one contiguous row (M = 1), read in place — then
   every NR panel of B is read front to back, one contiguous stream, its K blocks in the blocked
   order; each element of Y meets the same tiles with the same epilogues in the same order as in
   the blocked loops, so no result bit differs. */
static void run_short_a(const gemm_ctx *g)
{
    const kiln_cpu_kit *kit = g->kit;
    bool in_place = g->M == 1 && g->a.cs == 1;
    const float *a = in_place ? g->a.data : g->abuf;
    int64_t a_step = in_place ? 1 : kit->mr;
    if (!in_place) pack_panels(kit, g->a.data, g->a.rs, g->a.cs, g->M, g->K, kit->mr, g->abuf);
    for (int64_t jr = 0; jr < g->N; jr += kit->nr) {
        const float *bpan = g->b.data + (jr / kit->nr) * panel_k(&g->b, g->K) * kit->nr;
        size_t n = (size_t)kiln_min_i64(kit->nr, g->N - jr);
        for (int64_t pc = 0; pc < g->K; pc += g->plan.kc) {
            int64_t kc = kiln_min_i64(g->plan.kc, g->K - pc);
            kiln_cpu_gemm_tile t = tile_for(g, 0, jr, pc == 0, pc + kc == g->K);
            t.a_step = (uint32_t)a_step;
            kit->gemm((size_t)kc, a + pc * a_step, bpan + pc * kit->nr, g->y + jr, (size_t)g->ldy,
                      (size_t)g->M, n, &t);
        }
        for (int64_t i = 0; i < g->M && !act_fuses(&g->e->act); i++) {
            float *seg = g->y + i * g->ldy + jr;
            kit->act(&g->e->act, seg, seg, n);
        }
    }
}

/* ---- precision bf16: B packed as bf16 pairs --------------------------------------------------- */

/* Rows [r0, r0 + rows) of A, k pairs [p0, p0 + kp), rounded to bf16 pairs in MR-row panels
   (dst[(panel * kp + q) * MR + i]); rows past the block and k past K are zero. When A is packed
   (r0 a multiple of MR), panel rows k and k + 1 are MR contiguous floats each: the kit rounds
   them as vectors, where the per-element strided path made a bf16 ResNet-18 on two threads
   slower than f32. row_words (MR x kp words; only for rows with contiguous k): see below. */
static void pack_bf16_pairs(const kiln_cpu_kit *kit, const kiln_cpu_operand *a, int64_t r0, int64_t rows, int64_t p0,
                            int64_t kp, int64_t K, uint32_t *row_words, uint32_t *dst)
{
    const uint32_t mr = kit->mr;
    for (int64_t p = 0; p < rows; p += mr) {
        int64_t live = rows - p < (int64_t)mr ? rows - p : (int64_t)mr;
        uint32_t *out = dst + p / mr * kp * mr;
        if (row_words) {
            /* Rows with contiguous k (a MatMul's activations): each row's pairs by the kit's
               vector rounding, then the panel transposed from them as 32-bit words. The
               per-element path below made a bf16 GEMM of 1024^3 spend a sixth of its time here. */
            int64_t n = 2 * kp < K - 2 * p0 ? 2 * kp : K - 2 * p0;
            for (int64_t i = 0; i < live; i++)
                kit->bf16_row(a->data + (r0 + p + i) * a->rs + 2 * p0, (size_t)n, row_words + i * kp);
            if (live < (int64_t)mr) memset(out, 0, (size_t)(kp * mr) * sizeof(uint32_t));
            kit->pack_rows((const float *)(const void *)row_words, kp, live, kp, mr, (float *)(void *)out);
            continue;
        }
        const float *panel = a->packed ? a->data + (r0 + p) / mr * K * mr : NULL;
        for (int64_t q = 0; q < kp; q++, out += mr) {
            int64_t k = 2 * (p0 + q);
            if (panel && live == (int64_t)mr && k + 1 < K) {
                kit->bf16_pairs(panel + k * mr, panel + (k + 1) * mr, mr, out);
                continue;
            }
            for (int64_t i = 0; i < (int64_t)mr; i++) {
                if (i >= live) {
                    out[i] = 0;
                    continue;
                }
                const float *at = panel ? panel + i : a->data + (r0 + p + i) * a->rs;
                int64_t step = panel ? mr : a->cs;
                uint32_t lo = kiln_cpu_f32_to_bf16(at[k * step]);
                uint32_t hi = k + 1 < K ? kiln_cpu_f32_to_bf16(at[(k + 1) * step]) : 0;
                out[i] = lo | hi << 16;
            }
        }
    }
}

/* B packed ahead of time as bf16 pairs (precision bf16; the kit must have gemm_bf16): A (strided,
   or f32 MR panels: an im2col chunk, a Winograd V) is rounded to bf16 pairs into the workspace,
   a block of rows for one K block at a time (the f32 path's K blocks, whose lengths are even but
   for a single block), and the bf16 microkernel runs the tiles in the f32 path's order with the
   same epilogues. Products accumulate in f32; only the operands are rounded. */
static kiln_status run_bf16(const gemm_ctx *g, void *workspace, size_t workspace_size)
{
    const kiln_cpu_kit *kit = g->kit;
    if (!kit->gemm_bf16 || !kit->bf16_pairs || !workspace) return KILN_ERROR_INVALID_ARGUMENT;
    const int64_t pairs = (g->K + 1) / 2, kcp = (g->plan.kc + 1) / 2;
    const uint32_t *b = (const uint32_t *)(const void *)g->b.data;
    int64_t panels = (int64_t)(workspace_size / ((size_t)kcp * sizeof(uint32_t))) / kit->mr;
    /* Rows with contiguous k go through one panel of row words (pack_bf16_pairs) after the A
       block, whatever the workspace, so that no result bit depends on its size. */
    bool row_path = !g->a.packed && g->a.cs == 1;
    if (row_path && !kit->bf16_row) return KILN_ERROR_INVALID_ARGUMENT;
    if (row_path) panels--;
    if (panels < 1) return KILN_ERROR_INVALID_ARGUMENT;
    uint32_t *abuf = workspace, *row_words = row_path ? abuf + panels * kit->mr * kcp : NULL;
    int64_t mc = kiln_min_i64(panels * kit->mr, kiln_round_up_i64(g->M, kit->mr));
    for (int64_t pc = 0; pc < pairs; pc += kcp) {
        int64_t kp = kiln_min_i64(kcp, pairs - pc);
        bool first = pc == 0, last = pc + kp == pairs;
        int64_t js_cols = KILN_GEMM_B_STRIP_BYTES / (kp * (int64_t)sizeof(uint32_t)) / kit->nr * kit->nr;
        if (js_cols < (int64_t)kit->nr) js_cols = kit->nr;
        for (int64_t ic = 0; ic < g->M; ic += mc) {
            int64_t rows = kiln_min_i64(mc, g->M - ic);
            pack_bf16_pairs(kit, &g->a, ic, rows, pc, kp, g->K, row_words, abuf);
            for (int64_t js = 0; js < g->N; js += js_cols) {
                int64_t js_end = kiln_min_i64(g->N, js + js_cols);
                for (int64_t ir = 0; ir < rows; ir += kit->mr) {
                    for (int64_t jr = js; jr < js_end; jr += kit->nr) {
                        kiln_cpu_gemm_tile t = tile_for(g, ic + ir, jr, first, last);
                        kit->gemm_bf16((size_t)kp, abuf + ir * kp, b + (jr / kit->nr) * pairs * kit->nr + pc * kit->nr,
                                       g->y + (ic + ir) * g->ldy + jr, (size_t)g->ldy, (size_t)kiln_min_i64(kit->mr, rows - ir),
                                       (size_t)kiln_min_i64(kit->nr, g->N - jr), &t);
                    }
                }
            }
            for (int64_t i = 0; last && i < rows && !act_fuses(&g->e->act); i++) {
                float *row = g->y + (ic + i) * g->ldy;
                kit->act(&g->e->act, row, row, (size_t)g->N);
            }
        }
    }
    return KILN_OK;
}

/* Columns [j0, j0 + cols) of a strided B, rows [k0, k0 + k_rows), as bf16 pair panels of NR
   (kiln_cpu_panels_to_bf16's layout; columns past cols zero); rows of contiguous columns (a
   pointwise convolution's planes) through the kit's vector rounding. */
static void pack_b_pairs(const kiln_cpu_kit *kit, const kiln_cpu_operand *b, int64_t k0, int64_t k_rows, int64_t j0,
                         int64_t cols, uint32_t *dst)
{
    const uint32_t nr = kit->nr;
    for (int64_t p = 0; p < cols; p += nr) {
        int64_t live = kiln_min_i64(nr, cols - p);
        for (int64_t k = 0; k < k_rows; k += 2, dst += nr) {
            const float *lo = b->data + (k0 + k) * b->rs + (j0 + p) * b->cs;
            const float *hi = k + 1 < k_rows ? lo + b->rs : NULL;
            if (b->cs == 1) {
                kit->bf16_pairs(lo, hi, (size_t)live, dst);
            } else {
                for (int64_t j = 0; j < live; j++)
                    dst[j] = (uint32_t)kiln_cpu_f32_to_bf16(lo[j * b->cs]) |
                             (hi ? (uint32_t)kiln_cpu_f32_to_bf16(hi[j * b->cs]) << 16 : 0u);
            }
            for (int64_t j = live; j < (int64_t)nr; j++) dst[j] = 0;
        }
    }
}

/* A packed ahead of time as bf16 pairs (convolution filters, precision bf16) against B in f32
   panels (an im2col chunk, a Winograd V) or strided (a pointwise convolution's input planes):
   each K block of B is rounded to bf16 pairs a strip of panels at a time into the workspace,
   where every MR panel of A meets it, as in run_bf16. */
static kiln_status run_bf16_a(const gemm_ctx *g, void *workspace, size_t workspace_size)
{
    const kiln_cpu_kit *kit = g->kit;
    if (!kit->gemm_bf16 || !kit->bf16_pairs || g->b.packed == KILN_CPU_PACKED_BF16 || !workspace)
        return KILN_ERROR_INVALID_ARGUMENT;
    const int64_t pairs = (g->K + 1) / 2, kcp = (g->plan.kc + 1) / 2;
    const uint32_t *a = (const uint32_t *)(const void *)g->a.data;
    const int64_t cap = (int64_t)(workspace_size / ((size_t)kcp * sizeof(uint32_t))) / kit->nr * kit->nr;
    if (cap < (int64_t)kit->nr) return KILN_ERROR_INVALID_ARGUMENT;
    uint32_t *bbuf = workspace;
    for (int64_t pc = 0; pc < pairs; pc += kcp) {
        int64_t kp = kiln_min_i64(kcp, pairs - pc), k_rows = kiln_min_i64(2 * kp, g->K - 2 * pc);
        bool first = pc == 0, last = pc + kp == pairs;
        int64_t js_cols = kiln_min_i64(cap, KILN_GEMM_B_STRIP_BYTES / (kp * (int64_t)sizeof(uint32_t)) / kit->nr * kit->nr);
        if (js_cols < (int64_t)kit->nr) js_cols = kit->nr;
        for (int64_t js = 0; js < g->N; js += js_cols) {
            int64_t js_end = kiln_min_i64(g->N, js + js_cols);
            for (int64_t jr = js; jr < js_end && g->b.packed; jr += kit->nr) {
                const float *rows = g->b.data + (jr / kit->nr) * g->K * kit->nr + 2 * pc * kit->nr;
                for (int64_t q = 0; q < kp; q++)
                    kit->bf16_pairs(rows + 2 * q * kit->nr, 2 * q + 1 < k_rows ? rows + (2 * q + 1) * kit->nr : NULL,
                                    kit->nr, bbuf + (jr - js) * kp + q * kit->nr);
            }
            if (!g->b.packed) pack_b_pairs(kit, &g->b, 2 * pc, k_rows, js, js_end - js, bbuf);
            for (int64_t ir = 0; ir < g->M; ir += kit->mr) {
                for (int64_t jr = js; jr < js_end; jr += kit->nr) {
                    kiln_cpu_gemm_tile t = tile_for(g, ir, jr, first, last);
                    kit->gemm_bf16((size_t)kp, a + (ir / kit->mr) * pairs * kit->mr + pc * kit->mr, bbuf + (jr - js) * kp,
                                   g->y + ir * g->ldy + jr, (size_t)g->ldy, (size_t)kiln_min_i64(kit->mr, g->M - ir),
                                   (size_t)kiln_min_i64(kit->nr, g->N - jr), &t);
                }
            }
        }
    }
    for (int64_t i = 0; i < g->M && !act_fuses(&g->e->act); i++) {
        float *row = g->y + i * g->ldy;
        kit->act(&g->e->act, row, row, (size_t)g->N);
    }
    return KILN_OK;
}

kiln_status kiln_cpu_gemm_run(const kiln_cpu_kit *kit, int64_t M, int64_t N, int64_t K, kiln_cpu_operand a,
                              kiln_cpu_operand b, float *y, int64_t ldy, const kiln_cpu_epilogue *e, void *workspace,
                              size_t workspace_size)
{
    if (M <= 0 || N <= 0) return KILN_OK;
    if (K <= 0) {
        if (!e->accumulate) kiln_cpu_gemm_fill_bias(M, N, y, ldy, e);
        for (int64_t i = 0; i < M && !kiln_cpu_act_is_identity(&e->act); i++)
            kit->act(&e->act, y + i * ldy, y + i * ldy, (size_t)N);
        return KILN_OK;
    }
    gemm_ctx g = {.kit = kit, .M = M, .N = N, .K = K, .a = a, .b = b, .y = y, .ldy = ldy, .e = e};
    if (!kiln_cpu_gemm_plan_fit(kit->mr, kit->nr, M, N, K, a.packed, b.packed, workspace_size, &g.plan))
        return KILN_ERROR_INVALID_ARGUMENT;
    g.bbuf = workspace;
    g.abuf = workspace ? (float *)((char *)workspace + g.plan.b_bytes) : NULL; /* both packed: no buffer */
    if (e->accumulate) {
        g.prefilled = true; /* Y holds the sum so far */
    } else if (e->bias_kind == KILN_CPU_BIAS_FULL) {
        kiln_cpu_gemm_fill_bias(M, N, y, ldy, e);
        g.prefilled = true;
    }
    /* The bf16 paths read whole panels only. */
    if ((a.packed == KILN_CPU_PACKED_BF16 || b.packed == KILN_CPU_PACKED_BF16) && (a.panel_k || b.panel_k))
        return KILN_ERROR_INVALID_ARGUMENT;
    if (b.packed == KILN_CPU_PACKED_BF16) return run_bf16(&g, workspace, workspace_size);
    if (a.packed == KILN_CPU_PACKED_BF16) return run_bf16_a(&g, workspace, workspace_size);
    size_t panel = short_a_panel_bytes(kit->mr, M, K, b.packed && !a.packed, SIZE_MAX);
    if (panel && workspace && panel <= workspace_size) {
        g.abuf = workspace;
        run_short_a(&g);
        return KILN_OK;
    }
    for (int64_t jc = 0; jc < N; jc += g.plan.nc) {
        int64_t nc = kiln_min_i64(g.plan.nc, N - jc);
        for (int64_t pc = 0; pc < K; pc += g.plan.kc) {
            int64_t kc = kiln_min_i64(g.plan.kc, K - pc);
            /* B's columns are the panel rows: swap its strides to pack it like A. */
            if (!b.packed) pack_panels(kit, b.data + pc * b.rs + jc * b.cs, b.cs, b.rs, nc, kc, kit->nr, g.bbuf);
            for (int64_t ic = 0; ic < M; ic += g.plan.mc) run_block(&g, ic, kiln_min_i64(g.plan.mc, M - ic), jc, nc, pc, kc);
        }
    }
    return KILN_OK;
}
