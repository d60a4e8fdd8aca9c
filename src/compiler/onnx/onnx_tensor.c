/* onnx_tensor.c — TensorProto <-> kiln_tensor conversion and .pb tensor files.
 * Layer: compiler/onnx. External data is read by onnx_external.c; files are opened through
 * kiln_file_open_read, so a FIFO named as a model or tensor file never blocks. */
#include "compiler/onnx/onnx_tensor.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/file_open.h"

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
        default: break; /* block-quantized: no ONNX element type maps to one (kiln_onnx_dtype) */
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

/* The element count and byte size tp's dims and type describe; fails (why set) when negative or
   beyond what kiln holds in one tensor. */
static kiln_status tensor_size(const Onnx__TensorProto *tp, kiln_dtype dtype, size_t *numel_out, size_t *bytes_out,
                               char *why, size_t why_size)
{
    size_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0) {
            snprintf(why, why_size, "dimension %zu is negative (%lld)", i, (long long)tp->dims[i]);
            return KILN_ERROR_MODEL;
        }
        if (!kiln_mul_size(numel, (size_t)tp->dims[i], &numel)) {
            snprintf(why, why_size, "its dims multiply past 2^64 elements");
            return KILN_ERROR_LIMIT;
        }
    }
    size_t bytes;
    if (!kiln_mul_size(numel, kiln_dtype_size(dtype), &bytes) || bytes >= KILN_ONNX_TENSOR_MAX_BYTES) {
        snprintf(why, why_size, "%zu elements of %s are more than the %llu bytes kiln takes in one tensor", numel,
                 kiln_dtype_name(dtype), (unsigned long long)KILN_ONNX_TENSOR_MAX_BYTES);
        return KILN_ERROR_LIMIT;
    }
    *numel_out = numel;
    *bytes_out = bytes;
    return KILN_OK;
}

kiln_status kiln_onnx_tensor_to_kiln(const Onnx__TensorProto *tp, kiln_onnx_external *ext,
                                     const kiln_allocator *a, kiln_tensor *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (why_size) why[0] = '\0';
    kiln_dtype dtype;
    if (tp->data_type == ONNX_STRING || kiln_onnx_dtype(tp->data_type, &dtype) != KILN_OK) {
        snprintf(why, why_size, "element type %d is not supported", (int)tp->data_type);
        return KILN_ERROR_NOT_SUPPORTED;
    }
    if (tp->n_dims > KILN_MAX_RANK) {
        snprintf(why, why_size, "rank %zu is above kiln's %d", tp->n_dims, KILN_MAX_RANK);
        return KILN_ERROR_NOT_SUPPORTED;
    }
    size_t numel, bytes;
    KILN_TRY(tensor_size(tp, dtype, &numel, &bytes, why, why_size));
    bool external = kiln_onnx_tensor_is_external(tp);
    if (!external && tp->has_raw_data && tp->raw_data.len != bytes) {
        snprintf(why, why_size, "raw_data holds %zu bytes; its dims and type need %zu", tp->raw_data.len, bytes);
        return KILN_ERROR_MODEL;
    }
    if (!external && !tp->has_raw_data && typed_count(tp, dtype) != numel) {
        snprintf(why, why_size, "it holds %zu values; its dims need %zu", typed_count(tp, dtype), numel);
        return KILN_ERROR_MODEL;
    }
    void *data = kiln_alloc(a, bytes, 64);
    if (!data) {
        snprintf(why, why_size, "%s", kiln_status_str(KILN_ERROR_OUT_OF_MEMORY));
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    if (external) {
        kiln_status st = kiln_onnx_external_read(ext, tp, data, bytes, why, why_size);
        if (st != KILN_OK) {
            kiln_free(a, data);
            return st;
        }
    } else if (tp->has_raw_data) {
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

kiln_status kiln_read_file(const char *path, const kiln_allocator *a, uint8_t **data, size_t *size, const char **why)
{
    *data = NULL;
    *size = 0;
    int fd;
    struct stat st;
    KILN_TRY(kiln_file_open_read(path, &fd, &st, why)); /* a FIFO or device is refused unread */
    kiln_status status = KILN_OK;
    size_t n = (size_t)st.st_size, done = 0;
    uint8_t *buf = kiln_alloc(a, n, 64);
    if (why) *why = "out of memory";
    KILN_CHECK_GOTO(buf, status, KILN_ERROR_OUT_OF_MEMORY);
    while (done < n) {
        ssize_t got = read(fd, buf + done, n - done);
        if (got < 0 && errno == EINTR) continue;
        if (why) *why = got < 0 ? strerror(errno) : "the file shrank while it was read";
        KILN_CHECK_GOTO(got > 0, status, KILN_ERROR_IO);
        done += (size_t)got;
    }
    if (why) *why = "";
    close(fd);
    *data = buf;
    *size = n;
    return KILN_OK;
fail:
    kiln_free(a, buf);
    close(fd);
    return status;
}

kiln_status kiln_onnx_read_tensor_file(const char *path, const kiln_allocator *a, kiln_tensor *out)
{
    memset(out, 0, sizeof *out);
    uint8_t *bytes;
    size_t size;
    KILN_TRY(kiln_read_file(path, a, &bytes, &size, NULL));
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, bytes);
    kiln_free(a, bytes);
    KILN_CHECK(tp, KILN_ERROR_FORMAT);
    char why[256];
    kiln_status st = kiln_onnx_tensor_to_kiln(tp, NULL, a, out, why, sizeof why);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return st;
}
