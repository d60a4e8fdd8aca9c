/* test_cpu_ctxbin.c — the context-binary reader and record selection of the `cpu` runtime.
 *
 * Layer: tests (backends/cpu/rt: ctxbin_reader.h and kiln_cpu_select_record directly, the rest
 * through include/kiln/kiln.h). Checks:
 *  - a valid multi-record, multi-graph binary opens; every truncation is refused; a binary
 *    serving several delegate calls of a method gives each call its graph by instruction name;
 *  - flipping bits in every metadata byte never crashes or leaks (the result is either accepted
 *    or KILN_ERROR_INCOMPATIBLE), and many flips are refused;
 *  - each kind of corruption (header, strings, records, graphs, tensors, steps, data flow,
 *    cross-record disagreement) is refused with a message naming it;
 *  - through a loaded program: a corrupt binary fails kiln_method_load with
 *    KILN_ERROR_INCOMPATIBLE and leaves no context behind; a compiled binary whose packed weights
 *    claim another register tile, or one with a too-small scratch group, is refused the same
 *    way (a record without packed weights runs whatever tile it names);
 *  - record selection: the runnable record of highest rank runs (the records compute different
 *    activations, so the output shows which ran), a forced target runs its record, and binaries
 *    with no runnable record or without the forced target fail with KILN_ERROR_NO_RUNNABLE_TARGET
 *    and a message listing the binary's targets and this CPU's features.
 */
#include "backends/cpu/rt/context.h"
#include "backends/cpu/rt/ctxbin_reader.h"
#include "core/cpu_features.h"
#include "kiln/compiler.h"
#include "test_cpu_support.h"

static const tb_graph two_graphs[2] = {{"prefill", KILN_CPU_ACT_RELU}, {"decode", KILN_CPU_ACT_NEG}};
static const char *const three_targets[3] = {"generic", "x86-64-v3", "x86-64-v4"};

static tb_spec full_spec(void)
{
    return (tb_spec){.n = 24, .targets = three_targets, .n_targets = 3, .graphs = two_graphs, .n_graphs = 2};
}

/* ---- locating the structs of a (valid) built binary ---- */

static kiln_ctx_header *hdr(tb_binary *b) { return b->data; }
static kiln_ctx_record *rec(tb_binary *b, int r)
{
    return (kiln_ctx_record *)((uint8_t *)b->data + hdr(b)->records_offset) + r;
}
static kiln_ctx_graph *graph(tb_binary *b, int r, int g)
{
    return (kiln_ctx_graph *)((uint8_t *)b->data + rec(b, r)->graphs_offset) + g;
}
static kiln_ctx_tensor *tensor(tb_binary *b, int r, int g, int t)
{
    return (kiln_ctx_tensor *)((uint8_t *)b->data + graph(b, r, g)->tensors_offset) + t;
}
static kiln_ctx_step *step(tb_binary *b, int r, int g, int s)
{
    return (kiln_ctx_step *)((uint8_t *)b->data + graph(b, r, g)->steps_offset) + s;
}

static kiln_status open_bin(const void *data, size_t size, char *message, size_t message_size)
{
    fault_alloc fa;
    fault_alloc_init(&fa, 0);
    kiln_ctxbin bin;
    kiln_status st = kiln_ctxbin_open(&bin, data, size, &fa.base, message, message_size);
    if (st != KILN_OK) EXPECT(atomic_load(&fa.live) == 0); /* a failed open holds nothing */
    kiln_ctxbin_close(&bin);
    EXPECT(atomic_load(&fa.live) == 0);
    return st;
}

static void test_valid_and_truncated(void)
{
    tb_spec spec = full_spec();
    tb_binary b = tb_build(&spec);
    char message[256] = "";
    EXPECT_OK(open_bin(b.data, b.size, message, sizeof message));
    kiln_ctxbin bin;
    EXPECT_OK(kiln_ctxbin_open(&bin, b.data, b.size, kiln_allocator_default(), NULL, 0));
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[1], "decode", NULL) == 1);
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[1], "forward", "cpu_partition_0") == -1);
    kiln_ctxbin_close(&bin);
    for (size_t size = 0; size < b.size; size++) EXPECT_STATUS(open_bin(b.data, size, NULL, 0), KILN_ERROR_INCOMPATIBLE);
    EXPECT_STATUS(open_bin((const uint8_t *)b.data + 4, b.size - 8, NULL, 0), KILN_ERROR_INCOMPATIBLE); /* misaligned */
    EXPECT_STATUS(open_bin(NULL, 0, NULL, 0), KILN_ERROR_INCOMPATIBLE);
    /* The message is the caller's diag: cleared at entry, then the first refusal is kept. */
    snprintf(message, sizeof message, "stale");
    EXPECT_OK(open_bin(b.data, b.size, message, sizeof message));
    EXPECT(message[0] == '\0');
    snprintf(message, sizeof message, "stale");
    EXPECT_STATUS(open_bin(b.data, 16, message, sizeof message), KILN_ERROR_INCOMPATIBLE);
    EXPECT(strcmp(message, "context binary: 16 bytes, shorter than its header") == 0);
    char small[20];
    EXPECT_STATUS(open_bin(b.data, 16, small, sizeof small), KILN_ERROR_INCOMPATIBLE);
    EXPECT(strcmp(small, "context binary: 16 ") == 0); /* cut at the buffer, terminated */
    free(b.data);
}

