/* validate.c — load-time validation of step parameters against tensors (see cpu_kernels.h).
 *
 * Layer: backends/cpu/kernels. The params of a step come from an untrusted context binary, and
 * the kernels index memory with them without further checks, so this is the one gate between a
 * corrupt binary and an out-of-bounds access. For every op it checks that
 *  - every field is in its domain (enums, 0/1 flags, non-negative counts, positive strides) and
 *    below a bound that keeps the kernels' index arithmetic far from int64 overflow;
 *  - the fields agree with each other (group divides channels, leading dims cover rows,
 *    depthwise really is one channel per group, packed B is not batched ...);
 *  - every tensor the kernel touches exists, has the dtype the kernel reads it as, and is at
 *    least as large as the furthest element the access pattern reaches (computed with checked
 *    arithmetic), packed weights included, at the record's MR/NR;
 *  - the params describe exactly the step's one output: the element count they give it (GEMM
 *    batch*M*N, CONV2D N*M*OH*OW, POOL2D N*C*OH*OW, SOFTMAX outer*n*inner, ...) equals the
 *    elements of its shape. "Fits" alone is not enough: a zero factor fits any tensor while the
 *    other factors, loop bounds of the kernel, could be astronomically large. With equality a
 *    zero factor means an empty output (the executor skips such a step, see context_exec.c),
 *    and in a non-empty one every factor is at least 1, so each is bounded by a real tensor;
 *    the dims only inputs have (conv C, H, W ...) must then be at least 1 too and fit X, and
 *    pooling windows must fit the padded input as ONNX requires.
 * A tensor's size is in_sizes[i] / out_sizes[i] (bytes); a NULL size array means "the tensor's
 * own shape", and the shape must always fit the size. Anything else: KILN_ERROR_INCOMPATIBLE.
 */
#include <math.h>

#include "backends/cpu/kernels/kernel_kit.h"
#include "backends/cpu/kernels/op_info.h"
#include "backends/cpu/kernels/validate_kit.h"
#include "core/check.h"

/* Elements spanned by `batch` matrices of rows x cols at row stride ld and batch stride bs:
   the furthest element touched plus one (0 when any count is 0). */
static kiln_status matrix_extent(int64_t batch, int64_t bs, int64_t rows, int64_t ld, int64_t cols, int64_t *extent)
{
    int64_t a = 0, b = 0;
    *extent = 0;
    /* The last batch offset must be representable even when the matrices are empty: a driver
       may form it for an operand it then does not read. */
    KILN_CHECK(batch == 0 || !__builtin_mul_overflow(batch - 1, bs, &a), BAD);
    if (batch == 0 || rows == 0 || cols == 0) return KILN_OK;
    KILN_CHECK(!__builtin_mul_overflow(rows - 1, ld, &b), BAD);
    KILN_CHECK(!__builtin_add_overflow(a, b, extent) && !__builtin_add_overflow(*extent, cols, extent), BAD);
    return KILN_OK;
}

/* ---- GEMM ---- */

static kiln_status validate_gemm_b(const kiln_cpu_gemm_params *p, const kiln_cpu_step_io *io, uint32_t nr)
{
    if (p->b_packed == KILN_CPU_PACKED_BF16) {
        KILN_CHECK(p->b_batch_stride == 0, BAD);
        KILN_CHECK(nr >= 1 && nr <= PANEL_MAX, BAD);
        size_t bytes = kiln_cpu_pack_b_bf16_size(p->K, p->N, nr);
        KILN_CHECK(bytes != SIZE_MAX, BAD);
        return need_in(io, 1, KILN_DTYPE_BF16, bytes);
    }
    if (p->b_packed == KILN_CPU_PACKED_STRASSEN) {
        /* One level of Strassen (f32-gemm-strassen.c): even halves, K/2 in one K block. */
        KILN_CHECK(p->batch == 1 && nr >= 1 && nr <= PANEL_MAX, BAD);
        KILN_CHECK(p->M % 2 == 0 && p->N % 2 == 0 && p->K % 2 == 0 && p->M > 0 && p->N > 0 && p->K > 0, BAD);
        KILN_CHECK(p->K / 2 <= kiln_cpu_gemm_kc(nr), BAD);
        size_t bytes = kiln_cpu_pack_b_strassen_size(p->K, p->N, nr);
        KILN_CHECK(bytes != SIZE_MAX, BAD);
        return need_in(io, 1, KILN_DTYPE_F32, bytes);
    }
    if (p->b_packed) {
        KILN_CHECK(p->b_batch_stride == 0, BAD);
        KILN_CHECK(nr >= 1 && nr <= PANEL_MAX, BAD);
        size_t bytes = kiln_cpu_pack_b_size(p->K, p->N, nr);
        KILN_CHECK(bytes != SIZE_MAX, BAD);
        return need_in(io, 1, KILN_DTYPE_F32, bytes);
    }
    int64_t rows = p->trans_b ? p->N : p->K, cols = p->trans_b ? p->K : p->N, extent;
    KILN_CHECK(p->ldb >= cols, BAD);
    KILN_TRY(matrix_extent(p->batch, p->b_batch_stride, rows, p->ldb, cols, &extent));
    return need_in_f32(io, 1, extent);
}

