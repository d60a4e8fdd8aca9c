/* test_compile_lowering_data.c — where the lowering lays out Concat, Split and Slice results,
 * read from the compiled context binary: a Concat input that a step writes is placed at its band
 * of the Concat's output (same scratch offset: its CONCAT step moves nothing), DenseNet's growing
 * Concats of one block all share the block output's bytes, and what cannot be placed (graph
 * inputs, a batch of two, bands off 64-byte alignment) is copied; a Concat of 20 inputs is a
 * chain of 4 CONCAT steps; a contiguous, aligned Split part of a scratch tensor is a view of it;
 * a Pad of zeros (PyTorch's, before an AveragePool) is no step.
 * The numbers are checked against the portable kernels in test_cross_backend_data; this test
 * pins the layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_ops.h"
#include "compiled_ctxbin.h"
#include "onnx_builder.h"
#include "unit_expect.h"

typedef struct layout_counts {
    uint32_t concat_steps, slice_steps, other_steps;
    uint32_t in_place, copied;      /* CONCAT and SLICE inputs found at their place, or not */
} layout_counts;

/* Whether scratch tensor `inner` lies at element `offset` of scratch tensor `outer`. */
static bool at_place(const kiln_ctx_tensor *t, int32_t inner, int32_t outer, int64_t offset)
{
    return inner >= 0 && t[inner].kind == KILN_CTX_TENSOR_SCRATCH && t[outer].kind == KILN_CTX_TENSOR_SCRATCH &&
           t[inner].offset == t[outer].offset + (uint64_t)offset * sizeof(float);
}

static layout_counts compiled_layout(uint8_t *onnx, size_t size)
{
    const char *target[1] = {"generic"};
    kiln_compile_options opt = {.struct_size = sizeof opt, .targets = target, .n_targets = 1};
    void *program = NULL;
    kiln_ctxbin bin;
    kiln_test_compiled_ctxbin(&opt, onnx, size, &program, &bin);
    free(onnx);
    const kiln_ctx_graph *g = &kiln_ctxbin_graphs(&bin, &bin.records[0])[0];
    const kiln_ctx_step *steps = kiln_ctxbin_steps(&bin, g);
    const kiln_ctx_tensor *t = kiln_ctxbin_tensors(&bin, g);
    layout_counts n = {0};
    for (uint32_t s = 0; s < g->n_steps; s++) {
        const kiln_ctx_step *st = &steps[s];
        int32_t out = st->tensors[st->n_inputs];
        if (st->op == KILN_CPU_OP_CONCAT) {
            kiln_cpu_concat_params p;
            memcpy(&p, st->params, sizeof p);
            n.concat_steps++;
            for (uint32_t i = 0; i < p.n; i++) {
                bool placed = at_place(t, st->tensors[i], out, p.offset[i]);
                n.in_place += placed;
                n.copied += !placed;
            }
        } else if (st->op == KILN_CPU_OP_SLICE) {
            kiln_cpu_slice_params p;
            memcpy(&p, st->params, sizeof p);
            n.slice_steps++;
            bool placed = at_place(t, out, st->tensors[0], p.offset);
            n.in_place += placed;
            n.copied += !placed;
        } else {
            n.other_steps++;
        }
    }
    kiln_ctxbin_close(&bin);
    free(program);
    return n;
}

