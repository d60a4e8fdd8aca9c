/* cpu_kernels.h — the kernel tables of the `cpu` backend, one per ISA, and weight packing.
 *
 * Layer: backends/cpu/kernels. Depends on core and cpu_ops.h only. Each ISA directory
 * (generic/, avx2/, avx512/) is compiled with that ISA's flags and provides one
 * kiln_cpu_kernels table; a kernel there may only run on a CPU with the target's features.
 * File names say dtype, op, tile and ISA (e.g. avx512/f32-gemm-14x32-avx512.c).
 *
 * Step functions get the step's parameter block (already validated against the tensors by
 * kiln_cpu_step_validate), the input and output tensors (dense; outputs preallocated; absent
 * optional inputs NULL) and a workspace of the size kiln_cpu_workspace_size reported (given a
 * smaller one, GEMM / CONV2D use smaller blocks or return KILN_ERROR_INVALID_ARGUMENT, never
 * reach past it; the workspace size changes no result bit). An output may be the same buffer as an input only for UNARY, CHANNEL_AFFINE,
 * SOFTMAX, LAYERNORM, COPY, and BINARY when that input has the output's own layout; otherwise
 * outputs must not overlap inputs. Kernels keep no state: any number may run at once.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_CPU_KERNELS_H
#define KILN_BACKENDS_CPU_KERNELS_CPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/cpu/cpu_ops.h"
#include "kiln/kiln.h"

/* What a step gets besides its tensors: a workspace and, optionally, threads to spread over.
 * Zero thread fields (n_threads 0 or 1, parallel_for NULL) mean one thread, so an initialiser
 * naming only the workspace stays valid. With threads, parallel_for(pool, n, fn, arg) runs
 * fn(arg, t) for every t < n and returns when all have returned; a kernel calls it with
 * n <= n_threads, and task t uses workspace slot t: slot 0 is `workspace`, slot t >= 1 is
 * thread_workspace + (t - 1) * thread_workspace_stride (each slot workspace_size bytes, 64-byte
 * aligned). Without thread_workspace only tasks that need no workspace run in parallel.
 * Neither the thread count nor which thread runs which task changes a result bit: kernels
 * split outputs, never a reduction. */
typedef struct kiln_cpu_exec {
    void *workspace;                /* 64-byte aligned; slot 0 */
    size_t workspace_size;          /* bytes per slot */
    void (*parallel_for)(void *pool, size_t n, void (*fn)(void *arg, size_t i), void *arg);
    void *pool;
    uint32_t n_threads;
    uint8_t *thread_workspace;      /* slots 1 .. n_threads - 1, or NULL */
    size_t thread_workspace_stride; /* bytes between two slots, a multiple of 64 */
} kiln_cpu_exec;

typedef kiln_status (*kiln_cpu_step_fn)(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out,
                                        kiln_cpu_exec *exec);

typedef struct kiln_cpu_kernels {
    const char *isa;                            /* "generic", "avx2", "avx512", "avx512bf16" */
    uint32_t gemm_mr, gemm_nr;                  /* register tile: packing layout of weights */
    uint32_t bf16;                              /* 1: runs GEMM steps with B packed as bf16 pairs */
    /* Set-up the table's kernels need before they run (NULL, today's tables: none), run by
       kiln_cpu_kernels_setup: process_setup once per load, before any thread_setup (idempotent,
       as a process may load many records: e.g. Linux's arch_prctl(ARCH_REQ_XCOMP_PERM) for AMX
       tiles), and thread_setup on every thread that will run the table's steps (e.g. AMX's
       ldtilecfg, which is per thread). */
    kiln_status (*process_setup)(void);
    void (*thread_setup)(void);
    kiln_cpu_step_fn ops[KILN_CPU_OP_COUNT];    /* indexed by kiln_cpu_op; NULL = unsupported */
} kiln_cpu_kernels;

extern const kiln_cpu_kernels kiln_cpu_kernels_generic;
extern const kiln_cpu_kernels kiln_cpu_kernels_avx2;
extern const kiln_cpu_kernels kiln_cpu_kernels_avx512;
extern const kiln_cpu_kernels kiln_cpu_kernels_avx512bf16;

