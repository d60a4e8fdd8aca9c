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
#include "compiler/partition.h"
#include "core/cpu_features.h"
#include "ir_program_support.h"

static void kernel_table(void)
{
    unit_section("the portable kernel table keys on (domain, op)");
    EXPECT(kiln_portable_kernel_find(NULL, "Relu", 13) != NULL);
    EXPECT(kiln_portable_kernel_find("", "Relu", 13) == kiln_portable_kernel_find(NULL, "Relu", 13));
    EXPECT(kiln_portable_kernel_find(KILN_DOMAIN_KILN, "Relu", 13) == NULL);
    EXPECT(kiln_portable_kernel_find(KILN_DOMAIN_KILN, "MatMul", 13) == NULL);
    /* kiln's own ops: found in their domain at opset 1 and later, never in the ONNX domain */
    static const char *const kiln_ops[] = {"RMSNorm", "RoPE", "Attention", "Linear", "Embed"};
    for (size_t i = 0; i < sizeof kiln_ops / sizeof kiln_ops[0]; i++) {
        const kiln_kernel *k = kiln_portable_kernel_find(KILN_DOMAIN_KILN, kiln_ops[i], 1);
        EXPECT(k != NULL && strcmp(k->op, kiln_ops[i]) == 0);
        EXPECT(kiln_portable_kernel_find(KILN_DOMAIN_KILN, kiln_ops[i], 3) == k);
        EXPECT(kiln_portable_kernel_find(KILN_DOMAIN_KILN, kiln_ops[i], 0) == NULL);
        EXPECT(kiln_portable_kernel_find(NULL, kiln_ops[i], 20) == NULL);
    }
    EXPECT(kiln_domain_equal(NULL, "") && !kiln_domain_equal(NULL, KILN_DOMAIN_KILN));
    EXPECT(kiln_domain_equal("kiln", "kiln") && !kiln_domain_equal("kiln", "kilnx"));
}

/* The graph's one node, delegated to the cpu backend where it supports it: whether it was. */
static bool delegated(const char *domain)
{
    char message[512] = "";
    kiln_ir_graph g;
    irp_import(&g, "MatMul", 4, message, sizeof message);
    EXPECT_STATUS(kiln_ir_infer_and_fold(&g), KILN_OK);
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
    irp_import(&g, "Relu", 4, import_message, sizeof import_message);
    EXPECT_STATUS(kiln_ir_infer_and_fold(&g), KILN_OK);
    REQUIRE(g.n_nodes == 1);
    g.nodes[0].node.domain = domain;
    size_t size;
    void *data = irp_emit(&g, &size);
    kiln_ir_graph_deinit(&g);
    /* the op string in the program's bytes */
    const char *want = domain && domain[0] ? "kiln.Relu" : "Relu";
    EXPECT(memmem(data, size, want, strlen(want) + 1) != NULL);
    kiln_status st = irp_load_and_run_relu(data, size, message, message_size);
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

/* The one MatMul node of an imported x [2, cols] . W [cols, 3] turned into kiln.Linear (which
   reads W as [N, K]) and inferred: the status, the message in message. */
static kiln_status infer_as_linear(int64_t cols, char *message, size_t message_size)
{
    kiln_ir_graph g;
    irp_import(&g, "MatMul", cols, message, message_size);
    REQUIRE(g.n_nodes == 1);
    g.nodes[0].node.domain = KILN_DOMAIN_KILN;
    g.nodes[0].node.op = "Linear";
    g.nodes[0].node.opset = 1;
    g.nodes[0].kernel = kiln_portable_kernel_find(KILN_DOMAIN_KILN, "Linear", 1);
    REQUIRE(g.nodes[0].kernel);
    kiln_status st = kiln_ir_infer_and_fold(&g);
    kiln_ir_graph_deinit(&g);
    return st;
}

static void kiln_op_messages(void)
{
    unit_section("a kiln op the compiler refuses says why");
    char message[512] = "";
    EXPECT_STATUS(infer_as_linear(3, message, sizeof message), KILN_OK); /* W [3, 3] is [N, K = 3] */
    EXPECT_STATUS(infer_as_linear(4, message, sizeof message), KILN_ERROR_SHAPE_MISMATCH);
    EXPECT(strstr(message, "(Linear, opset 1)") && strstr(message, ": W has shape [4, 3], expected [N, 4] (X is [2, 4])"));
    printf("  %s\n", message);
}

int main(void)
{
    kernel_table();
    kiln_op_messages();
    backend_supports();
    program_op_string();
    return unit_finish("test_ir_domain");
}
