/* kernel_kit.h — what the shared op drivers need from one ISA, and the drivers themselves.
 *
 * Layer: backends/cpu/kernels (internal to kernels/; not for aot/ or rt/). The loop nests that
 * do not depend on the ISA — GEMM blocking and packing, im2col, broadcast iteration — live once
 * in the kernels/ directory itself (compiled with the generic flags); each ISA directory
 * supplies a kit of microkernels compiled with its own flags and a table whose step functions
 * pass that kit to the drivers. A driver only calls the kit it is given, so a generic-compiled driver running an
 * avx512 kit still executes avx512 instructions only on CPUs the runtime checked.
 *
 * Every driver assumes its params were accepted by kiln_cpu_step_validate against the very
 * tensors it gets; it checks only what validation cannot know (the workspace it was handed).
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_KERNEL_KIT_H
#define KILN_BACKENDS_CPU_KERNELS_KERNEL_KIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "core/check.h"
#include "core/window_taps.h" /* kiln_window_taps: the kernels clip their windows with it */

/* y[i] = act(x[i]) for i < n; x == y is allowed (in place), other overlap is not. */
typedef void (*kiln_cpu_act_fn)(const kiln_cpu_act *act, const float *x, float *y, size_t n);

/* What a GEMM microkernel does after its K loop, for one MR x NR tile of C:
 *   c = alpha * acc + (accumulate ? c : scalar + beta * (row_bias[i] + col_bias[j]))
 * then c = max(c, 0) (NaN -> 0, as Relu) when relu is set. Absent biases count as zero. With
 * c2 set (one Strassen product feeding two quadrants of C; relu is then off), also
 *   c2 = c2 + alpha2 * acc
 * on the same m x n part at the same row stride. */
typedef struct kiln_cpu_gemm_tile {
    float alpha, beta, scalar;
    uint32_t accumulate, relu;
    const float *row_bias;      /* (m) bias of the tile's rows, or NULL */
    const float *col_bias;      /* (n) bias of the tile's columns, or NULL */
    uint32_t a_step;            /* floats from a's k to k + 1: 0 = MR (a packed panel); 1: the
                                   rows of A read in place, row i at a + i * a_ld */
    uint32_t reserved;
    size_t a_ld;                /* a_step 1, m > 1: floats between rows of A */
    float alpha2;
    float *c2;                  /* a second tile of C the product is added to, or NULL */
} kiln_cpu_gemm_tile;

/* C (m x n, row stride ldc; m <= MR, n <= NR) from a (kc x MR panel: a[k * MR + i], or with
 * tile->a_step = 1 the rows themselves: a[i * a_ld + k]) and b (kc x NR panel: b[k * NR + j]);
 * only the m x n part of C is read or written, and only the m rows of a. kc >= 1. */
typedef void (*kiln_cpu_gemm_ukernel)(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t m,
                                      size_t n, const kiln_cpu_gemm_tile *tile);

/* The same on bf16 pairs (precision bf16): kp pairs of k, a (kp x MR words: a[p * MR + i] holds
 * A(i, 2p) low and A(i, 2p + 1) high) and b (kp x NR words, kiln_cpu_pack_b_bf16's panel);
 * f32 accumulators, the same tile store. */
/* dst[i] = bf16(lo[i]) | bf16(hi[i]) << 16 for i < n (nearest even; hi NULL: high halves 0):
 * the other operand of a bf16 GEMM rounded as it is packed. */
typedef void (*kiln_cpu_bf16_pairs_fn)(const float *lo, const float *hi, size_t n, uint32_t *dst);
/* dst[q] = bf16(x[2q]) | bf16(x[2q + 1]) << 16 for the n floats of a row (ceil(n/2) words; an odd
 * n leaves the last high half 0): a row of A whose k are contiguous, as bf16 pairs. */
typedef void (*kiln_cpu_bf16_row_fn)(const float *x, size_t n, uint32_t *dst);

typedef void (*kiln_cpu_gemm_bf16_ukernel)(size_t kp, const uint32_t *a, const uint32_t *b, float *c, size_t ldc,
                                           size_t m, size_t n, const kiln_cpu_gemm_tile *tile);

/* The contract above, checked at the entry of every GEMM microkernel (f32 and bf16) of an
 * mr x nr tile in debug builds (KILN_CONTRACT: compiled away in release). A driver that breaks
 * it would read or write past the tile: m = 0 underflows the in-place row offsets, m > MR
 * overruns the accumulators, a_step is a panel (0 or MR) or rows in place (1), and a second tile
 * of C cannot take a Relu'd product. The kernels load and store unaligned, so float alignment is
 * all they rely on. */
