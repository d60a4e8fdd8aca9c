/* run_print.c — the output lines of `kiln run` (single programs and shard manifests):
 * "output 0 'logits': f32 [1,1000] = [0.1, -2.5, ...]".
 *
 * Layer: tools. Every dtype prints its own values: integers exactly (64-bit ones too, which a
 * double would round), f32/f64 with %.6g, f16 and bf16 widened to float first
 * (kernels/portable/elementwise_half.h, the conversions the kernels use), booleans as 0 or 1.
 * The output's name comes from the program file and is printed escaped.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "kernels/portable/elementwise_half.h"
#include "run_shards.h"

#define RUN_PRINT_VALUES 8

/* Element k of t as text. */
static void format_element(const kiln_tensor *t, int64_t k, char *buf, size_t size)
{
    const void *d = t->data;
    switch (t->dtype) {
    case KILN_DTYPE_F32: snprintf(buf, size, "%.6g", (double)((const float *)d)[k]); break;
    case KILN_DTYPE_F64: snprintf(buf, size, "%.6g", ((const double *)d)[k]); break;
    case KILN_DTYPE_F16: snprintf(buf, size, "%.6g", (double)kiln_ew_f16_to_f32(((const uint16_t *)d)[k])); break;
    case KILN_DTYPE_BF16: snprintf(buf, size, "%.6g", (double)kiln_ew_bf16_to_f32(((const uint16_t *)d)[k])); break;
    case KILN_DTYPE_I8: snprintf(buf, size, "%d", (int)((const int8_t *)d)[k]); break;
    case KILN_DTYPE_I16: snprintf(buf, size, "%d", (int)((const int16_t *)d)[k]); break;
    case KILN_DTYPE_I32: snprintf(buf, size, "%" PRId32, ((const int32_t *)d)[k]); break;
    case KILN_DTYPE_I64: snprintf(buf, size, "%" PRId64, ((const int64_t *)d)[k]); break;
    case KILN_DTYPE_U8: snprintf(buf, size, "%u", (unsigned)((const uint8_t *)d)[k]); break;
    case KILN_DTYPE_U16: snprintf(buf, size, "%u", (unsigned)((const uint16_t *)d)[k]); break;
    case KILN_DTYPE_U32: snprintf(buf, size, "%" PRIu32, ((const uint32_t *)d)[k]); break;
    case KILN_DTYPE_U64: snprintf(buf, size, "%" PRIu64, ((const uint64_t *)d)[k]); break;
    case KILN_DTYPE_BOOL: snprintf(buf, size, "%d", ((const uint8_t *)d)[k] != 0); break;
    default: snprintf(buf, size, "?"); break;
    }
}

void run_print_output(size_t i, const char *name, const kiln_tensor *t)
{
    char shape[160], shown[KILN_ESCAPED_NAME_SIZE];
    kiln_format_shape(t, shape, sizeof shape);
    if (kiln_dtype_is_quantized(t->dtype)) { /* blocks, not elements: nothing to print one by one */
        printf("output %zu '%s': %s = (block-quantized: values not shown)\n", i, cli_esc(shown, name ? name : ""),
               shape);
        return;
    }
    printf("output %zu '%s': %s = [", i, cli_esc(shown, name ? name : ""), shape);
    int64_t n = kiln_tensor_numel(t), show = n < RUN_PRINT_VALUES ? n : RUN_PRINT_VALUES;
    for (int64_t k = 0; k < show; k++) {
        char value[32];
        format_element(t, k, value, sizeof value);
        printf(k ? ", %s" : "%s", value);
    }
    printf(n > show ? ", ...]\n" : "]\n");
}
