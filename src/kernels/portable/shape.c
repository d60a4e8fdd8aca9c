/* shape.c — portable kernels of the shape family (see families.h): the ops that only
 * reinterpret a tensor's shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout at
 * inference) or report it (Shape, Size). Expand, Tile, ConstantOfShape and Range live in
 * shape_gen.c. Layer: kernels/portable.
 *
 * Data is dense row-major, so every reshaping op's run() is one memcpy of the input bytes; all
 * the work (and every check) is in infer(). Legacy forms are read per node->opset: attribute
 * `shape`/`axes` before the opset that turned them into inputs.
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/shape_common.h"
#include "kernels/portable/shape_ops.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

/* Sets the output (when used) after checking its shape is representable. */
static kiln_status set_output(kiln_tensor *y, kiln_dtype dtype, uint32_t rank, const int64_t *shape)
{
    KILN_TRY(kiln_shape_check_dims(shape, rank, dtype));
    if (y) kiln_tensor_set_shape(y, dtype, rank, shape);
    return KILN_OK;
}

/* The run() of every op whose output holds the input's bytes unchanged. */
static kiln_status copy_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (y && kiln_numel(y) > 0) memcpy(y->data, in[0]->data, kiln_tensor_bytes(y));
    return KILN_OK;
}

/* ---- Reshape ---- */

/* Resolves 0 (copy the input dim, unless allowzero) and -1 (infer) in the requested shape. */
static kiln_status reshape_resolve(const kiln_tensor *x, const int64_t *req, size_t n, bool allowzero, int64_t *shape)
{
    int64_t known = 1;
    size_t infer_at = n;
    bool has_zero = false;
    for (size_t i = 0; i < n; i++) {
        int64_t dim = req[i];
        if (dim == -1) {
            KILN_CHECK(infer_at == n, KILN_ERROR_INVALID_ARGUMENT);
            infer_at = i;
            continue;
        }
        KILN_CHECK(dim >= 0, KILN_ERROR_INVALID_ARGUMENT);
        if (dim == 0 && !allowzero) {
            KILN_CHECK(i < x->rank, KILN_ERROR_SHAPE_MISMATCH);
            dim = x->shape[i];
        }
        has_zero |= dim == 0;
        shape[i] = dim;
        KILN_CHECK(kiln_mul_i64(known, dim, &known), KILN_ERROR_SHAPE_MISMATCH);
    }
    int64_t total = kiln_numel(x);
    if (infer_at < n) {
        /* With allowzero a literal 0 next to -1 makes the inferred dim ambiguous. */
        KILN_CHECK(!(allowzero && has_zero), KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(known != 0 && total % known == 0, KILN_ERROR_SHAPE_MISMATCH);
        shape[infer_at] = total / known;
        known = total;
    }
    KILN_CHECK(known == total, KILN_ERROR_SHAPE_MISMATCH);
    return KILN_OK;
}

static kiln_status reshape_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    int64_t req[KILN_MAX_RANK], shape[KILN_MAX_RANK];
    size_t n;
    if (node->opset < 5) {
        bool present;
        KILN_TRY(kiln_shape_attr_ints(node, "shape", req, KILN_MAX_RANK, &n, &present));
        KILN_CHECK(present, KILN_ERROR_INVALID_ARGUMENT);
    } else {
        const kiln_tensor *s = IN(1);
        KILN_CHECK(s, KILN_ERROR_INVALID_ARGUMENT);
        KILN_CHECK(!(s->rank == 1 && s->shape[0] > KILN_MAX_RANK), KILN_ERROR_NOT_SUPPORTED);
        KILN_TRY(kiln_shape_read_ints(s, false, req, KILN_MAX_RANK, &n));
    }
    bool allowzero = node->opset >= 14 && kiln_node_attr_int(node, "allowzero", 0) != 0;
    KILN_TRY(reshape_resolve(x, req, n, allowzero, shape));
    return set_output(OUT(0), x->dtype, (uint32_t)n, shape);
}

/* ---- Flatten ---- */

static kiln_status flatten_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    int64_t rank = x->rank, axis = kiln_node_attr_int(node, "axis", 1);
    if (axis < 0 && node->opset >= 11) axis += rank;
    KILN_CHECK(axis >= 0 && axis <= rank, KILN_ERROR_INVALID_ARGUMENT);
    int64_t shape[2] = {1, 1};
    for (int64_t d = 0; d < rank; d++) shape[d >= axis] *= x->shape[d];
    return set_output(OUT(0), x->dtype, 2, shape);
}

/* ---- Squeeze / Unsqueeze ---- */

/* The axes list of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13 on. */
static kiln_status read_axes(const kiln_node *node, const kiln_tensor *const *in, int64_t *axes, size_t *n,
                             bool *present)
{
    if (node->opset < 13) return kiln_shape_attr_ints(node, "axes", axes, KILN_MAX_RANK, n, present);
    const kiln_tensor *a = IN(1);
    *present = a != NULL;
    *n = 0;
    return a ? kiln_shape_read_ints(a, false, axes, KILN_MAX_RANK, n) : KILN_OK;
}