/* A binary serving two delegate calls of one method (a tied LLM's embedding and logits): each call
   finds the graph named `<method>/<instruction name>`, no other call or method finds one. */
static void test_graph_per_call(void)
{
    static const tb_graph calls[2] = {{"prefill/cpu_partition_0", KILN_CPU_ACT_RELU},
                                      {"prefill/cpu_partition_19", KILN_CPU_ACT_NEG}};
    tb_spec spec = {.n = 24, .targets = three_targets, .n_targets = 1, .graphs = calls, .n_graphs = 2};
    tb_binary b = tb_build(&spec);
    kiln_ctxbin bin;
    EXPECT_OK(kiln_ctxbin_open(&bin, b.data, b.size, kiln_allocator_default(), NULL, 0));
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[0], "prefill", "cpu_partition_0") == 0);
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[0], "prefill", "cpu_partition_19") == 1);
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[0], "prefill", "cpu_partition_1") == -1);
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[0], "prefill", NULL) == -1);
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[0], "decode", "cpu_partition_0") == -1);
    EXPECT(kiln_ctxbin_find_graph(&bin, &bin.records[0], "pre", "fill/cpu_partition_0") == -1);
    kiln_ctxbin_close(&bin);
    free(b.data);
}

static void test_bit_flips(void)
{
    tb_spec spec = full_spec();
    tb_binary b = tb_build(&spec);
    uint8_t *copy = aligned_alloc(64, kiln_align_up(b.size, 64));
    size_t metadata = ((kiln_ctx_block *)((uint8_t *)b.data + hdr(&b)->blocks_offset))->offset;
    static const uint8_t masks[] = {0x01, 0x08, 0x80, 0xFF};
    size_t refused = 0, total = 0;
    for (size_t off = 0; off < metadata; off++) {
        for (size_t k = 0; k < sizeof masks; k++) {
            memcpy(copy, b.data, b.size);
            copy[off] ^= masks[k];
            kiln_status st = open_bin(copy, b.size, NULL, 0);
            EXPECT(st == KILN_OK || st == KILN_ERROR_INCOMPATIBLE || st == KILN_ERROR_VERSION || st == KILN_ERROR_FORMAT);
            refused += st != KILN_OK;
            total++;
        }
    }
    printf("bit flips: %zu of %zu refused (the rest hit padding, weights or values kernels accept)\n", refused, total);
    EXPECT(refused > total / 5);
    free(copy);
    free(b.data);
}

/* ---- targeted corruptions ---- */

typedef void (*corrupt_fn)(tb_binary *b);

