/* test_compile_weight_sharing.c — multi-method programs with --weight-sharing (issue 4, item 4).
 *
 * Layer: tests (include/kiln/compiler.h and kiln.h; models built with tests/support/onnx_builder).
 * A small transformer-style MLP block (MatMul, Add, Relu, MatMul, Add) is exported twice with the
 * same weights — "prefill" at batch 8 and "decode" at batch 1 — and compiled into one program
 * with and without weight sharing, for every target together. Checks:
 *  - with sharing the program is smaller than without by about the weight bytes;
 *  - both methods load in one module and report the same context id for each delegate call
 *    (one context over one binary); without sharing the ids differ;
 *  - each method's outputs are identical with and without sharing;
 *  - methods that do not partition alike (a portable op splits one of them in two) are
 *    refused with KILN_ERROR_COMPILE_SPEC and a message saying so, and compile without sharing.
 */
#include <math.h>

#include "onnx_builder.h"
#include "unit_expect.h"

#define D_MODEL 64
#define D_HIDDEN 96

static float w1[D_MODEL * D_HIDDEN], b1[D_HIDDEN], w2[D_HIDDEN * D_MODEL], b2[D_MODEL];
static const size_t weight_bytes = sizeof w1 + sizeof b1 + sizeof w2 + sizeof b2;

static void make_weights(void)
{
    uint32_t s = 12345;
    float *all[4] = {w1, b1, w2, b2};
    size_t n[4] = {D_MODEL * D_HIDDEN, D_HIDDEN, D_HIDDEN * D_MODEL, D_MODEL};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < n[k]; i++) {
            s = s * 1664525u + 1013904223u;
            all[k][i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 0.25f;
        }
}

/* y = (relu(x W1 + b1)) W2 + b2 for x [batch, D_MODEL]; with `split`, a Floor (which the cpu
   backend does not take) between the two layers cuts the block into two partitions. */
static void mlp_model(int64_t batch, bool split, uint8_t **data, size_t *size)
{
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[2] = {batch, D_MODEL}, w1s[2] = {D_MODEL, D_HIDDEN}, b1s[1] = {D_HIDDEN}, w2s[2] = {D_HIDDEN, D_MODEL},
            b2s[1] = {D_MODEL};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, xs);
    onnx_builder_initializer(b, "w1", ONNX_BUILDER_FLOAT, 2, w1s, w1, sizeof w1);
    onnx_builder_initializer(b, "b1", ONNX_BUILDER_FLOAT, 1, b1s, b1, sizeof b1);
    onnx_builder_initializer(b, "w2", ONNX_BUILDER_FLOAT, 2, w2s, w2, sizeof w2);
    onnx_builder_initializer(b, "b2", ONNX_BUILDER_FLOAT, 1, b2s, b2, sizeof b2);
    onnx_builder_node(b, "MatMul", "x,w1", "h0");
    onnx_builder_node(b, "Add", "h0,b1", "h1");
    onnx_builder_node(b, "Relu", "h1", split ? "h2a" : "h2");
    if (split) onnx_builder_node(b, "Floor", "h2a", "h2");
    onnx_builder_node(b, "MatMul", "h2,w2", "h3");
    onnx_builder_node(b, "Add", "h3,b2", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

typedef struct model_bytes {
    uint8_t *data;
    size_t size;
} model_bytes;

static model_bytes prefill, decode, decode_split;

static void *compile(const model_bytes *m0, const model_bytes *m1, int weight_sharing, size_t *size, kiln_status want,
                     const char *want_message)
{
    static const char *const targets[3] = {"generic", "x86-64-v3", "x86-64-v4"};
    kiln_compile_method methods[2] = {{"prefill", NULL, m0->data, m0->size}, {"decode", NULL, m1->data, m1->size}};
    kiln_compile_options opt = {.struct_size = sizeof opt, .targets = targets, .n_targets = 3,
                                .weight_sharing = weight_sharing};
    void *data = NULL;
    char message[512] = "";
    kiln_status st = kiln_compile_memory(&opt, methods, 2, &data, size, message, sizeof message);
    EXPECT_STATUS(st, want);
    if (want_message) EXPECT(strstr(message, want_message) != NULL);
    if (st != want) fprintf(stderr, "  message: %s\n", message);
    return data;
}

typedef struct loaded {
    kiln_program *program;
    kiln_module *module;
    kiln_method *method[2];
} loaded;

static void load(loaded *l, const void *bytes, size_t size)
{
    memset(l, 0, sizeof *l);
    EXPECT_STATUS(kiln_program_open_memory(bytes, size, &l->program), KILN_OK);
    EXPECT_STATUS(kiln_module_create(l->program, NULL, &l->module), KILN_OK);
    EXPECT_STATUS(kiln_method_load(l->module, "prefill", &l->method[0]), KILN_OK);
    EXPECT_STATUS(kiln_method_load(l->module, "decode", &l->method[1]), KILN_OK);
}

static void unload(loaded *l)
{
    kiln_module_destroy(l->module);
    kiln_program_close(l->program);
}

/* Every delegate call of prefill and decode names the same context exactly when `shared`. */
static void check_contexts(const loaded *l, bool shared)
{
    size_t n0 = kiln_method_delegate_count(l->method[0]), n1 = kiln_method_delegate_count(l->method[1]);
    EXPECT(n0 >= 1 && n0 == n1);
    for (size_t i = 0; i < n0 && i < n1; i++) {
        uint64_t a = 0, b = 0;
        EXPECT_STATUS(kiln_method_context_id(l->method[0], i, &a), KILN_OK);
        EXPECT_STATUS(kiln_method_context_id(l->method[1], i, &b), KILN_OK);
        EXPECT(a != 0 && b != 0);
        EXPECT(shared ? a == b : a != b);
    }
}

/* Runs method m on a deterministic input; *out receives a malloc'd copy of its output. */
static size_t run(const loaded *l, int m, int64_t batch, float **out)
{
    size_t n = (size_t)batch * D_MODEL;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = sinf((float)i * 0.37f);
    kiln_tensor in = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {batch, D_MODEL}, .data = x};
    EXPECT_STATUS(kiln_method_set_input(l->method[m], 0, &in), KILN_OK);
    EXPECT_STATUS(kiln_method_execute(l->method[m]), KILN_OK);
    kiln_tensor y;
    *out = calloc(n, sizeof **out);
    if (kiln_method_get_output(l->method[m], 0, &y) == KILN_OK && kiln_tensor_numel(&y) == (int64_t)n)
        memcpy(*out, y.data, n * sizeof **out);
    else
        EXPECT(!"output of the expected size");
    free(x);
    return n;
}

