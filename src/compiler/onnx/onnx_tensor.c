/* onnx_tensor.c — TensorProto <-> kiln_tensor conversion and .pb tensor files.
 * Layer: compiler/onnx. */
#include "compiler/onnx/onnx_tensor.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"

enum {
    ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_UINT16 = 4, ONNX_INT16 = 5, ONNX_INT32 = 6,
    ONNX_INT64 = 7, ONNX_STRING = 8, ONNX_BOOL = 9, ONNX_FLOAT16 = 10, ONNX_DOUBLE = 11,
    ONNX_UINT32 = 12, ONNX_UINT64 = 13, ONNX_BFLOAT16 = 16,
};

kiln_status kiln_onnx_dtype(int32_t t, kiln_dtype *out)
{
    switch (t) {
    case ONNX_FLOAT: *out = KILN_DTYPE_F32; return KILN_OK;
    case ONNX_UINT8: *out = KILN_DTYPE_U8; return KILN_OK;
    case ONNX_INT8: *out = KILN_DTYPE_I8; return KILN_OK;
    case ONNX_UINT16: *out = KILN_DTYPE_U16; return KILN_OK;
    case ONNX_INT16: *out = KILN_DTYPE_I16; return KILN_OK;
    case ONNX_INT32: *out = KILN_DTYPE_I32; return KILN_OK;
    case ONNX_INT64: *out = KILN_DTYPE_I64; return KILN_OK;
    case ONNX_BOOL: *out = KILN_DTYPE_BOOL; return KILN_OK;
    case ONNX_FLOAT16: *out = KILN_DTYPE_F16; return KILN_OK;
    case ONNX_DOUBLE: *out = KILN_DTYPE_F64; return KILN_OK;
    case ONNX_UINT32: *out = KILN_DTYPE_U32; return KILN_OK;
    case ONNX_UINT64: *out = KILN_DTYPE_U64; return KILN_OK;
    case ONNX_BFLOAT16: *out = KILN_DTYPE_BF16; return KILN_OK;
    default: return KILN_ERROR_NOT_SUPPORTED;
    }
}

int32_t kiln_onnx_dtype_from_kiln(kiln_dtype d)
{
    static const int32_t map[KILN_DTYPE_COUNT] = {
        ONNX_FLOAT, ONNX_FLOAT16, ONNX_BFLOAT16, ONNX_DOUBLE, ONNX_INT8, ONNX_INT16, ONNX_INT32,
        ONNX_INT64, ONNX_UINT8, ONNX_UINT16, ONNX_UINT32, ONNX_UINT64, ONNX_BOOL,
    };
    return (unsigned)d < KILN_DTYPE_COUNT ? map[d] : 0;
}

/* Copy n typed-field values into dst, narrowing to the element size of dtype. */
static void copy_typed(const Onnx__TensorProto *tp, kiln_dtype dtype, size_t n, void *dst)
{
    for (size_t i = 0; i < n; i++) {
        switch (dtype) {
        case KILN_DTYPE_F32: ((float *)dst)[i] = tp->float_data[i]; break;
        case KILN_DTYPE_F64: ((double *)dst)[i] = tp->double_data[i]; break;
        case KILN_DTYPE_I64: ((int64_t *)dst)[i] = tp->int64_data[i]; break;
        case KILN_DTYPE_U32: ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i]; break;
        case KILN_DTYPE_U64: ((uint64_t *)dst)[i] = tp->uint64_data[i]; break;
        case KILN_DTYPE_I32: ((int32_t *)dst)[i] = tp->int32_data[i]; break;
        case KILN_DTYPE_I16: ((int16_t *)dst)[i] = (int16_t)tp->int32_data[i]; break;
        case KILN_DTYPE_U16: case KILN_DTYPE_F16: case KILN_DTYPE_BF16:
            ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i]; break;
        case KILN_DTYPE_I8: ((int8_t *)dst)[i] = (int8_t)tp->int32_data[i]; break;
        case KILN_DTYPE_U8: ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i]; break;
        case KILN_DTYPE_BOOL: ((uint8_t *)dst)[i] = tp->int32_data[i] != 0; break;
        }
    }
}

