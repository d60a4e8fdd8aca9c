/* test_compiler_toy_backend.c — a second compile-time backend registered by a test alone
 * (src/compiler/compiler_backend.h), proving the compiler reaches backends only through the
 * interface: the toy backend claims Relu nodes, compiles each run of them into its own payload,
 * and checks and describes it as `kiln inspect` prints payloads (kiln_program_describe_delegates:
 * text and JSON, and a payload without describe shown by its size); the compiled program calls
 * it by name beside the `cpu` delegates, and runs
 * through a run-time toy backend of the same name (include/kiln/backend.h) to the outputs of an
 * all-cpu compilation. Also: compile specs are key/value pairs each backend interprets, and
 * an unknown key is refused naming it.
 *
 * Layer: tests (compiler, runtime). Model: x[4,8] -> MatMul -> Relu -> MatMul -> y[4,4].
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/compile_spec.h"
#include "compiler/compiler_backend.h"
#include "core/alloc.h"
#include "format/program_reader.h"
#include "kiln/backend.h"
#include "onnx_builder.h"
#include "unit_expect.h"

#define TOY_MAGIC 0x31594F54u /* "TOY1" */

typedef struct toy_payload {
    uint32_t magic;
    uint32_t n_nodes;
    uint64_t n_elements;        /* of the partition's one input */
} toy_payload;

/* ---- compile time ------------------------------------------------------------------------------ */

static kiln_status toy_validate(const kiln_compile_kv *kv, size_t n, uint64_t host_features, kiln_compile_kv *normal,
                                size_t cap, size_t *n_normal, char *message, size_t size)
{
    (void)host_features;
    (void)normal;
    (void)cap;
    *n_normal = 0;
    if (n == 0) return KILN_OK;
    snprintf(message, size, "unknown toy compile-spec key '%s'; the toy backend takes no keys", kv[0].key);
    return KILN_ERROR_COMPILE_SPEC;
}

static bool toy_supports(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out)
{
    return strcmp(node->op, "Relu") == 0 && in[0] && out[0] && in[0]->dtype == KILN_DTYPE_F32;
}

static kiln_status toy_compile(const kiln_compile_kv *spec, size_t n_spec, const kiln_allocator *allocator,
                               const kiln_backend_graph *graphs, size_t n_graphs, void **out, size_t *out_size,
                               char *message, size_t message_size)
{
    (void)spec;
    (void)n_spec;
    (void)message;
    (void)message_size;
    if (n_graphs != 1 || graphs[0].n_inputs != 1 || graphs[0].n_outputs != 1) return KILN_ERROR_NOT_SUPPORTED;
    toy_payload *p = kiln_alloc_zero(allocator, sizeof *p, 64);
    if (!p) return KILN_ERROR_OUT_OF_MEMORY;
    p->magic = TOY_MAGIC;
    p->n_nodes = (uint32_t)graphs[0].n_nodes;
    p->n_elements = (uint64_t)kiln_tensor_numel(&graphs[0].values[graphs[0].inputs[0]].t);
    *out = p;
    *out_size = sizeof *p;
    return KILN_OK;
}

/* Read back: a payload of the wrong size or magic is refused, as the run-time toy would. */
static kiln_status toy_check(const void *payload, size_t size, kiln_payload_check *check)
{
    toy_payload p;
    if (size == sizeof p) memcpy(&p, payload, sizeof p);
    if (size == sizeof p && p.magic == TOY_MAGIC) return KILN_OK;
    check->status = KILN_ERROR_INCOMPATIBLE;
    check->intact = false;
    snprintf(check->message, sizeof check->message, "not a toy payload");
    return KILN_OK;
}

static kiln_status toy_describe(const void *payload, size_t size, kiln_describe_format format, FILE *out)
{
    toy_payload p;
    if (size != sizeof p) return KILN_ERROR_INCOMPATIBLE;
    memcpy(&p, payload, sizeof p);
    if (format == KILN_DESCRIBE_JSON)
        fprintf(out, ", \"nodes\": %u, \"elements\": %llu", (unsigned)p.n_nodes, (unsigned long long)p.n_elements);
    else
        fprintf(out, "    toy relu: %u node(s) over %llu elements\n", (unsigned)p.n_nodes, (unsigned long long)p.n_elements);
    return KILN_OK;
}

