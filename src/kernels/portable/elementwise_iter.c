/* elementwise_iter.c — the broadcast driver and the generic infer/run bodies of elementwise ops.
 *
 * Layer: kernels/portable. See elementwise_iter.h for the loop contract.
 *
 * The driver first rewrites the broadcast as the smallest equivalent iteration space: output
 * dims of size 1 are dropped and neighbouring dims merged wherever every operand walks them as
 * one (both contiguous, or both broadcast). Same-shape operands thereby become a single flat
 * loop, and [N,C,H,W] + [1,C,1,1] becomes N*C calls of an H*W loop with a broadcast scalar.
 */
#include "core/check.h"
#include "kernels/portable/elementwise_half.h"
#include "kernels/portable/elementwise_iter.h"

/* The iteration space after collapsing: dims[0..rank) outermost first, element strides per
   operand (0 on broadcast dims). */
typedef struct ew_space {
    uint32_t rank;
    int64_t dims[KILN_MAX_RANK];
    int64_t strides[KILN_EW_MAX_INPUTS][KILN_MAX_RANK];
} ew_space;

static void ew_space_build(const kiln_tensor *const *in, size_t n_in, const kiln_tensor *out, ew_space *space)
{
    int64_t full[KILN_EW_MAX_INPUTS][KILN_MAX_RANK];
    for (size_t k = 0; k < n_in; k++) kiln_broadcast_strides(in[k], out->shape, out->rank, full[k]);

    space->rank = 0;
    for (uint32_t d = 0; d < out->rank; d++) {
        if (out->shape[d] == 1) continue;
        uint32_t r = space->rank;
        bool mergeable = r > 0;
        for (size_t k = 0; k < n_in && mergeable; k++)
            mergeable = space->strides[k][r - 1] == full[k][d] * out->shape[d];
        if (mergeable) {
            space->dims[r - 1] *= out->shape[d];
            for (size_t k = 0; k < n_in; k++) space->strides[k][r - 1] = full[k][d];
            continue;
        }
        space->dims[r] = out->shape[d];
        for (size_t k = 0; k < n_in; k++) space->strides[k][r] = full[k][d];
        space->rank = r + 1;
    }
}

static bool is_half(kiln_dtype t) { return t == KILN_DTYPE_F16 || t == KILN_DTYPE_BF16; }

static void widen(kiln_dtype dtype, const uint16_t *src, int64_t n, float *dst)
{
    if (dtype == KILN_DTYPE_F16) for (int64_t i = 0; i < n; i++) dst[i] = kiln_ew_f16_to_f32(src[i]);
    else for (int64_t i = 0; i < n; i++) dst[i] = kiln_ew_bf16_to_f32(src[i]);
}

static void narrow(kiln_dtype dtype, const float *src, int64_t n, uint16_t *dst)
{
    if (dtype == KILN_DTYPE_F16) for (int64_t i = 0; i < n; i++) dst[i] = kiln_ew_f32_to_f16(src[i]);
    else for (int64_t i = 0; i < n; i++) dst[i] = kiln_ew_f32_to_bf16(src[i]);
}

/* How the loop sees the data: each operand and the output either as stored, or for f16/bf16
   widened to f32 through stack buffers of WIDEN_CHUNK elements. */
#define WIDEN_CHUNK 256
typedef struct ew_call {
    kiln_ew_loop loop;
    const kiln_ew_params *params;
    size_t n_in;
    kiln_dtype in_dtype[KILN_EW_MAX_INPUTS], out_dtype;
    bool widened;               /* some operand or the output is widened */
} ew_call;

static void call_widened(const ew_call *call, int64_t n, const void *const *src, const int64_t *step, void *dst)
{
    float in_buf[KILN_EW_MAX_INPUTS][WIDEN_CHUNK], out_buf[WIDEN_CHUNK];
    size_t out_size = kiln_dtype_size(call->out_dtype);
    bool narrow_out = is_half(call->out_dtype);
    for (int64_t start = 0; start < n; start += WIDEN_CHUNK) {
        int64_t m = n - start < WIDEN_CHUNK ? n - start : WIDEN_CHUNK;
        const void *chunk[KILN_EW_MAX_INPUTS];
        for (size_t k = 0; k < call->n_in; k++) {
            const char *base = (const char *)src[k] + (size_t)(start * step[k]) * kiln_dtype_size(call->in_dtype[k]);
            chunk[k] = base;
            if (is_half(call->in_dtype[k])) {
                widen(call->in_dtype[k], (const uint16_t *)base, step[k] ? m : 1, in_buf[k]);
                chunk[k] = in_buf[k];
            }
        }
        void *out_chunk = narrow_out ? (void *)out_buf : (char *)dst + (size_t)start * out_size;
        call->loop(m, chunk, step, out_chunk, call->params);
        if (narrow_out) narrow(call->out_dtype, out_buf, m, (uint16_t *)dst + start);
    }
}