static kiln_status validate_gemm_bias(const kiln_cpu_gemm_params *p, const kiln_cpu_step_io *io)
{
    int64_t count, mn;
    switch (p->bias_kind) {
    case KILN_CPU_BIAS_NONE: return KILN_OK;
    case KILN_CPU_BIAS_SCALAR: count = 1; break;
    case KILN_CPU_BIAS_PER_COL: count = p->N; break;
    case KILN_CPU_BIAS_PER_ROW: count = p->M; break;
    case KILN_CPU_BIAS_FULL:
        KILN_CHECK(!__builtin_mul_overflow(p->M, p->N, &mn), BAD);
        KILN_TRY(matrix_extent(p->batch, p->bias_batch_stride, 1, 0, mn, &count));
        break;
    default: return BAD;
    }
    return need_in_f32(io, 2, count);
}

kiln_status kiln_cpu_validate_gemm(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_gemm_params *p = params;
    const int64_t counts[] = {p->M, p->N, p->K, p->batch, p->lda, p->ldb, p->ldy, p->a_batch_stride,
                              p->b_batch_stride, p->y_batch_stride, p->bias_batch_stride};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) KILN_CHECK(in_range(counts[i], 0, COUNT_MAX), BAD);
    KILN_CHECK(p->trans_a <= 1 && p->trans_b <= 1 && p->b_packed <= KILN_CPU_PACKED_STRASSEN, BAD);
    KILN_TRY(check_act(&p->act));

    int64_t a_rows = p->trans_a ? p->K : p->M, a_cols = p->trans_a ? p->M : p->K, extent;
    KILN_CHECK(p->lda >= a_cols, BAD);
    KILN_TRY(matrix_extent(p->batch, p->a_batch_stride, a_rows, p->lda, a_cols, &extent));
    KILN_TRY(need_in_f32(io, 0, extent));
    KILN_TRY(validate_gemm_b(p, io, nr));
    KILN_TRY(validate_gemm_bias(p, io));

    KILN_CHECK(p->ldy >= p->N, BAD);
    int64_t count;
    KILN_CHECK(mul3(p->batch, p->M, p->N, &count), BAD);
    KILN_TRY(out_count_is(io, count));
    KILN_TRY(matrix_extent(p->batch, p->y_batch_stride, p->M, p->ldy, p->N, &extent));
    /* Outputs of different batches must not land on each other: each in its own block of rows,
       or each in its own band of columns of shared rows (a product that writes into a transposed
       layout, attention's heads merged back: y_batch_stride N, ldy batch * N). */
    int64_t one, bands;
    KILN_TRY(matrix_extent(1, 0, p->M, p->ldy, p->N, &one));
    bool own_rows = p->y_batch_stride >= one;
    bool own_columns = p->y_batch_stride >= p->N && !__builtin_mul_overflow(p->batch - 1, p->y_batch_stride, &bands) &&
                       !__builtin_add_overflow(bands, p->N, &bands) && bands <= p->ldy;
    KILN_CHECK(p->batch <= 1 || own_rows || own_columns, BAD);
    return need_out_f32(io, 0, extent);
}

/* ---- CONV2D / POOL2D ---- */

