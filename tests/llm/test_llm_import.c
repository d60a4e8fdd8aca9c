/* test_llm_import.c — the GGUF LLM importer through the public compiler and runtime APIs.
 *
 *   test_llm_import layout MODEL.gguf CONTEXT PREFILL  L KVD VOCAB  WANT_C WANT_T
 *       compiles MODEL (CONTEXT, PREFILL: the options, 0 = default) and checks the program
 *       against docs/llm.md: methods prefill then decode; inputs tokens, positions, mask,
 *       cache_k.l/cache_v.l and outputs logits, k.l/v.l with the dtypes and shapes for L layers,
 *       KV width KVD, VOCAB tokens, WANT_C cache rows and WANT_T prefill rows; the two methods
 *       share every backend context (weight sharing); the program metadata "llm.gguf" is a GGUF
 *       v3 of MODEL's key/value count and no tensors.
 *   test_llm_import logits MODEL.gguf IDS OUT.json
 *       runs prefill on the comma-separated ids (empty cache, causal mask, padded to T) and
 *       writes {"n_vocab": V, "logits": [[...], ...]} (a row per id, oracle.mjs's layout). It
 *       also runs the last id again through decode, over the cache filled from prefill's k/v
 *       outputs of the ids before it, and requires the same logits (the decode method and the
 *       cache layout agree with prefill).
 *   test_llm_import logits MODEL.gguf IDS OUT.json PREFILL ROWS
 *       compiles MODEL with --prefill PREFILL, runs ids 0..ROWS-1 through prefill in chunks of
 *       PREFILL (the last one padded, each over the cache of the chunks before) and the rest
 *       through decode one at a time over the cache filled from the k/v outputs, and writes the
 *       logits of each id as above: every row comes through the cache path.
 *   test_llm_import oom MODEL.gguf
 *       compiles MODEL with every allocation failing in turn: OUT_OF_MEMORY each time, nothing
 *       leaked, and the compile succeeds once no allocation fails.
 */
#include <math.h>
#include <stdlib.h>

#include "kiln/compiler.h"
#include "kiln/kiln.h"
#include "unit_expect.h"

static void *compile(const char *model, int64_t context, int64_t prefill, const kiln_allocator *a, size_t *size,
                     kiln_status *status)
{
    kiln_compile_options opt = {.struct_size = sizeof opt, .allocator = a, .llm_context = context,
                                .llm_prefill = prefill};
    kiln_compile_method m = {.name = "forward", .model_path = model};
    char message[1024];
    void *data = NULL;
    *status = kiln_compile_memory(&opt, &m, 1, &data, size, message, sizeof message);
    if (*status != KILN_OK && *status != KILN_ERROR_OUT_OF_MEMORY)
        fprintf(stderr, "compile %s: %s: %s\n", model, kiln_status_name(*status), message);
    return data;
}

static void expect_tensor(kiln_method *m, bool input, size_t i, const char *name, kiln_dtype dtype, int64_t d0,
                          int64_t d1)
{
    const char *got = input ? kiln_method_input_name(m, i) : kiln_method_output_name(m, i);
    kiln_tensor t;
    REQUIRE((input ? kiln_method_input_info(m, i, &t) : kiln_method_output_info(m, i, &t)) == KILN_OK);
    bool ok = got && strcmp(got, name) == 0 && t.dtype == dtype && t.rank == (d1 ? 2u : 1u) && t.shape[0] == d0 &&
              (!d1 || t.shape[1] == d1);
    if (!ok)
        fprintf(stderr, "  %s %zu: got '%s' %s rank %u [%lld, %lld], want '%s' %s [%lld, %lld]\n",
                input ? "input" : "output", i, got ? got : "(none)", kiln_dtype_name(t.dtype), t.rank,
                (long long)t.shape[0], (long long)(t.rank > 1 ? t.shape[1] : 0), name, kiln_dtype_name(dtype),
                (long long)d0, (long long)d1);
    EXPECT(ok);
}