static void apply(const kiln_tensor *const *in, size_t n_in, kiln_tensor *out, const ew_call *call)
{
    if (KILN_NEVER(n_in > KILN_EW_MAX_INPUTS) || kiln_numel(out) == 0) return;
    ew_space space;
    ew_space_build(in, n_in, out, &space);

    /* Innermost dim is the loop; with none left the output is a single element. */
    int64_t n = 1, step[KILN_EW_MAX_INPUTS] = {0};
    uint32_t outer_rank = 0;
    if (space.rank > 0) {
        outer_rank = space.rank - 1;
        n = space.dims[outer_rank];
        for (size_t k = 0; k < n_in; k++) step[k] = space.strides[k][outer_rank];
    }

    size_t in_size[KILN_EW_MAX_INPUTS], out_size = kiln_dtype_size(out->dtype);
    int64_t offset[KILN_EW_MAX_INPUTS] = {0}, index[KILN_MAX_RANK] = {0};
    for (size_t k = 0; k < n_in; k++) in_size[k] = kiln_dtype_size(in[k]->dtype);

    int64_t n_outer = kiln_numel(out) / n;
    char *dst = out->data;
    const void *src[KILN_EW_MAX_INPUTS];
    for (int64_t row = 0; row < n_outer; row++) {
        for (size_t k = 0; k < n_in; k++) src[k] = (const char *)in[k]->data + (size_t)offset[k] * in_size[k];
        void *row_dst = dst + (size_t)(row * n) * out_size;
        if (call->widened) call_widened(call, n, src, step, row_dst);
        else call->loop(n, src, step, row_dst, call->params);
        /* Odometer over the outer dims, moving each operand's offset along. */
        for (int64_t d = (int64_t)outer_rank - 1; d >= 0; d--) {
            for (size_t k = 0; k < n_in; k++) offset[k] += space.strides[k][d];
            if (++index[d] < space.dims[d]) break;
            for (size_t k = 0; k < n_in; k++) offset[k] -= space.strides[k][d] * space.dims[d];
            index[d] = 0;
        }
    }
}

void kiln_ew_apply(const kiln_tensor *const *in, size_t n_in, kiln_tensor *out, kiln_ew_loop loop,
                   const kiln_ew_params *params)
{
    ew_call call = {.loop = loop, .params = params, .n_in = n_in, .out_dtype = out->dtype};
    call.widened = is_half(out->dtype);
    for (size_t k = 0; k < n_in && k < KILN_EW_MAX_INPUTS; k++) {
        call.in_dtype[k] = in[k]->dtype;
        call.widened = call.widened || is_half(in[k]->dtype);
    }
    apply(in, n_in, out, &call);
}

void kiln_ew_apply_stored(const kiln_tensor *const *in, size_t n_in, kiln_tensor *out, kiln_ew_loop loop,
                          const kiln_ew_params *params)
{
    ew_call call = {.loop = loop, .params = params, .n_in = n_in, .widened = false};
    apply(in, n_in, out, &call);
}

kiln_ew_loop kiln_ew_loop_for(const kiln_ew_loop *loops, kiln_dtype dtype)
{
    if ((unsigned)dtype >= KILN_DTYPE_COUNT) return NULL;
    return is_half(dtype) ? loops[KILN_DTYPE_F32] : loops[dtype];
}

double kiln_ew_get_f64(const kiln_tensor *t, int64_t i)
{
    if (t->dtype == KILN_DTYPE_F16) return kiln_ew_f16_to_f32(((const uint16_t *)t->data)[i]);
    if (t->dtype == KILN_DTYPE_BF16) return kiln_ew_bf16_to_f32(((const uint16_t *)t->data)[i]);
    return kiln_tensor_get_f64(t, i);
}