#define KILN_CPU_GEMM_CONTRACT(kc, a, b, c, ldc, m, n, tile, mr, nr)                              \
    do {                                                                                         \
        KILN_CONTRACT((kc) >= 1);                                                                \
        KILN_CONTRACT((a) != NULL && (b) != NULL && (c) != NULL && (tile) != NULL);              \
        KILN_CONTRACT((m) >= 1 && (m) <= (mr));                                                  \
        KILN_CONTRACT((n) >= 1 && (n) <= (nr));                                                  \
        KILN_CONTRACT((m) == 1 || (ldc) >= (n));                                                 \
        KILN_CONTRACT((uintptr_t)(c) % _Alignof(float) == 0);                                    \
        KILN_CONTRACT((tile)->a_step == 0 || (tile)->a_step == 1 || (tile)->a_step == (mr));     \
        KILN_CONTRACT(!(tile)->c2 || !(tile)->relu);                                             \
    } while (0)

/* y[i * sy] = a[i * sa] op b[i * sb] for i < n (op: kiln_cpu_binary_kind); sy is 1. */
typedef void (*kiln_cpu_binary_fn)(uint32_t kind, const float *a, int64_t sa, const float *b, int64_t sb, float *y,
                                   size_t n);

/* y[i] = x[i] * scale + shift for i < n (in place allowed). */
typedef void (*kiln_cpu_scale_shift_fn)(const float *x, float scale, float shift, float *y, size_t n);

/* One (image, channel) plane of a depthwise convolution: y (OH x OW) from x (H x W), the
 * plane's KH x KW filter w and bias, through the activation p->act (applied by the kernel, to
 * each value before its one store). */
typedef void (*kiln_cpu_dwconv_fn)(const kiln_cpu_conv_params *p, const float *x, const float *w, float bias,
                                   float *y);

/* Output rows [oh_lo, oh_hi) of one (image, channel) plane of a max pool: y (OH x OW) from x
 * (H x W); each window's first maximum (NaN never wins after the first tap), -FLT_MAX for an
 * empty window. */
typedef void (*kiln_cpu_maxpool_fn)(const kiln_cpu_pool_params *p, const float *x, float *y, int64_t oh_lo,
                                    int64_t oh_hi);

/* im2col of output pixels [pix0, pix0 + live) (live <= nr) of one group (x at the group's first
 * channel) into one NR panel: row k = (c, kh, kw) of the K = C/group x KH x KW rows holds nr
 * floats, the input value each pixel sees through tap k, 0 in the padding and in the columns
 * past live. */
typedef void (*kiln_cpu_im2col_fn)(const kiln_cpu_conv_params *p, const float *x, int64_t pix0, int64_t live,
                                   uint32_t nr, float *dst);

/* One GEMM panel from live (<= width) rows of kc contiguous floats each, row i at src + i * rs:
 * dst[k * width + i] = src[i * rs + k]; the lanes past live are left as they are (the caller
 * zeroes them). The A operand's layout for activations, packed at run time for every GEMM. */
typedef void (*kiln_cpu_pack_rows_fn)(const float *src, int64_t rs, int64_t live, int64_t kc, uint32_t width,
                                      float *dst);
/* The same panel of the rows x + sign * y (sign +1 or -1; both sets of rows at stride rs): the A
 * operand of a Strassen product (f32-gemm-strassen.c), summed as it is packed. */
typedef void (*kiln_cpu_pack_rows_sum_fn)(const float *x, const float *y, float sign, int64_t rs, int64_t live,
                                          int64_t kc, uint32_t width, float *dst);

/* Winograd F(2x2, 3x3) (conv params with winograd set). Tile t of an image covers output rows
 * 2 * (t / TW) + {0, 1} and columns 2 * (t % TW) + {0, 1}, TW = ceil(OW / 2), and reads the 4 x 4
 * input patch 2 pixels up and left of them, shifted by the pads (zero outside the input).
 * Input transform: tiles [t0, t0 + live) of one image (x at its first channel) into V = B^T d B
 * for every channel: 16 GEMM B operands of C rows, position xi * 4 + nu at v + pos * v_stride
 * floats, each in nr-column panels (kiln_cpu_pack_b layout; columns past live zero). */
