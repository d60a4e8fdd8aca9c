/* dtype.c — sizes, blocks and names of kiln_dtype, tensor element counts and byte sizes.
 * Layer: core. Depends on kiln.h only. Everything is generated from KILN_DTYPE_MAP, so a new type
 * is one line there. Sizes of block-quantized types are counted in whole blocks per row, with
 * checked arithmetic: a row that is not a whole number of blocks has no size. */
#include "kiln/kiln.h"
#include "core/check.h"

typedef struct dtype_info {
    const char *name;
    uint32_t block_elements, block_bytes;
} dtype_info;

static const dtype_info infos[KILN_DTYPE_COUNT] = {
#define KILN_DTYPE_INFO_(name, text, block_elements, block_bytes) {text, block_elements, block_bytes},
    KILN_DTYPE_MAP(KILN_DTYPE_INFO_)
#undef KILN_DTYPE_INFO_
};

static const dtype_info *info(kiln_dtype dtype)
{
    return (unsigned)dtype < KILN_DTYPE_COUNT ? &infos[dtype] : NULL;
}

size_t kiln_dtype_size(kiln_dtype dtype)
{
    const dtype_info *i = info(dtype);
    return i && i->block_elements == 1 ? i->block_bytes : 0;
}

const char *kiln_dtype_name(kiln_dtype dtype)
{
    const dtype_info *i = info(dtype);
    return i ? i->name : "?";
}

int kiln_dtype_is_quantized(kiln_dtype dtype)
{
    const dtype_info *i = info(dtype);
    return i && i->block_elements > 1;
}

kiln_status kiln_dtype_block(kiln_dtype dtype, uint32_t *elements, uint32_t *bytes)
{
    const dtype_info *i = info(dtype);
    if (!i) return KILN_ERROR_INVALID_ARGUMENT;
    if (elements) *elements = i->block_elements;
    if (bytes) *bytes = i->block_bytes;
    return KILN_OK;
}

kiln_status kiln_dtype_row_size(kiln_dtype dtype, int64_t n, size_t *out)
{
    const dtype_info *i = info(dtype);
    if (!i || n < 0) return KILN_ERROR_INVALID_ARGUMENT;
    if (n % i->block_elements != 0) return KILN_ERROR_SHAPE_MISMATCH;
    int64_t bytes;
    if (!kiln_mul_i64(n / i->block_elements, i->block_bytes, &bytes) || (uint64_t)bytes > SIZE_MAX)
        return KILN_ERROR_LIMIT;
    *out = (size_t)bytes;
    return KILN_OK;
}

int64_t kiln_tensor_numel(const kiln_tensor *tensor)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < tensor->rank && i < KILN_MAX_RANK; i++) {
        if (tensor->shape[i] < 0 || !kiln_mul_i64(n, tensor->shape[i], &n)) return -1;
    }
    return n;
}

kiln_status kiln_tensor_size(const kiln_tensor *tensor, size_t *out)
{
    if (!tensor || !info(tensor->dtype) || tensor->rank > KILN_MAX_RANK) return KILN_ERROR_INVALID_ARGUMENT;
    for (uint32_t d = 0; d < tensor->rank; d++)
        if (tensor->shape[d] < 0) return KILN_ERROR_INVALID_ARGUMENT;
    /* rows x the bytes of one row: a plain type's row may be any length, a block type's is whole
       blocks (and a scalar is no row of blocks) */
    if (tensor->rank == 0) return kiln_dtype_is_quantized(tensor->dtype) ? KILN_ERROR_SHAPE_MISMATCH
                                                                          : kiln_dtype_row_size(tensor->dtype, 1, out);
    int64_t rows = 1, row = tensor->shape[tensor->rank - 1];
    for (uint32_t d = 0; d + 1 < tensor->rank; d++)
        if (!kiln_mul_i64(rows, tensor->shape[d], &rows)) return KILN_ERROR_LIMIT;
    size_t row_size;
    KILN_TRY(kiln_dtype_row_size(tensor->dtype, row, &row_size));
    int64_t bytes;
    if (row_size > INT64_MAX || !kiln_mul_i64(rows, (int64_t)row_size, &bytes) || (uint64_t)bytes > SIZE_MAX)
        return KILN_ERROR_LIMIT;
    *out = (size_t)bytes;
    return KILN_OK;
}