static void check_method(kiln_method *m, int64_t T, int64_t C, int64_t L, int64_t kvd, int64_t vocab)
{
    EXPECT(kiln_method_input_count(m) == (size_t)(3 + 2 * L));
    EXPECT(kiln_method_output_count(m) == (size_t)(1 + 2 * L));
    expect_tensor(m, true, 0, "tokens", KILN_DTYPE_I32, T, 0);
    expect_tensor(m, true, 1, "positions", KILN_DTYPE_I32, T, 0);
    expect_tensor(m, true, 2, "mask", KILN_DTYPE_F32, T, C + T);
    expect_tensor(m, false, 0, "logits", KILN_DTYPE_F32, T, vocab);
    for (int64_t l = 0; l < L; l++) {
        char name[32];
        snprintf(name, sizeof name, "cache_k.%lld", (long long)l);
        expect_tensor(m, true, (size_t)(3 + 2 * l), name, KILN_DTYPE_F32, C, kvd);
        snprintf(name, sizeof name, "cache_v.%lld", (long long)l);
        expect_tensor(m, true, (size_t)(4 + 2 * l), name, KILN_DTYPE_F32, C, kvd);
        snprintf(name, sizeof name, "k.%lld", (long long)l);
        expect_tensor(m, false, (size_t)(1 + 2 * l), name, KILN_DTYPE_F32, T, kvd);
        snprintf(name, sizeof name, "v.%lld", (long long)l);
        expect_tensor(m, false, (size_t)(2 + 2 * l), name, KILN_DTYPE_F32, T, kvd);
    }
}

typedef struct loaded {
    void *data;
    kiln_program *program;
    kiln_module *module;
    kiln_method *prefill, *decode;
} loaded;

static void load(const char *model, int64_t context, int64_t prefill, loaded *out)
{
    size_t size;
    kiln_status st;
    memset(out, 0, sizeof *out);
    out->data = compile(model, context, prefill, NULL, &size, &st);
    REQUIRE(st == KILN_OK);
    REQUIRE(kiln_program_open_memory(out->data, size, &out->program) == KILN_OK);
    EXPECT(kiln_program_method_count(out->program) == 2);
    const char *m0 = kiln_program_method_name(out->program, 0), *m1 = kiln_program_method_name(out->program, 1);
    EXPECT(m0 && strcmp(m0, "prefill") == 0);
    EXPECT(m1 && strcmp(m1, "decode") == 0);
    REQUIRE(kiln_module_create(out->program, NULL, &out->module) == KILN_OK);
    char message[512];
    REQUIRE(kiln_method_load_with_message(out->module, "prefill", &out->prefill, message, sizeof message) == KILN_OK);
    REQUIRE(kiln_method_load_with_message(out->module, "decode", &out->decode, message, sizeof message) == KILN_OK);
}