static void test_prefill_decode(void)
{
    unit_section("prefill/decode with and without weight sharing");
    size_t size_shared = 0, size_unshared = 0;
    void *shared = compile(&prefill, &decode, 1, &size_shared, KILN_OK, NULL);
    void *unshared = compile(&prefill, &decode, 0, &size_unshared, KILN_OK, NULL);
    if (!shared || !unshared) goto done;
    /* Every target's packed weights are stored once with sharing and once per method without;
       x86-64-v4 packs for its own tile, generic and x86-64-v3 share theirs, so the binaries
       hold the weights twice (+ padding) and the raw biases once: the saving is about 2x the
       weight bytes, give or take the tables and padding. */
    long long saved = (long long)size_unshared - (long long)size_shared;
    printf("program bytes: %zu without sharing, %zu with; saved %lld (weights %zu bytes per copy)\n", size_unshared,
           size_shared, saved, weight_bytes);
    EXPECT(saved > (long long)(weight_bytes * 2 * 9 / 10) && saved < (long long)(weight_bytes * 2 * 11 / 10));
    loaded ls, lu;
    load(&ls, shared, size_shared);
    load(&lu, unshared, size_unshared);
    check_contexts(&ls, true);
    check_contexts(&lu, false);
    const int64_t batch[2] = {8, 1};
    for (int m = 0; m < 2; m++) {
        float *ys, *yu;
        size_t n = run(&ls, m, batch[m], &ys);
        run(&lu, m, batch[m], &yu);
        EXPECT(memcmp(ys, yu, n * sizeof *ys) == 0);
        free(ys);
        free(yu);
    }
    unload(&ls);
    unload(&lu);
done:
    free(shared);
    free(unshared);
}

static void test_partition_mismatch(void)
{
    unit_section("methods that do not partition alike");
    size_t size = 0;
    void *p = compile(&prefill, &decode_split, 1, &size, KILN_ERROR_COMPILE_SPEC, "do not partition alike");
    EXPECT(p == NULL);
    p = compile(&prefill, &decode_split, 0, &size, KILN_OK, NULL);
    free(p);
}

int main(void)
{
    make_weights();
    mlp_model(8, false, &prefill.data, &prefill.size);
    mlp_model(1, false, &decode.data, &decode.size);
    mlp_model(1, true, &decode_split.data, &decode_split.size);
    test_prefill_decode();
    test_partition_mismatch();
    free(prefill.data);
    free(decode.data);
    free(decode_split.data);
    return unit_finish("test_compile_weight_sharing");
}
