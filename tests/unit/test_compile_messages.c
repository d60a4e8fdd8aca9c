/* test_compile_messages.c — the compiler's one error line stays one line, whatever the model's
 * strings hold (issue 12, item 11).
 *
 * Layer: tests (compiler through the public API). A node named "a\nb\x1b[31m" used to split the
 * message in two and send an ANSI colour sequence to the terminal. Every message the compiler
 * forms from model strings escapes them (kiln_text_escape): here a bad attribute (import), an
 * inconsistent shape (inference), an unsupported op with a hostile op_type and domain, a value
 * used before it is defined, a value too large (size checks) and a value defined twice, each
 * must come back as one printable line holding the escaped names.
 */
#include "test_model_support.h"

#define HOSTILE "a\nb\x1b[31m"
#define ESCAPED "a\\nb\\x1b[31m"

static const int64_t shape[2] = {2, 3};

/* One printable line: no byte below 0x20 and no DEL. */
static void expect_printable(const onnx_builder *b, kiln_status want, const char *needle)
{
    void *program;
    size_t size;
    char message[1024];
    kiln_status st = tm_compile(b, 1, &program, &size, message, sizeof message);
    EXPECT_STATUS(st, want);
    bool printable = true;
    for (const char *p = message; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F) printable = false;
    bool found = strstr(message, needle) != NULL;
    if (!printable || !found) {
        fprintf(stderr, "  message:");
        for (const char *p = message; *p; p++) fprintf(stderr, (unsigned char)*p < 0x20 ? "<%02x>" : "%c", *p);
        fprintf(stderr, "\n  expected it to contain: %s\n", needle);
    }
    EXPECT(printable);
    EXPECT(found);
    free(program);
}

int main(void)
{
    unit_section("a hostile node name in an import error");
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    Onnx__NodeProto *n = onnx_builder_node(b, "Softmax", "x", "y");
    n->name = HOSTILE;
    onnx_builder_attr_float(b, n, "axis", 1.0f);
    onnx_builder_output(b, "y");
    expect_printable(b, KILN_ERROR_MODEL, "node '" ESCAPED "' (Softmax): attribute 'axis' is FLOAT");
    onnx_builder_destroy(b);

    unit_section("a hostile node name in a shape-inference error");
    const int64_t other[2] = {4, 5};
    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_input(b, "z", ONNX_BUILDER_FLOAT, 2, other);
    n = onnx_builder_node(b, "Add", "x,z", "y");
    n->name = HOSTILE;
    onnx_builder_output(b, "y");
    expect_printable(b, KILN_ERROR_SHAPE_MISMATCH, "node '" ESCAPED "' (Add, opset 13)");
    onnx_builder_destroy(b);

    unit_section("a hostile op_type and domain");
    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    n = onnx_builder_node(b, "Evil\r\x07", "x", "y");
    onnx_builder_output(b, "y");
    expect_printable(b, KILN_ERROR_UNSUPPORTED_OP, "unsupported op 'Evil\\r\\x07'");
    n->domain = "com.\x1b]0;title\x07";
    expect_printable(b, KILN_ERROR_UNSUPPORTED_OP, "(domain 'com.\\x1b]0;title\\x07')");
    onnx_builder_destroy(b);

    unit_section("hostile value names");
    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_node(b, "Relu", "x\\\n", "y");
    onnx_builder_output(b, "y");
    expect_printable(b, KILN_ERROR_MODEL, "uses 'x\\\\\\n', which is not defined before it");
    onnx_builder_destroy(b);

    const int64_t huge[1] = {(int64_t)1 << 62};
    b = onnx_builder_create(13);
    onnx_builder_input(b, HOSTILE, ONNX_BUILDER_FLOAT, 1, huge);
    onnx_builder_node(b, "Relu", HOSTILE, "y");
    onnx_builder_output(b, "y");
    expect_printable(b, KILN_ERROR_LIMIT, "input '" ESCAPED "' of shape");
    onnx_builder_destroy(b);

    b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    n = onnx_builder_node(b, "Relu", "x", HOSTILE);
    n->name = "first\ttab";
    onnx_builder_node(b, "Neg", "x", HOSTILE);
    onnx_builder_output(b, HOSTILE);
    expect_printable(b, KILN_ERROR_MODEL, "defines '" ESCAPED "', which node 'first\\ttab' (Relu) already writes");
    onnx_builder_destroy(b);
    return unit_finish("test_compile_messages");
}