static const kiln_compiler_backend toy_compiler = {
    .name = "toy",
    .validate_spec = toy_validate,
    .supports = toy_supports,
    .compile = toy_compile,
    .check = toy_check,
    .describe = toy_describe,
};

/* The same backend without the entries that read a payload back. */
static const kiln_compiler_backend toy_compiler_mute = {
    .name = "toy",
    .validate_spec = toy_validate,
    .supports = toy_supports,
    .compile = toy_compile,
};

/* ---- run time ------------------------------------------------------------------------------------ */

static int toy_executes;

static bool toy_available(void *user)
{
    (void)user;
    return true;
}

static kiln_status toy_init(void *user, const kiln_backend_init_args *args, void **handle_out)
{
    (void)user;
    toy_payload p;
    if (args->payload_size != sizeof p) return KILN_ERROR_INCOMPATIBLE;
    memcpy(&p, args->payload, sizeof p);
    if (p.magic != TOY_MAGIC) return KILN_ERROR_INCOMPATIBLE;
    *handle_out = (void *)&toy_executes; /* no state: any non-NULL handle */
    return KILN_OK;
}

static kiln_status toy_execute(void *user, void *handle, const kiln_tensor *const *inputs, size_t n_inputs,
                               kiln_tensor *const *outputs, size_t n_outputs)
{
    (void)user;
    (void)handle;
    if (n_inputs != 1 || n_outputs != 1) return KILN_ERROR_BACKEND;
    const float *x = inputs[0]->data;
    float *y = outputs[0]->data;
    for (int64_t i = 0; i < kiln_tensor_numel(inputs[0]); i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    toy_executes++;
    return KILN_OK;
}

static void toy_destroy(void *user, void *handle)
{
    (void)user;
    (void)handle;
}

static const kiln_backend toy_runtime = {
    .abi_version = KILN_BACKEND_ABI_VERSION,
    .struct_size = sizeof(kiln_backend),
    .name = "toy",
    .is_available = toy_available,
    .init = toy_init,
    .execute = toy_execute,
    .destroy = toy_destroy,
};

/* ---- the model and helpers ------------------------------------------------------------------- */

static void model(uint8_t **data, size_t *size)
{
    static float w1[8 * 8], w2[8 * 4];
    for (size_t i = 0; i < 64; i++) w1[i] = (float)((int)(i * 7 % 11) - 5) * 0.125f;
    for (size_t i = 0; i < 32; i++) w2[i] = (float)((int)(i * 5 % 7) - 3) * 0.25f;
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[2] = {4, 8}, s1[2] = {8, 8}, s2[2] = {8, 4};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, xs);
    onnx_builder_initializer(b, "w1", ONNX_BUILDER_FLOAT, 2, s1, w1, sizeof w1);
    onnx_builder_initializer(b, "w2", ONNX_BUILDER_FLOAT, 2, s2, w2, sizeof w2);
    onnx_builder_node(b, "MatMul", "x,w1", "a");
    onnx_builder_node(b, "Relu", "a", "r");
    onnx_builder_node(b, "MatMul", "r,w2", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

static kiln_status compile(const kiln_compiler_backend_use *extra, size_t n_extra, void **out, size_t *size,
                           char *message, size_t message_size)
{
    uint8_t *onnx;
    size_t onnx_size;
    model(&onnx, &onnx_size);
    kiln_compile_options o = {.struct_size = sizeof o, .target = "generic"};
    kiln_compile_method m = {.name = "forward", .model_data = onnx, .model_size = onnx_size};
    kiln_status st = kiln_compile_memory_backends(&o, &m, 1, extra, n_extra, out, size, message, message_size);
    free(onnx);
    return st;
}

/* How many DELEGATE instructions of the program call backend. */
static size_t delegate_calls(const void *data, size_t size, const char *backend)
{
    kiln_program_view v;
    if (kiln_program_view_init(&v, data, size) != KILN_OK) return (size_t)-1;
    size_t n = 0;
    for (uint64_t k = 0; k < v.n_instrs; k++)
        n += v.instrs[k].kind == KILN_INSTR_DELEGATE && strcmp(kiln_view_string(&v, v.instrs[k].op), backend) == 0;
    return n;
}

/* Run the program's method on a fixed x; y gets its 16 outputs. */
static kiln_status run(const void *data, size_t size, float *y)
{
    float x[32];
    for (int i = 0; i < 32; i++) x[i] = (float)(i % 9 - 4) * 0.5f;
    kiln_program *p = NULL;
    kiln_module *mod = NULL;
    kiln_method *m = NULL;
    kiln_status st = kiln_program_open_memory(data, size, &p);
    if (st == KILN_OK) st = kiln_module_create(p, NULL, &mod);
    if (st == KILN_OK) st = kiln_method_load(mod, "forward", &m);
    kiln_tensor in = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {4, 8}, .data = x};
    if (st == KILN_OK) st = kiln_method_set_input(m, 0, &in);
    if (st == KILN_OK) st = kiln_method_execute(m);
    kiln_tensor out;
    if (st == KILN_OK) st = kiln_method_get_output(m, 0, &out);
    if (st == KILN_OK) memcpy(y, out.data, 16 * sizeof *y);
    if (m) kiln_method_unload(m);
    if (mod) kiln_module_destroy(mod);
    if (p) kiln_program_close(p);
    return st;
}

/* (The toy payload is 16 bytes: sizeof(toy_payload).) What kiln_program_describe_delegates prints for the program with the extra backend (or none);
   malloc'd text, NULL on failure. */
static char *describe(const void *prog, size_t size, const kiln_compiler_backend *extra, kiln_describe_format format)
{
    char *text = NULL;
    size_t text_size = 0;
    FILE *f = open_memstream(&text, &text_size);
    if (!f) return NULL;
    const kiln_compiler_backend *list[1] = {extra};
    kiln_status st = kiln_program_describe_delegates(prog, size, list, extra ? 1 : 0, format, f);
    fclose(f);
    if (st == KILN_OK) return text;
    free(text);
    return NULL;
}

/* ---- the checks ------------------------------------------------------------------------------- */

static void test_toy_claims_relu(void)
{
    unit_section("a test's toy backend claims the Relu, the cpu backend the MatMuls");
    kiln_compiler_backend_use toy = {&toy_compiler, NULL, 0};
    void *prog = NULL, *ref = NULL;
    size_t size = 0, ref_size = 0;
    char message[512] = "";
    EXPECT_STATUS(compile(&toy, 1, &prog, &size, message, sizeof message), KILN_OK);
    REQUIRE(prog);
    EXPECT(delegate_calls(prog, size, "toy") == 1);
    EXPECT(delegate_calls(prog, size, "cpu") == 2);

    unit_section("inspect's description prints the toy payload through the toy backend's describe");
    char *text = describe(prog, size, &toy_compiler, KILN_DESCRIBE_TEXT);
    EXPECT(text && strstr(text, "context binary in segment") && strstr(text, ": 16 bytes, 1 delegate call\n"
                                                                          "    toy relu: 1 node(s) over 32 elements\n"));
    EXPECT(text && strstr(text, "2 delegate calls\n    signature ") == NULL); /* the cpu binaries are distinct */
    EXPECT(text && strstr(text, "1 delegate call\n    signature ") != NULL);
    if (text && !strstr(text, "toy relu")) fprintf(stderr, "describe printed:\n%s", text);
    free(text);
    text = describe(prog, size, &toy_compiler, KILN_DESCRIBE_JSON);
    EXPECT(text && strstr(text, "\"size\": 16, \"delegate_calls\": 1, \"valid\": true, \"nodes\": 1, \"elements\": 32}"));
    EXPECT(text && strstr(text, "\"valid\": true, \"signature\": \""));
    free(text);

    unit_section("a payload whose backend has no describe, or is unknown to the build, is shown by its size");
    text = describe(prog, size, &toy_compiler_mute, KILN_DESCRIBE_TEXT);
    EXPECT(text && strstr(text, ": 16 bytes, 1 delegate call\n    backend 'toy' has no description of its payloads"));
    free(text);
    text = describe(prog, size, NULL, KILN_DESCRIBE_TEXT);
    EXPECT(text && strstr(text, ": 16 bytes, 1 delegate call\n    backend 'toy' has no description of its payloads"));
    free(text);
    text = describe(prog, size, &toy_compiler_mute, KILN_DESCRIBE_JSON);
    EXPECT(text && strstr(text, "\"size\": 16, \"delegate_calls\": 1, \"valid\": true}"));
    free(text);

    unit_section("the toy backend's check refuses a payload that is not its own");
    kiln_payload_check check;
    uint8_t junk[8] = {0};
    EXPECT_STATUS(kiln_payload_check_run(&toy_compiler, junk, sizeof junk, &check), KILN_OK);
    EXPECT(check.status == KILN_ERROR_INCOMPATIBLE && !check.intact && strcmp(check.message, "not a toy payload") == 0);
    EXPECT_STATUS(kiln_payload_check_run(&toy_compiler_mute, junk, sizeof junk, &check), KILN_OK);
    EXPECT(check.status == KILN_OK && check.intact);

    unit_section("the program runs through the run-time toy backend to the all-cpu outputs");
    EXPECT_STATUS(compile(NULL, 0, &ref, &ref_size, message, sizeof message), KILN_OK);
    EXPECT(delegate_calls(ref, ref_size, "toy") == 0);
    EXPECT_STATUS(kiln_backend_register(&toy_runtime), KILN_OK);
    float y[16], y_ref[16];
    EXPECT_STATUS(run(prog, size, y), KILN_OK);
    EXPECT(toy_executes == 1);
    EXPECT_STATUS(run(ref, ref_size, y_ref), KILN_OK);
    float worst = 0.0f;
    for (int i = 0; i < 16; i++) worst = fmaxf(worst, fabsf(y[i] - y_ref[i]));
    EXPECT(worst <= 1e-5f);
    kiln_free(kiln_allocator_default(), prog);
    kiln_free(kiln_allocator_default(), ref);
}

static void test_spec_keys(void)
{
    unit_section("each backend interprets its own compile-spec keys and names an unknown one");
    static const kiln_compile_kv colour[1] = {{"colour", "red"}};
    kiln_compiler_backend_use toy = {&toy_compiler, colour, 1};
    void *prog = NULL;
    size_t size = 0;
    char message[512] = "";
    EXPECT_STATUS(compile(&toy, 1, &prog, &size, message, sizeof message), KILN_ERROR_COMPILE_SPEC);
    EXPECT(strstr(message, "'colour'") != NULL);
    EXPECT(prog == NULL);

    const kiln_compiler_backend *cpu = kiln_compiler_backend_find("cpu");
    REQUIRE(cpu && cpu->validate_spec);
    static const kiln_compile_kv odd[2] = {{"target", "generic"}, {"frobnicate", "1"}};
    kiln_compile_kv normal[KILN_COMPILE_KV_MAX];
    size_t n_normal = 0;
    message[0] = '\0';
    EXPECT_STATUS(cpu->validate_spec(odd, 2, 0, normal, KILN_COMPILE_KV_MAX, &n_normal, message, sizeof message),
                  KILN_ERROR_COMPILE_SPEC);
    EXPECT(strstr(message, "'frobnicate'") && strstr(message, "target, precision"));

    static const kiln_compile_kv good[3] = {{"target", "generic"}, {"no_strassen", "1"}, {"precision", "f32"}};
    message[0] = '\0';
    EXPECT_STATUS(cpu->validate_spec(good, 3, 0, normal, KILN_COMPILE_KV_MAX, &n_normal, message, sizeof message),
                  KILN_OK);
    EXPECT(n_normal == 3 && strcmp(normal[0].key, "target") == 0 && strcmp(normal[1].key, "precision") == 0 &&
           strcmp(normal[2].key, "no_strassen") == 0);

    unit_section("the options struct still reaches the cpu backend as key/value pairs");
    kiln_compile_options o = {.struct_size = sizeof o, .target = "generic", .slc = 1};
    kiln_compile_spec spec;
    message[0] = '\0';
    EXPECT_STATUS(kiln_compile_spec_make(&o, &spec, message, sizeof message), KILN_OK);
    EXPECT(kiln_compile_spec_count(&spec, "target") == 1 && kiln_compile_spec_value(&spec, "slc", 0) &&
           strcmp(kiln_compile_spec_value(&spec, "precision", 0), "f32") == 0);
}

int main(void)
{
    test_toy_claims_relu();
    test_spec_keys();
    return unit_finish("test_compiler_toy_backend");
}
