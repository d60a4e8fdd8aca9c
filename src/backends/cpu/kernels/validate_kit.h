/* validate_kit.h — the checks every validator of step parameters is built from (validate.c,
 * validate_data.c; see the contract there).
 *
 * Layer: backends/cpu/kernels (internal). Each helper returns BAD (KILN_ERROR_INCOMPATIBLE) on a
 * violation; sizes are the buffers' bytes from kiln_cpu_step_io.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_VALIDATE_KIT_H
#define KILN_BACKENDS_CPU_KERNELS_VALIDATE_KIT_H

#include "backends/cpu/kernels/kernel_kit.h"
#include "core/check.h"

/* Counts, leading dims and batch strides: far above real tensors, far below overflow. */
#define COUNT_MAX ((int64_t)1 << 48)
/* Conv and pool geometry: products of two stay below 2^60, sums of three below 2^62. */
#define GEOMETRY_MAX ((int64_t)1 << 30)
#define PANEL_MAX 256u

#define BAD KILN_ERROR_INCOMPATIBLE

static inline bool in_range(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

/* a * b * ... for non-negative factors; false on overflow. */
static inline bool mul3(int64_t a, int64_t b, int64_t c, int64_t *out)
{
    int64_t t;
    return !__builtin_mul_overflow(a, b, &t) && !__builtin_mul_overflow(t, c, out);
}

static inline bool mul4(int64_t a, int64_t b, int64_t c, int64_t d, int64_t *out)
{
    int64_t t;
    return mul3(a, b, c, &t) && !__builtin_mul_overflow(t, d, out);
}

/* Bytes of a tensor's buffer, after checking the tensor exists, has `dtype` (unless dtype < 0)
   and that its own shape fits the buffer. */
static inline kiln_status tensor_bytes(const kiln_tensor *t, const size_t *sizes, size_t i, int dtype, uint64_t *bytes)
{
    KILN_CHECK(t != NULL, BAD);
    KILN_CHECK(dtype < 0 || t->dtype == (kiln_dtype)dtype, BAD);
    KILN_CHECK(t->rank <= KILN_MAX_RANK, BAD);
    size_t elem = kiln_dtype_size(t->dtype);
    KILN_CHECK(elem > 0, BAD);
    uint64_t shape_bytes = elem;
    for (uint32_t d = 0; d < t->rank; d++) {
        KILN_CHECK(t->shape[d] >= 0, BAD);
        KILN_CHECK(kiln_mul_u64(shape_bytes, (uint64_t)t->shape[d], &shape_bytes), BAD);
    }
    *bytes = sizes ? sizes[i] : shape_bytes;
    KILN_CHECK(shape_bytes <= *bytes, BAD);
    return KILN_OK;
}

/* Elements of a tensor's shape (each dim >= 0, the product checked). */
static inline kiln_status shape_numel(const kiln_tensor *t, int64_t *numel)
{
    KILN_CHECK(t != NULL && t->rank <= KILN_MAX_RANK, BAD);
    *numel = 1;
    for (uint32_t d = 0; d < t->rank; d++)
        KILN_CHECK(t->shape[d] >= 0 && !__builtin_mul_overflow(*numel, t->shape[d], numel), BAD);
    return KILN_OK;
}

/* The params describe every element of the output: `count` (their product, computed with
   checked arithmetic by the caller) is exactly the elements of output 0's shape. */
static inline kiln_status out_count_is(const kiln_cpu_step_io *io, int64_t count)
{
    int64_t numel;
    KILN_CHECK(io->n_out >= 1, BAD);
    KILN_TRY(shape_numel(io->out[0], &numel));
    KILN_CHECK(numel == count, BAD);
    return KILN_OK;
}

/* Input i must exist, be `dtype` (-1: any) and hold at least `need` bytes. */
static inline kiln_status need_in(const kiln_cpu_step_io *io, size_t i, int dtype, uint64_t need)
{
    KILN_CHECK(i < io->n_in, BAD);
    uint64_t have;
    KILN_TRY(tensor_bytes(io->in[i], io->in_sizes, i, dtype, &have));
    KILN_CHECK(need <= have, BAD);
    return KILN_OK;
}

static inline kiln_status need_out(const kiln_cpu_step_io *io, size_t i, int dtype, uint64_t need)
{
    KILN_CHECK(i < io->n_out, BAD);
    uint64_t have;
    KILN_TRY(tensor_bytes(io->out[i], io->out_sizes, i, dtype, &have));
    KILN_CHECK(need <= have, BAD);
    return KILN_OK;
}

/* Bytes of `count` floats, checked. */
static inline kiln_status f32_bytes(int64_t count, uint64_t *bytes)
{
    KILN_CHECK(count >= 0 && kiln_mul_u64((uint64_t)count, sizeof(float), bytes), BAD);
    return KILN_OK;
}

static inline kiln_status need_in_f32(const kiln_cpu_step_io *io, size_t i, int64_t count)
{
    uint64_t bytes;
    KILN_TRY(f32_bytes(count, &bytes));
    return need_in(io, i, KILN_DTYPE_F32, bytes);
}

static inline kiln_status need_out_f32(const kiln_cpu_step_io *io, size_t i, int64_t count)
{
    uint64_t bytes;
    KILN_TRY(f32_bytes(count, &bytes));
    return need_out(io, i, KILN_DTYPE_F32, bytes);
}

static inline kiln_status check_act(const kiln_cpu_act *act)
{
    KILN_CHECK(act->kind < KILN_CPU_ACT_COUNT, BAD);
    return KILN_OK;
}

/* Elements of an operand laid over `shape` at `strides`: the furthest one plus one. */
static inline kiln_status strided_extent(uint32_t rank, const int64_t *shape, const int64_t *strides, int64_t *extent)
{
    *extent = 1;
    for (uint32_t d = 0; d < rank; d++) {
        int64_t step;
        KILN_CHECK(in_range(strides[d], 0, COUNT_MAX), BAD);
        KILN_CHECK(!__builtin_mul_overflow(shape[d] - 1, strides[d], &step), BAD);
        KILN_CHECK(!__builtin_add_overflow(*extent, step, extent), BAD);
    }
    return KILN_OK;
}

#endif
