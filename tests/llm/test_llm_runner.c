/* test_llm_runner.c — the LLM runner (kiln/llm.h) on the committed fortunes model, compiled in
 * memory with a short context (C = 64) and prefill (T = 16) so that chunking, padding, the
 * context limit and the context shift are all reached:
 *   - a program that is not an LLM program (no llm.gguf; a prefill or decode of another
 *     layout) is refused with one line;
 *   - prefill in chunks (16 + 16 + a padded 8) gives the logits decoding token by token gives,
 *     and so does appending to a cache that already holds tokens;
 *   - kiln_llm_generate greedy = eval + argmax by hand; stop strings hold back and drop their
 *     text; a full context stops or shifts and goes on;
 *   - eval past the context, bad tokens, bad options: statuses and messages, nothing changed;
 *   - every allocation failure of kiln_llm_create is reported and leaks nothing.
 * Argument: the model (models/llm/fortunes-llama-f32.gguf).
 */
#include <math.h>

#include "kiln/compiler.h"
#include "kiln/llm.h"
#include "unit_expect.h"

#define CTX 64
#define PREFILL 16

static void *program_bytes;
static const char *model_path;
static size_t program_size;

static kiln_program *open_program(void)
{
    kiln_program *p = NULL;
    EXPECT_STATUS(kiln_program_open_memory(program_bytes, program_size, &p), KILN_OK);
    REQUIRE(p);
    return p;
}

static kiln_llm *create(kiln_program *p)
{
    kiln_llm *llm = NULL;
    char message[512];
    kiln_llm_options o = {.struct_size = sizeof o, .num_threads = 1};
    kiln_status st = kiln_llm_create(p, &o, &llm, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "kiln_llm_create: %s\n", message);
    REQUIRE(st == KILN_OK && llm);
    return llm;
}

static int32_t argmax(const float *row, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (row[i] > row[best]) best = i;
    return (int32_t)best;
}

static float max_abs_diff(const float *a, const float *b, size_t n)
{
    float m = 0;
    for (size_t i = 0; i < n; i++) m = fmaxf(m, fabsf(a[i] - b[i]));
    return m;
}

