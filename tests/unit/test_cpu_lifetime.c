/* test_cpu_lifetime.c — the `cpu` backend's delegate lifetime rules (DESIGN.md §4), black-box.
 *
 * Layer: tests (backends/cpu/rt through include/kiln/kiln.h). Programs are DELEGATE chains over
 * hand-built context binaries (test_cpu_support.h). Checks:
 *  - handle identity: methods of one module that use one context binary report one context id
 *    (one binary serving both, or one graph per method); the same program in two modules gives
 *    two ids; modules given the same allocator object share, as API.md says;
 *  - allocator isolation: destroying either module of two leaves the other executing correctly,
 *    and each module's memory goes back to its own allocator;
 *  - reference accounting: unloading one of two methods keeps the context for the other;
 *    unloading the last destroys it (stats); reload and sibling unload/reload work; ids are
 *    never reused;
 *  - a chain of delegates in one method: one reference per call, shared when the binary repeats;
 *  - stale handles are refused, never followed.
 */
#include "test_cpu_support.h"

static const tb_spec spec64 = {.n = 64};

static kiln_module *module_with(kiln_program *p, const kiln_allocator *a) { return cpu_module_create(p, a, NULL, NULL); }

/* Two methods over the very same binary (one deduplicated segment, one signature). */
static void test_identity_shared_binary(void)
{
    tb_binary bin = tb_build(&spec64);
    tp_method methods[2] = {{"a", 64, {&bin}, 1}, {"b", 64, {&bin}, 1}};
    tp_program prog = tp_build(methods, 2);
    kiln_program *p = tp_open(&prog);
    kiln_runtime_stats before = stats_now();
    kiln_module *m1 = module_with(p, NULL), *m2 = module_with(p, NULL);
    kiln_method *a1 = cpu_method_load(m1, "a"), *b1 = cpu_method_load(m1, "b"), *a2 = cpu_method_load(m2, "a");
    EXPECT(kiln_method_delegate_count(a1) == 1);
    EXPECT(context_id(a1, 0) != 0 && context_id(a1, 0) == context_id(b1, 0));
    EXPECT(context_id(a2, 0) != 0 && context_id(a2, 0) != context_id(a1, 0));
    kiln_runtime_stats mid = stats_now();
    EXPECT(mid.live_contexts == before.live_contexts + 2);
    EXPECT(tp_run1(a1, &spec64, KILN_CPU_ACT_RELU, 1.0f) && tp_run1(b1, &spec64, KILN_CPU_ACT_RELU, -2.0f));
    EXPECT(tp_run1(a2, &spec64, KILN_CPU_ACT_RELU, 0.5f));
    uint64_t dummy;
    EXPECT_STATUS(kiln_method_context_id(a1, 1, &dummy), KILN_ERROR_INDEX_OUT_OF_RANGE);
    kiln_module_destroy(m1);
    kiln_module_destroy(m2);
    EXPECT(stats_now().live_contexts == before.live_contexts);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin.data);
}

/* One binary with a graph per method (weight sharing): one context, each method its own graph. */
static void test_identity_graph_per_method(void)
{
    const tb_graph graphs[2] = {{"prefill", KILN_CPU_ACT_RELU}, {"decode", KILN_CPU_ACT_NEG}};
    tb_spec spec = {.n = 40, .graphs = graphs, .n_graphs = 2};
    tb_binary bin = tb_build(&spec);
    tp_method methods[2] = {{"prefill", 40, {&bin}, 1}, {"decode", 40, {&bin}, 1}};
    tp_program prog = tp_build(methods, 2);
    kiln_program *p = tp_open(&prog);
    kiln_module *mod = module_with(p, NULL);
    kiln_method *pre = cpu_method_load(mod, "prefill"), *dec = cpu_method_load(mod, "decode");
    EXPECT(context_id(pre, 0) == context_id(dec, 0));
    EXPECT(tp_run1(pre, &spec, KILN_CPU_ACT_RELU, 1.5f));
    EXPECT(tp_run1(dec, &spec, KILN_CPU_ACT_NEG, 1.5f));
    kiln_module_destroy(mod);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin.data);
}

