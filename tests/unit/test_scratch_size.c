/* test_scratch_size.c — scratch sizing (issue 4 item 5): the metadata query, the group-size
 * helpers of the writer and of programs, and what the runtime does with a recorded group size.
 *
 * Layer: tests (backends/cpu/rt ctxbin_describe.h, backends/cpu/aot ctxbin_group.h,
 * compiler/program_scratch.h; runtime behaviour through include/kiln/kiln.h). Checks:
 *  - kiln_cpu_ctxbin_describe reports records, graphs, I/O shapes, per-record and overall
 *    scratch need and the group size, for records this CPU cannot run too, and creates no
 *    context, group or cache entry; a corrupt binary is refused with the reader's message;
 *  - the writer's scratch info agrees with the query; a group size below the need is refused
 *    and changes nothing; an accepted one changes the header field only (signature unchanged,
 *    the binary still validates);
 *  - a program's group size is set in every cpu binary with the segment hashes kept right, or in
 *    none; a program so written loads and runs;
 *  - at load, contexts whose binaries record the same group size join ONE default group of that
 *    size (same allocator), where without it they form one group per need; with an explicit
 *    group, one buffer of exactly the group size; a size below the need is incompatible.
 */
#include "backends/cpu/aot/ctxbin_group.h"
#include "backends/cpu/rt/ctxbin_describe.h"
#include "core/cpu_features.h"
#include "compiler/program_scratch.h"
#include "format/program_reader.h"
#include "kiln/compiler.h"
#include "test_cpu_support.h"
#include "two_partition_model.h"

static uint64_t scratch_of(int64_t n) { return kiln_align_up((size_t)n * 4, 64); }

static kiln_module *module_with(kiln_program *p, const kiln_allocator *a, kiln_scratch_group *g)
{
    return cpu_module_create(p, a, g, NULL);
}

/* ---- the metadata query ---------------------------------------------------------------------- */

static void test_describe(void)
{
    static const char *const targets[] = {"generic", "x86-64-v4"};
    static const tb_graph graphs[] = {{"prefill", KILN_CPU_ACT_RELU}, {"decode", KILN_CPU_ACT_NEG}};
    /* AMX: a record no machine here runs; describing it must still work */
    tb_spec spec = {.n = 100, .targets = targets, .n_targets = 2, .graphs = graphs, .n_graphs = 2,
                    .group_scratch_size = 4096, .extra_features = KILN_CPU_BIT(AMXTILE)};
    tb_binary b = tb_build(&spec);
    kiln_runtime_stats s0 = stats_now();
    kiln_cpu_ctxbin_desc d;
    char err[256];
    EXPECT_OK(kiln_cpu_ctxbin_describe(b.data, b.size, kiln_allocator_default(), &d, err, sizeof err));
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.contexts_created == s0.contexts_created && s1.live_scratch_groups == s0.live_scratch_groups);
    EXPECT(d.n_records == 2 && strcmp(d.records[0].target, "generic") == 0);
    EXPECT(strcmp(d.records[1].target, "x86-64-v4") == 0);
    EXPECT(d.records[1].features & KILN_CPU_BIT(AMXTILE));
    EXPECT(d.records[0].n_graphs == 2 && strcmp(d.records[0].graphs[1].name, "decode") == 0);
    const kiln_cpu_graph_desc *g = &d.records[0].graphs[0];
    EXPECT(g->n_inputs == 1 && g->n_outputs == 1 && g->n_steps == 2);
    EXPECT(g->inputs[0].dtype == KILN_DTYPE_F32 && g->inputs[0].rank == 1 && g->inputs[0].shape[0] == 100);
    EXPECT(g->outputs[0].shape[0] == 100 && g->inputs[0].data == NULL);
    EXPECT(g->scratch_size == scratch_of(100) && g->workspace_size == 0);
    EXPECT(d.records[1].scratch_need == scratch_of(100) && d.scratch_need == scratch_of(100));
    EXPECT(d.group_scratch_size == 4096 && d.group_fits);
    EXPECT(d.n_blocks == 1 && d.weight_bytes == 400);
    uint64_t need, group;
    EXPECT_OK(kiln_cpu_aot_scratch_info(b.data, b.size, &need, &group));
    EXPECT(need == d.scratch_need && group == 4096);
    kiln_cpu_ctxbin_desc_free(&d);
    kiln_cpu_ctxbin_desc_free(&d); /* harmless twice */

    ((kiln_ctx_header *)b.data)->version = KILN_CTX_VERSION + 1;
    EXPECT_STATUS(kiln_cpu_ctxbin_describe(b.data, b.size, kiln_allocator_default(), &d, err, sizeof err),
                  KILN_ERROR_VERSION);
    EXPECT(strstr(err, "context binary: format version 4") == err);
    EXPECT(d.records == NULL && d.n_records == 0);
    EXPECT_STATUS(kiln_cpu_aot_scratch_info(b.data, b.size, &need, &group), KILN_ERROR_INCOMPATIBLE);
    free(b.data);

    tb_spec small = {.n = 32, .group_scratch_size = 64}; /* valid bytes, a group too small */
    b = tb_build(&small);
    EXPECT_OK(kiln_cpu_ctxbin_describe(b.data, b.size, kiln_allocator_default(), &d, err, sizeof err));
    EXPECT(!d.group_fits && d.scratch_need == scratch_of(32));
    kiln_cpu_ctxbin_desc_free(&d);
    free(b.data);
}