static void bad_magic(tb_binary *b) { hdr(b)->magic[0] = 'X'; }
static void bad_version(tb_binary *b) { hdr(b)->version = KILN_CTX_VERSION + 1; }
static void old_version(tb_binary *b) { hdr(b)->version = 0; }
/* Version 1 files with what only version 2 writers produce (ctxbin_version.c). */
static void v1_no_strassen(tb_binary *b)
{
    hdr(b)->version = 1;
    hdr(b)->spec_flags |= KILN_CTX_SPEC_NO_STRASSEN;
}
static void v1_bf16_precision(tb_binary *b)
{
    hdr(b)->version = 1;
    hdr(b)->precision = KILN_CTX_PRECISION_BF16;
}
static void v1_bf16_record(tb_binary *b)
{
    hdr(b)->version = 1;
    rec(b, 1)->features |= KILN_CPU_BIT(AVX512BF16);
}
static void v1_unary_rms(tb_binary *b)
{
    /* a unary step relabelled LAYERNORM: its bytes hold no version 2 LayerNorm field (rms,
       has_residual zero), so the version 1 rule lets it through and the step's own parameter
       check refuses it, as in any version */
    hdr(b)->version = 1;
    step(b, 2, 1, 1)->op = KILN_CPU_OP_LAYERNORM;
}
static void bad_flags(tb_binary *b) { hdr(b)->flags = 4; }
static void bad_reserved(tb_binary *b) { hdr(b)->reserved[7] = 1; }
static void bad_file_size(tb_binary *b) { hdr(b)->file_size += 64; }
static void bad_strings(tb_binary *b) { ((char *)b->data)[hdr(b)->strings_offset + hdr(b)->strings_size - 1] = 'x'; }
static void bad_records(tb_binary *b) { hdr(b)->records_offset = b->size - 8; }
static void no_records(tb_binary *b) { hdr(b)->n_records = 0; }
static void bad_block(tb_binary *b)
{
    ((kiln_ctx_block *)((uint8_t *)b->data + hdr(b)->blocks_offset))->size = b->size;
}
static void block_in_tables(tb_binary *b)
{
    ((kiln_ctx_block *)((uint8_t *)b->data + hdr(b)->blocks_offset))->offset = 128;
}
static void bad_features(tb_binary *b) { rec(b, 1)->features |= (uint64_t)1 << 40; }
static void bad_tile(tb_binary *b) { rec(b, 0)->gemm_nr = 0; }
static void dup_target(tb_binary *b) { rec(b, 1)->target = rec(b, 0)->target; }
static void bad_graph_name(tb_binary *b) { graph(b, 0, 1)->name = (uint32_t)hdr(b)->strings_size; }
static void dup_graph_name(tb_binary *b) { graph(b, 2, 1)->name = graph(b, 2, 0)->name; }
static void graph_io_counts(tb_binary *b) { graph(b, 0, 0)->n_inputs = 4; }
static void graph_tensor_table(tb_binary *b) { graph(b, 0, 0)->n_tensors = 1u << 30; }
static void graph_workspace(tb_binary *b) { graph(b, 0, 0)->workspace_offset = graph(b, 0, 0)->scratch_size + 64; }
static void disagree_graphs(tb_binary *b) { graph(b, 1, 0)->name = rec(b, 0)->target; } /* "generic" */
static void tensor_dtype(tb_binary *b) { tensor(b, 0, 0, 2)->dtype = 77; }
static void tensor_small(tb_binary *b) { tensor(b, 0, 0, 3)->size = 4; }
static void tensor_negative(tb_binary *b) { tensor(b, 0, 0, 2)->shape[0] = -1; }
static void input_kind(tb_binary *b) { tensor(b, 0, 0, 0)->kind = KILN_CTX_TENSOR_OUTPUT; }
static void io_not_dense(tb_binary *b) { tensor(b, 0, 0, 1)->size += 4; }
static void weight_outside(tb_binary *b) { tensor(b, 0, 0, 3)->offset = 8; }
static void scratch_in_workspace(tb_binary *b) { tensor(b, 0, 0, 2)->offset = graph(b, 0, 0)->workspace_offset; }
static void scratch_misaligned(tb_binary *b) { tensor(b, 0, 0, 2)->offset = 4; }
static void unknown_kind(tb_binary *b) { tensor(b, 0, 0, 2)->kind = 9; }
static void unknown_op(tb_binary *b) { step(b, 0, 0, 0)->op = 99; }
static void v2_qlinear(tb_binary *b)
{
    hdr(b)->version = 2;
    step(b, 0, 0, 0)->op = KILN_CPU_OP_QLINEAR;
}
static void v2_concat(tb_binary *b)
{
    hdr(b)->version = 2;
    step(b, 0, 0, 0)->op = KILN_CPU_OP_CONCAT;
}
static void v1_where(tb_binary *b)
{
    hdr(b)->version = 1;
    step(b, 0, 0, 0)->op = KILN_CPU_OP_WHERE;
}
static void v2_bool_tensor(tb_binary *b)
{
    hdr(b)->version = 2;
    tensor(b, 0, 0, 2)->dtype = KILN_DTYPE_BOOL;
}
static void too_many_tensors(tb_binary *b) { step(b, 0, 0, 0)->n_inputs = 8; }
static void step_index(tb_binary *b) { step(b, 0, 0, 0)->tensors[1] = 4; }
static void reads_unwritten(tb_binary *b) { step(b, 0, 0, 1)->tensors[0] = 1; }
static void writes_input(tb_binary *b) { step(b, 0, 0, 0)->tensors[2] = 0; }
static void writes_weight(tb_binary *b) { step(b, 0, 0, 1)->tensors[1] = 3; }
static void output_unwritten(tb_binary *b) { step(b, 0, 0, 1)->tensors[1] = 2; }
static void step_workspace(tb_binary *b) { step(b, 0, 0, 1)->workspace_size = 64; }
static void step_params(tb_binary *b)
{
    kiln_cpu_unary_params p;
    memcpy(&p, step(b, 2, 1, 1)->params, sizeof p);
    p.count += 1; /* would write past the output */
    memcpy(step(b, 2, 1, 1)->params, &p, sizeof p);
}

