/* gguf_types.c — names and sizes of GGUF metadata types and ggml tensor types.
 *
 * Layer: format (src/format/gguf). Depends on core. The ggml numbers are ggml's own (the
 * file stores them); types ggml has retired keep their names so an old file is told what it
 * holds. Only the types with a layout in `supported` can be read by kiln.
 */
#include <stdio.h>

#include "format/gguf/gguf_reader.h"
#include "core/diag.h"
#include "core/text_escape.h"

static const char *const ggml_names[] = {
    [0] = "F32", [1] = "F16", [2] = "Q4_0", [3] = "Q4_1", [6] = "Q5_0", [7] = "Q5_1", [8] = "Q8_0",
    [9] = "Q8_1", [10] = "Q2_K", [11] = "Q3_K", [12] = "Q4_K", [13] = "Q5_K", [14] = "Q6_K",
    [15] = "Q8_K", [16] = "IQ2_XXS", [17] = "IQ2_XS", [18] = "IQ3_XXS", [19] = "IQ1_S",
    [20] = "IQ4_NL", [21] = "IQ3_S", [22] = "IQ2_S", [23] = "IQ4_XS", [24] = "I8", [25] = "I16",
    [26] = "I32", [27] = "I64", [28] = "F64", [29] = "IQ1_M", [30] = "BF16", [31] = "Q4_0_4_4",
    [32] = "Q4_0_4_8", [33] = "Q4_0_8_8", [34] = "TQ1_0", [35] = "TQ2_0", [36] = "IQ4_NL_4_4",
    [37] = "IQ4_NL_4_8", [38] = "IQ4_NL_8_8", [39] = "MXFP4",
};

/* Block layouts (elements per block, bytes per block) of the types kiln reads:
 *   Q8_0: f16 scale + 32 x i8                                      = 34 bytes / 32
 *   Q4_0: f16 scale + 16 bytes of 4-bit pairs                      = 18 bytes / 32
 *   Q4_K: f16 d, f16 dmin, 12 bytes of 6-bit scales, 128 bytes q4  = 144 bytes / 256
 *   Q6_K: 128 bytes low 4 bits, 64 bytes high 2 bits, 16 i8 scales, f16 d = 210 bytes / 256 */
typedef struct ggml_layout {
    uint32_t type, block_size, block_bytes;
} ggml_layout;

static const ggml_layout supported[] = {
    {KILN_GGML_TYPE_F32, 1, 4},   {KILN_GGML_TYPE_F16, 1, 2},    {KILN_GGML_TYPE_BF16, 1, 2},
    {KILN_GGML_TYPE_Q8_0, 32, 34}, {KILN_GGML_TYPE_Q4_0, 32, 18}, {KILN_GGML_TYPE_Q4_K, 256, 144},
    {KILN_GGML_TYPE_Q6_K, 256, 210},
};
#define SUPPORTED_LIST "F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K"

const char *kiln_ggml_type_name(uint32_t ggml_type)
{
    return ggml_type < sizeof ggml_names / sizeof ggml_names[0] ? ggml_names[ggml_type] : NULL;
}

kiln_status kiln_ggml_type_layout(uint32_t ggml_type, uint32_t *block_size, uint32_t *block_bytes, char *message,
                                  size_t message_size)
{
    for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++) {
        if (supported[i].type != ggml_type) continue;
        *block_size = supported[i].block_size;
        *block_bytes = supported[i].block_bytes;
        return KILN_OK;
    }
    const char *name = kiln_ggml_type_name(ggml_type);
    if (name)
        return kiln_reject(KILN_ERROR_NOT_SUPPORTED, message, message_size,
                           "ggml tensor type %s is not supported by kiln (supported: " SUPPORTED_LIST ")", name);
    return kiln_reject(KILN_ERROR_NOT_SUPPORTED, message, message_size,
                       "ggml tensor type %u is not a ggml type (supported: " SUPPORTED_LIST ")", (unsigned)ggml_type);
}

kiln_status kiln_gguf_tensor_size(const kiln_gguf_tensor *t, uint64_t *size, char *message, size_t message_size)
{
    uint32_t block_size = 1, block_bytes = 0;
    if (kiln_ggml_type_layout(t->ggml_type, &block_size, &block_bytes, NULL, 0) != KILN_OK) {
        const char *name = kiln_ggml_type_name(t->ggml_type);
        char esc[96];   /* names come from the file: quoted escaped, so the line stays printable */
        return kiln_reject(KILN_ERROR_NOT_SUPPORTED, message, message_size,
                           "tensor '%s' has ggml type %s, which kiln does not support (supported: " SUPPORTED_LIST
                           ")",
                           kiln_text_escape(esc, sizeof esc, t->name, t->name_size), name ? name : "?");
    }
    /* open checked dims[0] % block_size == 0 and that this product fits the file. */
    *size = t->n_elements / block_size * block_bytes;
    return KILN_OK;
}

static const char *const value_names[KILN_GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};
static const unsigned char value_sizes[KILN_GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *kiln_gguf_type_name(uint32_t type) { return type < KILN_GGUF_TYPE_COUNT ? value_names[type] : "?"; }

size_t kiln_gguf_type_size(uint32_t type) { return type < KILN_GGUF_TYPE_COUNT ? value_sizes[type] : 0; }