static kiln_status validate_conv_weights(const kiln_cpu_conv_params *p, const kiln_cpu_step_io *io, uint32_t mr,
                                         uint32_t nr)
{
    int64_t taps;
    KILN_CHECK(!__builtin_mul_overflow(p->KH, p->KW, &taps), BAD);
    if (p->depthwise) {
        /* One input channel per group and one output channel per input channel. */
        KILN_CHECK(p->group == p->C && p->M == p->C, BAD);
        int64_t count;
        KILN_CHECK(!__builtin_mul_overflow(p->C, taps, &count), BAD);
        return need_in_f32(io, 1, count);
    }
    KILN_CHECK(mr >= 1 && mr <= PANEL_MAX, BAD);
    if (p->winograd) {
        KILN_CHECK(p->KH == 3 && p->KW == 3 && p->stride_h == 1 && p->stride_w == 1 && p->dil_h == 1 &&
                       p->dil_w == 1 && p->group == 1,
                   BAD);
        KILN_CHECK(!p->pixel_rows || (nr >= 1 && nr <= PANEL_MAX), BAD);
        if (p->bf16) {
            size_t one = kiln_cpu_pack_b_bf16_size(p->C, p->M, p->pixel_rows ? nr : mr);
            KILN_CHECK(one != SIZE_MAX && one <= SIZE_MAX / 16, BAD);
            return need_in(io, 1, KILN_DTYPE_BF16, 16 * one);
        }
        size_t bytes = kiln_cpu_pack_winograd_size(p->M, p->C, p->pixel_rows ? nr : mr);
        KILN_CHECK(bytes != SIZE_MAX, BAD);
        return need_in(io, 1, KILN_DTYPE_F32, bytes);
    }
    int64_t K;
    if (p->taps) {
        /* K = KD * KH * C/group * kw_n, the tap-major filters of f32-conv-taps.c. */
        KILN_CHECK(mul4(p->KD, p->KH, p->C / p->group, p->kw_n, &K), BAD);
    } else {
        KILN_CHECK(!__builtin_mul_overflow(p->C / p->group, taps, &K), BAD);
    }
    if (p->pixel_rows) {
        /* The pixels are the rows of a panel the kit's row packing transposes, whose width is a
           uint32. */
        KILN_CHECK(p->group == 1 && nr >= 1 && nr <= PANEL_MAX && p->OH * p->OW <= (int64_t)UINT32_MAX, BAD);
        size_t bytes = p->bf16 ? kiln_cpu_pack_b_bf16_size(K, p->M, nr) : kiln_cpu_pack_b_size(K, p->M, nr);
        KILN_CHECK(bytes != SIZE_MAX, BAD);
        return need_in(io, 1, p->bf16 ? KILN_DTYPE_BF16 : KILN_DTYPE_F32, bytes);
    }
    size_t group_bytes =
        p->bf16 ? kiln_cpu_pack_b_bf16_size(K, p->M / p->group, mr) : kiln_cpu_pack_a_size(p->M / p->group, K, mr);
    uint64_t bytes;
    KILN_CHECK(group_bytes != SIZE_MAX && kiln_mul_u64(group_bytes, (uint64_t)p->group, &bytes), BAD);
    return need_in(io, 1, p->bf16 ? KILN_DTYPE_BF16 : KILN_DTYPE_F32, bytes);
}

/* The fields of tap-list convolutions (f32-conv-taps.c): in their domains with taps, all zero
   without (as every file written before them has them). The kernel reads input frame
   od * stride_d - pad_front + kd * dil_d only for the depth taps kiln_window_taps keeps, and
   input rows the same way per region, so no bound on how the windows sit in X is needed. */
static kiln_status validate_conv_depth(const kiln_cpu_conv_params *p)
{
    const int64_t fields[] = {p->D, p->OD, p->KD, p->stride_d, p->pad_front, p->dil_d, p->kw_lo, p->kw_n};
    if (!p->taps) {
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) KILN_CHECK(fields[i] == 0, BAD);
        return KILN_OK;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) KILN_CHECK(in_range(fields[i], 0, GEOMETRY_MAX), BAD);
    KILN_CHECK(p->KD >= 1 && p->stride_d >= 1 && p->dil_d >= 1, BAD);
    KILN_CHECK(p->kw_lo < p->KW && p->kw_n <= p->KW - p->kw_lo, BAD);
    KILN_CHECK(p->taps == 1 && !p->depthwise && !p->winograd && !p->pixel_rows && !p->bf16, BAD);
    return KILN_OK;
}

