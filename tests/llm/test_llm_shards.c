/* test_llm_shards.c — a GGUF LLM compiled as shards (kiln_compile_shards; docs/llm.md "Sharded
 * LLMs") against the same model compiled whole, through the public compiler and runtime APIs.
 *
 *   test_llm_shards check MODEL.gguf DIR N CONTEXT PREFILL
 *       compiles MODEL whole (in memory) and as N shards (DIR/m.manifest, DIR/m-shard<i>.kiln),
 *       then per shard: methods prefill and decode; inputs tokens (shard 0) or hidden, positions,
 *       mask, cache_k.l/cache_v.l of its blocks and outputs logits (last shard) or hidden, k.l/v.l,
 *       with their shapes; "llm.gguf" the whole program's bytes and "llm.shard" naming contiguous
 *       blocks that cover the model; prefill and decode sharing every context. With one scratch
 *       group given to every shard's module, the runtime holds one scratch buffer of the largest
 *       need (which every shard records as its group size). Run in sequence, hidden handed on,
 *       prefill over a few tokens (causal mask) and then decode of one more over their cache give
 *       the whole program's logits and K/V within 1e-6.
 *   test_llm_shards oom MODEL.gguf DIR N
 *       compiles MODEL as N shards with every allocation failing in turn: OUT_OF_MEMORY each time,
 *       nothing leaked, no file left in DIR, and the compile succeeds once no allocation fails.
 *   test_llm_shards refuse MODEL.gguf DIR L
 *       0 shards and L + 1 shards (L: the model's blocks) are KILN_ERROR_COMPILE_SPEC with a
 *       message, and no file is left in DIR.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>

#include "compiler/program_scratch.h"
#include "kiln/compiler.h"
#include "kiln/kiln.h"
#include "unit_expect.h"

#define MAX_SHARDS 16
#define RUN_TOKENS 5

static int64_t arg_int(const char *s) { return strtoll(s, NULL, 10); }

typedef struct prog {
    void *data;
    size_t size;
    kiln_program *program;
    kiln_module *module;
    kiln_method *prefill, *decode;
    int64_t first, count;       /* its blocks */
} prog;

static void open_prog(prog *p, kiln_scratch_group *group)
{
    REQUIRE(kiln_program_open_memory(p->data, p->size, &p->program) == KILN_OK);
    EXPECT(kiln_program_method_count(p->program) == 2);
    const char *m0 = kiln_program_method_name(p->program, 0), *m1 = kiln_program_method_name(p->program, 1);
    EXPECT(m0 && strcmp(m0, "prefill") == 0);
    EXPECT(m1 && strcmp(m1, "decode") == 0);
    kiln_module_options mo = {.struct_size = sizeof mo, .scratch_group = group};
    REQUIRE(kiln_module_create(p->program, &mo, &p->module) == KILN_OK);
    char message[512];
    REQUIRE(kiln_method_load_with_message(p->module, "prefill", &p->prefill, message, sizeof message) == KILN_OK);
    REQUIRE(kiln_method_load_with_message(p->module, "decode", &p->decode, message, sizeof message) == KILN_OK);
}

static void close_prog(prog *p)
{
    kiln_module_destroy(p->module);
    kiln_program_close(p->program);
    free(p->data);
    memset(p, 0, sizeof *p);
}

static void expect_tensor(kiln_method *m, bool input, size_t i, const char *name, int64_t d0, int64_t d1)
{
    const char *got = input ? kiln_method_input_name(m, i) : kiln_method_output_name(m, i);
    kiln_tensor t;
    REQUIRE((input ? kiln_method_input_info(m, i, &t) : kiln_method_output_info(m, i, &t)) == KILN_OK);
    kiln_dtype want = strcmp(name, "tokens") == 0 || strcmp(name, "positions") == 0 ? KILN_DTYPE_I32 : KILN_DTYPE_F32;
    bool ok = got && strcmp(got, name) == 0 && t.dtype == want && t.rank == (d1 ? 2u : 1u) && t.shape[0] == d0 &&
              (!d1 || t.shape[1] == d1);
    if (!ok)
        fprintf(stderr, "  %s %zu: got '%s' rank %u [%lld, %lld], want '%s' [%lld, %lld]\n", input ? "input" : "output",
                i, got ? got : "(none)", t.rank, (long long)t.shape[0], (long long)(t.rank > 1 ? t.shape[1] : 0), name,
                (long long)d0, (long long)d1);
    EXPECT(ok);
}