/* k's process_setup, then its thread_setup on the calling thread and once on each of the exec's
 * other threads (exec->parallel_for over n_threads tasks, each holding its thread until all have
 * started, so no thread runs two): what a runtime calls before the table's first step. KILN_OK,
 * or process_setup's failure. Without hooks it does nothing. */
kiln_status kiln_cpu_kernels_setup(const kiln_cpu_kernels *k, const kiln_cpu_exec *exec);

/* Bytes of workspace a step needs on a kernel table (packing buffers, im2col chunks), sized from
 * the params and the target's cache sizes; 0 if none. Used by the lowering to plan scratch. */
size_t kiln_cpu_workspace_size(const kiln_cpu_kernels *k, uint32_t op, const void *params, size_t l1, size_t l2);

/* Check that params are self-consistent and that every tensor the step would touch is large
 * enough (sizes in bytes, shapes) — run at load for every step, so a corrupt binary is
 * rejected instead of read out of bounds. The step has exactly one output, and its params
 * describe exactly the elements of that output's shape (GEMM batch*M*N, CONV2D N*M*OH*OW ...;
 * its buffer may be larger, e.g. for padded GEMM rows), so a zero dimension means an empty
 * output, a step the executor skips. in/out hold shapes and sizes only (data NULL is fine);
 * in_sizes/out_sizes are the buffers' bytes (NULL: each tensor's own shape), and each tensor's
 * shape must fit its buffer; packed weights are checked with kiln_cpu_pack_*_size at mr/nr,
 * which must be the gemm_mr/gemm_nr of the table that will run the step. Packed CONV2D filters
 * hold the groups back to back, kiln_cpu_pack_a_size(M/group, C/group*KH*KW, mr) bytes each.
 * KILN_OK or KILN_ERROR_INCOMPATIBLE. */
kiln_status kiln_cpu_step_validate(uint32_t op, const void *params, const kiln_tensor *const *in, size_t n_in,
                                   const size_t *in_sizes, kiln_tensor *const *out, size_t n_out,
                                   const size_t *out_sizes, uint32_t mr, uint32_t nr);

/* The tensors of one step and their buffers' bytes, as the validators of kiln_cpu_op_info get
 * them from kiln_cpu_step_validate (sizes NULL: each tensor's own shape). */
typedef struct kiln_cpu_step_io {
    const kiln_tensor *const *in;
    size_t n_in;
    const size_t *in_sizes;
    kiln_tensor *const *out;
    size_t n_out;
    const size_t *out_sizes;
} kiln_cpu_step_io;

/* What the runtime knows of an op besides its kernels: the one place an op's parameters are
 * interpreted outside the kernels and the lowering (op_info.c). The functions get params as a
 * pointer to the op's parameter struct, for validate as stored in the step (the checks of
 * kiln_cpu_step_validate), for the others aligned (the caller copies params_size bytes). */