static kiln_status squeeze_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    int64_t axes[KILN_MAX_RANK], shape[KILN_MAX_RANK];
    size_t n;
    bool present;
    KILN_TRY(read_axes(node, in, axes, &n, &present));
    uint32_t mask = 0;
    if (present) {
        KILN_TRY(kiln_shape_axes_mask(axes, n, x->rank, &mask));
    } else {
        for (uint32_t d = 0; d < x->rank; d++)
            if (x->shape[d] == 1) mask |= 1u << d;
    }
    uint32_t rank = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
        if (!(mask & (1u << d))) shape[rank++] = x->shape[d];
        else KILN_CHECK(x->shape[d] == 1, KILN_ERROR_SHAPE_MISMATCH);
    }
    return set_output(OUT(0), x->dtype, rank, shape);
}

static kiln_status unsqueeze_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                   size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    int64_t axes[KILN_MAX_RANK], shape[KILN_MAX_RANK];
    size_t n;
    bool present;
    KILN_TRY(read_axes(node, in, axes, &n, &present));
    KILN_CHECK(present, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(x->rank + n <= KILN_MAX_RANK, KILN_ERROR_NOT_SUPPORTED);
    uint32_t rank = x->rank + (uint32_t)n, mask;
    /* Axes count in the output's rank, so -1 appends a trailing unit axis. */
    KILN_TRY(kiln_shape_axes_mask(axes, n, rank, &mask));
    for (uint32_t d = 0, src = 0; d < rank; d++) shape[d] = (mask & (1u << d)) ? 1 : x->shape[src++];
    return set_output(OUT(0), x->dtype, rank, shape);
}

/* ---- Identity / Dropout ---- */

static kiln_status identity_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    return set_output(OUT(0), x->dtype, x->rank, x->shape);
}

static bool is_float_dtype(kiln_dtype dtype)
{
    return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F64 || dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16;
}

/* True when a scalar float tensor holds +-0 (read through its bits, so f16/bf16 need no
   conversion). */
static bool float_scalar_is_zero(const kiln_tensor *t)
{
    switch (t->dtype) {
    case KILN_DTYPE_F32: return ((const float *)t->data)[0] == 0.0f;
    case KILN_DTYPE_F64: return ((const double *)t->data)[0] == 0.0;
    default: return (((const uint16_t *)t->data)[0] & 0x7fffu) == 0;
    }
}

/* Opset 12+ Dropout: training_mode true really drops values, which an inference runtime does
   not do; the one training case that equals inference (ratio 0) is accepted. */
static kiln_status dropout_check_training(const kiln_node *node, const kiln_tensor *const *in, bool require_data)
{
    const kiln_tensor *ratio = IN(1), *training = IN(2);
    if (!training) return KILN_OK;
    if (!training->data) return require_data ? KILN_ERROR_INVALID_VALUE : KILN_OK;
    if (!((const uint8_t *)training->data)[0]) return KILN_OK;
    if (ratio && !ratio->data) return require_data ? KILN_ERROR_INVALID_VALUE : KILN_OK;
    /* Without a ratio input the default ratio 0.5 applies. */
    KILN_CHECK(ratio && float_scalar_is_zero(ratio), KILN_ERROR_NOT_SUPPORTED);
    return KILN_OK;
}

static kiln_status dropout_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 size_t *scratch_size)
{
    const kiln_tensor *x = IN(0), *ratio = IN(1), *training = IN(2);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    if (node->opset >= 12) {
        KILN_CHECK(!ratio || (is_float_dtype(ratio->dtype) && kiln_numel(ratio) == 1), KILN_ERROR_DTYPE_MISMATCH);
        KILN_CHECK(!training || (training->dtype == KILN_DTYPE_BOOL && kiln_numel(training) == 1),
                   KILN_ERROR_DTYPE_MISMATCH);
        KILN_TRY(dropout_check_training(node, in, false));
    }
    /* Before opset 12 the op is inference-only here: is_test=0 (opset < 7) means training,
       which runtimes conventionally treat as inference after export. */
    KILN_TRY(set_output(OUT(0), x->dtype, x->rank, x->shape));
    /* The mask became bool at opset 10; before that it had the input's type. */
    return set_output(OUT(1), node->opset >= 10 ? KILN_DTYPE_BOOL : x->dtype, x->rank, x->shape);
}