typedef void (*kiln_cpu_wino_in_fn)(const kiln_cpu_conv_params *p, const float *x, int64_t t0, int64_t live,
                                    uint32_t nr, float *v, size_t v_stride);
/* Output transform: m holds the 16 products, position pos at m + pos * m_stride, each `rows` rows
 * (output channels) of ldm floats (column j = tile t0 + j); y = A^T m A for those tiles into the
 * rows' output planes (y at the first), plus bias[row] (bias may be NULL), plus res (NULL, or
 * planes laid out as y's), then p->act. */
typedef void (*kiln_cpu_wino_out_fn)(const kiln_cpu_conv_params *p, const float *m, size_t m_stride, int64_t ldm,
                                     int64_t rows, int64_t t0, int64_t live, const float *bias, const float *res,
                                     float *y);

/* A few rows of a kiln.Linear whose weights are ggml blocks (QLINEAR steps): for r < rows and
 * i < m (1 <= rows <= KILN_CPU_QDOT_ROWS, 1 <= m <= KILN_CPU_QDOT_M, n_blocks >= 1)
 *   y[i * ldy + r] = (bias ? bias[r] : 0) + sum_b d(r, b) * sum_j q(r, b, j) * x[i * ldx + 32 b + j]
 * over the n_blocks 32-element blocks of row r (at w + r * row_size, any alignment): each block's
 * quants converted to f32 and multiplied with the f32 activations, f32 accumulators. One
 * function per block type (q8_0_dot, q4_0_dot). Rows several at a time so that an X block is
 * loaded once for all of them, and m rows of X so that a weight block is converted once for
 * every one (decode: m = 1, streaming the weights). */
#define KILN_CPU_QDOT_ROWS 4u
#define KILN_CPU_QDOT_M 4u
typedef void (*kiln_cpu_qdot_fn)(const uint8_t *w, size_t row_size, size_t rows, size_t n_blocks, const float *x,
                                 size_t ldx, size_t m, const float *bias, float *y, size_t ldy);

typedef struct kiln_cpu_kit {
    uint32_t mr, nr;                /* GEMM register tile = packing layout of weights */
    kiln_cpu_gemm_ukernel gemm;
    kiln_cpu_act_fn act;
    kiln_cpu_binary_fn binary;
    kiln_cpu_scale_shift_fn scale_shift;
    kiln_cpu_dwconv_fn dwconv;
    kiln_cpu_maxpool_fn maxpool;
    kiln_cpu_im2col_fn im2col;
    kiln_cpu_pack_rows_fn pack_rows;
    kiln_cpu_pack_rows_sum_fn pack_rows_sum;
    kiln_cpu_wino_in_fn wino_in;
    kiln_cpu_wino_out_fn wino_out;
    kiln_cpu_gemm_bf16_ukernel gemm_bf16;   /* NULL: the table runs no bf16 weights */
    kiln_cpu_bf16_pairs_fn bf16_pairs;      /* with gemm_bf16 */
    kiln_cpu_bf16_row_fn bf16_row;          /* with gemm_bf16 */
    kiln_cpu_qdot_fn q8_0_dot, q4_0_dot;    /* QLINEAR over Q8_0 / Q4_0 blocks */
} kiln_cpu_kit;

/* The designated initialisers of every kit slot but the tile, the GEMM microkernels and the
 * bf16 ones, from one ISA's functions named FN(name) (e.g. kiln_cpu_f32_vact__avx2): the one
 * list template/kernel-table.h fills a kit from — an ISA's own functions, or the generic ones
 * for the slots a table leaves out. */
#define KILN_CPU_KIT_SLOTS(FN)                                                                   \
    .act = FN(f32_vact), .binary = FN(f32_vbinary), .scale_shift = FN(f32_vscaleshift),          \
    .dwconv = FN(f32_dwconv2d), .maxpool = FN(f32_maxpool2d), .im2col = FN(f32_im2col),          \
    .pack_rows = FN(f32_pack_rows), .pack_rows_sum = FN(f32_pack_rows_sum), .wino_in = FN(f32_wino_in), \
    .wino_out = FN(f32_wino_out), .q8_0_dot = FN(q8_0_dot), .q4_0_dot = FN(q4_0_dot)