kiln_status kiln_cpu_validate_conv(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_conv_params *p = params;
    const int64_t sizes[] = {p->N, p->C, p->H, p->W, p->M, p->OH, p->OW, p->pad_top, p->pad_left};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) KILN_CHECK(in_range(sizes[i], 0, GEOMETRY_MAX), BAD);
    const int64_t positive[] = {p->KH, p->KW, p->stride_h, p->stride_w, p->dil_h, p->dil_w, p->group};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        KILN_CHECK(in_range(positive[i], 1, GEOMETRY_MAX), BAD);
    KILN_CHECK(p->C % p->group == 0 && p->M % p->group == 0, BAD);
    KILN_CHECK(p->has_bias <= 1 && p->depthwise <= 1 && p->winograd <= 1 && p->pixel_rows <= 1 &&
                   p->depthwise + p->winograd <= 1 && p->depthwise + p->pixel_rows <= 1 && p->has_residual <= 1 &&
                   p->bf16 <= 1 && !(p->bf16 && p->depthwise) &&
                   (!p->has_residual || ((p->winograd || p->pixel_rows || p->taps) && p->C >= 1)),
               BAD);
    KILN_TRY(check_act(&p->act));
    KILN_TRY(validate_conv_depth(p));

    int64_t count, frames = p->taps ? p->OD : 1, depth = p->taps ? p->D : 1;
    KILN_CHECK(mul4(p->N, p->M, p->OH, p->OW, &count) && !__builtin_mul_overflow(count, frames, &count), BAD);
    KILN_TRY(out_count_is(io, count));
    /* Every output element reads X (a zero C would leave H and W bounded by nothing); the taps
       are bounded by the filter, which holds M/group x C/group x KH x KW of them. Conv params
       carry no end pads, so nothing more can be said of how the windows sit in X. */
    KILN_CHECK(count == 0 || (p->C >= 1 && p->H >= 1 && p->W >= 1 && depth >= 1), BAD);
    KILN_TRY(need_out_f32(io, 0, count));
    if (p->has_residual) KILN_TRY(need_in_f32(io, 3, count));
    KILN_CHECK(mul4(p->N, p->C, p->H, p->W, &count) && !__builtin_mul_overflow(count, depth, &count), BAD);
    KILN_TRY(need_in_f32(io, 0, count));
    KILN_TRY(validate_conv_weights(p, io, mr, nr));
    if (p->has_bias) KILN_TRY(need_in_f32(io, 2, p->M));
    return KILN_OK;
}

/* One axis of a pooling window, as ONNX (and the lowering's geometry, conv_geom.c) has it: the
   dilated window fits the padded input, and there are at most ceil(room / stride) + 1 outputs
   (ceil mode's count; floor mode and the SAME pads give at most that). Every value is at most
   GEOMETRY_MAX, so no product or sum here overflows. */
static bool pool_axis_fits(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dil, int64_t pad_begin,
                           int64_t pad_end)
{
    int64_t room = in + pad_begin + pad_end - ((k - 1) * dil + 1);
    return room >= 0 && (out - 1) * stride <= room + stride - 1;
}

kiln_status kiln_cpu_validate_pool(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_pool_params *p = params;
    const int64_t sizes[] = {p->N, p->C, p->H, p->W, p->OH, p->OW, p->pad_top, p->pad_left, p->pad_bottom, p->pad_right};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) KILN_CHECK(in_range(sizes[i], 0, GEOMETRY_MAX), BAD);
    const int64_t positive[] = {p->KH, p->KW, p->stride_h, p->stride_w, p->dil_h, p->dil_w};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        KILN_CHECK(in_range(positive[i], 1, GEOMETRY_MAX), BAD);
    KILN_CHECK(p->kind <= KILN_CPU_POOL_AVG && p->count_include_pad <= 1, BAD);
    int64_t count;
    KILN_CHECK(mul4(p->N, p->C, p->OH, p->OW, &count), BAD);
    KILN_TRY(out_count_is(io, count));
    if (count > 0) {
        KILN_CHECK(p->H >= 1 && p->W >= 1, BAD);
        KILN_CHECK(pool_axis_fits(p->H, p->OH, p->KH, p->stride_h, p->dil_h, p->pad_top, p->pad_bottom), BAD);
        KILN_CHECK(pool_axis_fits(p->W, p->OW, p->KW, p->stride_w, p->dil_w, p->pad_left, p->pad_right), BAD);
    }
    KILN_TRY(need_out_f32(io, 0, count));
    KILN_CHECK(mul4(p->N, p->C, p->H, p->W, &count), BAD);
    return need_in_f32(io, 0, count);
}