/* The layout of one shard's method of T rows (docs/llm.md "Sharded LLMs"). */
static void check_layout(kiln_method *m, const prog *p, bool first, bool last, int64_t T, int64_t C, int64_t D,
                         int64_t kvd, int64_t V)
{
    EXPECT(kiln_method_input_count(m) == (size_t)(3 + 2 * p->count));
    EXPECT(kiln_method_output_count(m) == (size_t)(1 + 2 * p->count));
    if (first) expect_tensor(m, true, 0, "tokens", T, 0);
    else expect_tensor(m, true, 0, "hidden", T, D);
    expect_tensor(m, true, 1, "positions", T, 0);
    expect_tensor(m, true, 2, "mask", T, C + T);
    if (last) expect_tensor(m, false, 0, "logits", T, V);
    else expect_tensor(m, false, 0, "hidden", T, D);
    for (int64_t j = 0; j < p->count; j++) {
        char name[32];
        long long l = (long long)(p->first + j);
        snprintf(name, sizeof name, "cache_k.%lld", l);
        expect_tensor(m, true, (size_t)(3 + 2 * j), name, C, kvd);
        snprintf(name, sizeof name, "cache_v.%lld", l);
        expect_tensor(m, true, (size_t)(4 + 2 * j), name, C, kvd);
        snprintf(name, sizeof name, "k.%lld", l);
        expect_tensor(m, false, (size_t)(1 + 2 * j), name, T, kvd);
        snprintf(name, sizeof name, "v.%lld", l);
        expect_tensor(m, false, (size_t)(2 + 2 * j), name, T, kvd);
    }
}

/* The inputs every part takes, over tokens ids[0..n) at positions start.. with `cached` cache
   rows valid; rows >= n are padding that attend to themselves only. */
typedef struct step {
    int64_t T, C, n;
    int32_t *tokens, *positions;
    float *mask;
} step;

static void make_step(step *s, int64_t T, int64_t C, const int32_t *ids, int64_t n, int64_t start, int64_t cached)
{
    s->T = T, s->C = C, s->n = n;
    s->tokens = calloc((size_t)T, sizeof *s->tokens);
    s->positions = calloc((size_t)T, sizeof *s->positions);
    s->mask = malloc((size_t)(T * (C + T)) * sizeof *s->mask);
    REQUIRE(s->tokens && s->positions && s->mask);
    for (int64_t t = 0; t < T; t++) {
        s->tokens[t] = t < n ? ids[t] : 0;
        s->positions[t] = (int32_t)(t < n ? start + t : 0);
        for (int64_t j = 0; j < C + T; j++) {
            bool see = j < C ? (t < n && j < cached) : (t < n ? j - C <= t : j - C == t);
            s->mask[t * (C + T) + j] = see ? 0.0f : -INFINITY;
        }
    }
}

static void free_step(step *s)
{
    free(s->tokens);
    free(s->positions);
    free(s->mask);
}

static void set_input(kiln_method *m, size_t i, void *data)
{
    kiln_tensor t;
    REQUIRE(kiln_method_input_info(m, i, &t) == KILN_OK);
    t.data = data;
    REQUIRE(kiln_method_set_input(m, i, &t) == KILN_OK);
}

/* Runs m (blocks first..first+count) with input 0 `x0` (tokens, or the hidden rows before it). */
static void run_part(kiln_method *m, const step *s, void *x0, float **caches, int64_t first, int64_t count)
{
    set_input(m, 0, x0);
    set_input(m, 1, s->positions);
    set_input(m, 2, s->mask);
    for (int64_t j = 0; j < 2 * count; j++) set_input(m, (size_t)(3 + j), caches[2 * first + j]);
    EXPECT(kiln_method_execute(m) == KILN_OK);
}

static const float *output(kiln_method *m, size_t i, int64_t *elems)
{
    kiln_tensor t;
    REQUIRE(kiln_method_get_output(m, i, &t) == KILN_OK);
    *elems = 1;
    for (uint32_t d = 0; d < t.rank; d++) *elems *= t.shape[d];
    return t.data;
}

static double max_diff(const float *a, const float *b, int64_t n)
{
    double d = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - (double)b[i]));
    return d;
}