/* API.md: modules given the same allocator object share contexts. */
static void test_identity_same_allocator(void)
{
    tb_binary bin = tb_build(&spec64);
    tp_method methods[1] = {{"forward", 64, {&bin}, 1}};
    tp_program prog = tp_build(methods, 1);
    kiln_program *p = tp_open(&prog);
    fault_alloc fa;
    fault_alloc_init(&fa, 0);
    kiln_module *m1 = module_with(p, &fa.base), *m2 = module_with(p, &fa.base);
    kiln_method *f1 = cpu_method_load(m1, "forward"), *f2 = cpu_method_load(m2, "forward");
    EXPECT(context_id(f1, 0) == context_id(f2, 0));
    kiln_module_destroy(m1); /* m2's reference keeps the shared context alive */
    EXPECT(tp_run1(f2, &spec64, KILN_CPU_ACT_RELU, 3.0f));
    kiln_module_destroy(m2);
    EXPECT(atomic_load(&fa.live) == 0);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin.data);
}

static void test_isolation(bool destroy_first_first)
{
    tb_binary bin = tb_build(&spec64);
    tp_method methods[1] = {{"forward", 64, {&bin}, 1}};
    tp_program prog = tp_build(methods, 1);
    kiln_program *p = tp_open(&prog);
    fault_alloc fa1, fa2;
    fault_alloc_init(&fa1, 0);
    fault_alloc_init(&fa2, 0);
    kiln_module *m1 = module_with(p, &fa1.base), *m2 = module_with(p, &fa2.base);
    kiln_method *f1 = cpu_method_load(m1, "forward"), *f2 = cpu_method_load(m2, "forward");
    EXPECT(context_id(f1, 0) != context_id(f2, 0));
    EXPECT(tp_run1(f1, &spec64, KILN_CPU_ACT_RELU, 1.0f) && tp_run1(f2, &spec64, KILN_CPU_ACT_RELU, 1.0f));
    kiln_module *gone = destroy_first_first ? m1 : m2, *kept = destroy_first_first ? m2 : m1;
    kiln_method *kept_method = destroy_first_first ? f2 : f1;
    fault_alloc *gone_alloc = destroy_first_first ? &fa1 : &fa2, *kept_alloc = destroy_first_first ? &fa2 : &fa1;
    kiln_module_destroy(gone);
    EXPECT(atomic_load(&gone_alloc->live) == 0);
    EXPECT(atomic_load(&kept_alloc->live) > 0);
    for (int i = 0; i < 3; i++) EXPECT(tp_run1(kept_method, &spec64, KILN_CPU_ACT_RELU, (float)i - 1.0f));
    kiln_module_destroy(kept);
    EXPECT(atomic_load(&kept_alloc->live) == 0);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin.data);
}

static void test_reference_accounting(void)
{
    tb_binary bin = tb_build(&spec64);
    tp_method methods[2] = {{"a", 64, {&bin}, 1}, {"b", 64, {&bin}, 1}};
    tp_program prog = tp_build(methods, 2);
    kiln_program *p = tp_open(&prog);
    kiln_module *mod = module_with(p, NULL);
    kiln_runtime_stats s0 = stats_now();
    kiln_method *a = cpu_method_load(mod, "a"), *b = cpu_method_load(mod, "b");
    uint64_t shared = context_id(a, 0);
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_contexts == s0.live_contexts + 1 && s1.contexts_created == s0.contexts_created + 1);

    kiln_method_unload(a); /* b still holds the context */
    EXPECT(stats_now().live_contexts == s1.live_contexts);
    EXPECT(tp_run1(b, &spec64, KILN_CPU_ACT_RELU, 2.0f));
    EXPECT_STATUS(kiln_method_execute(a), KILN_ERROR_STALE_HANDLE);

    kiln_method *a2 = cpu_method_load(mod, "a"); /* sibling reload: joins the live context */
    EXPECT(context_id(a2, 0) == shared);
    EXPECT(tp_run1(a2, &spec64, KILN_CPU_ACT_RELU, -1.0f));
    kiln_method_unload(a2);
    kiln_method_unload(b); /* the last reference: destroyed completely */
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_contexts == s0.live_contexts);
    EXPECT(s2.contexts_destroyed == s0.contexts_destroyed + 1);
    EXPECT(s2.live_scratch_groups == s0.live_scratch_groups && s2.scratch_bytes_reserved == s0.scratch_bytes_reserved);

    kiln_method *b2 = cpu_method_load(mod, "b"); /* cleanup, then reload: a fresh context, a fresh id */
    EXPECT(context_id(b2, 0) != 0 && context_id(b2, 0) != shared);
    EXPECT(tp_run1(b2, &spec64, KILN_CPU_ACT_RELU, 0.25f));
    kiln_method_unload(b2);
    kiln_method_unload(b2); /* unloading twice is ignored */
    kiln_module_destroy(mod);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin.data);
}