static size_t typed_count(const Onnx__TensorProto *tp, kiln_dtype dtype)
{
    switch (dtype) {
    case KILN_DTYPE_F32: return tp->n_float_data;
    case KILN_DTYPE_F64: return tp->n_double_data;
    case KILN_DTYPE_I64: return tp->n_int64_data;
    case KILN_DTYPE_U32: case KILN_DTYPE_U64: return tp->n_uint64_data;
    default: return tp->n_int32_data;
    }
}

kiln_status kiln_onnx_tensor_to_kiln(const Onnx__TensorProto *tp, const kiln_allocator *a, kiln_tensor *out)
{
    memset(out, 0, sizeof *out);
    kiln_dtype dtype;
    KILN_CHECK(tp->data_type != ONNX_STRING, KILN_ERROR_NOT_SUPPORTED);
    KILN_TRY(kiln_onnx_dtype(tp->data_type, &dtype));
    KILN_CHECK(tp->n_dims <= KILN_MAX_RANK, KILN_ERROR_NOT_SUPPORTED);
    KILN_CHECK(!(tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL),
               KILN_ERROR_NOT_SUPPORTED);
    size_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        KILN_CHECK(tp->dims[i] >= 0, KILN_ERROR_MODEL);
        KILN_CHECK(kiln_mul_size(numel, (size_t)tp->dims[i], &numel), KILN_ERROR_MODEL);
    }
    size_t esize = kiln_dtype_size(dtype), bytes;
    KILN_CHECK(kiln_mul_size(numel, esize, &bytes) && bytes < ((size_t)1 << 40), KILN_ERROR_MODEL);
    if (tp->has_raw_data) {
        KILN_CHECK(tp->raw_data.len == bytes, KILN_ERROR_MODEL);
    } else {
        KILN_CHECK(typed_count(tp, dtype) == numel, KILN_ERROR_MODEL);
    }
    void *data = kiln_alloc(a, bytes, 64);
    KILN_CHECK(data, KILN_ERROR_OUT_OF_MEMORY);
    if (tp->has_raw_data) {
        if (bytes) memcpy(data, tp->raw_data.data, bytes);
    } else {
        copy_typed(tp, dtype, numel, data);
    }
    out->dtype = dtype;
    out->rank = (uint32_t)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) out->shape[i] = tp->dims[i];
    out->data = data;
    return KILN_OK;
}

kiln_status kiln_read_file(const char *path, const kiln_allocator *a, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    KILN_CHECK(f, KILN_ERROR_IO);
    kiln_status st = KILN_OK;
    uint8_t *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    KILN_CHECK_GOTO(n >= 0 && fseek(f, 0, SEEK_SET) == 0, st, KILN_ERROR_IO);
    buf = kiln_alloc(a, (size_t)n, 64);
    KILN_CHECK_GOTO(buf, st, KILN_ERROR_OUT_OF_MEMORY);
    KILN_CHECK_GOTO(fread(buf, 1, (size_t)n, f) == (size_t)n, st, KILN_ERROR_IO);
    fclose(f);
    *data = buf;
    *size = (size_t)n;
    return KILN_OK;
fail:
    kiln_free(a, buf);
    fclose(f);
    return st;
}

kiln_status kiln_onnx_read_tensor_file(const char *path, const kiln_allocator *a, kiln_tensor *out)
{
    memset(out, 0, sizeof *out);
    uint8_t *bytes;
    size_t size;
    KILN_TRY(kiln_read_file(path, a, &bytes, &size));
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, bytes);
    kiln_free(a, bytes);
    KILN_CHECK(tp, KILN_ERROR_FORMAT);
    kiln_status st = kiln_onnx_tensor_to_kiln(tp, a, out);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return st;
}