/* The shards in sequence against the whole program: logits rows [0, n) and every layer's K/V. */
static void compare(prog *whole, prog *shards, size_t N, bool decode, const step *s, float **caches, int64_t L)
{
    kiln_method *wm = decode ? whole->decode : whole->prefill;
    run_part(wm, s, s->tokens, caches, 0, L);
    void *x = s->tokens;
    for (size_t i = 0; i < N; i++) {
        kiln_method *m = decode ? shards[i].decode : shards[i].prefill;
        run_part(m, s, x, caches, shards[i].first, shards[i].count);
        int64_t n;
        x = (void *)output(m, 0, &n); /* the hidden rows, valid until this shard runs again */
    }
    int64_t nw, ns;
    const float *lw = output(wm, 0, &nw), *ls = output(decode ? shards[N - 1].decode : shards[N - 1].prefill, 0, &ns);
    REQUIRE(nw == ns);
    int64_t V = nw / s->T;
    double d = max_diff(lw, ls, s->n * V);
    printf("  %s: logits of %lld rows, max abs diff %.3g\n", decode ? "decode" : "prefill", (long long)s->n, d);
    EXPECT(d <= 1e-6);
    for (size_t i = 0; i < N; i++) {
        kiln_method *m = decode ? shards[i].decode : shards[i].prefill;
        for (int64_t j = 0; j < 2 * shards[i].count; j++) {
            const float *kw = output(wm, (size_t)(1 + 2 * shards[i].first + j), &nw);
            const float *ks = output(m, (size_t)(1 + j), &ns);
            REQUIRE(nw == ns);
            EXPECT(max_diff(kw, ks, s->n * (nw / s->T)) <= 1e-6);
        }
    }
}

static kiln_status compile_shards_with(const kiln_allocator *a, const char *model, const char *dir, size_t n,
                                       int64_t C, int64_t T, char *message, size_t size)
{
    kiln_compile_options opt = {.struct_size = sizeof opt, .allocator = a, .llm_context = C, .llm_prefill = T};
    kiln_compile_method m = {.name = "forward", .model_path = model};
    char manifest[1024];
    snprintf(manifest, sizeof manifest, "%s/m.manifest", dir);
    return kiln_compile_shards(&opt, &m, n, manifest, message, size);
}

static kiln_status compile_shards(const char *model, const char *dir, size_t n, int64_t C, int64_t T, char *message,
                                  size_t size)
{
    return compile_shards_with(NULL, model, dir, n, C, T, message, size);
}

/* "key=value" of the llm.shard text. */
static int64_t shard_field(const char *text, size_t size, const char *key)
{
    char buf[256], pat[64];
    REQUIRE(size < sizeof buf);
    memcpy(buf, text, size);
    buf[size] = '\0';
    snprintf(pat, sizeof pat, "%s=", key);
    for (char *line = buf; line && *line;) {
        if (strncmp(line, pat, strlen(pat)) == 0) return strtoll(line + strlen(pat), NULL, 10);
        line = strchr(line, '\n');
        if (line) line++;
    }
    fprintf(stderr, "  llm.shard has no %s: '%s'\n", key, buf);
    return -1;
}