typedef struct corruption {
    const char *name;
    corrupt_fn fn;
    const char *message;            /* substring the message must contain */
    kiln_status status;             /* the status the reader must return */
} corruption;

static const corruption corruptions[] = {
    {"magic", bad_magic, "bad magic", KILN_ERROR_INCOMPATIBLE},
    {"version", bad_version, "format version 4; this runtime reads versions 1 to 3", KILN_ERROR_VERSION},
    {"old version", old_version, "format version 0", KILN_ERROR_VERSION},
    {"v1 no-strassen", v1_no_strassen, "header: version 1 file holds the no-strassen compile-spec flag", KILN_ERROR_FORMAT},
    {"v1 bf16", v1_bf16_precision, "version 1 file holds precision bf16", KILN_ERROR_FORMAT},
    {"v1 bf16 record", v1_bf16_record, "x86-64-v3: version 1 file holds a record needing AVX512-BF16",
     KILN_ERROR_FORMAT},
    {"v2 qlinear", v2_qlinear, "version 2 file holds a QLINEAR step", KILN_ERROR_FORMAT},
    {"v2 concat", v2_concat, "version 2 file holds a CONCAT step, which only version 3 writes", KILN_ERROR_FORMAT},
    {"v1 where", v1_where, "version 1 file holds a WHERE step, which only version 3 writes", KILN_ERROR_FORMAT},
    {"v2 bool tensor", v2_bool_tensor, "version 2 file holds a bool tensor, which only version 3 writes", KILN_ERROR_FORMAT},
    {"v1 op change", v1_unary_rms, "step 1 (layernorm): parameters do not match", KILN_ERROR_INCOMPATIBLE},
    {"flags", bad_flags, "header flags", KILN_ERROR_INCOMPATIBLE},
    {"reserved", bad_reserved, "reserved header bytes", KILN_ERROR_INCOMPATIBLE},
    {"file size", bad_file_size, "header says", KILN_ERROR_INCOMPATIBLE},
    {"strings", bad_strings, "string table", KILN_ERROR_INCOMPATIBLE},
    {"records", bad_records, "record table", KILN_ERROR_INCOMPATIBLE},
    {"no records", no_records, "0 records", KILN_ERROR_INCOMPATIBLE},
    {"block", bad_block, "weight block 0", KILN_ERROR_INCOMPATIBLE},
    {"block in the tables", block_in_tables, "weight block 0 overlaps the tables", KILN_ERROR_INCOMPATIBLE},
    {"features", bad_features, "unknown CPU features", KILN_ERROR_INCOMPATIBLE},
    {"tile", bad_tile, "register tile", KILN_ERROR_INCOMPATIBLE},
    {"duplicate target", dup_target, "two records for target 'generic'", KILN_ERROR_INCOMPATIBLE},
    {"graph name", bad_graph_name, "graph name out of range", KILN_ERROR_INCOMPATIBLE},
    {"duplicate graph", dup_graph_name, "two graphs named 'prefill'", KILN_ERROR_INCOMPATIBLE},
    {"graph io", graph_io_counts, "do not fit", KILN_ERROR_INCOMPATIBLE},
    {"tensor table", graph_tensor_table, "table out of range", KILN_ERROR_INCOMPATIBLE},
    {"workspace offset", graph_workspace, "workspace offset invalid", KILN_ERROR_INCOMPATIBLE},
    {"records disagree", disagree_graphs, "records 'x86-64-v3' and 'generic' disagree on graph 'generic'", KILN_ERROR_INCOMPATIBLE},
    {"tensor dtype", tensor_dtype, "tensor 2 has a bad dtype", KILN_ERROR_INCOMPATIBLE},
    {"tensor too small", tensor_small, "tensor 3 has a bad dtype, rank or shape, or is too small", KILN_ERROR_INCOMPATIBLE},
    {"negative dim", tensor_negative, "tensor 2 has a bad", KILN_ERROR_INCOMPATIBLE},
    {"input kind", input_kind, "tensor 0 must be input 0", KILN_ERROR_INCOMPATIBLE},
    {"io not dense", io_not_dense, "output tensor 1 is not dense", KILN_ERROR_INCOMPATIBLE},
    {"weight outside block", weight_outside, "weight tensor 3 lies outside its block", KILN_ERROR_INCOMPATIBLE},
    {"scratch in workspace", scratch_in_workspace, "below the workspace", KILN_ERROR_INCOMPATIBLE},
    {"scratch misaligned", scratch_misaligned, "scratch tensor 2 is misaligned", KILN_ERROR_INCOMPATIBLE},
    {"tensor kind", unknown_kind, "tensor 2 has kind 9", KILN_ERROR_INCOMPATIBLE},
    {"unknown op", unknown_op, "unknown op 99", KILN_ERROR_INCOMPATIBLE},
    {"step arity", too_many_tensors, "step 0 has 8 inputs", KILN_ERROR_INCOMPATIBLE},
    {"step index", step_index, "step 0 input 1 out of range", KILN_ERROR_INCOMPATIBLE},
    {"reads unwritten", reads_unwritten, "step 1 reads tensor 1 before any step writes it", KILN_ERROR_INCOMPATIBLE},
    {"writes input", writes_input, "step 0 writes tensor 0, which is an input or a weight", KILN_ERROR_INCOMPATIBLE},
    {"writes weight", writes_weight, "step 1 writes tensor 3", KILN_ERROR_INCOMPATIBLE},
    {"output unwritten", output_unwritten, "output 0 is never written", KILN_ERROR_INCOMPATIBLE},
    {"step workspace", step_workspace, "needs more workspace", KILN_ERROR_INCOMPATIBLE},
    {"step params", step_params, "record 'x86-64-v4' graph 'decode': step 1 (unary): parameters do not match", KILN_ERROR_INCOMPATIBLE},
};