static void test_set_binary_group(void)
{
    tb_spec spec = {.n = 1000};
    tb_binary b = tb_build(&spec);
    void *copy = malloc(b.size);
    memcpy(copy, b.data, b.size);
    uint64_t sig = ((const kiln_ctx_header *)b.data)->signature;
    EXPECT_STATUS(kiln_cpu_aot_set_group_scratch(b.data, b.size, scratch_of(1000) - 64), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_cpu_aot_set_group_scratch(b.data, b.size, (uint64_t)1 << 47), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(memcmp(copy, b.data, b.size) == 0);
    EXPECT_OK(kiln_cpu_aot_set_group_scratch(b.data, b.size, 1 << 20));
    const kiln_ctx_header *h = b.data;
    EXPECT(h->group_scratch_size == 1 << 20 && h->signature == sig);
    EXPECT(memcmp((const uint8_t *)copy + KILN_CTX_HEADER_SIZE, (const uint8_t *)b.data + KILN_CTX_HEADER_SIZE,
                  b.size - KILN_CTX_HEADER_SIZE) == 0);
    EXPECT(h->signature == kiln_hash64((const uint8_t *)b.data + KILN_CTX_HEADER_SIZE, b.size - KILN_CTX_HEADER_SIZE,
                                       KILN_CTX_VERSION));
    kiln_cpu_ctxbin_desc d;
    EXPECT_OK(kiln_cpu_ctxbin_describe(b.data, b.size, kiln_allocator_default(), &d, NULL, 0));
    EXPECT(d.group_scratch_size == 1 << 20 && d.group_fits);
    kiln_cpu_ctxbin_desc_free(&d);
    EXPECT_OK(kiln_cpu_aot_set_group_scratch(b.data, b.size, 0)); /* cleared: the original bytes again */
    EXPECT(memcmp(copy, b.data, b.size) == 0);
    free(copy);
    free(b.data);
}

/* ---- programs ---------------------------------------------------------------------------------- */

/* Every segment hash matches its bytes (what the writer guarantees). */
static bool hashes_ok(const tp_program *p)
{
    kiln_program_view v;
    if (kiln_program_view_init(&v, p->data, p->size) != KILN_OK) return false;
    for (uint64_t i = 0; i < v.n_segments; i++)
        if (v.segments[i].hash != kiln_hash64(kiln_view_segment_data(&v, (uint32_t)i), v.segments[i].size, 0))
            return false;
    return true;
}

/* Two "shards": programs of one method each, whose binaries need different scratch. */
typedef struct shard_pair {
    tb_spec s[2];
    tb_binary b[2];
    tp_program p[2];
} shard_pair;

static void pair_init(shard_pair *sp)
{
    sp->s[0] = (tb_spec){.n = 2000};
    sp->s[1] = (tb_spec){.n = 5000, .weight_scale = 0.5f};
    for (int i = 0; i < 2; i++) {
        sp->b[i] = tb_build(&sp->s[i]);
        tp_method m = {"forward", sp->s[i].n, {&sp->b[i]}, 1};
        sp->p[i] = tp_build(&m, 1);
    }
}

static void pair_deinit(shard_pair *sp)
{
    for (int i = 0; i < 2; i++) {
        tp_free(&sp->p[i]);
        free(sp->b[i].data);
    }
}

static void test_program_group(void)
{
    shard_pair sp;
    pair_init(&sp);
    kiln_program_scratch q;
    EXPECT_OK(kiln_program_scratch_query(sp.p[1].data, sp.p[1].size, &q));
    EXPECT(q.n_binaries == 1 && q.need == scratch_of(5000) && q.group == 0 && !q.groups_differ);
    void *copy = malloc(sp.p[0].size);
    memcpy(copy, sp.p[0].data, sp.p[0].size);
    EXPECT_STATUS(kiln_program_scratch_set_group(sp.p[0].data, sp.p[0].size, 64), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(memcmp(copy, sp.p[0].data, sp.p[0].size) == 0);
    free(copy);
    for (int i = 0; i < 2; i++) EXPECT_OK(kiln_program_scratch_set_group(sp.p[i].data, sp.p[i].size, scratch_of(5000)));
    EXPECT(hashes_ok(&sp.p[0]) && hashes_ok(&sp.p[1]));
    EXPECT_OK(kiln_program_scratch_query(sp.p[0].data, sp.p[0].size, &q));
    EXPECT(q.need == scratch_of(2000) && q.group == scratch_of(5000));

    /* Same allocator, no explicit group: the two contexts join one default group of the size. */
    kiln_runtime_stats s0 = stats_now();
    kiln_program *p0 = tp_open(&sp.p[0]), *p1 = tp_open(&sp.p[1]);
    const kiln_allocator *a = kiln_allocator_default();
    kiln_module *m0 = module_with(p0, a, NULL), *m1 = module_with(p1, a, NULL);
    kiln_method *f0 = cpu_method_load(m0, "forward"), *f1 = cpu_method_load(m1, "forward");
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 1);
    EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(5000));
    EXPECT(tp_run1(f0, &sp.s[0], KILN_CPU_ACT_RELU, 1.0f) && tp_run1(f1, &sp.s[1], KILN_CPU_ACT_RELU, -2.0f));
    kiln_module_destroy(m0);
    kiln_module_destroy(m1);

    /* Explicit group: one buffer of exactly the group size. */
    kiln_scratch_group *group;
    EXPECT_OK(kiln_scratch_group_create(&group));
    m0 = module_with(p0, NULL, group);
    m1 = module_with(p1, NULL, group);
    f0 = cpu_method_load(m0, "forward");
    f1 = cpu_method_load(m1, "forward");
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_scratch_groups == s0.live_scratch_groups + 1);
    EXPECT(s2.scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(5000));
    EXPECT(tp_run1(f1, &sp.s[1], KILN_CPU_ACT_RELU, 1.0f) && tp_run1(f0, &sp.s[0], KILN_CPU_ACT_RELU, 3.0f));
    kiln_module_destroy(m0);
    kiln_module_destroy(m1);
    kiln_scratch_group_release(group);
    kiln_program_close(p0);
    kiln_program_close(p1);
    kiln_runtime_stats s3 = stats_now();
    EXPECT(s3.live_scratch_groups == s0.live_scratch_groups && s3.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    pair_deinit(&sp);
}

