/* infer.c — shape inference and constant folding over the IR, by calling the portable kernels.
 *
 * Layer: compiler. One forward pass suffices because nodes are topologically ordered. A node is
 * folded (run now, outputs become constants, node removed) when every present input is a
 * constant, or when it only reads shapes (Shape, Size) and those are known; that is what turns
 * the Shape -> Gather -> Concat -> Reshape chains of exported models into static shapes.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/ir.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/text_escape.h"
#include "core/threadpool.h"

/* Folded outputs larger than this stay runtime work: folding would bloat the program. */
#define KILN_FOLD_MAX_BYTES ((size_t)64 << 20)

static bool reads_only_shapes(const kiln_node *node)
{
    return strcmp(node->op, "Shape") == 0 || strcmp(node->op, "Size") == 0;
}

static kiln_status fold_node(kiln_ir_graph *g, kiln_ir_node *n, const kiln_tensor *const *in,
                             kiln_tensor *const *out)
{
    for (size_t j = 0; j < n->node.n_outputs; j++) {
        if (!out[j]) continue;
        size_t bytes = kiln_tensor_bytes(out[j]);
        if (bytes > KILN_FOLD_MAX_BYTES) return KILN_ERROR_LIMIT; /* caller leaves it unfolded */
    }
    for (size_t j = 0; j < n->node.n_outputs; j++) {
        if (!out[j]) continue;
        out[j]->data = kiln_arena_alloc(&g->arena, kiln_tensor_bytes(out[j]), 64);
        KILN_CHECK(out[j]->data, KILN_ERROR_OUT_OF_MEMORY);
    }
    kiln_kernel_ctx ctx = {NULL, (size_t)n->scratch_size, kiln_threadpool_parallel_for, NULL, 1};
    if (n->scratch_size) {
        ctx.scratch = kiln_alloc(g->allocator, (size_t)n->scratch_size, 64);
        KILN_CHECK(ctx.scratch, KILN_ERROR_OUT_OF_MEMORY);
    }
    kiln_status st = n->kernel->run(&n->node, in, out, &ctx);
    kiln_free(g->allocator, ctx.scratch);
    return st;
}

static kiln_status infer_node(kiln_ir_graph *g, int32_t index)
{
    kiln_ir_node *n = &g->nodes[index];
    const kiln_tensor *in[64] = {0};
    kiln_tensor *out[64] = {0};
    if (n->node.n_inputs > 64 || n->node.n_outputs > 64)
        return kiln_ir_fail(g, KILN_ERROR_LIMIT, "node '%s' (%s) has more than 64 inputs or outputs",
                            n->node.name, n->node.op);
    bool all_const = true, shapes_known = true;
    for (size_t i = 0; i < n->node.n_inputs; i++) {
        if (n->inputs[i] < 0) continue;
        kiln_ir_value *v = &g->values[n->inputs[i]];
        if (!v->shape_known) shapes_known = false;
        if (!v->is_const) all_const = false;
        in[i] = &v->t;
    }
    for (size_t j = 0; j < n->node.n_outputs; j++)
        if (n->outputs[j] >= 0) out[j] = &g->values[n->outputs[j]].t;
    int quantized = kiln_kernel_quantized_input(&n->node, in);
    if (quantized >= 0)
        return kiln_ir_fail(g, KILN_ERROR_DTYPE_MISMATCH, "node '%s' (%s): input %d is %s, a block-quantized type, "
                            "which ONNX ops do not take", n->node.name, n->node.op, quantized,
                            kiln_dtype_name(in[quantized]->dtype));
    if (!shapes_known) return KILN_OK; /* downstream of a data-dependent shape: decided at run time */

    size_t scratch = 0;
    kiln_status st = n->kernel->infer(&n->node, in, out, &scratch);
    if (st == KILN_ERROR_SHAPE_UNKNOWN) return KILN_OK;
    if (st != KILN_OK) {
        char why[256]; /* what the kernel can say beyond the status (kiln's own ops do) */
        kiln_kernel_explain(n->kernel, &n->node, in, why, sizeof why);
        return kiln_ir_fail(g, st, "node '%s' (%s, opset %d): %s%s%s", n->node.name, n->node.op, n->node.opset,
                            kiln_status_str(st), why[0] ? ": " : "", why);
    }
    n->scratch_size = scratch;
    for (size_t j = 0; j < n->node.n_outputs; j++) {
        if (!out[j]) continue;
        kiln_ir_value *v = &g->values[n->outputs[j]];
        char what[2 * KILN_ESCAPED_NAME_SIZE];
        snprintf(what, sizeof what, "node '%s' (%s): output", n->node.name, n->node.op);
        size_t bytes;
        KILN_TRY(kiln_ir_tensor_size(g, &v->t, what, v->name, &bytes));
        v->typed = v->shape_known = true;
        v->t.data = NULL;
    }
    if (!(all_const || reads_only_shapes(&n->node))) return KILN_OK;
    st = fold_node(g, n, in, out);
    if (st == KILN_ERROR_LIMIT) {
        for (size_t j = 0; j < n->node.n_outputs; j++)
            if (out[j]) out[j]->data = NULL;
        return KILN_OK;
    }
    if (st != KILN_OK)
        return kiln_ir_fail(g, st, "node '%s' (%s, opset %d): %s while folding constants", n->node.name,
                            n->node.op, n->node.opset, kiln_status_str(st));
    for (size_t j = 0; j < n->node.n_outputs; j++)
        if (n->outputs[j] >= 0) g->values[n->outputs[j]].is_const = true;
    n->removed = true;
    return KILN_OK;
}

kiln_status kiln_ir_infer_and_fold(kiln_ir_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].removed) continue;
        KILN_TRY(infer_node(g, (int32_t)i));
    }
    return KILN_OK;
}