static void unload(loaded *l)
{
    kiln_module_destroy(l->module);
    kiln_program_close(l->program);
    free(l->data);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* "llm.gguf" holds every key/value of the model file (its header's count) and no tensor. */
static void check_metadata(const kiln_program *program, const char *model)
{
    EXPECT(kiln_program_metadata_count(program) == 1);
    const void *data = NULL;
    size_t size = 0, model_size = 0;
    EXPECT(kiln_program_metadata_get(program, "llm.gguf", &data, &size) == KILN_OK);
    uint8_t *file = unit_read_file(model, &model_size);
    REQUIRE(file && model_size >= 24);
    const uint8_t *blob = data;
    EXPECT(size >= 24 && memcmp(blob, "GGUF", 4) == 0 && blob[4] == 3);
    if (size >= 24) {
        EXPECT(le64(blob + 8) == 0);
        EXPECT(le64(blob + 16) == le64(file + 16));
        EXPECT(size < model_size);
    }
    free(file);
}

static int64_t arg_int(const char *s) { return strtoll(s, NULL, 10); }

static int cmd_layout(char **argv)
{
    int64_t L = arg_int(argv[4]), kvd = arg_int(argv[5]), vocab = arg_int(argv[6]);
    int64_t C = arg_int(argv[7]), T = arg_int(argv[8]);
    loaded l;
    load(argv[1], arg_int(argv[2]), arg_int(argv[3]), &l);
    unit_section("prefill's inputs and outputs");
    check_method(l.prefill, T, C, L, kvd, vocab);
    unit_section("decode's inputs and outputs");
    check_method(l.decode, 1, C, L, kvd, vocab);
    unit_section("the program metadata llm.gguf");
    check_metadata(l.program, argv[1]);
    unit_section("prefill and decode share their backend contexts");
    size_t n = kiln_method_delegate_count(l.prefill);
    EXPECT(n > 0 && n == kiln_method_delegate_count(l.decode));
    for (size_t i = 0; i < n; i++) {
        uint64_t a = 0, b = 1;
        EXPECT(kiln_method_context_id(l.prefill, i, &a) == KILN_OK);
        EXPECT(kiln_method_context_id(l.decode, i, &b) == KILN_OK);
        EXPECT(a == b);
    }
    unload(&l);

    unit_section("refused options through the API");
    size_t size;
    kiln_status st;
    void *data = compile(argv[1], -1, 0, NULL, &size, &st);
    EXPECT(st == KILN_ERROR_INVALID_ARGUMENT && !data);
    data = compile(argv[1], 0, -5, NULL, &size, &st);
    EXPECT(st == KILN_ERROR_INVALID_ARGUMENT && !data);
    /* Two methods are taken as given: "forward" is then no method of a GGUF LLM. */
    kiln_compile_options opt = {.struct_size = sizeof opt};
    kiln_compile_method two[2] = {{.name = "forward", .model_path = argv[1]}, {.name = "decode", .model_path = argv[1]}};
    char message[512];
    EXPECT(kiln_compile_memory(&opt, two, 2, &data, &size, message, sizeof message) == KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(strstr(message, "a GGUF LLM has the methods 'prefill' and 'decode', not 'forward'") != NULL);
    return unit_finish("test_llm_import layout");
}

/* The shape of input i, for buffers. */
static kiln_tensor input_info(kiln_method *m, size_t i)
{
    kiln_tensor t;
    REQUIRE(kiln_method_input_info(m, i, &t) == KILN_OK);
    return t;
}

/* Runs m on tokens ids[0..n) at positions start.., with `cached` rows of the cache valid (the
   others masked) and the cache buffers caches[2L] (C x kvd each); rows >= n are padding that
   attend to themselves only. */
static void run(kiln_method *m, const int32_t *ids, int64_t n, int64_t start, int64_t cached, float **caches,
                int64_t L)
{
    kiln_tensor tt = input_info(m, 0), mt = input_info(m, 2);
    int64_t T = tt.shape[0], C = mt.shape[1] - T;
    REQUIRE(n <= T && cached <= C);
    int32_t *tok = calloc((size_t)T, sizeof *tok), *pos = calloc((size_t)T, sizeof *pos);
    float *mask = malloc((size_t)(T * (C + T)) * sizeof *mask);
    REQUIRE(tok && pos && mask);
    for (int64_t t = 0; t < T; t++) {
        tok[t] = t < n ? ids[t] : 0;
        pos[t] = (int32_t)(t < n ? start + t : 0);
        for (int64_t j = 0; j < C + T; j++) {
            bool see = j < C ? (t < n && j < cached) : (t < n ? j - C <= t : j - C == t);
            mask[t * (C + T) + j] = see ? 0.0f : -INFINITY;
        }
    }
    tt.data = tok;
    REQUIRE(kiln_method_set_input(m, 0, &tt) == KILN_OK);
    kiln_tensor pt = input_info(m, 1);
    pt.data = pos;
    REQUIRE(kiln_method_set_input(m, 1, &pt) == KILN_OK);
    mt.data = mask;
    REQUIRE(kiln_method_set_input(m, 2, &mt) == KILN_OK);
    for (int64_t i = 0; i < 2 * L; i++) {
        kiln_tensor ct = input_info(m, (size_t)(3 + i));
        ct.data = caches[i];
        REQUIRE(kiln_method_set_input(m, (size_t)(3 + i), &ct) == KILN_OK);
    }
    EXPECT(kiln_method_execute(m) == KILN_OK);
    free(tok);
    free(pos);
    free(mask);
}

/* Copies rows [0, rows) of m's k/v outputs into the cache slots from `slot` on. */
static void append_cache(kiln_method *m, int64_t rows, int64_t slot, float **caches, int64_t L, int64_t kvd)
{
    for (int64_t i = 0; i < 2 * L; i++) {
        kiln_tensor kv;
        REQUIRE(kiln_method_get_output(m, (size_t)(1 + i), &kv) == KILN_OK);
        memcpy(caches[i] + slot * kvd, kv.data, (size_t)(rows * kvd) * sizeof(float));
    }
}

/* Copies rows [0, rows) of m's logits into out from row `row` on. */
static void take_logits(kiln_method *m, int64_t rows, int64_t row, float *out, int64_t V)
{
    kiln_tensor logits;
    REQUIRE(kiln_method_get_output(m, 0, &logits) == KILN_OK);
    REQUIRE(logits.shape[1] == V);
    memcpy(out + row * V, logits.data, (size_t)(rows * V) * sizeof(float));
}

static void write_json(const char *path, const float *logits, int64_t n, int64_t V)
{
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fprintf(f, "{\"n_vocab\": %lld, \"logits\": [", (long long)V);
    for (int64_t t = 0; t < n; t++) {
        fprintf(f, "%s[", t ? ", " : "");
        for (int64_t v = 0; v < V; v++) fprintf(f, "%s%.9g", v ? ", " : "", (double)logits[t * V + v]);
        fprintf(f, "]");
    }
    fprintf(f, "]}\n");
    EXPECT(fclose(f) == 0);
}

/* logits MODEL IDS OUT.json [PREFILL ROWS]: without PREFILL, one prefill of every id, then decode
   of the last id over the others' cache, which must give prefill's last row. With them, the
   program is compiled with --prefill PREFILL; ids 0..ROWS-1 go through prefill in chunks of
   PREFILL (the last one padded, each over the cache of the chunks before it) and the rest
   through decode, one at a time, each over the cache of all ids before it: the logits written
   are those of the cache path. */
static int cmd_logits(int argc, char **argv)
{
    int32_t ids[256];
    int64_t n = 0;
    for (char *s = argv[2]; *s && n < 256;) {
        ids[n++] = (int32_t)strtol(s, &s, 10);
        if (*s == ',') s++;
    }
    REQUIRE(n >= 2);
    int64_t chunk = argc > 4 ? arg_int(argv[4]) : 0, rows = argc > 5 ? arg_int(argv[5]) : n;
    REQUIRE(rows >= 1 && rows <= n);
    loaded l;
    load(argv[1], 0, chunk, &l);
    int64_t L = ((int64_t)kiln_method_input_count(l.prefill) - 3) / 2;
    kiln_tensor ck = input_info(l.prefill, 3), lt;
    REQUIRE(kiln_method_output_info(l.prefill, 0, &lt) == KILN_OK);
    int64_t C = ck.shape[0], kvd = ck.shape[1], T = lt.shape[0], V = lt.shape[1];
    REQUIRE(n <= C && (chunk ? T == chunk : n <= T));
    float **caches = calloc((size_t)(2 * L), sizeof *caches);
    float *logits = malloc((size_t)(n * V) * sizeof *logits);
    REQUIRE(caches && logits);
    for (int64_t i = 0; i < 2 * L; i++) REQUIRE((caches[i] = calloc((size_t)(C * kvd), sizeof(float))));

    unit_section("prefill of the ids in chunks, each over the cache of the ones before");
    for (int64_t at = 0; at < rows; at += T) {
        int64_t m = rows - at < T ? rows - at : T;
        run(l.prefill, ids + at, m, at, at, caches, L);
        take_logits(l.prefill, m, at, logits, V);
        append_cache(l.prefill, m, at, caches, L, kvd);
    }
    unit_section("decode of the rest, one id at a time over the cache");
    for (int64_t at = rows; at < n; at++) {
        run(l.decode, ids + at, 1, at, at, caches, L);
        take_logits(l.decode, 1, at, logits, V);
        append_cache(l.decode, 1, at, caches, L, kvd);
    }
    write_json(argv[3], logits, n, V);
    if (!chunk) {
        unit_section("decode of the last id over the cache of the others gives prefill's logits");
        run(l.decode, &ids[n - 1], 1, n - 1, n - 1, caches, L);
        kiln_tensor dl;
        REQUIRE(kiln_method_get_output(l.decode, 0, &dl) == KILN_OK);
        double max_diff = 0;
        for (int64_t v = 0; v < V; v++)
            max_diff = fmax(max_diff, fabs((double)((float *)dl.data)[v] - logits[(n - 1) * V + v]));
        printf("decode vs prefill logits: max abs diff %.3g\n", max_diff);
        EXPECT(max_diff < 1e-3);
    }
    for (int64_t i = 0; i < 2 * L; i++) free(caches[i]);
    free(caches);
    free(logits);
    unload(&l);
    return unit_finish("test_llm_import logits");
}

static int cmd_oom(char **argv)
{
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    size_t size, n = 1;
    for (;; n++) {
        u.n_allocs = 0;
        u.fail_at = n;
        kiln_status st;
        void *data = compile(argv[1], 0, 0, &a, &size, &st);
        if (st == KILN_OK) {
            a.free(a.ctx, data);
            break;
        }
        if (st != KILN_ERROR_OUT_OF_MEMORY) fprintf(stderr, "  allocation %zu failing: %s\n", n, kiln_status_name(st));
        EXPECT(st == KILN_ERROR_OUT_OF_MEMORY);
        if (u.live_blocks) fprintf(stderr, "  allocation %zu failing leaked %zu blocks\n", n, u.live_blocks);
        EXPECT(u.live_blocks == 0);
        REQUIRE(n < 100000);
    }
    printf("compile survived each of its %zu allocations failing\n", n - 1);
    EXPECT(u.live_blocks == 0);
    return unit_finish("test_llm_import oom");
}

int main(int argc, char **argv)
{
    if (argc == 10 && strcmp(argv[1], "layout") == 0) return cmd_layout(argv + 1);
    if ((argc == 5 || argc == 7) && strcmp(argv[1], "logits") == 0) return cmd_logits(argc - 1, argv + 1);
    if (argc == 3 && strcmp(argv[1], "oom") == 0) return cmd_oom(argv + 1);
    fprintf(stderr, "usage: test_llm_import layout MODEL CONTEXT PREFILL L KVD VOCAB WANT_C WANT_T | logits MODEL "
                    "IDS OUT.json [PREFILL ROWS] | oom MODEL\n");
    return 2;
}