/* Version 1 is a subset of version 2: a version 1 file without version 2 features loads. */
static void test_version_1_subset(void)
{
    tb_spec spec = full_spec();
    tb_binary b = tb_build(&spec);
    hdr(&b)->version = 1;
    tb_resign(&b);
    char message[256] = "";
    EXPECT_OK(open_bin(b.data, b.size, message, sizeof message));
    free(b.data);
}

/* Every version 2 step value is recognised (the golden files cannot hold all: no Strassen). */
static void test_v2_step_features(void)
{
    kiln_ctx_step s;
    kiln_cpu_gemm_params g;
    kiln_cpu_conv_params c;
    kiln_cpu_layernorm_params l;
    memset(&s, 0, sizeof s);
    memset(&g, 0, sizeof g);
    s.op = KILN_CPU_OP_GEMM;
    g.M = 4, g.N = 8, g.K = 2, g.batch = 1, g.ldy = 8, g.b_packed = 1;
    memcpy(s.params, &g, sizeof g);
    EXPECT(kiln_ctxbin_v2_step_feature(&s) == NULL);
    g.b_packed = KILN_CPU_PACKED_STRASSEN;
    memcpy(s.params, &g, sizeof g);
    EXPECT(strcmp(kiln_ctxbin_v2_step_feature(&s), "a GEMM with Strassen-packed B") == 0);
    g.b_packed = KILN_CPU_PACKED_BF16;
    memcpy(s.params, &g, sizeof g);
    EXPECT(strcmp(kiln_ctxbin_v2_step_feature(&s), "a GEMM with bf16-packed B") == 0);
    g.b_packed = 0, g.batch = 2, g.y_batch_stride = 32; /* rows of its own: (M-1)*ldy+N = 32 */
    memcpy(s.params, &g, sizeof g);
    EXPECT(kiln_ctxbin_v2_step_feature(&s) == NULL);
    g.y_batch_stride = 8, g.ldy = 16; /* two bands of 8 columns of shared rows */
    memcpy(s.params, &g, sizeof g);
    EXPECT(strcmp(kiln_ctxbin_v2_step_feature(&s), "a batched GEMM writing bands of columns") == 0);
    memset(&c, 0, sizeof c);
    s.op = KILN_CPU_OP_CONV2D;
    const char *conv[] = {"a Winograd convolution", "a pixel-rows convolution", "a convolution with a residual input",
                          "a bf16 convolution"};
    uint8_t *flags[] = {&c.winograd, &c.pixel_rows, &c.has_residual, &c.bf16};
    for (int i = 0; i < 4; i++) {
        memset(&c, 0, sizeof c);
        *flags[i] = 1;
        memcpy(s.params, &c, sizeof c);
        EXPECT(strcmp(kiln_ctxbin_v2_step_feature(&s), conv[i]) == 0);
    }
    memset(&l, 0, sizeof l);
    s.op = KILN_CPU_OP_LAYERNORM;
    memset(s.params, 0, sizeof s.params);
    EXPECT(kiln_ctxbin_v2_step_feature(&s) == NULL);
    l.rms = 1;
    memcpy(s.params, &l, sizeof l);
    EXPECT(strcmp(kiln_ctxbin_v2_step_feature(&s), "an RMS normalisation") == 0);
    l.rms = 0, l.has_residual = 1;
    memcpy(s.params, &l, sizeof l);
    EXPECT(strcmp(kiln_ctxbin_v2_step_feature(&s), "a LayerNormalization with a residual input") == 0);
    kiln_ctx_tensor t = {.dtype = KILN_DTYPE_BF16};
    EXPECT(kiln_ctxbin_v2_tensor_feature(&t) != NULL);
    t.dtype = KILN_DTYPE_BOOL; /* version 3 */
    EXPECT(kiln_ctxbin_v2_tensor_feature(&t) == NULL && kiln_ctxbin_v3_tensor_feature(&t) != NULL);
    t.dtype = KILN_DTYPE_F32;
    EXPECT(kiln_ctxbin_v2_tensor_feature(&t) == NULL && kiln_ctxbin_v3_tensor_feature(&t) == NULL);
    const uint32_t v3_ops[] = {KILN_CPU_OP_CONCAT, KILN_CPU_OP_SLICE, KILN_CPU_OP_PAD, KILN_CPU_OP_WHERE,
                               KILN_CPU_OP_QLINEAR};
    memset(s.params, 0, sizeof s.params);
    for (size_t i = 0; i < sizeof v3_ops / sizeof v3_ops[0]; i++) {
        s.op = v3_ops[i];
        EXPECT(kiln_ctxbin_v2_step_feature(&s) == NULL && kiln_ctxbin_v3_step_feature(&s) != NULL);
    }
    kiln_cpu_conv_params taps;
    memset(&taps, 0, sizeof taps);
    taps.taps = 1;
    s.op = KILN_CPU_OP_CONV2D;
    memcpy(s.params, &taps, sizeof taps);
    EXPECT(kiln_ctxbin_v2_step_feature(&s) == NULL);
    EXPECT(strcmp(kiln_ctxbin_v3_step_feature(&s), "a tap-list convolution") == 0);
}