static int cmd_check(char **argv)
{
    const char *model = argv[1], *dir = argv[2];
    size_t N = (size_t)arg_int(argv[3]);
    int64_t C = arg_int(argv[4]), T = arg_int(argv[5]);
    REQUIRE(N >= 1 && N <= MAX_SHARDS);
    prog whole = {0};
    kiln_compile_options opt = {.struct_size = sizeof opt, .llm_context = C, .llm_prefill = T};
    kiln_compile_method m = {.name = "forward", .model_path = model};
    char message[1024];
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &whole.data, &whole.size, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "compile %s: %s\n", model, message);
    REQUIRE(st == KILN_OK);
    open_prog(&whole, NULL);
    int64_t L = ((int64_t)kiln_method_input_count(whole.prefill) - 3) / 2;
    whole.count = L;
    kiln_tensor t;
    REQUIRE(kiln_method_input_info(whole.prefill, 3, &t) == KILN_OK);
    int64_t kvd = t.shape[1];
    REQUIRE(kiln_method_output_info(whole.prefill, 0, &t) == KILN_OK);
    int64_t V = t.shape[1];
    const void *gguf_meta;
    size_t gguf_meta_size;
    REQUIRE(kiln_program_metadata_get(whole.program, "llm.gguf", &gguf_meta, &gguf_meta_size) == KILN_OK);

    unit_section("kiln_compile_shards writes the manifest and N shard programs");
    st = compile_shards(model, dir, N, C, T, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "compile shards: %s\n", message);
    REQUIRE(st == KILN_OK);
    kiln_scratch_group *group = NULL;
    REQUIRE(kiln_scratch_group_create(&group) == KILN_OK);
    prog shards[MAX_SHARDS] = {{0}};
    uint64_t need = 0, groups[MAX_SHARDS] = {0};
    int64_t D = 0;
    for (size_t i = 0; i < N; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/m-shard%zu.kiln", dir, i);
        prog *p = &shards[i];
        p->data = unit_read_file(path, &p->size);
        REQUIRE(p->data);
        kiln_program_scratch q;
        REQUIRE(kiln_program_scratch_query(p->data, p->size, &q) == KILN_OK);
        if (q.need > need) need = q.need;
        groups[i] = q.group;
        EXPECT(!q.groups_differ);
        open_prog(p, group);
        const void *meta;
        size_t meta_size;
        EXPECT(kiln_program_metadata_get(p->program, "llm.gguf", &meta, &meta_size) == KILN_OK);
        EXPECT(meta_size == gguf_meta_size && memcmp(meta, gguf_meta, meta_size) == 0);
        REQUIRE(kiln_program_metadata_get(p->program, "llm.shard", &meta, &meta_size) == KILN_OK);
        p->first = shard_field(meta, meta_size, "first_block");
        p->count = shard_field(meta, meta_size, "block_count");
        EXPECT(shard_field(meta, meta_size, "shard") == (int64_t)i);
        EXPECT(shard_field(meta, meta_size, "shards") == (int64_t)N);
        EXPECT(p->first == (i ? shards[i - 1].first + shards[i - 1].count : 0));
        REQUIRE(p->count >= 1 && p->first + p->count <= L);
        printf("  shard %zu: blocks %lld..%lld\n", i, (long long)p->first, (long long)(p->first + p->count - 1));
    }
    EXPECT(shards[N - 1].first + shards[N - 1].count == L);
    REQUIRE(kiln_method_input_info(whole.prefill, 0, &t) == KILN_OK);
    if (N > 1) {
        REQUIRE(kiln_method_input_info(shards[1].prefill, 0, &t) == KILN_OK);
        D = t.shape[1];
    }

    unit_section("each shard's methods have the layout of docs/llm.md");
    for (size_t i = 0; i < N; i++) {
        check_layout(shards[i].prefill, &shards[i], i == 0, i == N - 1, T, C, D, kvd, V);
        check_layout(shards[i].decode, &shards[i], i == 0, i == N - 1, 1, C, D, kvd, V);
    }

    unit_section("prefill and decode of a shard share their contexts");
    for (size_t i = 0; i < N; i++) {
        size_t n = kiln_method_delegate_count(shards[i].prefill);
        EXPECT(n > 0 && n == kiln_method_delegate_count(shards[i].decode));
        for (size_t k = 0; k < n; k++) {
            uint64_t a = 0, b = 1;
            EXPECT(kiln_method_context_id(shards[i].prefill, k, &a) == KILN_OK);
            EXPECT(kiln_method_context_id(shards[i].decode, k, &b) == KILN_OK);
            EXPECT(a == b);
        }
    }

    unit_section("the shards' modules in one scratch group hold one buffer of the largest need");
    for (size_t i = 0; i < N; i++) EXPECT(groups[i] == need);
    close_prog(&whole); /* its module held a scratch group of its own */
    kiln_runtime_stats rs = {.struct_size = sizeof rs};
    REQUIRE(kiln_runtime_stats_get(&rs) == KILN_OK);
    printf("  live_scratch_groups %llu, scratch_bytes_reserved %llu, largest need %llu\n",
           (unsigned long long)rs.live_scratch_groups, (unsigned long long)rs.scratch_bytes_reserved,
           (unsigned long long)need);
    EXPECT(rs.live_scratch_groups == 1);
    EXPECT(rs.scratch_bytes_reserved == need);

    unit_section("the shards in sequence give the whole program's logits and K/V");
    REQUIRE(kiln_compile_memory(&opt, &m, 1, &whole.data, &whole.size, message, sizeof message) == KILN_OK);
    open_prog(&whole, NULL);
    whole.count = L;
    float **caches = calloc((size_t)(2 * L), sizeof *caches);
    REQUIRE(caches);
    for (int64_t i = 0; i < 2 * L; i++) REQUIRE((caches[i] = calloc((size_t)(C * kvd), sizeof(float))));
    int32_t ids[RUN_TOKENS + 1];
    int64_t n = T < RUN_TOKENS ? T : RUN_TOKENS;
    REQUIRE(n + 1 <= C);
    for (int64_t k = 0; k <= n; k++) ids[k] = (int32_t)((7 * k + 3) % V);
    step s;
    make_step(&s, T, C, ids, n, 0, 0);
    compare(&whole, shards, N, false, &s, caches, L);
    free_step(&s);
    for (int64_t i = 0; i < 2 * L; i++) { /* the cache after prefill: its rows in slots 0..n-1 */
        int64_t elems;
        memcpy(caches[i], output(whole.prefill, (size_t)(1 + i), &elems), (size_t)(n * kvd) * sizeof(float));
    }
    make_step(&s, 1, C, &ids[n], 1, n, n);
    compare(&whole, shards, N, true, &s, caches, L);
    free_step(&s);
    for (int64_t i = 0; i < 2 * L; i++) free(caches[i]);
    free(caches);
    close_prog(&whole);
    for (size_t i = 0; i < N; i++) close_prog(&shards[i]);
    kiln_scratch_group_release(group);
    return unit_finish("test_llm_shards check");
}