/* Keeps the first failure of a step's tasks in *status (which starts as KILN_OK). */
static inline void kiln_cpu_record_failure(atomic_int *status, kiln_status st)
{
    int expected = KILN_OK;
    if (st != KILN_OK) atomic_compare_exchange_strong(status, &expected, (int)st);
}

/* ---- threads (parallel.c) -----------------------------------------------------------------
 * A driver cuts its output into tasks (at most one per thread; task t uses workspace slot t)
 * and runs them with kiln_cpu_parallel. */

/* Tasks a step may run at once: the exec's thread count, or 1 without threads — and 1 when the
 * tasks need a workspace each but the exec has only slot 0. */
size_t kiln_cpu_task_slots(const kiln_cpu_exec *exec, bool needs_workspace);
/* Tasks for `work` units when each task should get at least `grain` of them (so that waking a
 * worker pays): between 1 and kiln_cpu_task_slots. */
size_t kiln_cpu_task_count(const kiln_cpu_exec *exec, int64_t work, int64_t grain, bool needs_workspace);
/* A work estimate for kiln_cpu_task_count formed in double — its factors are each bounded by a
   tensor, their product not by int64 — saturated well below INT64_MAX. */
static inline int64_t kiln_cpu_work_units(double work) { return work > 4e18 ? INT64_MAX : (int64_t)work; }
/* Workspace slot of task t (kiln_cpu_exec). */
void *kiln_cpu_task_workspace(const kiln_cpu_exec *exec, size_t task);
/* Task t's part [*lo, *hi) of n items cut into `tasks` contiguous parts differing by at most one
 * item; _aligned cuts only at multiples of `unit` (the last part ends at n). */
void kiln_cpu_split(int64_t n, size_t tasks, size_t task, int64_t *lo, int64_t *hi);
void kiln_cpu_split_aligned(int64_t n, int64_t unit, size_t tasks, size_t task, int64_t *lo, int64_t *hi);
/* fn(arg, t) for every t < tasks on the exec's threads (inline for one task). */
void kiln_cpu_parallel(const kiln_cpu_exec *exec, size_t tasks, void (*fn)(void *arg, size_t task), void *arg);
/* fn(ctx, lo, hi) on contiguous runs of `rows` independent rows spread over the exec's threads
 * (no workspace), when the rows hold at least two grains of work at row_work units a row. */
typedef void (*kiln_cpu_rows_fn)(const void *ctx, int64_t lo, int64_t hi);
void kiln_cpu_parallel_rows(const kiln_cpu_exec *exec, int64_t rows, int64_t row_work, int64_t grain,
                            kiln_cpu_rows_fn fn, const void *ctx);
/* Elements a row-wise normalisation (softmax, layernorm) must have per task before a worker pays.
   Small: such a step follows a GEMM whose threads wrote its rows, so on one thread it reads half
   its input from the other core's cache; split, each thread finds about its own half. A BERT-like
   layer's softmax (256 x 64) went 8.0 -> 4.5 us at two threads, its layer norms (64 x 128)
   4.1 -> 2.9 us; at 1 << 15 neither split. */
#define KILN_CPU_ROWS_GRAIN ((int64_t)1 << 12)

/* ---- GEMM driver (f32-gemm-driver.c) ------------------------------------------------------
 * Blocking: N in blocks of nc (all of N when B is pre-packed, so A is packed once per K block),
 * K in blocks of kc, M in blocks of mc; inside a block each MR-row slice of A meets 256 KiB
 * strips of B from L2 in turn. kc depends on NR only (kc = 32768 / NR, at most 1024), so
 * the summation order — hence every result bit — is fixed by the kernel table alone; mc comes
 * from the workspace the caller was given (sized from L2), and changes no result bit. Short A
 * (M <= MR with pre-packed B: decode shapes) takes a path that packs A once and streams every
 * weight panel exactly once. */

/* An operand: a strided view (element (r, c) at data[r * rs + c * cs]) or, when packed, panels
 * of the full K as kiln_cpu_pack_a / kiln_cpu_pack_b lay them out — or, packed = 2 (precision
 * bf16: weights, so the other operand is strided or f32 panels), those panels as bf16 pairs
 * (kiln_cpu_pack_b_bf16's layout, MR or NR wide). */
typedef struct kiln_cpu_operand {
    const float *data;
    int64_t rs, cs;
    uint8_t packed;                 /* 0 strided, 1 f32 panels, KILN_CPU_PACKED_BF16 pair panels */
    int64_t panel_k;                /* f32 panels: the K they were laid out for, when the product
                                       runs over a part of it (data at that part's first k, K <=
                                       panel_k; the tap lists of f32-conv-taps.c); 0: the product's K */
} kiln_cpu_operand;