static void test_corruptions(void)
{
    for (size_t i = 0; i < sizeof corruptions / sizeof corruptions[0]; i++) {
        const corruption *c = &corruptions[i];
        tb_spec spec = full_spec();
        tb_binary b = tb_build(&spec);
        c->fn(&b);
        tb_resign(&b);
        char message[256] = "";
        kiln_status st = open_bin(b.data, b.size, message, sizeof message);
        if (st != c->status || !strstr(message, c->message) || strncmp(message, "context binary: ", 16) != 0) {
            fprintf(stderr, "corruption '%s': %s, message '%s' (wanted '%s')\n", c->name, kiln_status_name(st), message,
                    c->message);
            test_failures++;
        }
        free(b.data);
    }
}

/* ---- through a loaded program ---- */

/* Load "forward" from a one-method program over bin with options; returns the status and fills
   last_error. On success the output must be act(x * w) for the given act. */
static kiln_status load_and_run(const tb_binary *bin, const tb_spec *spec, const char *target, uint32_t act,
                                char *last_error, size_t size)
{
    tp_method methods[1] = {{"forward", spec->n, {bin}, 1}};
    tp_program prog = tp_build(methods, 1);
    kiln_program *p = tp_open(&prog);
    kiln_module_options o = {sizeof o, NULL, NULL, 1, target};
    kiln_module *m = NULL;
    /* A forced target no record has is refused at create, with the records it has. */
    kiln_status st = kiln_module_create_with_message(p, &o, &m, last_error, size);
    if (st == KILN_OK) {
        kiln_runtime_stats before = stats_now();
        kiln_method *f = NULL;
        st = kiln_method_load(m, "forward", &f);
        snprintf(last_error, size, "%s", kiln_module_last_error(m));
        if (st == KILN_OK) EXPECT(tp_run1(f, spec, act, 1.0f));
        else EXPECT(stats_now().live_contexts == before.live_contexts && f == NULL);
    } else {
        EXPECT(m == NULL);
    }
    kiln_module_destroy(m);
    kiln_program_close(p);
    tp_free(&prog);
    return st;
}