static void test_delegate_chain(void)
{
    tb_spec spec_b = {.n = 48, .weight_scale = 0.5f};
    tb_spec spec_a = {.n = 48};
    tb_binary bin_a = tb_build(&spec_a), bin_b = tb_build(&spec_b);
    tp_method methods[1] = {{"forward", 48, {&bin_a, &bin_b, &bin_a}, 3}};
    tp_program prog = tp_build(methods, 1);
    kiln_program *p = tp_open(&prog);
    kiln_runtime_stats s0 = stats_now();
    kiln_module *mod = module_with(p, NULL);
    kiln_method *f = cpu_method_load(mod, "forward");
    EXPECT(kiln_method_delegate_count(f) == 3);
    EXPECT(context_id(f, 0) == context_id(f, 2) && context_id(f, 0) != context_id(f, 1));
    EXPECT(stats_now().live_contexts == s0.live_contexts + 2);
    const tb_spec *specs[3] = {&spec_a, &spec_b, &spec_a};
    const uint32_t acts[3] = {KILN_CPU_ACT_RELU, KILN_CPU_ACT_RELU, KILN_CPU_ACT_RELU};
    EXPECT(tp_run(f, 48, specs, acts, 3, 1.0f));
    kiln_module_destroy(mod);
    EXPECT(stats_now().live_contexts == s0.live_contexts);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin_a.data);
    free(bin_b.data);
}

static void test_stale_handles(void)
{
    kiln_scratch_group *g = NULL;
    EXPECT_OK(kiln_scratch_group_create(&g));
    kiln_scratch_group_release(g);
    kiln_scratch_group_release(g); /* stale: ignored, never followed */
    tb_binary bin = tb_build(&spec64);
    tp_method methods[1] = {{"forward", 64, {&bin}, 1}};
    tp_program prog = tp_build(methods, 1);
    kiln_program *p = tp_open(&prog);
    kiln_module_options o = {sizeof o, NULL, g, 1, NULL};
    kiln_module *m = NULL;
    EXPECT_STATUS(kiln_module_create(p, &o, &m), KILN_ERROR_STALE_HANDLE);
    EXPECT(m == NULL);
    kiln_scratch_group *fake = (kiln_scratch_group *)(uintptr_t)0x1000;
    o.scratch_group = fake;
    EXPECT_STATUS(kiln_module_create(p, &o, &m), KILN_ERROR_STALE_HANDLE);
    kiln_runtime_stats s = stats_now();
    s.struct_size = 1;
    EXPECT_STATUS(kiln_runtime_stats_get(&s), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_runtime_stats_get(NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_scratch_group_create(NULL), KILN_ERROR_INVALID_ARGUMENT);
    kiln_program_close(p);
    tp_free(&prog);
    free(bin.data);
}

int main(void)
{
    kiln_runtime_stats start = stats_now();
    test_identity_shared_binary();
    test_identity_graph_per_method();
    test_identity_same_allocator();
    test_isolation(true);
    test_isolation(false);
    test_reference_accounting();
    test_delegate_chain();
    test_stale_handles();
    kiln_runtime_stats end = stats_now();
    EXPECT(end.live_contexts == start.live_contexts && end.live_scratch_groups == start.live_scratch_groups);
    EXPECT(end.scratch_bytes_reserved == start.scratch_bytes_reserved);
    EXPECT(end.contexts_created - start.contexts_created == end.contexts_destroyed - start.contexts_destroyed);
    return test_report("test_cpu_lifetime");
}