/* x [batch, c, hw, hw] -> n Relu'd copies (scaled by i + 1) -> Concat on channels -> Sigmoid. */
static void concat_model(int n, int64_t batch, int64_t c, int64_t hw, bool from_inputs, uint8_t **data, size_t *size)
{
    static float k[32];
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {batch, c, hw, hw};
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        char name[16], kname[16], spec[40], scaled[16];
        snprintf(name, sizeof name, "x%d", i);
        if (from_inputs) {
            onnx_builder_input(b, name, ONNX_BUILDER_FLOAT, 4, xs);
        } else {
            if (i == 0) onnx_builder_input(b, "src", ONNX_BUILDER_FLOAT, 4, xs);
            k[i] = (float)(i + 1);
            snprintf(kname, sizeof kname, "k%d", i);
            snprintf(scaled, sizeof scaled, "s%d", i);
            onnx_builder_initializer(b, kname, ONNX_BUILDER_FLOAT, 0, NULL, &k[i], sizeof k[i]);
            snprintf(spec, sizeof spec, "src,%s", kname);
            onnx_builder_node(b, "Mul", spec, scaled);
            onnx_builder_node(b, "Relu", scaled, name);
        }
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", name);
    }
    onnx_builder_attr_int(b, onnx_builder_node(b, "Concat", list, "cat"), "axis", 1);
    onnx_builder_node(b, "Sigmoid", "cat", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* DenseNet's block: layer k reads Concat(f0 .. f(k-1)) through Relu and a 1x1 Conv to 16
   channels; the block output is Concat(f0 .. f(layers)). */
static void dense_block_model(int layers, uint8_t **data, size_t *size)
{
    static float w[8][16 * 16 * 9];
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {1, 32, 4, 4};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_node(b, "Relu", "x", "f0");
    char list[256] = "f0";
    size_t used = 2;
    for (int k = 1; k <= layers; k++) {
        char cat[16], pre[16], wn[16], f[16], spec[48];
        snprintf(cat, sizeof cat, "cat%d", k);
        snprintf(pre, sizeof pre, "pre%d", k);
        snprintf(wn, sizeof wn, "w%d", k);
        snprintf(f, sizeof f, "f%d", k);
        int64_t ws[4] = {16, 16 * (1 + k), 1, 1};
        for (int i = 0; i < 16 * 16 * (1 + k); i++) w[k - 1][i] = (float)(i % 5) * 0.01f;
        onnx_builder_attr_int(b, onnx_builder_node(b, "Concat", list, cat), "axis", 1);
        onnx_builder_node(b, "Relu", cat, pre);
        onnx_builder_initializer(b, wn, ONNX_BUILDER_FLOAT, 4, ws, w[k - 1], (size_t)(16 * 16 * (1 + k)) * sizeof(float));
        snprintf(spec, sizeof spec, "%s,%s", pre, wn);
        onnx_builder_node(b, "Conv", spec, f);
        used += (size_t)snprintf(list + used, sizeof list - used, ",%s", f);
    }
    onnx_builder_attr_int(b, onnx_builder_node(b, "Concat", list, "block"), "axis", 1);
    onnx_builder_node(b, "Relu", "block", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1, c, hw, hw] -> Relu -> Split on channels into parts -> each Sigmoid. */
static void split_model(int64_t c, int64_t hw, int n, const int64_t *parts, uint8_t **data, size_t *size)
{
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {1, c, hw, hw}, ps[1] = {n};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_initializer(b, "parts", ONNX_BUILDER_INT64, 1, ps, parts, (size_t)n * sizeof *parts);
    onnx_builder_node(b, "Relu", "x", "r");
    char outs[64] = "";
    size_t used = 0;
    for (int j = 0; j < n; j++) used += (size_t)snprintf(outs + used, sizeof outs - used, "%sp%d", j ? "," : "", j);
    onnx_builder_attr_int(b, onnx_builder_node(b, "Split", "r,parts", outs), "axis", 1);
    for (int j = 0; j < n; j++) {
        char p[8], y[8];
        snprintf(p, sizeof p, "p%d", j);
        snprintf(y, sizeof y, "y%d", j);
        onnx_builder_node(b, "Sigmoid", p, y);
        onnx_builder_output(b, y);
    }
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* x [1, 8, 4, 4] -> Relu -> Pad of pads (constant) -> AveragePool 2x2 stride 2. */
static void pad_pool_model(const int64_t *pads, uint8_t **data, size_t *size)
{
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {1, 8, 4, 4}, ps[1] = {8};
    static const int64_t kernel[2] = {2, 2};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_initializer(b, "pads", ONNX_BUILDER_INT64, 1, ps, pads, 8 * sizeof *pads);
    onnx_builder_node(b, "Relu", "x", "r");
    onnx_builder_node(b, "Pad", "r,pads", "p");
    Onnx__NodeProto *pool = onnx_builder_node(b, "AveragePool", "p", "y");
    onnx_builder_attr_ints(b, pool, "kernel_shape", 2, kernel);
    onnx_builder_attr_ints(b, pool, "strides", 2, kernel);
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

int main(void)
{
    uint8_t *onnx = NULL;
    size_t size = 0;
    layout_counts n;

    unit_section("Concat of 3 produced [1,16,4,4]: every input written in place");
    concat_model(3, 1, 16, 4, false, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.concat_steps == 1 && n.in_place == 3 && n.copied == 0);

    unit_section("the same from graph inputs: copied");
    concat_model(3, 1, 16, 4, true, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.concat_steps == 1 && n.in_place == 0 && n.copied == 3);

    unit_section("a batch of two: bands are not contiguous, copied");
    concat_model(3, 2, 16, 4, false, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.concat_steps == 1 && n.in_place == 0 && n.copied == 3);

    unit_section("bands of [1,3,4,4] (192 bytes, all at 64-byte multiples) in place; of [1,3,3,3] (108) only the first");
    concat_model(4, 1, 3, 4, false, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.concat_steps == 1 && n.in_place == 4 && n.copied == 0);
    concat_model(4, 1, 3, 3, false, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.concat_steps == 1 && n.in_place == 1 && n.copied == 3); /* at 0, 108, 216, 324 bytes */

    unit_section("Concat of 20: a chain of 4 steps, every input and every partial in place");
    concat_model(20, 1, 16, 4, false, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.concat_steps == 4 && n.in_place == 23 && n.copied == 0);

    unit_section("a dense block of 6 layers: its 7 Concats move nothing");
    dense_block_model(6, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.concat_steps == 7 && n.copied == 0 && n.in_place == 1 + 2 + 3 + 4 + 5 + 6 + 7);

    unit_section("Split of a Relu's output into 4 + 8 + 4 channels of 4x4: views; 16 + 5 + 11 of 3x3: the aligned parts");
    split_model(16, 4, 3, (const int64_t[]){4, 8, 4}, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.slice_steps == 3 && n.in_place == 3 && n.copied == 0);
    split_model(32, 3, 3, (const int64_t[]){16, 5, 11}, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.slice_steps == 3 && n.in_place == 2 && n.copied == 1); /* at 0, 576, 756 bytes */

    unit_section("Pad of zeros before an AveragePool: no step (Relu and pool only); real pads: a PAD step");
    pad_pool_model((const int64_t[]){0, 0, 0, 0, 0, 0, 0, 0}, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.other_steps == 2);
    pad_pool_model((const int64_t[]){0, 0, 2, 2, 0, 0, 2, 2}, &onnx, &size);
    n = compiled_layout(onnx, size);
    EXPECT(n.other_steps == 3);
    return unit_finish("test_compile_lowering_data");
}