/* 32-bit words from one packed panel (MR or NR wide) of an operand to the next: K floats, or
   ceil(K/2) bf16 pairs. */
static inline int64_t kiln_cpu_panel_words(const kiln_cpu_operand *o, int64_t K, uint32_t width)
{
    return (o->packed == KILN_CPU_PACKED_BF16 ? (K + 1) / 2 : K) * (int64_t)width;
}

typedef struct kiln_cpu_epilogue {
    float alpha, beta;
    uint32_t bias_kind;             /* kiln_cpu_bias_kind */
    const float *bias;              /* FULL: (M x N) row-major */
    kiln_cpu_act act;
    int64_t ldbias;                 /* FULL: row stride of the bias; 0 means N */
    uint32_t accumulate;            /* Y += the product (with no bias): one of the products a
                                       sum over parts of K is split into */
} kiln_cpu_epilogue;

typedef struct kiln_cpu_gemm_plan {
    int64_t kc, mc, nc;
    size_t a_bytes, b_bytes;        /* packing buffers: B (64-aligned size) first, then A */
} kiln_cpu_gemm_plan;

int64_t kiln_cpu_gemm_kc(uint32_t nr);
/* The plan for an M x N x K product whose A/B are packed or not, given l2 (workspace sizing) —
 * and its size in bytes, 64-byte aligned parts. */
size_t kiln_cpu_gemm_workspace(uint32_t mr, uint32_t nr, int64_t M, int64_t N, int64_t K, bool a_packed,
                               bool b_packed, size_t l2);
/* The plan that fits `budget` bytes; false when even one MR panel does not fit. */
bool kiln_cpu_gemm_plan_fit(uint32_t mr, uint32_t nr, int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed,
                            size_t budget, kiln_cpu_gemm_plan *plan);

/* Y (M x N, row stride ldy) = beta * bias as e says (0 without one): the start value of a FULL
 * bias, which the products then add to, or the result of an empty product. */
void kiln_cpu_gemm_fill_bias(int64_t M, int64_t N, float *y, int64_t ldy, const kiln_cpu_epilogue *e);

/* Y (M x N, row stride ldy) = act(alpha * A . B + beta * bias). KILN_ERROR_INVALID_ARGUMENT when
 * the workspace is too small for any plan. */
kiln_status kiln_cpu_gemm_run(const kiln_cpu_kit *kit, int64_t M, int64_t N, int64_t K, kiln_cpu_operand a,
                              kiln_cpu_operand b, float *y, int64_t ldy, const kiln_cpu_epilogue *e, void *workspace,
                              size_t workspace_size);

/* ---- one level of Strassen (f32-gemm-strassen.c) ------------------------------------------
 * A GEMM step whose B is packed as Strassen's seven sums (KILN_CPU_PACKED_STRASSEN; validated:
 * batch 1, M, N, K even, K/2 <= kiln_cpu_gemm_kc(NR)): the workspace of one task, and the step
 * (A strided as the params say, bias as bias_kind says or NULL), tasks cut along M. */
size_t kiln_cpu_gemm_strassen_workspace(uint32_t mr, uint32_t nr, int64_t M, int64_t K, size_t l2);
kiln_status kiln_cpu_gemm_strassen_step(const kiln_cpu_kit *kit, const kiln_cpu_gemm_params *p, const float *a,
                                        const float *b, const float *bias, float *y, const kiln_cpu_exec *exec);

/* ---- threaded GEMMs (f32-gemm-parallel.c) -------------------------------------------------- */

/* One GEMM as kiln_cpu_gemm_run takes it. */
typedef struct kiln_cpu_gemm_problem {
    int64_t M, N, K;
    kiln_cpu_operand a, b;
    float *y;
    int64_t ldy;
    kiln_cpu_epilogue e;
} kiln_cpu_gemm_problem;

/* Problem `index` of a batch described by src. */
typedef void (*kiln_cpu_gemm_batch_fn)(const void *src, int64_t index, kiln_cpu_gemm_problem *out);

