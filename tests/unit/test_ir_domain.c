/* test_ir_domain.c — IR nodes carry a domain, and a kiln-domain node never matches an ONNX op of
 * the same name (issue 13, item 3).
 *
 * Layer: tests (compiler IR, partitioner, emitter and the portable kernel table; the runtime
 * through the public API). The portable kernel table answers (domain, op): "Relu" of the default
 * domain (NULL, "") is found, "kiln.Relu" is not. The cpu backend's supports() takes an f32
 * MatMul of the default domain and refuses the same node as kiln.MatMul, so the partitioner
 * leaves it portable. A program holding a kiln.Relu instruction stores the op as "kiln.Relu"
 * (docs/format.md) and loading it names that op as not in this build's kernels, where the same
 * graph with an ONNX Relu loads and runs.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler_backend.h"
#include "compiler/emit.h"
#include "compiler/ir.h"
#include "compiler/onnx/onnx_import.h"
#include "compiler/partition.h"
#include "core/alloc.h"
#include "core/cpu_features.h"
#include "kernels/portable/kernel.h"
#include "onnx_builder.h"
#include "unit_expect.h"

static void kernel_table(void)
{
    unit_section("the portable kernel table keys on (domain, op)");
    EXPECT(kiln_portable_kernel_find(NULL, "Relu", 13) != NULL);
    EXPECT(kiln_portable_kernel_find("", "Relu", 13) == kiln_portable_kernel_find(NULL, "Relu", 13));
    EXPECT(kiln_portable_kernel_find(KILN_DOMAIN_KILN, "Relu", 13) == NULL);
    EXPECT(kiln_portable_kernel_find(KILN_DOMAIN_KILN, "MatMul", 13) == NULL);
    EXPECT(kiln_domain_equal(NULL, "") && !kiln_domain_equal(NULL, KILN_DOMAIN_KILN));
    EXPECT(kiln_domain_equal("kiln", "kiln") && !kiln_domain_equal("kiln", "kilnx"));
}

/* x [2,4] -> op (with W [4,3] for MatMul) -> y, imported, inferred and folded into g. */
static void import(kiln_ir_graph *g, const char *op, char *message, size_t message_size)
{
    static const int64_t x_shape[2] = {2, 4}, w_shape[2] = {4, 3};
    static const float w[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, x_shape);
    if (strcmp(op, "MatMul") == 0) {
        onnx_builder_initializer(b, "w", ONNX_BUILDER_FLOAT, 2, w_shape, w, sizeof w);
        onnx_builder_node(b, op, "x,w", "y");
    } else {
        onnx_builder_node(b, op, "x", "y");
    }
    onnx_builder_output(b, "y");
    uint8_t *model;
    size_t size;
    onnx_builder_serialize(b, &model, &size);
    kiln_ir_graph_init(g, kiln_allocator_default(), message, message_size);
    EXPECT_STATUS(kiln_onnx_import(g, model, size, NULL, NULL, 0, false), KILN_OK);
    EXPECT_STATUS(kiln_ir_infer_and_fold(g), KILN_OK);
    free(model);
    onnx_builder_destroy(b);
}

/* The graph's one node, delegated to the cpu backend where it supports it: whether it was. */
static bool delegated(const char *domain)
{
    char message[512] = "";
    kiln_ir_graph g;
    import(&g, "MatMul", message, sizeof message);
    REQUIRE(g.n_nodes == 1);
    g.nodes[0].node.domain = domain;
    const kiln_compiler_backend *cpu = kiln_compiler_backend_find("cpu");
    REQUIRE(cpu);
    kiln_compile_kv normal[KILN_COMPILE_KV_MAX];
    size_t n_normal = 0;
    EXPECT_STATUS(cpu->validate_spec(NULL, 0, kiln_cpu_features(), normal, KILN_COMPILE_KV_MAX, &n_normal, message,
                                     sizeof message),
                  KILN_OK);
    EXPECT_STATUS(kiln_ir_delegate(&g, "forward", cpu, normal, n_normal), KILN_OK);
    bool any = false;
    for (size_t i = 0; i < g.n_nodes; i++) any |= !g.nodes[i].removed && g.nodes[i].payload != NULL;
    kiln_ir_graph_deinit(&g);
    return any;
}