/* ---- elementwise and rows ---- */

kiln_status kiln_cpu_validate_unary(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_unary_params *p = params;
    KILN_CHECK(in_range(p->count, 0, COUNT_MAX), BAD);
    KILN_TRY(check_act(&p->act));
    KILN_TRY(out_count_is(io, p->count));
    KILN_TRY(need_in_f32(io, 0, p->count));
    return need_out_f32(io, 0, p->count);
}

kiln_status kiln_cpu_validate_binary(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_binary_params *p = params;
    KILN_CHECK(p->kind < KILN_CPU_BIN_COUNT && p->rank <= KILN_CPU_MAX_RANK, BAD);
    KILN_TRY(check_act(&p->act));
    int64_t numel = 1;
    for (uint32_t d = 0; d < p->rank; d++) {
        KILN_CHECK(in_range(p->out_shape[d], 0, COUNT_MAX), BAD);
        KILN_CHECK(!__builtin_mul_overflow(numel, p->out_shape[d], &numel), BAD);
    }
    KILN_TRY(out_count_is(io, numel));
    int64_t a_extent = 0, b_extent = 0;
    if (numel > 0) {
        KILN_TRY(strided_extent(p->rank, p->out_shape, p->a_strides, &a_extent));
        KILN_TRY(strided_extent(p->rank, p->out_shape, p->b_strides, &b_extent));
    }
    KILN_TRY(need_in_f32(io, 0, a_extent));
    KILN_TRY(need_in_f32(io, 1, b_extent));
    return need_out_f32(io, 0, numel);
}

kiln_status kiln_cpu_validate_softmax(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_softmax_params *p = params;
    KILN_CHECK(in_range(p->outer, 0, COUNT_MAX) && in_range(p->n, 0, COUNT_MAX) && in_range(p->inner, 0, COUNT_MAX),
               BAD);
    KILN_CHECK(p->log <= 1, BAD);
    int64_t count;
    KILN_CHECK(mul3(p->outer, p->n, p->inner, &count), BAD);
    KILN_TRY(out_count_is(io, count));
    KILN_TRY(need_in_f32(io, 0, count));
    return need_out_f32(io, 0, count);
}

kiln_status kiln_cpu_validate_layernorm(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_layernorm_params *p = params;
    KILN_CHECK(in_range(p->outer, 0, COUNT_MAX) && in_range(p->n, 0, COUNT_MAX), BAD);
    KILN_CHECK(p->has_bias <= 1 && p->rms <= 1 && p->has_residual <= 1 && isfinite(p->epsilon), BAD);
    int64_t count;
    KILN_CHECK(mul3(p->outer, p->n, 1, &count), BAD);
    KILN_TRY(out_count_is(io, count));
    KILN_TRY(need_in_f32(io, 0, count));
    KILN_TRY(need_in_f32(io, 1, p->n));
    if (p->has_bias) KILN_TRY(need_in_f32(io, 2, p->n));
    if (p->has_residual) KILN_TRY(need_in_f32(io, 3, count));
    return need_out_f32(io, 0, count);
}

kiln_status kiln_cpu_validate_affine(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_affine_params *p = params;
    KILN_CHECK(in_range(p->N, 0, COUNT_MAX) && in_range(p->C, 0, COUNT_MAX) && in_range(p->inner, 0, COUNT_MAX), BAD);
    KILN_TRY(check_act(&p->act));
    int64_t count;
    KILN_CHECK(mul3(p->N, p->C, p->inner, &count), BAD);
    KILN_TRY(out_count_is(io, count));
    KILN_TRY(need_in_f32(io, 0, count));
    KILN_TRY(need_in_f32(io, 1, p->C));
    KILN_TRY(need_in_f32(io, 2, p->C));
    return need_out_f32(io, 0, count);
}