typedef struct kiln_cpu_op_descriptor {
    size_t params_size;         /* sizeof the op's parameter struct (KILN_CPU_OP_LIST) */
    /* KILN_OK when params and the tensors agree (kiln_cpu_step_validate); never NULL */
    kiln_status (*validate)(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
    /* bytes of workspace on table k given an L2 of l2 bytes (kiln_cpu_workspace_size, which has
       checked k's tile); NULL: the op needs none */
    size_t (*workspace)(const kiln_cpu_kernels *k, const void *params, size_t l2);
    /* whether the step reads a weight packed for the record's register tile; NULL: never */
    bool (*reads_packed)(const void *params);
    /* whether it reads weights as bf16 pairs (precision bf16), which only tables with bf16 run;
       NULL: never */
    bool (*reads_bf16)(const void *params);
} kiln_cpu_op_descriptor;

/* Indexed by kiln_cpu_op; a row of every op of KILN_CPU_OP_LIST (row 0, no op, is zero). */
extern const kiln_cpu_op_descriptor kiln_cpu_op_info[KILN_CPU_OP_COUNT];
/* op's row, or NULL for a value that is no op (from an untrusted binary, say). */
const kiln_cpu_op_descriptor *kiln_cpu_op_find(uint32_t op);

/* Weight packing (pack.c), shared by the lowering and the tests.
 * B panels: N is cut into ceil(N/nr) panels of nr columns; panel p holds K rows of nr floats
 * (columns past N zero-filled), panels back to back. src is K x N row-major (N x K if trans).
 * A panels: M is cut into ceil(M/mr) panels of mr rows; panel p holds K columns of mr floats
 * (rows past M zero-filled). src is M x K row-major (K x M if trans). The size functions return
 * SIZE_MAX for negative dims, a zero width or a size that does not fit in size_t. */
size_t kiln_cpu_pack_b_size(int64_t K, int64_t N, uint32_t nr);   /* bytes */
void kiln_cpu_pack_b(const float *src, int64_t K, int64_t N, int trans, uint32_t nr, float *dst);
/* B for precision bf16: NR-column panels of the ceil(K/2) pairs of k, each pair of one column a
 * 32-bit word (k even in the low half, k + 1 in the high half, bf16 rounded to nearest even;
 * zero past K and past N). The layout the bf16 microkernels' vdpbf16ps reads. */
size_t kiln_cpu_pack_b_bf16_size(int64_t K, int64_t N, uint32_t nr); /* bytes */
void kiln_cpu_pack_b_bf16(const float *src, int64_t K, int64_t N, int trans, uint32_t nr, uint32_t *dst);
/* One level of Strassen's algorithm (7 products of half-size quadrants instead of 8) for large
 * GEMMs whose B is a weight. Quadrant q of a matrix is (row half q / 2, column half q % 2); the
 * seven products P = (sum of A quadrants) . (sum of B quadrants) are each added to one or two
 * quadrants of C, each term with its sign (+1, -1; 0 = no second term). */
typedef struct kiln_cpu_strassen_product {
    int8_t a_quad[2], a_sign[2];
    int8_t b_quad[2], b_sign[2];
    int8_t c_quad[2], c_sign[2];
} kiln_cpu_strassen_product;
#define KILN_CPU_STRASSEN_PRODUCTS 7
extern const kiln_cpu_strassen_product kiln_cpu_strassen[KILN_CPU_STRASSEN_PRODUCTS];
/* K x N B (N x K if trans; K and N even) as the seven products' B sums, each K/2 x N/2 through
 * kiln_cpu_pack_b for nr, back to back in product order (KILN_CPU_PACKED_STRASSEN). */
size_t kiln_cpu_pack_b_strassen_size(int64_t K, int64_t N, uint32_t nr); /* bytes; SIZE_MAX when odd */
void kiln_cpu_pack_b_strassen(const float *src, int64_t K, int64_t N, int trans, uint32_t nr, float *dst);
/* Whether an M x K by K x N product with B a weight runs faster as one Strassen level on every
 * kernel table (measured on the 12x32 and 6x16 tiles; see f32-gemm-strassen.c). */
bool kiln_cpu_gemm_strassen_pays(int64_t M, int64_t N, int64_t K);
/* f32 panels of K rows (pack_b or pack_a layout, `panels` of them, `width` wide) as bf16 pair
 * panels: the layout kiln_cpu_pack_b_bf16 gives (ceil(K/2) rows of words per panel). */
void kiln_cpu_panels_to_bf16(const float *src, int64_t K, int64_t panels, uint32_t width, uint32_t *dst);
/* x rounded to bf16, to nearest even (NaN stays NaN); inline, so packing loops vectorise. */
static inline uint16_t kiln_cpu_f32_to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u); /* NaN: keep it quiet */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
size_t kiln_cpu_pack_a_size(int64_t M, int64_t K, uint32_t mr);   /* bytes */
void kiln_cpu_pack_a(const float *src, int64_t M, int64_t K, int trans, uint32_t mr, float *dst);
/* Winograd F(2x2, 3x3) filters: src is M x C x 3 x 3; each filter g becomes U = G g G^T (4 x 4,
 * G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]), and the 16 matrices U[xi][nu] (M x C each)
 * are stored back to back as A panels (position xi * 4 + nu), pack_a_size(M, C, width) each.
 * With width = MR they are the A operands of M x C; with width = NR the same bytes are U^T
 * packed as B (kiln_cpu_pack_b(U, C, M, trans = 1, NR): the two layouts coincide). */
size_t kiln_cpu_pack_winograd_size(int64_t M, int64_t C, uint32_t width); /* bytes */
void kiln_cpu_pack_winograd(const float *src, int64_t M, int64_t C, uint32_t width, float *dst);

#endif