/* Without a recorded group size the same two programs form one default group per need. */
static void test_program_no_group(void)
{
    shard_pair sp;
    pair_init(&sp);
    kiln_runtime_stats s0 = stats_now();
    kiln_program *p0 = tp_open(&sp.p[0]), *p1 = tp_open(&sp.p[1]);
    const kiln_allocator *a = kiln_allocator_default();
    kiln_module *m0 = module_with(p0, a, NULL), *m1 = module_with(p1, a, NULL);
    cpu_method_load(m0, "forward");
    cpu_method_load(m1, "forward");
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 2);
    EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved + scratch_of(2000) + scratch_of(5000));
    kiln_module_destroy(m0);
    kiln_module_destroy(m1);
    kiln_program_close(p0);
    kiln_program_close(p1);
    pair_deinit(&sp);
}

/* A binary whose group size is below its need does not load (written by hand: the helpers
   refuse to write it). */
static void test_group_too_small(void)
{
    tb_spec spec = {.n = 3000, .group_scratch_size = 1024};
    tb_binary b = tb_build(&spec);
    tp_method m = {"forward", spec.n, {&b}, 1};
    tp_program prog = tp_build(&m, 1);
    kiln_program *p = tp_open(&prog);
    kiln_module *mod = module_with(p, NULL, NULL);
    kiln_method *f = NULL;
    EXPECT_STATUS(kiln_method_load(mod, "forward", &f), KILN_ERROR_INCOMPATIBLE);
    EXPECT(strstr(kiln_module_last_error(mod), "scratch group size 1024 is smaller") != NULL);
    kiln_module_destroy(mod);
    kiln_program_close(p);
    tp_free(&prog);
    free(b.data);
}