kiln_status kiln_ew_check_shape(const kiln_tensor *t)
{
    if (t->rank > KILN_MAX_RANK) return KILN_ERROR_SHAPE_MISMATCH;
    for (uint32_t d = 0; d < t->rank; d++)
        if (t->shape[d] < 0) return KILN_ERROR_SHAPE_MISMATCH;
    return kiln_tensor_numel(t) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

kiln_status kiln_ew_broadcast_infer(const kiln_tensor *const *in, size_t n, kiln_dtype dtype, kiln_tensor *out)
{
    for (size_t k = 0; k < n; k++) {
        if (!in[k]) continue;
        kiln_status st = kiln_ew_check_shape(in[k]);
        if (st != KILN_OK) return st;
    }
    kiln_tensor result = {.dtype = dtype};
    kiln_status st = kiln_broadcast_shapes(in, n, result.shape, &result.rank);
    if (st != KILN_OK) return st;
    /* Each input fits, but the broadcast of [2^40, 1] and [1, 2^40] does not. */
    if (kiln_tensor_numel(&result) < 0) return KILN_ERROR_LIMIT;
    if (out) kiln_tensor_set_shape(out, dtype, result.rank, result.shape);
    return KILN_OK;
}

bool kiln_ew_same_shape(const kiln_tensor *a, const kiln_tensor *b)
{
    if (a->rank != b->rank) return false;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

/* Opset < 7: B unidirectionally broadcast to A by the `broadcast` and `axis` attributes. */
static kiln_status legacy_operands(const kiln_node *node, const kiln_tensor *a, const kiln_tensor *b,
                                   kiln_tensor *b_view, kiln_tensor *out)
{
    int64_t broadcast = kiln_node_attr_int(node, "broadcast", 0);
    if (broadcast != 0 && broadcast != 1) return KILN_ERROR_INVALID_ARGUMENT;
    *b_view = *b;
    if (!broadcast) {
        if (!kiln_ew_same_shape(a, b)) return KILN_ERROR_SHAPE_MISMATCH;
    } else {
        if (b->rank > a->rank) return KILN_ERROR_SHAPE_MISMATCH;
        int64_t axis = kiln_node_attr_int(node, "axis", (int64_t)(a->rank - b->rank));
        if (axis < 0) axis += a->rank;
        if (axis < 0 || axis + (int64_t)b->rank > (int64_t)a->rank) return KILN_ERROR_INVALID_ARGUMENT;
        b_view->rank = a->rank;
        for (uint32_t d = 0; d < a->rank; d++) {
            int64_t bd = (int64_t)d - axis;
            int64_t dim = bd >= 0 && bd < (int64_t)b->rank ? b->shape[bd] : 1;
            if (dim != 1 && dim != a->shape[d]) return KILN_ERROR_SHAPE_MISMATCH;
            b_view->shape[d] = dim;
        }
    }
    kiln_tensor_set_shape(out, a->dtype, a->rank, a->shape);
    return KILN_OK;
}

kiln_status kiln_ew_binary_operands(const kiln_node *node, const kiln_tensor *a, const kiln_tensor *b,
                                    kiln_tensor *b_view, kiln_tensor *out)
{
    kiln_status st = kiln_ew_check_shape(a);
    if (st == KILN_OK) st = kiln_ew_check_shape(b);
    if (st != KILN_OK) return st;
    if (node->opset < 7) return legacy_operands(node, a, b, b_view, out);
    *b_view = *b;
    const kiln_tensor *pair[2] = {a, b};
    return kiln_ew_broadcast_infer(pair, 2, a->dtype, out);
}

kiln_status kiln_ew_binary_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                 const kiln_ew_binary_op *op)
{
    if (!kiln_ew_input(node, in, 0) || !kiln_ew_input(node, in, 1)) return KILN_ERROR_INVALID_ARGUMENT;
    if (in[0]->dtype != in[1]->dtype) return KILN_ERROR_DTYPE_MISMATCH;
    if (!kiln_ew_loop_for(op->loops, in[0]->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    kiln_tensor b_view, result;
    kiln_status st = kiln_ew_binary_operands(node, in[0], in[1], &b_view, &result);
    if (st != KILN_OK) return st;
    if (out[0]) kiln_tensor_set_shape(out[0], op->bool_output ? KILN_DTYPE_BOOL : in[0]->dtype, result.rank, result.shape);
    return KILN_OK;
}

kiln_status kiln_ew_binary_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                               const kiln_ew_binary_op *op, const kiln_ew_params *params)
{
    if (!out[0]) return KILN_OK;
    kiln_tensor b_view, result;
    kiln_status st = kiln_ew_binary_operands(node, in[0], in[1], &b_view, &result);
    if (st != KILN_OK) return st;
    const kiln_tensor *operands[2] = {in[0], &b_view};
    kiln_ew_apply(operands, 2, out[0], kiln_ew_loop_for(op->loops, in[0]->dtype), params);
    return KILN_OK;
}

kiln_status kiln_ew_unary_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                const kiln_ew_loop *loops, bool bool_output)
{
    if (!kiln_ew_input(node, in, 0)) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_ew_loop_for(loops, in[0]->dtype)) return KILN_ERROR_DTYPE_MISMATCH;
    kiln_status st = kiln_ew_check_shape(in[0]);
    if (st != KILN_OK) return st;
    if (out[0]) kiln_tensor_set_shape(out[0], bool_output ? KILN_DTYPE_BOOL : in[0]->dtype, in[0]->rank, in[0]->shape);
    return KILN_OK;
}

void kiln_ew_unary_run(const kiln_tensor *const *in, kiln_tensor *const *out, const kiln_ew_loop *loops,
                       const kiln_ew_params *params)
{
    if (out[0]) kiln_ew_apply(in, 1, out[0], kiln_ew_loop_for(loops, in[0]->dtype), params);
}