static void backend_supports(void)
{
    unit_section("the cpu backend takes MatMul, not kiln.MatMul");
    EXPECT(delegated(""));
    EXPECT(delegated(NULL));
    EXPECT(!delegated(KILN_DOMAIN_KILN));
}

/* Emits the Relu graph with its node in domain as a program and loads its method: the status,
   message in message. */
static kiln_status load_relu(const char *domain, char *message, size_t message_size)
{
    kiln_ir_graph g;
    char import_message[512] = "";
    import(&g, "Relu", import_message, sizeof import_message);
    REQUIRE(g.n_nodes == 1);
    g.nodes[0].node.domain = domain;
    kiln_program_builder *b;
    EXPECT_STATUS(kiln_program_builder_create(kiln_allocator_default(), &b), KILN_OK);
    kiln_ir_plan plan;
    EXPECT_STATUS(kiln_ir_plan_memory(&g, &plan), KILN_OK);
    EXPECT_STATUS(kiln_ir_emit_method(&g, &plan, "forward", b), KILN_OK);
    void *data = NULL;
    size_t size = 0;
    EXPECT_STATUS(kiln_program_builder_finish(b, &data, &size), KILN_OK);
    kiln_program_builder_destroy(b);
    kiln_ir_graph_deinit(&g);
    /* the op string in the program's bytes */
    const char *want = domain && domain[0] ? "kiln.Relu" : "Relu";
    EXPECT(memmem(data, size, want, strlen(want) + 1) != NULL);
    kiln_program *p = NULL;
    kiln_status st = kiln_program_open_memory(data, size, &p);
    EXPECT_STATUS(st, KILN_OK);
    kiln_module *m = NULL;
    kiln_module_options mo = {.struct_size = sizeof mo, .num_threads = 1};
    if (st == KILN_OK) EXPECT_STATUS(kiln_module_create(p, &mo, &m), KILN_OK);
    kiln_method *method = NULL;
    st = m ? kiln_method_load_with_message(m, "forward", &method, message, message_size) : KILN_ERROR_INTERNAL;
    if (st == KILN_OK) {
        float x[8] = {-1, 2, -3, 4, -5, 6, -7, 8};
        kiln_tensor xt = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {2, 4}, .data = x}, yt;
        EXPECT_STATUS(kiln_method_set_input(method, 0, &xt), KILN_OK);
        EXPECT_STATUS(kiln_method_execute(method), KILN_OK);
        EXPECT_STATUS(kiln_method_get_output(method, 0, &yt), KILN_OK);
        const float *y = yt.data;
        EXPECT(y && y[0] == 0 && y[1] == 2 && y[7] == 8);
    }
    kiln_method_unload(method);
    kiln_module_destroy(m);
    if (p) kiln_program_close(p);
    kiln_free(kiln_allocator_default(), data);
    return st;
}

static void program_op_string(void)
{
    unit_section("a kiln.Relu instruction is stored and refused as kiln.Relu");
    char message[512] = "";
    EXPECT_STATUS(load_relu("", message, sizeof message), KILN_OK);
    EXPECT_STATUS(load_relu(KILN_DOMAIN_KILN, message, sizeof message), KILN_ERROR_NOT_SUPPORTED);
    EXPECT(strstr(message, "op 'kiln.Relu' opset 13") != NULL);
    if (!strstr(message, "op 'kiln.Relu' opset 13")) fprintf(stderr, "  message: %s\n", message);
}

int main(void)
{
    kernel_table();
    backend_supports();
    program_op_string();
    return unit_finish("test_ir_domain");
}