/* The `batch` GEMMs get(src, i) — of one shape: M, N, K and which operands are packed are the
 * same for every i — spread over the exec's threads: the products are cut into tiles along M
 * (at MR panels) and N (at NR panels) as a cost model of the tiles' work and repeated packing
 * prefers, and each task runs kiln_cpu_gemm_run on its tiles with its own workspace slot of
 * exec->workspace_size bytes (enough for the whole problem, hence for any tile). Cutting changes
 * no result bit: every element still sums its K products in the same order. */
kiln_status kiln_cpu_gemm_batch(const kiln_cpu_kit *kit, int64_t batch, kiln_cpu_gemm_batch_fn get, const void *src,
                                const kiln_cpu_exec *exec);

/* ---- conv driver (f32-conv2d-driver.c) ---------------------------------------------------- */

/* Pointwise: 1x1 kernel, unit strides, no padding — the input planes are the GEMM's B. */
bool kiln_cpu_conv_is_pointwise(const kiln_cpu_conv_params *p);
size_t kiln_cpu_conv_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2);
/* Winograd convolutions (f32-conv2d-winograd.c): the workspace of one task, and the step on the
   filters u as kiln_cpu_pack_winograd holds them for MR (or NR with pixel_rows) (x, y: whole
   tensors; bias NULL or M floats; res NULL or a tensor of y's shape added before the act). */
size_t kiln_cpu_winograd_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2);
kiln_status kiln_cpu_winograd_step(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x,
                                   const float *u, const float *bias, const float *res, float *y, kiln_cpu_exec *exec);

/* Convolutions with few output pixels (f32-conv2d-pixel-rows.c): the workspace of one task, and
   the step on the filters w packed as GEMM B panels of K = C*KH*KW rows by M columns (bias
   NULL or M floats; res NULL or a tensor of y's shape added before the act). */
size_t kiln_cpu_pixel_rows_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2);
kiln_status kiln_cpu_pixel_rows_step(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x,
                                     const float *w, const float *bias, const float *res, float *y,
                                     kiln_cpu_exec *exec);

/* Convolutions on tap lists (f32-conv-taps.c; params taps = 1: 3-D, and dilated 2-D): the
   workspace of one task, and the step on the filters w packed as the params say (bias NULL or M
   floats; res NULL or a tensor of y's shape added before the act). */
size_t kiln_cpu_conv_taps_workspace(uint32_t mr, uint32_t nr, const kiln_cpu_conv_params *p, size_t l2);
kiln_status kiln_cpu_conv_taps_step(const kiln_cpu_kit *kit, const kiln_cpu_conv_params *p, const float *x,
                                    const float *w, const float *bias, const float *res, float *y,
                                    kiln_cpu_exec *exec);

/* ---- step functions shared by every table, parameterised by the kit ------------------------ */
kiln_status kiln_cpu_gemm_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                               kiln_tensor *const *out, kiln_cpu_exec *exec);
kiln_status kiln_cpu_conv2d_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec);
kiln_status kiln_cpu_unary_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                kiln_tensor *const *out, kiln_cpu_exec *exec);
kiln_status kiln_cpu_binary_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec);
kiln_status kiln_cpu_affine_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec);
/* In generic/f32-pool2d-generic.c: max pools run the kit's rows, average pools plain C. */
/* qlinear-driver.c: kiln.Linear over ggml blocks, output columns split over the threads. */
kiln_status kiln_cpu_qlinear_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                  kiln_tensor *const *out, kiln_cpu_exec *exec);
kiln_status kiln_cpu_pool2d_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec);

/* ISA-independent steps (generic/), shared by every table. */
kiln_status kiln_cpu_x_copy__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                     kiln_cpu_exec *exec);
kiln_status kiln_cpu_x_transpose__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                          kiln_cpu_exec *exec);
kiln_status kiln_cpu_x_slice__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec);
kiln_status kiln_cpu_x_concat__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                       kiln_cpu_exec *exec);
/* In generic/f32-pad-where-generic.c. */
kiln_status kiln_cpu_f32_pad__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec);
kiln_status kiln_cpu_f32_where__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                        kiln_cpu_exec *exec);
/* In generic/x-embed-generic.c: the rows of W by id, decoded to f32. */
kiln_status kiln_cpu_x_embed__generic(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                      kiln_cpu_exec *exec);

/* True for activations that leave every value unchanged. */
static inline bool kiln_cpu_act_is_identity(const kiln_cpu_act *act)
{
    return act->kind == KILN_CPU_ACT_NONE || act->kind == KILN_CPU_ACT_IDENTITY;
}

#endif
