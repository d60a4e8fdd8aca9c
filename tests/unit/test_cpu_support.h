/* test_cpu_support.h — shared helpers of the `cpu` runtime tests (tests/unit/test_cpu_*.c).
 *
 * Layer: tests. Header-only (static inline), since each test file is a program of its own.
 *  - tb_*: context binaries built by hand, struct by struct per cpu_format.h. Each graph computes
 *    y = act(x * w) for x, y f32[n] and a weight w in the binary's one weight block: a BINARY MUL
 *    into a scratch tensor, then a UNARY activation into the output — so every run goes through
 *    weight binding, the scratch buffer and the kernel table.
 *  - tp_*: programs whose methods are chains of DELEGATE calls to such binaries, written with the
 *    program writer, so the runtime's lifetime rules are tested without the partitioner.
 *  - module creation and method loading that count a failure as a failed check.
 *  - fault allocator, stats snapshots and expectation macros.
 * Everything the tests check goes through include/kiln/kiln.h; the helpers alone use internals.
 */
#ifndef KILN_TESTS_UNIT_TEST_CPU_SUPPORT_H
#define KILN_TESTS_UNIT_TEST_CPU_SUPPORT_H

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_format.h"
#include "backends/cpu/targets.h"
#include "core/alloc.h"
#include "core/hash.h"
#include "core/check.h"
#include "delegate_program.h"
#include "kiln/kiln.h"

/* ---- expectations ---------------------------------------------------------------------------- */

static int test_failures;

#define EXPECT(cond)                                                                             \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                 \
            test_failures++;                                                                     \
        }                                                                                        \
    } while (0)

