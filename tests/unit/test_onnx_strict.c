/* test_onnx_strict.c — models onnx.checker refuses are refused, not compiled with a guessed
 * meaning (issue 12, item 8).
 *
 * Layer: tests (compiler through the public API; the portable kernel table through
 * kernels/portable/kernel.h). Each bad model is KILN_ERROR_MODEL with a one-line message that
 * names the node (or the opset): an op_type with a NUL byte inside (protobuf-c would hand over
 * "Add"), Add with 5 inputs or 3 outputs, an empty required input, two nodes writing one value,
 * a node output redefining a graph input or an initializer, opsets 2^32+13 (was read as 13), 99
 * and none at all, an attribute of the wrong type (Softmax `axis` as FLOAT used to compute over
 * the default axis), an attribute declared INT holding a FLOAT, an attribute given twice, and a
 * STRING attribute holding a NUL. Controls: the same models made right compile. External data
 * in a model compiled from memory (no folder to find it in) is refused too (item 12). Last,
 * every entry of the kernel table has a well-formed arity and attribute list.
 */
#include <stdio.h>

#include "kernels/portable/kernel.h"
#include "test_model_support.h"

static const int64_t shape[2] = {2, 3};

/* x (2x3 f32) -> one node -> y, at `opset`. */
static onnx_builder *one_node(int64_t opset, const char *op, const char *inputs, const char *outputs,
                              Onnx__NodeProto **node)
{
    onnx_builder *b = onnx_builder_create(opset);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    *node = onnx_builder_node(b, op, inputs, outputs);
    onnx_builder_output(b, "y");
    return b;
}

static void nul_in_op_type(void)
{
    unit_section("an op_type holding a NUL byte");
    Onnx__NodeProto *n;
    onnx_builder *b = one_node(13, "AddXEvil", "x,x", "y", &n);
    size_t size;
    uint8_t *model = tm_patch(b, "AddXEvil", "Add\0Evil", 8, &size);
    tm_expect_refused_bytes(model, size, KILN_ERROR_MODEL, "node 'n0'", "op_type 'Add\\x00Evil' holds a NUL byte");
    free(model);
    /* a value name too: the input "x" of the node, written "x\0" + "y" */
    onnx_builder_destroy(b);
    b = one_node(13, "Add", "x,x", "y", &n);
    n->input[1] = "xQz";
    model = tm_patch(b, "xQz", "x\0z", 3, &size);
    tm_expect_refused_bytes(model, size, KILN_ERROR_MODEL, "graph.node[0] (node 'n0')", "input 'x\\x00z'");
    free(model);
    onnx_builder_destroy(b);
    b = one_node(13, "Add", "x,x", "y", &n);
    tm_expect_compiles(b);
    onnx_builder_destroy(b);
}

static void arity(void)
{
    unit_section("inputs and outputs counted per op");
    Onnx__NodeProto *n;
    onnx_builder *b = one_node(13, "Add", "x,x,x,x,x", "y", &n);
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Add, opset 13) has 5 inputs", "Add takes 2");
    onnx_builder_destroy(b);
    b = one_node(13, "Add", "x,x", "y,y2,y3", &n);
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Add, opset 13) has 3 outputs", "Add gives 1");
    onnx_builder_destroy(b);
    /* Clip: one input before opset 11, up to three from it. */
    b = one_node(6, "Clip", "x,x", "y", &n);
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Clip, opset 6) has 2 inputs", "Clip takes 1");
    onnx_builder_destroy(b);
    b = one_node(13, "Clip", "x,,", "y", &n);
    tm_expect_compiles(b);
    onnx_builder_destroy(b);
    /* an empty slot where a required input goes */
    b = one_node(13, "Add", ",x", "y", &n);
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Add): input 0 is required but empty", NULL);
    onnx_builder_destroy(b);
}

static void single_assignment(void)
{
    unit_section("every value defined once");
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_node(b, "Relu", "x", "y");
    onnx_builder_node(b, "Neg", "x", "y");
    onnx_builder_output(b, "y");
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n1' (Neg) defines 'y'", "node 'n0' (Relu) already writes");
    onnx_builder_destroy(b);

    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_node(b, "Relu", "x", "x");
    onnx_builder_output(b, "x");
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Relu) defines 'x', which is a graph input", NULL);
    onnx_builder_destroy(b);

    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 2, shape, w, sizeof w);
    onnx_builder_node(b, "Relu", "x", "w");
    onnx_builder_node(b, "Add", "x,w", "y");
    onnx_builder_output(b, "y");
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Relu) defines 'w', which is already an initializer", NULL);
    onnx_builder_destroy(b);
}

static void opsets(void)
{
    unit_section("the default domain's opset");
    Onnx__NodeProto *n;
    onnx_builder *b = one_node(((int64_t)1 << 32) + 13, "Relu", "x", "y", &n);
    tm_expect_refused(b, KILN_ERROR_MODEL, "opset 4294967309 of the default ONNX domain", "kiln knows opsets 1 to");
    onnx_builder_destroy(b);
    b = one_node(99, "Relu", "x", "y", &n);
    tm_expect_refused(b, KILN_ERROR_MODEL, "opset 99 of the default ONNX domain", NULL);
    onnx_builder_destroy(b);
    b = one_node(0, "Relu", "x", "y", &n);
    tm_expect_refused(b, KILN_ERROR_MODEL, "opset 0 of the default ONNX domain", NULL);
    onnx_builder_destroy(b);
    b = one_node(13, "Relu", "x", "y", &n);
    onnx_builder_model(b)->n_opset_import = 0;
    tm_expect_refused(b, KILN_ERROR_MODEL, "model has no opset_import", NULL);
    onnx_builder_destroy(b);
    b = one_node(KILN_PORTABLE_OPSET_MAX, "Relu", "x", "y", &n);
    tm_expect_compiles(b);
    onnx_builder_destroy(b);
}