/* Writes 1 in the mask's dtype into every element (nothing is dropped at inference). */
static void fill_ones(kiln_tensor *t)
{
    int64_t n = kiln_numel(t);
    for (int64_t i = 0; i < n; i++) {
        switch (t->dtype) {
        case KILN_DTYPE_F32: ((float *)t->data)[i] = 1.0f; break;
        case KILN_DTYPE_F64: ((double *)t->data)[i] = 1.0; break;
        case KILN_DTYPE_F16: ((uint16_t *)t->data)[i] = 0x3c00; break;
        case KILN_DTYPE_BF16: ((uint16_t *)t->data)[i] = 0x3f80; break;
        case KILN_DTYPE_I64: case KILN_DTYPE_U64: ((uint64_t *)t->data)[i] = 1; break;
        case KILN_DTYPE_I32: case KILN_DTYPE_U32: ((uint32_t *)t->data)[i] = 1; break;
        case KILN_DTYPE_I16: case KILN_DTYPE_U16: ((uint16_t *)t->data)[i] = 1; break;
        case KILN_DTYPE_I8: case KILN_DTYPE_U8: case KILN_DTYPE_BOOL: ((uint8_t *)t->data)[i] = 1; break;
        default: break; /* block-quantized: no ONNX kernel sees one (kiln_kernel_quantized_input) */
        }
    }
}

static kiln_status dropout_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               kiln_kernel_ctx *ctx)
{
    if (node->opset >= 12) KILN_TRY(dropout_check_training(node, in, true));
    KILN_TRY(copy_run(node, in, out, ctx));
    kiln_tensor *mask = OUT(1);
    if (mask) fill_ones(mask);
    return KILN_OK;
}

/* ---- Shape / Size ---- */

/* The [start, end) axis range of Shape-15, clamped like a Python slice. */
static void shape_range(const kiln_node *node, int64_t rank, int64_t *start, int64_t *end)
{
    int64_t s = 0, e = rank;
    if (node->opset >= 15) {
        s = kiln_node_attr_int(node, "start", 0);
        e = kiln_node_attr_int(node, "end", rank);
    }
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *start = s;
    *end = e > s ? e : s;
}

static kiln_status shape_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               size_t *scratch_size)
{
    const kiln_tensor *x = IN(0);
    KILN_CHECK(x, KILN_ERROR_INVALID_ARGUMENT);
    int64_t start, end;
    shape_range(node, x->rank, &start, &end);
    int64_t len = end - start;
    return set_output(OUT(0), KILN_DTYPE_I64, 1, &len);
}

static kiln_status shape_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                             kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    int64_t start, end;
    shape_range(node, in[0]->rank, &start, &end);
    for (int64_t d = start; d < end; d++) ((int64_t *)y->data)[d - start] = in[0]->shape[d];
    return KILN_OK;
}

static kiln_status size_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              size_t *scratch_size)
{
    KILN_CHECK(IN(0), KILN_ERROR_INVALID_ARGUMENT);
    return set_output(OUT(0), KILN_DTYPE_I64, 0, NULL);
}

static kiln_status size_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                            kiln_kernel_ctx *ctx)
{
    kiln_tensor *y = OUT(0);
    if (y) ((int64_t *)y->data)[0] = kiln_numel(in[0]);
    return KILN_OK;
}

const kiln_kernel kiln_kernels_shape[] = {
    {"Reshape", 1, reshape_infer, copy_run, {{0, 1, 1, 1, 1}, {5, 2, 2, 1, 1}},
     "allowzero:i consumed_inputs:I shape:iI"},
    {"Flatten", 1, flatten_infer, copy_run, {{0, 1, 1, 1, 1}}, "axis:i"},
    {"Squeeze", 1, squeeze_infer, copy_run, {{0, 1, 1, 1, 1}, {13, 1, 2, 1, 1}}, "axes:iI"},
    {"Unsqueeze", 1, unsqueeze_infer, copy_run, {{0, 1, 1, 1, 1}, {13, 2, 2, 1, 1}}, "axes:iI"},
    {"Identity", 1, identity_infer, copy_run, {{0, 1, 1, 1, 1}}, ""},
    {"Dropout", 1, dropout_infer, dropout_run, {{0, 1, 1, 1, 2}, {12, 1, 3, 1, 2}},
     "consumed_inputs:I is_test:i ratio:f seed:i"},
    {"Shape", 1, shape_infer, shape_run, {{0, 1, 1, 1, 1}}, "end:i start:i"},
    {"Size", 1, size_infer, size_run, {{0, 1, 1, 1, 1}}, ""},
    {"Expand", 8, kiln_shape_expand_infer, kiln_shape_expand_run, {{0, 2, 2, 1, 1}}, ""},
    {"Tile", 1, kiln_shape_tile_infer, kiln_shape_tile_run, {{0, 3, 3, 1, 1}, {6, 2, 2, 1, 1}}, ""},
    {"ConstantOfShape", 9, kiln_shape_constant_of_shape_infer, kiln_shape_constant_of_shape_run, {{0, 1, 1, 1, 1}},
     "value:t"},
    {"Range", 11, kiln_shape_range_infer, kiln_shape_range_run, {{0, 3, 3, 1, 1}}, ""},
    {0},
};
