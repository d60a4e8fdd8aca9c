/* tensor_pb.c — TensorProto tensor files with a message for every refusal (see tensor_pb.h).
 *
 * Layer: tools. The checks that have a message of their own run on the decoded proto before
 * kiln_onnx_tensor_to_kiln converts it, so that conversion only fails for what is left: data
 * that does not match the dims, or memory.
 */
#include "tensor_pb.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compiler/onnx/onnx_tensor.h"
#include "core/alloc.h"
#include "core/check.h"
#include "read_file.h"

#define PB_MAX_FILE ((uint64_t)1 << 40)
#define PB_ONNX_STRING 8

static kiln_status pb_fail(char *message, size_t size, kiln_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static kiln_status pb_fail(char *message, size_t size, kiln_status st, const char *fmt, ...)
{
    if (message && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message, size, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* What kiln_onnx_tensor_to_kiln would refuse without saying why, said. */
static kiln_status check_proto(const Onnx__TensorProto *tp, char *message, size_t size)
{
    kiln_dtype dtype;
    if (!tp->has_data_type || tp->data_type == 0)
        return pb_fail(message, size, KILN_ERROR_FORMAT, "the TensorProto has no data type; not a tensor file");
    if (tp->data_type == PB_ONNX_STRING)
        return pb_fail(message, size, KILN_ERROR_NOT_SUPPORTED, "string tensors are not supported");
    if (kiln_onnx_dtype(tp->data_type, &dtype) != KILN_OK)
        return pb_fail(message, size, KILN_ERROR_NOT_SUPPORTED, "ONNX data type %d is not supported", (int)tp->data_type);
    if (tp->n_dims > KILN_MAX_RANK)
        return pb_fail(message, size, KILN_ERROR_LIMIT, "%zu dimensions; kiln supports at most %d", tp->n_dims,
                       KILN_MAX_RANK);
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return pb_fail(message, size, KILN_ERROR_NOT_SUPPORTED,
                       "the tensor's data is stored in an external file; save it inside the .pb");
    for (size_t i = 0; i < tp->n_dims; i++)
        if (tp->dims[i] < 0)
            return pb_fail(message, size, KILN_ERROR_FORMAT, "dimension %zu is negative (%lld)", i,
                           (long long)tp->dims[i]);
    return KILN_OK;
}

/* kiln_onnx_tensor_to_kiln's KILN_ERROR_MODEL once check_proto passed: the element count
   overflows, or the data holds another number of bytes or values than the dims need. */
static kiln_status explain_mismatch(const Onnx__TensorProto *tp, char *message, size_t size)
{
    kiln_dtype dtype;
    size_t numel = 1, bytes = 0;
    bool fits = kiln_onnx_dtype(tp->data_type, &dtype) == KILN_OK;
    for (size_t i = 0; fits && i < tp->n_dims; i++) fits = kiln_mul_size(numel, (size_t)tp->dims[i], &numel);
    fits = fits && kiln_mul_size(numel, kiln_dtype_size(dtype), &bytes) && bytes < PB_MAX_FILE;
    if (!fits) return pb_fail(message, size, KILN_ERROR_LIMIT, "the dims make a tensor larger than 2^40 bytes");
    if (tp->has_raw_data)
        return pb_fail(message, size, KILN_ERROR_FORMAT, "raw_data holds %zu bytes, the dims need %zu",
                       tp->raw_data.len, bytes);
    return pb_fail(message, size, KILN_ERROR_FORMAT,
                   "the typed data field does not hold the %zu values the dims need (and there is no raw_data)", numel);
}

kiln_status cli_read_tensor_pb(const char *path, const kiln_allocator *a, kiln_tensor *out, char *message,
                               size_t message_size)
{
    memset(out, 0, sizeof *out);
    if (!a) a = kiln_allocator_default();
    uint8_t *bytes;
    size_t size;
    kiln_status st = cli_read_file(path, a, PB_MAX_FILE, &bytes, &size, message, message_size);
    if (st != KILN_OK) return st;
    if (size == 0) {
        kiln_free(a, bytes);
        return pb_fail(message, message_size, KILN_ERROR_FORMAT, "empty file; not an ONNX TensorProto");
    }
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, bytes);
    kiln_free(a, bytes);
    if (!tp) return pb_fail(message, message_size, KILN_ERROR_FORMAT, "not a serialized ONNX TensorProto");
    st = check_proto(tp, message, message_size);
    char why[256] = "";
    if (st == KILN_OK) st = kiln_onnx_tensor_to_kiln(tp, NULL, a, out, why, sizeof why);
    if (st == KILN_ERROR_OUT_OF_MEMORY) pb_fail(message, message_size, st, "out of memory for the tensor's data");
    else if (st == KILN_ERROR_MODEL) st = explain_mismatch(tp, message, message_size);
    else if (st != KILN_OK && message && message_size && !message[0]) pb_fail(message, message_size, st, "%s", why[0] ? why : kiln_status_str(st));
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return st;
}