kiln_status kiln_cpu_validate_copy(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_copy_params *p = params;
    int64_t numel, bytes;
    KILN_CHECK(p->bytes >= 0 && io->n_out >= 1, BAD);
    KILN_TRY(shape_numel(io->out[0], &numel));
    /* Exactly the output's bytes (its dtype's size is checked by tensor_bytes below). */
    size_t elem = kiln_dtype_size(io->out[0]->dtype);
    KILN_CHECK(elem > 0 && !__builtin_mul_overflow(numel, (int64_t)elem, &bytes) && bytes == p->bytes, BAD);
    KILN_TRY(need_in(io, 0, -1, (uint64_t)p->bytes));
    return need_out(io, 0, -1, (uint64_t)p->bytes);
}

kiln_status kiln_cpu_validate_transpose(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_transpose_params *p = params;
    KILN_CHECK(p->rank <= KILN_CPU_MAX_RANK, BAD);
    KILN_CHECK(p->elem_size == 1 || p->elem_size == 2 || p->elem_size == 4 || p->elem_size == 8, BAD);
    bool seen[KILN_CPU_MAX_RANK] = {false};
    uint64_t bytes = p->elem_size;
    int64_t count = 1;
    for (uint32_t d = 0; d < p->rank; d++) {
        KILN_CHECK(in_range(p->perm[d], 0, (int64_t)p->rank - 1) && !seen[p->perm[d]], BAD);
        seen[p->perm[d]] = true;
        KILN_CHECK(in_range(p->in_shape[d], 0, COUNT_MAX), BAD);
        KILN_CHECK(kiln_mul_u64(bytes, (uint64_t)p->in_shape[d], &bytes), BAD);
        KILN_CHECK(!__builtin_mul_overflow(count, p->in_shape[d], &count), BAD);
    }
    KILN_TRY(out_count_is(io, count));
    /* The elements are moved as elem_size-byte units: both tensors must be of that dtype size. */
    KILN_CHECK(io->n_in >= 1 && io->in[0] && kiln_dtype_size(io->in[0]->dtype) == p->elem_size, BAD);
    KILN_CHECK(io->n_out >= 1 && io->out[0] && kiln_dtype_size(io->out[0]->dtype) == p->elem_size, BAD);
    KILN_TRY(need_in(io, 0, -1, bytes));
    return need_out(io, 0, -1, bytes);
}

kiln_status kiln_cpu_step_validate(uint32_t op, const void *params, const kiln_tensor *const *in, size_t n_in,
                                   const size_t *in_sizes, kiln_tensor *const *out, size_t n_out,
                                   const size_t *out_sizes, uint32_t mr, uint32_t nr)
{
    /* Every op writes exactly one output; a second one would count as written without ever being. */
    KILN_CHECK(params != NULL && (in || n_in == 0) && out && n_out == 1, BAD);
    const kiln_cpu_op_descriptor *info = kiln_cpu_op_find(op);
    KILN_CHECK(info != NULL, BAD);
    kiln_cpu_step_io io = {in, n_in, in_sizes, out, n_out, out_sizes};
    return info->validate(params, &io, mr, nr);
}

/* QLINEAR: W is U8 bytes holding N rows of K / 32 blocks of a type the kits dot (Q8_0, Q4_0);
   row_size must be that type's, so the kernels' block walk ends where the row does. */
kiln_status kiln_cpu_validate_qlinear(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_qlinear_params *p = params;
    KILN_CHECK(p->dtype == KILN_DTYPE_Q8_0 || p->dtype == KILN_DTYPE_Q4_0, BAD);
    KILN_CHECK(p->has_bias <= 1, BAD);
    KILN_CHECK(in_range(p->M, 0, COUNT_MAX) && in_range(p->N, 0, COUNT_MAX) && in_range(p->K, 0, COUNT_MAX), BAD);
    size_t row_size;
    KILN_CHECK(kiln_dtype_row_size((kiln_dtype)p->dtype, p->K, &row_size) == KILN_OK && (int64_t)row_size == p->row_size,
               BAD);
    int64_t count, x_count, w_bytes;
    KILN_CHECK(mul3(p->M, p->N, 1, &count) && mul3(p->M, p->K, 1, &x_count) && mul3(p->N, p->row_size, 1, &w_bytes),
               BAD);
    KILN_TRY(out_count_is(io, count));
    KILN_TRY(need_in_f32(io, 0, x_count));
    KILN_TRY(need_in(io, 1, KILN_DTYPE_U8, (uint64_t)w_bytes));
    if (p->has_bias) KILN_TRY(need_in_f32(io, 2, p->N));
    return need_out_f32(io, 0, count);
}
