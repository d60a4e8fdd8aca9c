/* validate_data.c — load-time validation of the data-movement steps: CONCAT, SLICE, PAD and
 * WHERE (the contract is validate.c's: every field in its domain, every tensor large enough for
 * the furthest element the kernel touches, the params describing exactly the output).
 *
 * Layer: backends/cpu/kernels. Built from validate_kit.h.
 */
#include "backends/cpu/kernels/op_info.h"
#include "backends/cpu/kernels/validate_kit.h"

static bool elem_size_ok(uint32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

/* Tensor t exists and its dtype is elem_size bytes wide (the kernel moves such units). */
static bool elem_is(const kiln_tensor *t, uint32_t elem_size) { return t && kiln_dtype_size(t->dtype) == elem_size; }

kiln_status kiln_cpu_validate_concat(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_concat_params *p = params;
    KILN_CHECK(p->n >= 1 && p->n <= KILN_CPU_CONCAT_MAX_INPUTS && p->n == io->n_in && elem_size_ok(p->elem_size), BAD);
    KILN_CHECK(in_range(p->outer, 0, COUNT_MAX) && in_range(p->out_row, 0, COUNT_MAX), BAD);
    int64_t count;
    KILN_CHECK(mul3(p->outer, p->out_row, 1, &count), BAD);
    KILN_TRY(out_count_is(io, count));
    KILN_CHECK(elem_is(io->out[0], p->elem_size), BAD);
    for (uint32_t i = 0; i < p->n; i++) {
        KILN_CHECK(in_range(p->row[i], 0, p->out_row) && in_range(p->offset[i], 0, p->out_row - p->row[i]), BAD);
        KILN_CHECK(in_range(p->in_row[i], p->row[i], COUNT_MAX), BAD);
        KILN_CHECK(elem_is(io->in[i], p->elem_size), BAD);
        int64_t extent = 0;
        if (p->outer > 0 && p->row[i] > 0)
            KILN_CHECK(mul3(p->outer - 1, p->in_row[i], 1, &extent) && !__builtin_add_overflow(extent, p->row[i], &extent),
                       BAD);
        KILN_TRY(need_in(io, i, -1, (uint64_t)extent * p->elem_size));
    }
    return need_out(io, 0, -1, (uint64_t)count * p->elem_size);
}

kiln_status kiln_cpu_validate_slice(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_slice_params *p = params;
    KILN_CHECK(p->rank <= KILN_CPU_MAX_RANK && elem_size_ok(p->elem_size), BAD);
    KILN_CHECK(io->n_in == 1 && elem_is(io->in[0], p->elem_size) && io->n_out == 1 && elem_is(io->out[0], p->elem_size),
               BAD);
    int64_t count = 1, lo, hi;
    KILN_CHECK(in_range(p->offset, 0, COUNT_MAX), BAD);
    lo = hi = p->offset;
    for (uint32_t d = 0; d < p->rank; d++) {
        KILN_CHECK(in_range(p->out_shape[d], 0, COUNT_MAX) && in_range(p->strides[d], -COUNT_MAX, COUNT_MAX), BAD);
        KILN_CHECK(!__builtin_mul_overflow(count, p->out_shape[d], &count), BAD);
    }
    KILN_TRY(out_count_is(io, count));
    if (count == 0) return KILN_OK;
    /* The lowest and the highest element read: every dim at 0 or at its last index. */
    for (uint32_t d = 0; d < p->rank; d++) {
        int64_t reach;
        KILN_CHECK(!__builtin_mul_overflow(p->out_shape[d] - 1, p->strides[d], &reach), BAD);
        KILN_CHECK(!__builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi), BAD);
    }
    KILN_CHECK(lo >= 0 && hi < COUNT_MAX, BAD);
    KILN_TRY(need_in(io, 0, -1, (uint64_t)(hi + 1) * p->elem_size));
    return need_out(io, 0, -1, (uint64_t)count * p->elem_size);
}