static void attribute_types(void)
{
    unit_section("attribute types");
    Onnx__NodeProto *n;
    onnx_builder *b = one_node(13, "Softmax", "x", "y", &n);
    onnx_builder_attr_float(b, n, "axis", 0.0f);
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Softmax): attribute 'axis' is FLOAT", "takes it as INT");
    onnx_builder_destroy(b);

    b = one_node(13, "Softmax", "x", "y", &n);
    onnx_builder_attr_int(b, n, "axis", 0);
    n->attribute[0]->has_i = 0;
    n->attribute[0]->has_f = 1;
    tm_expect_refused(b, KILN_ERROR_MODEL, "attribute 'axis' is declared INT but holds a FLOAT value", "node 'n0'");
    onnx_builder_destroy(b);

    b = one_node(13, "Softmax", "x", "y", &n);
    onnx_builder_attr_int(b, n, "axis", 0);
    onnx_builder_attr_int(b, n, "axis", 1);
    tm_expect_refused(b, KILN_ERROR_MODEL, "node 'n0' (Softmax): attribute 'axis' is given twice", NULL);
    onnx_builder_destroy(b);

    /* A FLOAT attribute written as an INT is read exactly, so it stays accepted. */
    b = one_node(13, "LeakyRelu", "x", "y", &n);
    onnx_builder_attr_int(b, n, "alpha", 2);
    tm_expect_compiles(b);
    onnx_builder_destroy(b);

    b = one_node(13, "Softmax", "x", "y", &n);
    onnx_builder_attr_int(b, n, "axis", 0);
    tm_expect_compiles(b);
    onnx_builder_destroy(b);

    static const int64_t pads[4] = {0, 1, 0, 1};
    static const int64_t pad_shape[1] = {4};
    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_initializer(b, "p", ONNX_BUILDER_INT64, 1, pad_shape, pads, sizeof pads);
    n = onnx_builder_node(b, "Pad", "x,p", "y");
    onnx_builder_attr_string(b, n, "mode", "edgeQQQ");
    onnx_builder_output(b, "y");
    size_t size;
    uint8_t *model = tm_patch(b, "edgeQQQ", "edge\0QQ", 7, &size);
    tm_expect_refused_bytes(model, size, KILN_ERROR_MODEL, "node 'n0' (Pad): attribute 'mode'",
                            "'edge\\x00QQ', which holds a NUL byte");
    free(model);
    onnx_builder_destroy(b);
}

/* External data needs the model's folder, which a model from memory does not have. */
static void external_from_memory(void)
{
    unit_section("external data in a model compiled from memory");
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 2, shape, w, sizeof w);
    onnx_builder_node(b, "Add", "x,w", "y");
    onnx_builder_output(b, "y");
    Onnx__TensorProto *t = onnx_builder_model(b)->graph->initializer[0];
    static Onnx__StringStringEntryProto location = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    static Onnx__StringStringEntryProto *entries[1] = {&location};
    location.key = "location";
    location.value = "weights.bin";
    t->has_raw_data = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->n_external_data = 1;
    t->external_data = entries;
    tm_expect_refused(b, KILN_ERROR_MODEL, "initializer 'w': its data is in the external file 'weights.bin'",
                      "compile the model from its file");
    onnx_builder_destroy(b);
}

/* Every table entry: arity versions ascending with min <= max, and an attribute list of
   "name:T..." words whose letters are known, so kiln_kernel_attr_ok never skips a malformed one. */
static void check_entry(const kiln_kernel *k, void *user)
{
    (void)user;
    bool ok = k->arity[0].since == 0 && k->arity[0].max_outputs > 0;
    for (size_t i = 0; i < KILN_ARITY_VERSIONS; i++) {
        const kiln_arity *a = &k->arity[i];
        if (i > 0 && a->since == 0 && a->max_inputs == 0 && a->max_outputs == 0) continue; /* unused */
        ok = ok && a->min_inputs <= a->max_inputs && a->min_outputs <= a->max_outputs;
        ok = ok && (i == 0 || a->since > k->arity[i - 1].since);
    }
    const char *p = k->attrs;
    ok = ok && p != NULL;
    while (ok && *p) {
        const char *colon = strchr(p, ':');
        size_t word = strcspn(p, " ");
        ok = colon && colon > p && (size_t)(colon - p) < word && word > (size_t)(colon - p) + 1;
        for (const char *t = colon ? colon + 1 : p; ok && t < p + word; t++) ok = strchr("ifIFsSt", *t) != NULL;
        p += word;
        if (*p == ' ') p++;
    }
    if (!ok) fprintf(stderr, "  kernel table entry %s (opset %d) is malformed\n", k->op, k->min_opset);
    EXPECT(ok);
}

int main(void)
{
    nul_in_op_type();
    arity();
    single_assignment();
    opsets();
    attribute_types();
    external_from_memory();
    unit_section("the kernel table");
    kiln_portable_kernel_foreach(check_entry, NULL);
    kiln_portable_kernel_foreach_in(KILN_DOMAIN_KILN, check_entry, NULL);
    return unit_finish("test_onnx_strict");
}
