/* test_compile_faults.c — compilation cleans up after every failure and never lies about it
 * (issue 4, item 3).
 *
 * Layer: tests (include/kiln/compiler.h; src/compiler/output_file.h for the injectable file
 * operations of core/file_write.h, failed through fault_io.h). A small CNN (Conv, BatchNormalization, Relu, MaxPool, Conv, GlobalAveragePool,
 * Flatten, Gemm) is compiled as two methods (batch 2 and 1, same weights) for all three targets
 * with weight sharing, and once as one method for this machine's best target — so lowering per
 * target, weight pools, shared binaries and the program writer are all on the path. Then:
 *  - for every N, allocation N fails: the compile fails with KILN_ERROR_OUT_OF_MEMORY and a
 *    one-line message (or, once N is past the last allocation, succeeds with the same bytes as a
 *    clean compile); no block stays allocated; the output file keeps its previous content; no
 *    temporary file is left;
 *  - for every M, file operation M (create, chmod when the output existed, each write, flush,
 *    close, rename) fails — a failing write first writes part of its bytes, as a full disk does:
 *    KILN_ERROR_IO naming the file, the output keeps its previous content (or stays absent), no
 *    temporary file, nothing leaked;
 *  - the same with the removal of the temporary file failing too: the original error is still the
 *    status and leads the message, which adds "; also: could not remove temporary file ...".
 * Under the ASan build LeakSanitizer also checks memory the counting allocator does not see.
 */
#include "compiler/output_file.h"
#include "fault_io.h"
#include "onnx_builder.h"

#define MAX_ALLOCS 200000

/* ---- the model ---------------------------------------------------------------------------------- */

static void fill(float *w, size_t n, uint32_t seed, float scale, float offset)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        w[i] = offset + scale * ((float)(seed >> 8) / 16777216.0f - 0.5f);
    }
}