kiln_status kiln_cpu_validate_pad(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_pad_params *p = params;
    KILN_CHECK(p->rank <= KILN_CPU_MAX_RANK && p->mode <= KILN_CPU_PAD_EDGE, BAD);
    int64_t in_count = 1, out_count = 1;
    for (uint32_t d = 0; d < p->rank; d++) {
        KILN_CHECK(in_range(p->in_shape[d], 0, COUNT_MAX) && in_range(p->out_shape[d], 0, COUNT_MAX), BAD);
        KILN_CHECK(in_range(p->begin[d], -COUNT_MAX, COUNT_MAX), BAD);
        KILN_CHECK(!__builtin_mul_overflow(in_count, p->in_shape[d], &in_count), BAD);
        KILN_CHECK(!__builtin_mul_overflow(out_count, p->out_shape[d], &out_count), BAD);
    }
    KILN_TRY(out_count_is(io, out_count));
    /* Reflect and edge read some input element for every output one: none may be empty. */
    KILN_CHECK(out_count == 0 || p->mode == KILN_CPU_PAD_CONSTANT || in_count > 0, BAD);
    KILN_TRY(need_in_f32(io, 0, in_count));
    return need_out_f32(io, 0, out_count);
}

kiln_status kiln_cpu_validate_where(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_where_params *p = params;
    KILN_CHECK(p->rank >= 1 && p->rank <= KILN_CPU_WHERE_MAX_RANK, BAD);
    int64_t count = 1, extent;
    for (uint32_t d = 0; d < p->rank; d++) {
        KILN_CHECK(in_range(p->out_shape[d], 0, COUNT_MAX), BAD);
        KILN_CHECK(!__builtin_mul_overflow(count, p->out_shape[d], &count), BAD);
    }
    KILN_TRY(out_count_is(io, count));
    if (count == 0) return KILN_OK;
    KILN_TRY(strided_extent(p->rank, p->out_shape, p->cond_strides, &extent));
    KILN_TRY(need_in(io, 0, KILN_DTYPE_BOOL, (uint64_t)extent));
    KILN_TRY(strided_extent(p->rank, p->out_shape, p->a_strides, &extent));
    KILN_TRY(need_in_f32(io, 1, extent));
    KILN_TRY(strided_extent(p->rank, p->out_shape, p->b_strides, &extent));
    KILN_TRY(need_in_f32(io, 2, extent));
    return need_out_f32(io, 0, count);
}

/* EMBED: W is U8 bytes of V rows of a type the step decodes (Q8_0, Q4_0, F32) whose row_size is
   that type's for D, the ids `count` integers of id_dtype. Ids themselves are checked by the
   kernel: they are input data. */
kiln_status kiln_cpu_validate_embed(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr)
{
    const kiln_cpu_embed_params *p = params;
    KILN_CHECK(p->dtype == KILN_DTYPE_Q8_0 || p->dtype == KILN_DTYPE_Q4_0 || p->dtype == KILN_DTYPE_F32, BAD);
    KILN_CHECK(p->id_dtype == KILN_DTYPE_I32 || p->id_dtype == KILN_DTYPE_I64, BAD);
    KILN_CHECK(in_range(p->V, 0, COUNT_MAX) && in_range(p->D, 0, COUNT_MAX) && in_range(p->count, 0, COUNT_MAX), BAD);
    size_t row_size;
    KILN_CHECK(kiln_dtype_row_size((kiln_dtype)p->dtype, p->D, &row_size) == KILN_OK && (int64_t)row_size == p->row_size,
               BAD);
    int64_t count, w_bytes, id_bytes;
    KILN_CHECK(mul3(p->count, p->D, 1, &count) && mul3(p->V, p->row_size, 1, &w_bytes) &&
                   mul3(p->count, (int64_t)kiln_dtype_size((kiln_dtype)p->id_dtype), 1, &id_bytes),
               BAD);
    KILN_TRY(out_count_is(io, count));
    KILN_TRY(need_in(io, 0, KILN_DTYPE_U8, (uint64_t)w_bytes));
    KILN_TRY(need_in(io, 1, (int)p->id_dtype, (uint64_t)id_bytes));
    return need_out_f32(io, 0, count);
}