#define EXPECT_STATUS(expr, want)                                                                \
    do {                                                                                         \
        kiln_status got_ = (expr);                                                               \
        if (got_ != (want)) {                                                                    \
            fprintf(stderr, "%s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__, #expr,      \
                    kiln_status_name(got_), kiln_status_name(want));                             \
            test_failures++;                                                                     \
        }                                                                                        \
    } while (0)

#define EXPECT_OK(expr) EXPECT_STATUS(expr, KILN_OK)

static inline int test_report(const char *name)
{
    if (test_failures) fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
    else printf("%s: all checks passed\n", name);
    return test_failures ? 1 : 0;
}

/* ---- hand-built context binaries ---------------------------------------------------------------- */

typedef struct tb_graph {
    const char *name;
    uint32_t act;                   /* kiln_cpu_act_kind applied to x * w */
} tb_graph;

typedef struct tb_spec {
    int64_t n;                      /* elements of x, w and y (>= 1) */
    const char *const *targets;     /* record targets; NULL: {"generic"} */
    size_t n_targets;
    const tb_graph *graphs;         /* NULL: one graph "forward" with RELU */
    size_t n_graphs;
    uint64_t group_scratch_size;
    uint64_t extra_features;        /* feature bits every record claims to need on top of its target's */
    float weight_scale;             /* w[i] = weight_scale * (i % 5 + 1); 0 means 1 */
    const uint32_t *record_acts;    /* non-NULL: record r computes record_acts[r] in every graph
                                       (so an output tells which record ran) */
} tb_spec;

typedef struct tb_binary {
    void *data;                     /* 64-byte aligned, malloc'd: free() */
    size_t size;
} tb_binary;

/* Recompute the signature after editing a binary (tests that corrupt it on purpose). */
static inline void tb_resign(tb_binary *b)
{
    kiln_ctx_header *h = b->data;
    h->signature = kiln_hash64((const uint8_t *)b->data + KILN_CTX_HEADER_SIZE, b->size - KILN_CTX_HEADER_SIZE,
                               KILN_CTX_VERSION);
}

static inline float tb_weight(const tb_spec *s, int64_t i)
{
    return (s->weight_scale != 0.0f ? s->weight_scale : 1.0f) * (float)(i % 5 + 1);
}

static inline float tb_act(uint32_t act, float v)
{
    switch (act) {
    case KILN_CPU_ACT_RELU: return v > 0.0f ? v : 0.0f;
    case KILN_CPU_ACT_NEG: return -v;
    case KILN_CPU_ACT_ABS: return fabsf(v);
    default: return v;
    }
}


/* Reserve `size` zeroed bytes at an `align`ed offset of buf (capacity cap) and return the offset. */
static inline size_t tb_reserve(uint8_t *buf, size_t *used, size_t cap, size_t size, size_t align)
{
    size_t off = kiln_align_up(*used, align);
    if (off + size > cap) {
        fprintf(stderr, "tb_reserve: binary larger than %zu bytes\n", cap);
        abort();
    }
    memset(buf + off, 0, size);
    *used = off + size;
    return off;
}

static inline uint32_t tb_string(uint8_t *buf, size_t *used, size_t cap, const char *s)
{
    size_t n = strlen(s) + 1;
    size_t off = tb_reserve(buf, used, cap, n, 1);
    memcpy(buf + off, s, n);
    return (uint32_t)off;
}

/* Tensors 0 x (input), 1 y (output), 2 t = x * w (scratch at 0), 3 w (weight block 0). */
static inline void tb_write_graph(uint8_t *buf, size_t *used, size_t cap, const tb_spec *s, kiln_ctx_graph *g,
                                  uint32_t name, uint32_t act)
{
    int64_t n = s->n;
    uint64_t bytes = (uint64_t)n * 4;
    g->name = name;
    g->n_inputs = 1;
    g->n_outputs = 1;
    g->n_tensors = 4;
    g->n_steps = 2;
    g->workspace_offset = kiln_align_up((size_t)bytes, 64);
    g->scratch_size = g->workspace_offset;
    g->tensors_offset = tb_reserve(buf, used, cap, 4 * sizeof(kiln_ctx_tensor), 8);
    kiln_ctx_tensor t[4];
    memset(t, 0, sizeof t);
    uint8_t kinds[4] = {KILN_CTX_TENSOR_INPUT, KILN_CTX_TENSOR_OUTPUT, KILN_CTX_TENSOR_SCRATCH, KILN_CTX_TENSOR_WEIGHT};
    for (int i = 0; i < 4; i++) {
        t[i].dtype = KILN_DTYPE_F32;
        t[i].rank = 1;
        t[i].kind = kinds[i];
        t[i].size = bytes;
        t[i].shape[0] = n;
    }
    memcpy(buf + g->tensors_offset, t, sizeof t);
    g->steps_offset = tb_reserve(buf, used, cap, 2 * sizeof(kiln_ctx_step), 8);
    kiln_ctx_step st[2];
    memset(st, 0, sizeof st);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < KILN_CPU_MAX_STEP_TENSORS; i++) st[k].tensors[i] = -1;
    kiln_cpu_binary_params mul = {.kind = KILN_CPU_BIN_MUL, .rank = 1};
    mul.out_shape[0] = n;
    mul.a_strides[0] = 1;
    mul.b_strides[0] = 1;
    st[0].op = KILN_CPU_OP_BINARY;
    st[0].n_inputs = 2;
    st[0].n_outputs = 1;
    st[0].tensors[0] = 0;
    st[0].tensors[1] = 3;
    st[0].tensors[2] = 2;
    memcpy(st[0].params, &mul, sizeof mul);
    kiln_cpu_unary_params un = {.count = n, .act = {.kind = act}};
    st[1].op = KILN_CPU_OP_UNARY;
    st[1].n_inputs = 1;
    st[1].n_outputs = 1;
    st[1].tensors[0] = 2;
    st[1].tensors[1] = 1;
    memcpy(st[1].params, &un, sizeof un);
    memcpy(buf + g->steps_offset, st, sizeof st);
}

static inline tb_binary tb_build(const tb_spec *spec)
{
    static const char *const generic[] = {"generic"};
    static const tb_graph forward[] = {{"forward", KILN_CPU_ACT_RELU}};
    tb_spec s = *spec;
    if (!s.targets) s.targets = generic, s.n_targets = 1;
    if (!s.graphs) s.graphs = forward, s.n_graphs = 1;
    size_t cap = 64 * 1024 + (size_t)s.n * 4;
    uint8_t *buf = aligned_alloc(64, kiln_align_up(cap, 64));
    if (!buf) abort();
    memset(buf, 0, kiln_align_up(cap, 64)); /* padding too: equal specs give equal bytes */
    size_t used = 0;
    tb_reserve(buf, &used, cap, KILN_CTX_HEADER_SIZE, 64);
    size_t strings = tb_reserve(buf, &used, cap, 1, 8); /* offset 0 of the table is "" */
    uint32_t target_names[16], graph_names[16];
    for (size_t r = 0; r < s.n_targets; r++) target_names[r] = (uint32_t)(tb_string(buf, &used, cap, s.targets[r]) - strings);
    for (size_t i = 0; i < s.n_graphs; i++) graph_names[i] = (uint32_t)(tb_string(buf, &used, cap, s.graphs[i].name) - strings);
    size_t strings_size = used - strings;
    size_t blocks = tb_reserve(buf, &used, cap, sizeof(kiln_ctx_block), 8);
    size_t records = tb_reserve(buf, &used, cap, s.n_targets * sizeof(kiln_ctx_record), 8);
    for (size_t r = 0; r < s.n_targets; r++) {
        kiln_ctx_record rec;
        memset(&rec, 0, sizeof rec);
        const kiln_cpu_target *t = kiln_cpu_target_find(s.targets[r]);
        rec.target = target_names[r];
        rec.n_graphs = (uint32_t)s.n_graphs;
        rec.features = (t ? t->features : 0) | s.extra_features;
        rec.l1_size = t ? t->l1_size : 32768;
        rec.l2_size = t ? t->l2_size : 262144;
        rec.l3_size = t ? t->l3_size : 4194304;
        rec.gemm_mr = t ? t->kernels->gemm_mr : 4;
        rec.gemm_nr = t ? t->kernels->gemm_nr : 8;
        rec.graphs_offset = tb_reserve(buf, &used, cap, s.n_graphs * sizeof(kiln_ctx_graph), 8);
        for (size_t i = 0; i < s.n_graphs; i++) {
            kiln_ctx_graph g;
            memset(&g, 0, sizeof g);
            tb_write_graph(buf, &used, cap, &s, &g, graph_names[i], s.record_acts ? s.record_acts[r] : s.graphs[i].act);
            memcpy(buf + rec.graphs_offset + i * sizeof g, &g, sizeof g);
        }
        memcpy(buf + records + r * sizeof rec, &rec, sizeof rec);
    }
    kiln_ctx_block block = {0, (uint64_t)s.n * 4, 0};
    block.offset = tb_reserve(buf, &used, cap, (size_t)block.size, 64);
    for (int64_t i = 0; i < s.n; i++) {
        float w = tb_weight(&s, i);
        memcpy(buf + block.offset + (size_t)i * 4, &w, 4);
    }
    block.hash = kiln_hash64(buf + block.offset, (size_t)block.size, 0);
    memcpy(buf + blocks, &block, sizeof block);
    kiln_ctx_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, KILN_CTX_MAGIC, 8);
    h.version = KILN_CTX_VERSION;
    h.file_size = used;
    h.group_scratch_size = s.group_scratch_size;
    h.strings_offset = strings;
    h.strings_size = strings_size;
    h.blocks_offset = blocks;
    h.records_offset = records;
    h.n_blocks = 1;
    h.n_records = (uint32_t)s.n_targets;
    memcpy(buf, &h, sizeof h);
    tb_binary b = {buf, used};
    tb_resign(&b);
    return b;
}

/* ---- programs of DELEGATE chains ---------------------------------------------------------------- */

#define TP_MAX_CHAIN 4

typedef struct tp_method {
    const char *name;
    int64_t n;                                  /* x, y: f32[n] */
    const tb_binary *chain[TP_MAX_CHAIN];       /* delegate calls in order: v0 -> v1 -> ... */
    size_t n_chain;
} tp_method;

typedef struct tp_program {
    void *data;                                 /* from the default allocator: tp_free */
    size_t size;
} tp_program;

static inline void tp_check(kiln_status st, const char *what)
{
    if (st != KILN_OK) {
        fprintf(stderr, "program builder: %s: %s\n", what, kiln_status_name(st));
        abort();
    }
}

static inline void tp_add_method(kiln_program_builder *b, const tp_method *m)
{
    kiln_test_delegate_call calls[TP_MAX_CHAIN];
    for (size_t k = 0; k < m->n_chain; k++)
        calls[k] = (kiln_test_delegate_call){"cpu", m->chain[k]->data, m->chain[k]->size};
    tp_check(kiln_test_delegate_method_add(b, m->name, m->n, calls, m->n_chain), "method");
}

/* A program with these methods; identical binaries become one segment (the writer dedups). */
static inline tp_program tp_build(const tp_method *methods, size_t n_methods)
{
    kiln_program_builder *b;
    tp_check(kiln_program_builder_create(kiln_allocator_default(), &b), "create");
    for (size_t i = 0; i < n_methods; i++) tp_add_method(b, &methods[i]);
    tp_program p = {NULL, 0};
    tp_check(kiln_program_builder_finish(b, &p.data, &p.size), "finish");
    kiln_program_builder_destroy(b);
    return p;
}

static inline void tp_free(tp_program *p)
{
    kiln_free(kiln_allocator_default(), p->data);
    p->data = NULL;
}

/* Run method m (input f32[n]) on a pattern derived from `seed` and compare y with the chain of
   graphs it goes through (acts[k] of binary k, whose weights use specs[k]). true when equal. */
static inline bool tp_run(kiln_method *m, int64_t n, const tb_spec *const *specs, const uint32_t *acts, size_t n_chain,
                          float seed)
{
    float *x = malloc((size_t)n * 4), *want = malloc((size_t)n * 4);
    if (!x || !want) abort();
    for (int64_t i = 0; i < n; i++) x[i] = want[i] = seed * (float)((i * 7) % 11 - 5);
    for (size_t k = 0; k < n_chain; k++)
        for (int64_t i = 0; i < n; i++) want[i] = tb_act(acts[k], want[i] * tb_weight(specs[k], i));
    kiln_tensor in = {.dtype = KILN_DTYPE_F32, .rank = 1, .shape = {n}, .data = x};
    kiln_tensor out;
    bool ok = kiln_method_set_input(m, 0, &in) == KILN_OK && kiln_method_execute(m) == KILN_OK &&
              kiln_method_get_output(m, 0, &out) == KILN_OK && out.dtype == KILN_DTYPE_F32 && out.shape[0] == n;
    for (int64_t i = 0; ok && i < n; i++)
        if (((const float *)out.data)[i] != want[i]) ok = false;
    free(x);
    free(want);
    return ok;
}

/* One-delegate convenience: method m goes through one binary built from spec with act. */
static inline bool tp_run1(kiln_method *m, const tb_spec *spec, uint32_t act, float seed)
{
    const tb_spec *specs[1] = {spec};
    return tp_run(m, spec->n, specs, &act, 1, seed);
}

static inline kiln_program *tp_open(const tp_program *p)
{
    kiln_program *prog = NULL;
    tp_check(kiln_program_open_memory(p->data, p->size, &prog), "open");
    return prog;
}

/* ---- modules and methods ------------------------------------------------------------------------ */

/* A one-thread module of p (allocator a, scratch group g, target: NULL for defaults); NULL after
   a failed check. */
static inline kiln_module *cpu_module_create(kiln_program *p, const kiln_allocator *a, kiln_scratch_group *g,
                                             const char *target)
{
    kiln_module_options o = {sizeof o, a, g, 1, target};
    kiln_module *m = NULL;
    EXPECT_OK(kiln_module_create(p, &o, &m));
    return m;
}

/* Method `name` of mod; on failure prints the module's last error and counts a failed check. */
static inline kiln_method *cpu_method_load(kiln_module *mod, const char *name)
{
    kiln_method *m = NULL;
    kiln_status st = kiln_method_load(mod, name, &m);
    if (st != KILN_OK) fprintf(stderr, "load '%s': %s: %s\n", name, kiln_status_name(st), kiln_module_last_error(mod));
    EXPECT_OK(st);
    return m;
}

/* ---- process-wide counters ---------------------------------------------------------------------- */

static inline kiln_runtime_stats stats_now(void)
{
    kiln_runtime_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    if (kiln_runtime_stats_get(&s) != KILN_OK) {
        fprintf(stderr, "kiln_runtime_stats_get failed\n");
        abort();
    }
    return s;
}

static inline uint64_t context_id(const kiln_method *m, size_t index)
{
    uint64_t id = 0;
    if (kiln_method_context_id(m, index, &id) != KILN_OK) return 0;
    return id;
}

/* ---- fault-injecting allocator ------------------------------------------------------------------ */

/* Counts allocations, fails exactly the fail_at-th (1-based; 0: never) and tracks how many
   blocks are outstanding, so a test can prove that a failed call left nothing behind. */
typedef struct fault_alloc {
    kiln_allocator base;            /* first: &fa->base is the kiln_allocator */
    atomic_long count;
    long fail_at;
    atomic_long live;
} fault_alloc;

static inline void *fault_alloc_fn(void *ctx, size_t size, size_t alignment)
{
    fault_alloc *fa = ctx;
    long n = atomic_fetch_add(&fa->count, 1) + 1;
    if (fa->fail_at && n == fa->fail_at) return NULL;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    atomic_fetch_add(&fa->live, 1);
    return p;
}

static inline void fault_free_fn(void *ctx, void *ptr)
{
    fault_alloc *fa = ctx;
    if (!ptr) return;
    atomic_fetch_sub(&fa->live, 1);
    free(ptr);
}

static inline void fault_alloc_init(fault_alloc *fa, long fail_at)
{
    fa->base.ctx = fa;
    fa->base.alloc = fault_alloc_fn;
    fa->base.free = fault_free_fn;
    atomic_init(&fa->count, 0);
    atomic_init(&fa->live, 0);
    fa->fail_at = fail_at;
}

#endif
