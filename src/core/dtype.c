/* dtype.c — element sizes and names of kiln_dtype, tensor element counts.
 * Layer: core. Depends on kiln.h only. */
#include "kiln/kiln.h"
#include "core/check.h"

size_t kiln_dtype_size(kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F64: case KILN_DTYPE_I64: case KILN_DTYPE_U64: return 8;
    case KILN_DTYPE_F32: case KILN_DTYPE_I32: case KILN_DTYPE_U32: return 4;
    case KILN_DTYPE_F16: case KILN_DTYPE_BF16: case KILN_DTYPE_I16: case KILN_DTYPE_U16: return 2;
    case KILN_DTYPE_I8: case KILN_DTYPE_U8: case KILN_DTYPE_BOOL: return 1;
    }
    return 0;
}

const char *kiln_dtype_name(kiln_dtype dtype)
{
    static const char *const names[KILN_DTYPE_COUNT] = {
        "f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool",
    };
    return (unsigned)dtype < KILN_DTYPE_COUNT ? names[dtype] : "?";
}

int64_t kiln_tensor_numel(const kiln_tensor *tensor)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < tensor->rank && i < KILN_MAX_RANK; i++) {
        if (tensor->shape[i] < 0 || !kiln_mul_i64(n, tensor->shape[i], &n)) return -1;
    }
    return n;
}