/* ---- compile: one scratch group per program (issue 12 item 20) ------------------------------- */

/* Groups and bytes the module of the program at data adds once its method is loaded. */
static void load_and_count(void *data, size_t size, uint64_t *groups, uint64_t *bytes)
{
    kiln_program *p = NULL;
    EXPECT_OK(kiln_program_open_memory(data, size, &p));
    kiln_runtime_stats s0 = stats_now();
    kiln_module *mod = p ? module_with(p, NULL, NULL) : NULL;
    kiln_method *m = mod ? cpu_method_load(mod, "forward") : NULL;
    kiln_runtime_stats s1 = stats_now();
    *groups = s1.live_scratch_groups - s0.live_scratch_groups;
    *bytes = s1.scratch_bytes_reserved - s0.scratch_bytes_reserved;
    EXPECT(m != NULL);
    kiln_module_destroy(mod);
    kiln_program_close(p);
}

static void test_compile_one_group(void)
{
    printf("checking: compile records the program's largest need, its module holds one scratch group\n");
    uint8_t *model;
    size_t model_size;
    two_partition_model(8, &model, &model_size);
    kiln_compile_options opt = {.struct_size = sizeof opt};
    kiln_compile_method method = {"forward", NULL, model, model_size};
    void *data = NULL;
    size_t size = 0;
    char message[512] = "";
    EXPECT_OK(kiln_compile_memory(&opt, &method, 1, &data, &size, message, sizeof message));
    kiln_program_scratch q;
    EXPECT_OK(kiln_program_scratch_query(data, size, &q));
    EXPECT(q.n_binaries == 2 && q.need > 0 && q.group == q.need && !q.groups_differ);
    uint64_t groups = 0, bytes = 0;
    load_and_count(data, size, &groups, &bytes);
    if (groups != 1 || bytes != q.need) {
        fprintf(stderr, "compiled program: %llu scratch groups, %llu bytes, wanted 1 of %llu bytes\n",
                (unsigned long long)groups, (unsigned long long)bytes, (unsigned long long)q.need);
        test_failures++;
    }
    /* The partitions' needs differ: without the recorded size each would get a group of its own. */
    EXPECT_OK(kiln_program_scratch_set_group(data, size, 0));
    load_and_count(data, size, &groups, &bytes);
    EXPECT(groups == 2 && bytes > q.need);
    kiln_free(kiln_allocator_default(), data);
    free(model);
}

int main(void)
{
    test_describe();
    test_set_binary_group();
    test_program_group();
    test_program_no_group();
    test_group_too_small();
    test_compile_one_group();
    return test_report("test_scratch_size");
}