static size_t dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    REQUIRE(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static int cmd_refuse(char **argv)
{
    const char *model = argv[1], *dir = argv[2];
    size_t L = (size_t)arg_int(argv[3]);
    char message[1024];
    unit_section("0 shards");
    EXPECT(compile_shards(model, dir, 0, 0, 0, message, sizeof message) == KILN_ERROR_COMPILE_SPEC);
    EXPECT(message[0] != '\0');
    unit_section("more shards than blocks");
    EXPECT(compile_shards(model, dir, L + 1, 0, 0, message, sizeof message) == KILN_ERROR_COMPILE_SPEC);
    printf("  %s\n", message);
    EXPECT(strstr(message, "at most") != NULL);
    EXPECT(dir_entries(dir) == 0);
    unit_section("a GGUF LLM given as a named method");
    kiln_compile_options opt = {.struct_size = sizeof opt};
    kiln_compile_method m = {.name = "prefill", .model_path = model};
    char manifest[1024];
    snprintf(manifest, sizeof manifest, "%s/m.manifest", dir);
    EXPECT(kiln_compile_shards(&opt, &m, 1, manifest, message, sizeof message) == KILN_ERROR_COMPILE_SPEC);
    EXPECT(dir_entries(dir) == 0);
    return unit_finish("test_llm_shards refuse");
}

static int cmd_oom(char **argv)
{
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    size_t N = (size_t)arg_int(argv[3]), n = 1;
    char message[1024];
    for (;; n++) {
        u.n_allocs = 0;
        u.fail_at = n;
        kiln_status st = compile_shards_with(&a, argv[1], argv[2], N, 16, 4, message, sizeof message);
        if (st == KILN_OK) break;
        if (st != KILN_ERROR_OUT_OF_MEMORY) fprintf(stderr, "  allocation %zu failing: %s: %s\n", n, kiln_status_name(st), message);
        EXPECT(st == KILN_ERROR_OUT_OF_MEMORY);
        if (u.live_blocks) fprintf(stderr, "  allocation %zu failing leaked %zu blocks\n", n, u.live_blocks);
        EXPECT(u.live_blocks == 0);
        EXPECT(dir_entries(argv[2]) == 0);
        REQUIRE(n < 1000000);
    }
    printf("compiling %zu shards survived each of its %zu allocations failing\n", N, n - 1);
    EXPECT(u.live_blocks == 0);
    EXPECT(dir_entries(argv[2]) == N + 1);
    return unit_finish("test_llm_shards oom");
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "oom") == 0) return cmd_oom(argv + 1);
    if (argc == 7 && strcmp(argv[1], "check") == 0) return cmd_check(argv + 1);
    if (argc == 5 && strcmp(argv[1], "refuse") == 0) return cmd_refuse(argv + 1);
    fprintf(stderr, "usage: test_llm_shards check MODEL DIR N CONTEXT PREFILL | oom MODEL DIR N | refuse MODEL DIR L\n");
    return 2;
}