static void test_loaded_refusals(void)
{
    char err[512];
    tb_spec spec = {.n = 32};
    tb_binary b = tb_build(&spec);
    step(&b, 0, 0, 1)->tensors[0] = 1;
    tb_resign(&b);
    EXPECT_STATUS(load_and_run(&b, &spec, NULL, KILN_CPU_ACT_RELU, err, sizeof err), KILN_ERROR_INCOMPATIBLE);
    EXPECT(strstr(err, "context binary: record 'generic' graph 'forward': step 1 reads tensor 1") != NULL);
    free(b.data);

    /* The tile a record was packed for matters only for packed weights: this record has none
       (its weight is a BINARY operand), so a foreign tile loads and computes the same. */
    b = tb_build(&spec);
    rec(&b, 0)->gemm_mr = 7;
    tb_resign(&b);
    EXPECT_STATUS(load_and_run(&b, &spec, NULL, KILN_CPU_ACT_RELU, err, sizeof err), KILN_OK);
    free(b.data);

    tb_spec small_group = {.n = 32, .group_scratch_size = 64};
    b = tb_build(&small_group);
    EXPECT_STATUS(load_and_run(&b, &small_group, NULL, KILN_CPU_ACT_RELU, err, sizeof err), KILN_ERROR_INCOMPATIBLE);
    EXPECT(strstr(err, "scratch group size 64 is smaller") != NULL);
    free(b.data);

    tb_spec big_group = {.n = 32, .group_scratch_size = 4096};
    b = tb_build(&big_group);
    kiln_runtime_stats s0 = stats_now();
    EXPECT_OK(load_and_run(&b, &big_group, NULL, KILN_CPU_ACT_RELU, err, sizeof err));
    EXPECT(stats_now().scratch_bytes_reserved == s0.scratch_bytes_reserved);
    free(b.data);
}

/* A compiled linear layer (its GEMM reads B packed for the generic tile) whose record claims
   another tile is refused at load, naming both tiles. */
static void test_foreign_tile_refused(void)
{
    char path[512];
    snprintf(path, sizeof path, "/usr/share/libonnx-testdata/data/pytorch-converted/test_Linear/model.onnx");
    static const char *const generic[1] = {"generic"};
    kiln_compile_options opt = {.struct_size = sizeof opt, .targets = generic, .n_targets = 1};
    kiln_compile_method m = {.name = "forward", .model_path = path};
    void *data = NULL;
    size_t size = 0;
    char msg[512] = "";
    EXPECT_OK(kiln_compile_memory(&opt, &m, 1, &data, &size, msg, sizeof msg));
    if (!data) return;
    uint8_t *bin = NULL;
    for (size_t at = 0; at + KILN_CTX_HEADER_SIZE <= size && !bin; at += 64)
        if (memcmp((uint8_t *)data + at, KILN_CTX_MAGIC, 8) == 0) bin = (uint8_t *)data + at;
    EXPECT(bin != NULL);
    if (bin) {
        kiln_ctx_header *h = (kiln_ctx_header *)(void *)bin;
        kiln_ctx_record *r = (kiln_ctx_record *)(void *)(bin + h->records_offset);
        r->gemm_mr += 1;
        h->signature = kiln_hash64(bin + KILN_CTX_HEADER_SIZE, (size_t)h->file_size - KILN_CTX_HEADER_SIZE, KILN_CTX_VERSION);
        kiln_program *p = NULL;
        kiln_module *mod = NULL;
        kiln_method *f = NULL;
        EXPECT_OK(kiln_program_open_memory(data, size, &p));
        EXPECT_OK(kiln_module_create(p, NULL, &mod));
        EXPECT_STATUS(kiln_method_load(mod, "forward", &f), KILN_ERROR_INCOMPATIBLE);
        EXPECT(strstr(kiln_module_last_error(mod), "was packed for a") != NULL);
        kiln_module_destroy(mod);
        kiln_program_close(p);
    }
    kiln_free(kiln_allocator_default(), data);
}

/* ---- record selection ---- */