static void test_not_llm(void)
{
    unit_section("a program that is not an LLM program gets one clear error");
    size_t size;
    void *bytes = unit_compile_case("node/test_relu", 0, &size);
    kiln_program *p = NULL;
    EXPECT_STATUS(kiln_program_open_memory(bytes, size, &p), KILN_OK);
    kiln_llm *llm = (kiln_llm *)1;
    char message[512];
    EXPECT_STATUS(kiln_llm_create(p, NULL, &llm, message, sizeof message), KILN_ERROR_MODEL);
    EXPECT(llm == NULL);
    EXPECT(strstr(message, "not an LLM program") && strstr(message, "llm.gguf"));
    printf("  %s\n", message);
    kiln_program_close(p);
    free(bytes);
    EXPECT_STATUS(kiln_llm_create(NULL, NULL, &llm, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    /* LLM metadata, but a method of another layout: one line naming the method and the value. */
    char relu[512];
    snprintf(relu, sizeof relu, "%s/node/test_relu/model.onnx", UNIT_TESTDATA);
    for (int which = 0; which < 2; which++) {
        kiln_compile_options opt = {.struct_size = sizeof opt, .llm_context = CTX, .llm_prefill = PREFILL};
        kiln_compile_method ms[2] = {{.name = "prefill", .model_path = which ? relu : model_path},
                                     {.name = "decode", .model_path = which ? model_path : relu}};
        void *mixed = NULL;
        size_t mixed_size = 0;
        EXPECT_STATUS(kiln_compile_memory(&opt, ms, 2, &mixed, &mixed_size, message, sizeof message), KILN_OK);
        REQUIRE(mixed);
        EXPECT_STATUS(kiln_program_open_memory(mixed, mixed_size, &p), KILN_OK);
        EXPECT_STATUS(kiln_llm_create(p, NULL, &llm, message, sizeof message), KILN_ERROR_MODEL);
        EXPECT(llm == NULL && strstr(message, "not an LLM program") &&
               strstr(message, which ? "method 'prefill'" : "method 'decode'"));
        printf("  %s\n", message);
        kiln_program_close(p);
        free(mixed);
    }
    kiln_llm_options small = {.struct_size = 1};
    p = open_program();
    EXPECT_STATUS(kiln_llm_create(p, &small, &llm, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    kiln_program_close(p);
}

/* 40 tokens of a text (BOS first). */
static int32_t *some_tokens(kiln_llm *llm, size_t *n)
{
    const char *text = "A fortune: the cat sat on the mat, and the dog, seeing this, sat on the cat; then the "
                       "mouse came out of its hole and laughed at them both, for it had the cheese. -- Anonymous";
    int32_t *ids = NULL;
    EXPECT_STATUS(kiln_llm_tokenize(llm, text, strlen(text), 1, &ids, n), KILN_OK);
    REQUIRE(ids && *n >= 40);
    EXPECT(ids[0] == kiln_llm_bos(llm));
    *n = 40;
    return ids;
}

static void test_eval(kiln_llm *llm)
{
    unit_section("prefill chunks, padding and appending give the logits of token-by-token decoding");
    EXPECT(kiln_llm_context_length(llm) == CTX && kiln_llm_prefill_length(llm) == PREFILL);
    EXPECT(kiln_llm_n_layers(llm) == 5 && kiln_llm_n_vocab(llm) == 1024);
    size_t n, V = kiln_llm_n_vocab(llm);
    int32_t *ids = some_tokens(llm, &n);
    float *chunked = malloc(n * V * sizeof(float)), *single = malloc(n * V * sizeof(float));
    float *appended = malloc(n * V * sizeof(float));
    REQUIRE(chunked && single && appended);
    kiln_llm_reset(llm);
    EXPECT(kiln_llm_logits(llm) == NULL);
    EXPECT_STATUS(kiln_llm_eval(llm, ids, n, chunked), KILN_OK); /* 16 + 16 + 8 padded to 16 */
    EXPECT(kiln_llm_n_past(llm) == n);
    EXPECT(memcmp(kiln_llm_cache_tokens(llm), ids, n * sizeof *ids) == 0);
    EXPECT(kiln_llm_logits(llm) && memcmp(kiln_llm_logits(llm), chunked + (n - 1) * V, V * sizeof(float)) == 0);
    kiln_llm_reset(llm);
    for (size_t i = 0; i < n; i++) EXPECT_STATUS(kiln_llm_eval(llm, ids + i, 1, single + i * V), KILN_OK);
    kiln_llm_reset(llm);
    EXPECT_STATUS(kiln_llm_eval(llm, ids, 5, appended), KILN_OK); /* 5 rows: one prefill call (5 * 8 >= 16) */
    EXPECT_STATUS(kiln_llm_eval(llm, ids + 5, n - 5, appended + 5 * V), KILN_OK);
    float d1 = max_abs_diff(chunked, single, n * V), d2 = max_abs_diff(appended, single, n * V);
    printf("  chunked vs decode: max |diff| %.2e, appended vs decode %.2e\n", d1, d2);
    EXPECT(d1 < 1e-3f && d2 < 1e-3f);
    /* The logits are not all alike (a mask that let every row see everything would make rows
       depend on later tokens and differ from decoding; rows that saw nothing would be equal). */
    EXPECT(max_abs_diff(single, single + V, V) > 0.1f);

    unit_section("eval past the context, bad tokens: refused, nothing changed");
    size_t past = kiln_llm_n_past(llm);
    int32_t many[CTX] = {0};
    EXPECT_STATUS(kiln_llm_eval(llm, many, CTX - past + 1, NULL), KILN_ERROR_LIMIT);
    EXPECT(strstr(kiln_llm_last_error(llm), "context full") != NULL);
    int32_t bad = (int32_t)V;
    EXPECT_STATUS(kiln_llm_eval(llm, &bad, 1, NULL), KILN_ERROR_INVALID_ARGUMENT);
    bad = -1;
    EXPECT_STATUS(kiln_llm_eval(llm, &bad, 1, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_llm_eval(llm, ids, 0, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(kiln_llm_n_past(llm) == past);

    unit_section("text: tokenize, detokenize, token pieces");
    char *text = NULL;
    size_t size = 0;
    EXPECT_STATUS(kiln_llm_detokenize(llm, ids + 1, 3, &text, &size), KILN_OK);
    EXPECT(text && strncmp(text, "A fortune", size < 9 ? size : 9) == 0);
    kiln_llm_free(llm, text);
    char piece[64];
    size_t piece_n = 0;
    EXPECT_STATUS(kiln_llm_token_piece(llm, ids[1], piece, sizeof piece, &piece_n), KILN_OK);
    EXPECT(piece_n >= 1 && piece[0] == ' '); /* the space prefix is kept for streaming */
    EXPECT_STATUS(kiln_llm_token_piece(llm, 5000, piece, sizeof piece, &piece_n), KILN_ERROR_INDEX_OUT_OF_RANGE);
    free(chunked), free(single), free(appended);
    kiln_llm_free(llm, ids);
}

typedef struct collect {
    int32_t tokens[256];
    size_t n;
    char text[4096];
    size_t n_text;
    int stop_after;         /* nonzero: ask to stop after this many tokens */
} collect;

static int on_token(void *user, int32_t token, const char *text, size_t size)
{
    collect *c = user;
    if (token >= 0 && c->n < 256) c->tokens[c->n++] = token;
    if (c->n_text + size < sizeof c->text) {
        memcpy(c->text + c->n_text, text, size);
        c->n_text += size;
        c->text[c->n_text] = '\0';
    }
    return c->stop_after && (int)c->n >= c->stop_after;
}

static kiln_llm_stats generate(kiln_llm *llm, const char *prompt, kiln_llm_generate_options *o, collect *c)
{
    int32_t *ids = NULL;
    size_t n = 0;
    EXPECT_STATUS(kiln_llm_tokenize(llm, prompt, strlen(prompt), 1, &ids, &n), KILN_OK);
    o->on_token = on_token;
    o->user = c;
    kiln_llm_reset(llm);
    kiln_status st = kiln_llm_generate(llm, ids, n, o);
    if (st != KILN_OK) fprintf(stderr, "generate: %s\n", kiln_llm_last_error(llm));
    EXPECT_STATUS(st, KILN_OK);
    kiln_llm_free(llm, ids);
    kiln_llm_stats s = {.struct_size = sizeof s};
    EXPECT_STATUS(kiln_llm_stats_get(llm, &s), KILN_OK);
    return s;
}

static void test_generate(kiln_llm *llm)
{
    unit_section("greedy generation is eval + argmax");
    size_t V = kiln_llm_n_vocab(llm);
    collect c = {0};
    kiln_llm_generate_options o = {.struct_size = sizeof o, .max_tokens = 20};
    kiln_llm_stats s = generate(llm, "The", &o, &c);
    EXPECT(s.stop == KILN_LLM_STOP_MAX_TOKENS && s.generated_tokens == 20 && c.n == 20 && s.prompt_tokens == 2);
    int32_t by_hand[20], prompt[2] = {kiln_llm_bos(llm), -1};
    int32_t *ids = NULL;
    size_t n = 0;
    EXPECT_STATUS(kiln_llm_tokenize(llm, "The", 3, 1, &ids, &n), KILN_OK);
    REQUIRE(n == 2);
    prompt[1] = ids[1];
    kiln_llm_free(llm, ids);
    kiln_llm_reset(llm);
    EXPECT_STATUS(kiln_llm_eval(llm, prompt, 2, NULL), KILN_OK);
    for (int i = 0; i < 20; i++) {
        by_hand[i] = argmax(kiln_llm_logits(llm), V);
        EXPECT_STATUS(kiln_llm_eval(llm, &by_hand[i], 1, NULL), KILN_OK);
    }
    EXPECT(memcmp(by_hand, c.tokens, sizeof by_hand) == 0);
    printf("  text: \"%.40s\"\n", c.text);
    EXPECT(strncmp(c.text, "re's a barge of the", 19) == 0); /* models/llm/README.md */

    unit_section("stop strings: the text before one is released, the stop string never");
    collect cs = {0};
    const char *stops[] = {"zzz", "barge"};
    kiln_llm_generate_options os = {.struct_size = sizeof os, .max_tokens = 40, .stop_strings = stops,
                                    .n_stop_strings = 2};
    s = generate(llm, "The", &os, &cs);
    EXPECT(s.stop == KILN_LLM_STOP_STRING);
    EXPECT(strcmp(cs.text, "re's a ") == 0);
    EXPECT(cs.n >= 3 && cs.n < 10 && memcmp(cs.tokens, c.tokens, cs.n * sizeof(int32_t)) == 0);
    /* A stop string that never comes: all of the text, also what was held back at the end. */
    collect cn = {0};
    const char *never[] = {"re's a barge of the\nX"};
    kiln_llm_generate_options on = {.struct_size = sizeof on, .max_tokens = 8, .stop_strings = never,
                                    .n_stop_strings = 1};
    s = generate(llm, "The", &on, &cn);
    EXPECT(s.stop == KILN_LLM_STOP_MAX_TOKENS && cn.n == 8);
    EXPECT(strncmp(cn.text, c.text, cn.n_text) == 0 && cn.n_text > 10);

    unit_section("the callback can stop");
    collect cc = {.stop_after = 3};
    kiln_llm_generate_options oc = {.struct_size = sizeof oc, .max_tokens = 40};
    s = generate(llm, "The", &oc, &cc);
    EXPECT(s.stop == KILN_LLM_STOP_CALLBACK && cc.n == 3);

    unit_section("a full context stops, or shifts and goes on");
    collect cf = {0};
    kiln_llm_generate_options of = {.struct_size = sizeof of};
    s = generate(llm, "The", &of, &cf);
    /* 2 prompt tokens, then each sampled token is evaluated until the cache holds C: the 63rd
       sampled token finds no room. */
    EXPECT(s.stop == KILN_LLM_STOP_CONTEXT_FULL && s.generated_tokens == CTX - 1 && kiln_llm_n_past(llm) == CTX);
    EXPECT(memcmp(cf.tokens, c.tokens, 20 * sizeof(int32_t)) == 0);
    collect csh = {0};
    kiln_llm_generate_options osh = {.struct_size = sizeof osh, .max_tokens = 100, .context_shift = 1, .n_keep = 1};
    s = generate(llm, "The", &osh, &csh);
    EXPECT(s.stop == KILN_LLM_STOP_MAX_TOKENS && s.generated_tokens == 100 && s.context_shifts >= 1);
    EXPECT(memcmp(csh.tokens, cf.tokens, (CTX - 1) * sizeof(int32_t)) == 0); /* the same until the shift */
    EXPECT(kiln_llm_cache_tokens(llm)[0] == kiln_llm_bos(llm));                /* the kept BOS */
    EXPECT(kiln_llm_n_past(llm) < CTX);

    unit_section("generate: bad options and a prompt that does not fit");
    kiln_llm_generate_options bad = {.struct_size = 3};
    int32_t t = 300;
    EXPECT_STATUS(kiln_llm_generate(llm, &t, 1, &bad), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_llm_generate(llm, &t, 1, NULL), KILN_ERROR_INVALID_ARGUMENT);
    const char *empty[] = {""};
    kiln_llm_generate_options bs = {.struct_size = sizeof bs, .stop_strings = empty, .n_stop_strings = 1};
    EXPECT_STATUS(kiln_llm_generate(llm, &t, 1, &bs), KILN_ERROR_INVALID_ARGUMENT);
    int32_t long_prompt[CTX + 1];
    for (int i = 0; i <= CTX; i++) long_prompt[i] = 300;
    kiln_llm_generate_options ok = {.struct_size = sizeof ok, .max_tokens = 1};
    kiln_llm_reset(llm);
    EXPECT_STATUS(kiln_llm_generate(llm, long_prompt, CTX + 1, &ok), KILN_ERROR_LIMIT);
    EXPECT(strstr(kiln_llm_last_error(llm), "does not fit") != NULL);
    EXPECT_STATUS(kiln_llm_generate(llm, NULL, 0, &ok), KILN_ERROR_INVALID_ARGUMENT); /* nothing to go on from */
}

static void test_allocation_failures(void)
{
    unit_section("every allocation failure of kiln_llm_create is reported and leaks nothing");
    kiln_program *p = open_program();
    size_t failures = 0;
    for (size_t fail_at = 1;; fail_at++) {
        unit_alloc u;
        kiln_allocator a = unit_alloc_make(&u);
        u.fail_at = fail_at;
        kiln_llm_options o = {.struct_size = sizeof o, .allocator = &a, .num_threads = 1};
        kiln_llm *llm = NULL;
        char message[512];
        kiln_status st = kiln_llm_create(p, &o, &llm, message, sizeof message);
        if (st == KILN_OK) {
            kiln_llm_destroy(llm);
            EXPECT(u.live_blocks == 0);
            break;
        }
        failures++;
        if (st != KILN_ERROR_OUT_OF_MEMORY) fprintf(stderr, "  fail_at %zu: %s\n", fail_at, message);
        EXPECT_STATUS(st, KILN_ERROR_OUT_OF_MEMORY);
        EXPECT(llm == NULL && u.live_blocks == 0 && message[0]);
        if (fail_at > 100000) break;
    }
    printf("  %zu failing allocations each refused cleanly\n", failures);
    EXPECT(failures > 5);
    kiln_program_close(p);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_llm_runner MODEL.gguf\n");
        return 2;
    }
    kiln_compile_options opt = {.struct_size = sizeof opt, .llm_context = CTX, .llm_prefill = PREFILL};
    model_path = argv[1];
    kiln_compile_method m = {.name = "forward", .model_path = model_path};
    char message[1024];
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &program_bytes, &program_size, message, sizeof message);
    if (st != KILN_OK) fprintf(stderr, "compile %s: %s\n", argv[1], message);
    REQUIRE(st == KILN_OK);
    test_not_llm();
    kiln_program *p = open_program();
    kiln_llm *llm = create(p);
    kiln_program_close(p); /* the runner's module keeps what it needs */
    test_eval(llm);
    test_generate(llm);
    kiln_llm_destroy(llm);
    test_allocation_failures();
    free(program_bytes);
    return unit_finish("test_llm_runner");
}