static void cnn_model(int64_t batch, uint8_t **data, size_t *size)
{
    static float c1[8 * 3 * 3 * 3], c1b[8], g[8], be[8], mu[8], var[8], c2[16 * 8 * 3 * 3], c2b[16], fc[10 * 16], fcb[10];
    fill(c1, sizeof c1 / 4, 1, 0.5f, 0);
    fill(c1b, 8, 2, 0.1f, 0);
    fill(g, 8, 3, 0.2f, 1);
    fill(be, 8, 4, 0.1f, 0);
    fill(mu, 8, 5, 0.1f, 0);
    fill(var, 8, 6, 0.5f, 1);
    fill(c2, sizeof c2 / 4, 7, 0.3f, 0);
    fill(c2b, 16, 8, 0.1f, 0);
    fill(fc, sizeof fc / 4, 9, 0.4f, 0);
    fill(fcb, 10, 10, 0.1f, 0);
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[4] = {batch, 3, 12, 12}, c1s[4] = {8, 3, 3, 3}, v8[1] = {8}, c2s[4] = {16, 8, 3, 3}, v16[1] = {16},
            fcs[2] = {10, 16}, v10[1] = {10};
    onnx_builder_input(b, "image", ONNX_BUILDER_FLOAT, 4, xs);
    onnx_builder_initializer(b, "c1", ONNX_BUILDER_FLOAT, 4, c1s, c1, sizeof c1);
    onnx_builder_initializer(b, "c1b", ONNX_BUILDER_FLOAT, 1, v8, c1b, sizeof c1b);
    onnx_builder_initializer(b, "gamma", ONNX_BUILDER_FLOAT, 1, v8, g, sizeof g);
    onnx_builder_initializer(b, "beta", ONNX_BUILDER_FLOAT, 1, v8, be, sizeof be);
    onnx_builder_initializer(b, "mean", ONNX_BUILDER_FLOAT, 1, v8, mu, sizeof mu);
    onnx_builder_initializer(b, "var", ONNX_BUILDER_FLOAT, 1, v8, var, sizeof var);
    onnx_builder_initializer(b, "c2", ONNX_BUILDER_FLOAT, 4, c2s, c2, sizeof c2);
    onnx_builder_initializer(b, "c2b", ONNX_BUILDER_FLOAT, 1, v16, c2b, sizeof c2b);
    onnx_builder_initializer(b, "fc", ONNX_BUILDER_FLOAT, 2, fcs, fc, sizeof fc);
    onnx_builder_initializer(b, "fcb", ONNX_BUILDER_FLOAT, 1, v10, fcb, sizeof fcb);
    static const int64_t k3[2] = {3, 3}, pad1[4] = {1, 1, 1, 1}, k2[2] = {2, 2};
    Onnx__NodeProto *n = onnx_builder_node(b, "Conv", "image,c1,c1b", "t1");
    onnx_builder_attr_ints(b, n, "kernel_shape", 2, k3);
    onnx_builder_attr_ints(b, n, "pads", 4, pad1);
    onnx_builder_node(b, "BatchNormalization", "t1,gamma,beta,mean,var", "t2");
    onnx_builder_node(b, "Relu", "t2", "t3");
    n = onnx_builder_node(b, "MaxPool", "t3", "t4");
    onnx_builder_attr_ints(b, n, "kernel_shape", 2, k2);
    onnx_builder_attr_ints(b, n, "strides", 2, k2);
    n = onnx_builder_node(b, "Conv", "t4,c2,c2b", "t5");
    onnx_builder_attr_ints(b, n, "kernel_shape", 2, k3);
    onnx_builder_node(b, "Relu", "t5", "t6");
    onnx_builder_node(b, "GlobalAveragePool", "t6", "t7");
    onnx_builder_node(b, "Flatten", "t7", "t8");
    n = onnx_builder_node(b, "Gemm", "t8,fc,fcb", "logits");
    onnx_builder_attr_int(b, n, "transB", 1);
    onnx_builder_output(b, "logits");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

/* ---- one configuration of the compile ---------------------------------------------------------- */

typedef struct config {
    const char *name;
    kiln_compile_method methods[2];
    size_t n_methods;
    kiln_compile_options opt;       /* allocator filled in per run */
} config;

/* ---- the output and its directory ------------------------------------------------------------ */

static char dir[256], out_path[300];
static fault_target target = {dir, out_path, "out.kiln"};

static kiln_status compile_to_file(config *c, const kiln_allocator *a, const kiln_file_io *io, char *message,
                                   size_t size)
{
    kiln_compile_options opt = c->opt;
    opt.allocator = a;
    return kiln_compile_file_io(&opt, c->methods, c->n_methods, out_path, io, message, size);
}

/* ---- the loops ---------------------------------------------------------------------------------- */

static void report(const char *what, const config *c, size_t n, const char *fmt, const char *detail)
{
    fprintf(stderr, "%s %zu (%s): ", what, n, c->name);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    unit_failures++;
}

/* A clean compile's bytes, and its number of allocations. */
static uint8_t *reference(config *c, size_t *size, size_t *n_allocs)
{
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    char message[1024] = "";
    fault_set_previous(&target, false);
    kiln_status st = compile_to_file(c, &a, NULL, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "%s: clean compile failed: %s\n", c->name, message);
    REQUIRE(st == KILN_OK && u.live_blocks == 0);
    *n_allocs = u.n_allocs;
    uint8_t *bytes = unit_read_file(out_path, size);
    REQUIRE(bytes);
    return bytes;
}

static void allocation_failures(config *c, const uint8_t *ref, size_t ref_size, size_t clean_allocs)
{
    size_t n = 1;
    for (; n <= MAX_ALLOCS; n++) {
        unit_alloc u;
        kiln_allocator a = unit_alloc_make(&u);
        u.fail_at = n;
        char message[1024] = "";
        fault_set_previous(&target, n % 2 == 0);
        kiln_status st = compile_to_file(c, &a, NULL, message, sizeof message);
        unit_checks++;
        if (st == KILN_OK) {
            if (u.n_failed) report("allocation", c, n, "failed but the compile succeeded%s", "");
            if (!writer_file_is(out_path, ref, ref_size)) report("allocation", c, n, "success wrote other bytes than a clean compile%s", "");
            break;
        }
        if (st != KILN_ERROR_OUT_OF_MEMORY) report("allocation", c, n, "gave another status than OUT_OF_MEMORY: %s", message);
        if (!message[0] || strchr(message, '\n')) report("allocation", c, n, "message is not one line: '%s'", message);
        if (u.live_blocks) report("allocation", c, n, "leaked blocks%s", "");
        if (!writer_file_is(out_path, n % 2 == 0 ? fault_previous : NULL, sizeof fault_previous))
            report("allocation", c, n, "the output file changed%s", "");
        if (fault_stray_files(&target)) report("allocation", c, n, "a temporary file was left behind%s", "");
    }
    EXPECT(n == clean_allocs + 1);
    printf("%s: each of %zu allocations failed in turn\n", c->name, clean_allocs);
}

/* One compile through io, with a counting allocator of its own: a leak is reported here, the
   rest by fault_io_each_op. */
static kiln_status compile_counted(void *arg, const kiln_file_io *io, char *message, size_t size)
{
    config *c = arg;
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    kiln_status st = compile_to_file(c, &a, io, message, size);
    unit_checks++;
    if (u.live_blocks) {
        fprintf(stderr, "%s: %zu blocks leaked after '%s'\n", c->name, u.live_blocks, message);
        unit_failures++;
    }
    return st;
}

static void run_config(config *c)
{
    unit_section(c->name);
    size_t ref_size, n_allocs;
    uint8_t *ref = reference(c, &ref_size, &n_allocs);
    allocation_failures(c, ref, ref_size, n_allocs);
    fault_io_each_op(c->name, &target, compile_counted, c);
    free(ref);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kiln_compile_faults_XXXXXX");
    REQUIRE(mkdtemp(dir));
    snprintf(out_path, sizeof out_path, "%s/out.kiln", dir);
    uint8_t *m2, *m1;
    size_t s2, s1;
    cnn_model(2, &m2, &s2);
    cnn_model(1, &m1, &s1);
    static const char *const targets[3] = {"generic", "x86-64-v3", "x86-64-v4"};
    config shared = {.name = "two methods, three targets, weight sharing",
                     .methods = {{"prefill", NULL, m2, s2}, {"decode", NULL, m1, s1}},
                     .n_methods = 2,
                     .opt = {.struct_size = sizeof(kiln_compile_options), .targets = targets, .n_targets = 3,
                             .weight_sharing = 1}};
    config single = {.name = "one method, best target",
                     .methods = {{"forward", NULL, m1, s1}},
                     .n_methods = 1,
                     .opt = {.struct_size = sizeof(kiln_compile_options)}};
    run_config(&shared);
    run_config(&single);
    free(m2);
    free(m1);
    remove(out_path);
    rmdir(dir);
    return unit_finish("test_compile_faults");
}
