/* gguf_weights.c — a GGUF tensor as a constant of the graph: found by name, its type and shape
 * checked against what the graph needs, its bytes copied into the graph's arena unchanged.
 *
 * Layer: compiler/gguf (gguf_llm.h). GGUF lists dimensions fastest first, so a tensor with dims
 * (cols, rows) is the row-major [rows, cols] matrix the kernels take (a linear layer's W [N, K]
 * has dims (K, N)). Block-quantized types keep their blocks: a row is whole blocks of the type,
 * which the reader checked at open, and kiln's dtype of the same name has the same layout
 * (docs/format.md), so nothing is dequantized at compile time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compiler/gguf/gguf_llm.h"
#include "core/check.h"

/* The kiln dtype of a ggml type kiln reads; false for the others. */
static bool dtype_of(uint32_t ggml_type, kiln_dtype *out)
{
    switch (ggml_type) {
    case KILN_GGML_TYPE_F32: *out = KILN_DTYPE_F32; return true;
    case KILN_GGML_TYPE_F16: *out = KILN_DTYPE_F16; return true;
    case KILN_GGML_TYPE_BF16: *out = KILN_DTYPE_BF16; return true;
    case KILN_GGML_TYPE_Q8_0: *out = KILN_DTYPE_Q8_0; return true;
    case KILN_GGML_TYPE_Q4_0: *out = KILN_DTYPE_Q4_0; return true;
    case KILN_GGML_TYPE_Q4_K: *out = KILN_DTYPE_Q4_K; return true;
    case KILN_GGML_TYPE_Q6_K: *out = KILN_DTYPE_Q6_K; return true;
    default: return false;
    }
}

static void dims_text(const kiln_gguf_tensor *t, char *buf, size_t size)
{
    int n = snprintf(buf, size, "(");
    for (uint32_t d = 0; d < t->n_dims && n > 0 && (size_t)n < size; d++)
        n += snprintf(buf + n, size - (size_t)n, "%s%" PRIu64, d ? ", " : "", t->dims[d]);
    if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, ")");
}

static kiln_status check_tensor(kiln_llm_builder *b, const kiln_gguf_tensor *t, const char *name, int64_t rows,
                                int64_t cols, bool f32_only, kiln_dtype *dtype)
{
    kiln_ir_graph *g = b->g;
    const char *type = kiln_ggml_type_name(t->ggml_type);
    if (!dtype_of(t->ggml_type, dtype))
        return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "GGUF tensor '%s' has type %s; kiln reads F32, F16, BF16, "
                            "Q8_0, Q4_0, Q4_K and Q6_K", name, type ? type : "(unknown)");
    if (f32_only && *dtype != KILN_DTYPE_F32)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF tensor '%s' has type %s; a norm weight or bias must be F32",
                            name, type ? type : "?");
    bool ok = rows ? t->n_dims == 2 && t->dims[0] == (uint64_t)cols && t->dims[1] == (uint64_t)rows
                   : t->n_dims == 1 && t->dims[0] == (uint64_t)cols;
    if (!ok) {
        char have[96];
        dims_text(t, have, sizeof have);
        if (rows)
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF tensor '%s' has dims %s; the hyperparameters want (%" PRId64
                                ", %" PRId64 ")", name, have, cols, rows);
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF tensor '%s' has dims %s; the hyperparameters want (%" PRId64 ")",
                            name, have, cols);
    }
    return KILN_OK;
}

static kiln_status add_constant(kiln_llm_builder *b, const kiln_gguf_tensor *t, const char *name, int64_t rows,
                                int64_t cols, kiln_dtype dtype, int32_t *value)
{
    kiln_ir_graph *g = b->g;
    kiln_tensor k = {.dtype = dtype, .rank = rows ? 2 : 1};
    k.shape[0] = rows ? rows : cols;
    if (rows) k.shape[1] = cols;
    size_t size;
    KILN_TRY(kiln_ir_tensor_size(g, &k, "GGUF tensor", name, &size));
    /* The reader sized the tensor from the same dims and type, so the two agree. */
    if (size != t->data_size)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "GGUF tensor '%s' holds %" PRIu64 " bytes, not the %zu its type and "
                            "dims need", name, t->data_size, size);
    k.data = kiln_arena_memdup(&g->arena, t->data, size, 64);
    KILN_CHECK(k.data || size == 0, KILN_ERROR_OUT_OF_MEMORY);
    int32_t v;
    KILN_TRY(kiln_ir_value_add(g, name, &v));
    kiln_ir_value *val = &g->values[v];
    val->t = k;
    val->typed = val->shape_known = val->is_const = true;
    if (!kiln_strmap_put(&b->weights, val->name, v)) return KILN_ERROR_OUT_OF_MEMORY;
    *value = v;
    return KILN_OK;
}

kiln_status kiln_llm_weight_optional(kiln_llm_builder *b, const char *name, int64_t rows, int64_t cols,
                                     bool f32_only, int32_t *value)
{
    *value = kiln_strmap_get(&b->weights, name);
    if (*value >= 0) {
        /* A tensor used twice (a tied output) is wanted with the same shape both times. */
        const kiln_tensor *t = &b->g->values[*value].t;
        if (t->shape[0] != (rows ? rows : cols) || (rows && t->shape[1] != cols))
            return kiln_ir_fail(b->g, KILN_ERROR_MODEL, "GGUF tensor '%s' is used with two shapes", name);
        return KILN_OK;
    }
    const kiln_gguf_tensor *t = kiln_gguf_find_tensor(b->gguf, name);
    if (!t) return KILN_OK;
    kiln_dtype dtype = KILN_DTYPE_F32;
    KILN_TRY(check_tensor(b, t, name, rows, cols, f32_only, &dtype));
    return add_constant(b, t, name, rows, cols, dtype, value);
}

kiln_status kiln_llm_weight(kiln_llm_builder *b, const char *name, int64_t rows, int64_t cols, bool f32_only,
                            int32_t *value)
{
    KILN_TRY(kiln_llm_weight_optional(b, name, rows, cols, f32_only, value));
    if (*value < 0)
        return kiln_ir_fail(b->g, KILN_ERROR_MODEL, "GGUF model (architecture %s) lacks the tensor '%s'",
                            b->hp->arch->name, name);
    return KILN_OK;
}