static bool table_complete(const kiln_cpu_target *t)
{
    return t->kernels->ops[KILN_CPU_OP_UNARY] && t->kernels->ops[KILN_CPU_OP_BINARY];
}

static void test_selection(void)
{
    char err[512], cpu[512], want[1024];
    kiln_cpu_features_format(kiln_cpu_features(), cpu, sizeof cpu);

    const char *const unknown[1] = {"x86-64-v9"};
    tb_spec spec = {.n = 16, .targets = unknown, .n_targets = 1};
    tb_binary b = tb_build(&spec);
    EXPECT_STATUS(load_and_run(&b, &spec, NULL, KILN_CPU_ACT_RELU, err, sizeof err), KILN_ERROR_NO_RUNNABLE_TARGET);
    snprintf(want, sizeof want, "no record of this context binary runs here: binary has [x86-64-v9]; this CPU has [%s]", cpu);
    EXPECT(strstr(err, want) != NULL);
    free(b.data);

    tb_spec generic = {.n = 16};
    b = tb_build(&generic);
    EXPECT_STATUS(load_and_run(&b, &generic, "x86-64-v3", KILN_CPU_ACT_RELU, err, sizeof err), KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT(strcmp(err, "no context binary of this program has a record for target 'x86-64-v3'; records: generic") == 0);
    EXPECT_OK(load_and_run(&b, &generic, "generic", KILN_CPU_ACT_RELU, err, sizeof err));
    free(b.data);

    tb_spec amx = {.n = 16, .extra_features = KILN_CPU_BIT(AMXTILE) | KILN_CPU_BIT(AMXBF16)};
    b = tb_build(&amx);
    bool has_amx = (kiln_cpu_features() & amx.extra_features) == amx.extra_features;
    EXPECT_STATUS(load_and_run(&b, &amx, NULL, KILN_CPU_ACT_RELU, err, sizeof err),
                  has_amx ? KILN_OK : KILN_ERROR_NO_RUNNABLE_TARGET);
    EXPECT_STATUS(load_and_run(&b, &amx, "generic", KILN_CPU_ACT_RELU, err, sizeof err),
                  has_amx ? KILN_OK : KILN_ERROR_NO_RUNNABLE_TARGET);
    if (!has_amx) EXPECT(strstr(err, "record 'generic' of this context binary cannot run here: it needs [amx-tile amx-bf16]"));
    free(b.data);

    /* Records computing different activations: the output shows which one ran. */
    static const uint32_t acts[3] = {KILN_CPU_ACT_RELU, KILN_CPU_ACT_NEG, KILN_CPU_ACT_ABS};
    tb_spec multi = {.n = 16, .targets = three_targets, .n_targets = 3, .record_acts = acts};
    b = tb_build(&multi);
    int best = 0;
    for (int r = 0; r < 3; r++) {
        const kiln_cpu_target *t = kiln_cpu_target_find(three_targets[r]);
        if (!kiln_cpu_target_runnable(t)) {
            EXPECT_STATUS(load_and_run(&b, &multi, three_targets[r], acts[r], err, sizeof err), KILN_ERROR_NO_RUNNABLE_TARGET);
            continue;
        }
        best = r;
        /* An incomplete kernel table for a runnable target is a build error, not a reason to
           fall back to another record. */
        EXPECT_STATUS(load_and_run(&b, &multi, three_targets[r], acts[r], err, sizeof err),
                      table_complete(t) ? KILN_OK : KILN_ERROR_INCOMPATIBLE);
    }
    EXPECT_STATUS(load_and_run(&b, &multi, NULL, acts[best], err, sizeof err),
                  table_complete(kiln_cpu_target_find(three_targets[best])) ? KILN_OK : KILN_ERROR_INCOMPATIBLE);
    printf("selection: this CPU runs up to record '%s'\n", three_targets[best]);

    kiln_ctxbin bin;
    EXPECT_OK(kiln_ctxbin_open(&bin, b.data, b.size, kiln_allocator_default(), NULL, 0));
    const kiln_ctx_record *r = NULL;
    EXPECT_OK(kiln_cpu_select_record(&bin, NULL, &r, err, sizeof err));
    EXPECT(r == &bin.records[best]);
    kiln_ctxbin_close(&bin);
    free(b.data);
}

int main(void)
{
    test_valid_and_truncated();
    test_graph_per_call();
    test_bit_flips();
    test_version_1_subset();
    test_v2_step_features();
    test_corruptions();
    test_loaded_refusals();
    test_foreign_tile_refused();
    test_selection();
    return test_report("test_cpu_ctxbin");
}
