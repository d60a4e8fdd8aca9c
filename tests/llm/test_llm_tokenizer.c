/* test_llm_tokenizer.c — the tokenizers (src/llm) on the shared test data and on small
 * vocabularies built here.
 *
 * With a directory argument: every case of DIR/ggml-vocab-llama-spm.gguf and
 * DIR/ggml-vocab-gpt-2.gguf (the .inp texts, separated by "\n__ggml_vocab_test__\n", and the .out
 * ids, one line per case; DIR/README.md) must give exactly the expected ids, and
 * detokenize(tokenize(text)) must give the text back. Exit 77 (skipped) when DIR is missing.
 * Without arguments: the vocabulary builder, byte fallback, control tokens and allocation
 * failures on small vocabularies.
 */
#include <errno.h>
#include <sys/stat.h>

#include "format/gguf/gguf_reader.h"
#include "core/alloc.h"
#include "gguf_builder.h"
#include "llm/gguf/vocab_gguf.h"
#include "llm/tokenizer.h"
#include "unit_expect.h"

#define SEPARATOR "\n__ggml_vocab_test__\n"

static void print_ids(const char *what, const int32_t *ids, size_t n)
{
    fprintf(stderr, "    %s:", what);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", (int)ids[i]);
    fprintf(stderr, "\n");
}

/* Parses one .out line (" 1 2 3") into ids; returns the count. */
static size_t parse_ids(const char *line, size_t len, int32_t *ids, size_t cap)
{
    size_t n = 0;
    char buf[32];
    for (size_t i = 0; i < len;) {
        while (i < len && line[i] == ' ') i++;
        size_t k = 0;
        while (i < len && line[i] != ' ' && k < sizeof buf - 1) buf[k++] = line[i++];
        if (!k) break;
        buf[k] = '\0';
        REQUIRE(n < cap);
        ids[n++] = (int32_t)strtol(buf, NULL, 10);
    }
    return n;
}

/* Runs every case of one vocabulary; returns the number of failures. */
static int run_cases(const char *dir, const char *name, bool *missing)
{
    char path[1024];
    size_t gguf_size, inp_size, out_size;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uint8_t *gguf_bytes = unit_read_file(path, &gguf_size);
    snprintf(path, sizeof path, "%s/%s.inp", dir, name);
    uint8_t *inp = unit_read_file(path, &inp_size);
    snprintf(path, sizeof path, "%s/%s.out", dir, name);
    uint8_t *out = unit_read_file(path, &out_size);
    if (!gguf_bytes || !inp || !out) {
        fprintf(stderr, "%s: cannot read %s (or its .inp/.out)\n", name, dir);
        *missing = true;
        free(gguf_bytes), free(inp), free(out);
        return 1;
    }
    kiln_gguf *g = NULL;
    kiln_vocab *v = NULL;
    char msg[KILN_GGUF_MESSAGE_SIZE];
    EXPECT_STATUS(kiln_gguf_open(gguf_bytes, gguf_size, NULL, &g, msg, sizeof msg), KILN_OK);
    REQUIRE(g);
    EXPECT_STATUS(kiln_vocab_from_gguf(g, NULL, &v, msg, sizeof msg), KILN_OK);
    if (!v) fprintf(stderr, "%s: %s\n", name, msg);
    REQUIRE(v);
    kiln_gguf_destroy(g);   /* the vocabulary keeps its own copy */

    int failures = 0, n_cases = 0, round_trip_failures = 0;
    const char *text = (const char *)inp, *inp_end = text + inp_size;
    const char *line = (const char *)out, *out_end = line + out_size;
    int32_t *want = malloc(sizeof(int32_t) * 8192);
    REQUIRE(want);
    for (;;) {
        const char *sep = NULL;
        for (const char *p = text; p + strlen(SEPARATOR) <= inp_end; p++)
            if (memcmp(p, SEPARATOR, strlen(SEPARATOR)) == 0) {
                sep = p;
                break;
            }
        if (!sep) break;   /* the piece after the last separator is not a case */
        size_t text_size = (size_t)(sep - text);
        const char *eol = memchr(line, '\n', (size_t)(out_end - line));
        REQUIRE(line < out_end);
        size_t line_size = eol ? (size_t)(eol - line) : (size_t)(out_end - line);
        size_t n_want = parse_ids(line, line_size, want, 8192);
        int32_t *ids = NULL;
        size_t n_ids = 0;
        n_cases++;
        EXPECT_STATUS(kiln_vocab_tokenize(v, text, text_size, false, NULL, &ids, &n_ids), KILN_OK);
        if (n_ids != n_want || memcmp(ids, want, n_ids * sizeof(int32_t)) != 0) {
            failures++;
            fprintf(stderr, "  %s case %d (\"%.*s\") differs\n", name, n_cases, (int)(text_size > 60 ? 60 : text_size),
                    text);
            print_ids("want", want, n_want);
            print_ids("got ", ids, n_ids);
        }
        char *back = NULL;
        size_t back_size = 0;
        EXPECT_STATUS(kiln_vocab_detokenize(v, ids, n_ids, NULL, &back, &back_size), KILN_OK);
        if (!back || back_size != text_size || memcmp(back, text, text_size) != 0) {
            round_trip_failures++;
            fprintf(stderr, "  %s case %d: detokenize(tokenize(text)) is \"%s\"\n", name, n_cases, back ? back : "");
        }
        free(back);
        free(ids);
        text = sep + strlen(SEPARATOR);
        line = eol ? eol + 1 : out_end;
    }
    printf("  %s: %d of %d cases give llama.cpp's ids, %d of %d round-trip\n", name, n_cases - failures, n_cases,
           n_cases - round_trip_failures, n_cases);
    unit_checks += 2 * n_cases;
    unit_failures += failures + round_trip_failures;
    EXPECT(n_cases == 46);
    free(want);
    kiln_vocab_destroy(v);
    free(gguf_bytes), free(inp), free(out);
    return failures;
}

static int run_shared(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        printf("test_llm_tokenizer: SKIPPED: the tokenizer test data folder %s is missing (%s)\n", dir,
               strerror(errno));
        return 77;
    }
    bool missing = false;
    unit_section("llama (SentencePiece BPE) cases");
    run_cases(dir, "ggml-vocab-llama-spm.gguf", &missing);
    unit_section("gpt2 (byte-level BPE) cases");
    run_cases(dir, "ggml-vocab-gpt-2.gguf", &missing);
    if (missing) unit_failures++;
    return unit_finish("test_llm_tokenizer (shared cases)");
}

/* ---- small vocabularies --------------------------------------------------------------------- */

#define T(s) {s, sizeof(s) - 1}

static kiln_vocab *small_llama(const kiln_allocator *a, kiln_status *st)
{
    /* "▁ab" is reachable only through "▁a" + "b": scores decide the order. No <0x63> for 'c'. */
    static const kiln_vocab_text tokens[] = {
        T("<unk>"), T("<s>"), T("</s>"), T("<0x41>"), T("<0x0A>"), T("\xe2\x96\x81"), T("a"), T("b"),
        T("\xe2\x96\x81" "a"), T("ab"), T("\xe2\x96\x81" "ab"),
    };
    static const float scores[] = {0, 0, 0, 0, 0, -1, -2, -3, -0.5f, -0.25f, -0.1f};
    static const int32_t types[] = {2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1};
    kiln_vocab_spec spec = {KILN_VOCAB_LLAMA, 11, tokens, scores, types, 0, NULL, 1, 2, 0, true, true};
    kiln_vocab *v = NULL;
    *st = kiln_vocab_create(&spec, a, &v, NULL, 0);
    return v;
}

static bool same(const int32_t *ids, size_t n, const int32_t *want, size_t n_want)
{
    return n == n_want && memcmp(ids, want, n * sizeof *ids) == 0;
}

static void check_small_llama(void)
{
    kiln_status st;
    kiln_vocab *v = small_llama(NULL, &st);
    EXPECT_STATUS(st, KILN_OK);
    REQUIRE(v);
    int32_t *ids;
    size_t n;
    /* "ab" -> "▁ab": pairs "▁a" (-0.5) and "ab" (-0.25): "ab" first, then "▁" + "ab" = "▁ab". */
    EXPECT_STATUS(kiln_vocab_tokenize(v, "ab", 2, true, NULL, &ids, &n), KILN_OK);
    EXPECT(same(ids, n, (const int32_t[]){1, 10}, 2));
    free(ids);
    /* 'A' has a byte token, 'c' has none (UNK), '\n' is <0x0A>. */
    EXPECT_STATUS(kiln_vocab_tokenize(v, "Ac\n", 3, false, NULL, &ids, &n), KILN_OK);
    EXPECT(same(ids, n, (const int32_t[]){5, 3, 0, 4}, 4));
    free(ids);
    char *text;
    size_t size;
    EXPECT_STATUS(kiln_vocab_detokenize(v, (const int32_t[]){1, 8, 3, 4, 2}, 5, NULL, &text, &size), KILN_OK);
    EXPECT(size == 3 && strcmp(text, "aA\n") == 0);   /* leading space dropped, controls empty */
    free(text);
    char piece[8];
    EXPECT_STATUS(kiln_vocab_token_piece(v, 10, piece, sizeof piece, &size), KILN_OK);
    EXPECT(size == 3 && memcmp(piece, " ab", 3) == 0);
    EXPECT_STATUS(kiln_vocab_token_piece(v, 10, piece, 2, &size), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(size == 3);
    EXPECT_STATUS(kiln_vocab_token_piece(v, 11, piece, sizeof piece, &size), KILN_ERROR_INDEX_OUT_OF_RANGE);
    EXPECT_STATUS(kiln_vocab_detokenize(v, (const int32_t[]){-1}, 1, NULL, &text, &size), KILN_ERROR_INDEX_OUT_OF_RANGE);
    EXPECT_STATUS(kiln_vocab_tokenize(v, "", 0, false, NULL, &ids, &n), KILN_OK);
    EXPECT(n == 0 && ids != NULL);
    free(ids);
    EXPECT(kiln_vocab_find(v, "ab", 2) == 9 && kiln_vocab_find(v, "ba", 2) == -1);
    EXPECT(kiln_vocab_bos(v) == 1 && kiln_vocab_eos(v) == 2 && kiln_vocab_adds_bos(v));
    kiln_vocab_destroy(v);

    /* Every allocation failure, in create and in tokenize, is reported and leaks nothing. */
    for (size_t fail_at = 1;; fail_at++) {
        unit_alloc ua;
        kiln_allocator a = unit_alloc_make(&ua);
        ua.fail_at = fail_at;
        v = small_llama(&a, &st);
        if (st == KILN_OK) {
            st = kiln_vocab_tokenize(v, "ab ab\n", 6, true, &a, &ids, &n);
            if (st == KILN_OK) kiln_free(&a, ids);
            kiln_vocab_destroy(v);
        }
        EXPECT(st == KILN_OK || st == KILN_ERROR_OUT_OF_MEMORY);
        EXPECT(ua.live_blocks == 0);
        if (st == KILN_OK && ua.n_failed == 0) break;
        REQUIRE(fail_at < 200);
    }
}

static void check_small_gpt2(void)
{
    /* "Ġ" (U+0120) is GPT-2's character for the space byte. */
    static const kiln_vocab_text tokens[] = {T("a"), T("b"), T("\xc4\xa0"), T("ab"), T("\xc4\xa0" "ab"), T("!")};
    static const kiln_vocab_text merges[] = {T("a b"), T("\xc4\xa0 ab"), T("nospace")};
    kiln_vocab_spec spec = {KILN_VOCAB_GPT2, 6, tokens, NULL, NULL, 2, merges, -1, -1, -1, false, false};
    kiln_vocab *v = NULL;
    EXPECT_STATUS(kiln_vocab_create(&spec, NULL, &v, NULL, 0), KILN_OK);
    REQUIRE(v);
    int32_t *ids;
    size_t n;
    EXPECT_STATUS(kiln_vocab_tokenize(v, "ab ab!", 6, true, NULL, &ids, &n), KILN_OK);
    EXPECT(same(ids, n, (const int32_t[]){3, 4, 5}, 3));   /* no BOS id: add_bos adds nothing */
    free(ids);
    char *text;
    size_t size;
    EXPECT_STATUS(kiln_vocab_detokenize(v, (const int32_t[]){3, 4, 5}, 3, NULL, &text, &size), KILN_OK);
    EXPECT(size == 6 && strcmp(text, "ab ab!") == 0);
    free(text);
    kiln_vocab_destroy(v);

    char msg[128] = "";
    spec.n_merges = 3;
    EXPECT_STATUS(kiln_vocab_create(&spec, NULL, &v, msg, sizeof msg), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(v == NULL && strstr(msg, "merge 2") != NULL);
    spec.n_merges = 2;
    spec.bos_id = 6;
    EXPECT_STATUS(kiln_vocab_create(&spec, NULL, &v, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
}

/* The GGUF loader: a working file, then one refusal per key rule. */
static kiln_status load(gguf_builder *b, char *msg, size_t msg_size, kiln_vocab **v)
{
    kiln_gguf *g = NULL;
    kiln_status st = kiln_gguf_open(b->data, b->size, NULL, &g, msg, msg_size);
    REQUIRE(st == KILN_OK);
    st = kiln_vocab_from_gguf(g, NULL, v, msg, msg_size);
    kiln_gguf_destroy(g);
    gb_free(b);
    return st;
}

static void vocab_file_pre(gguf_builder *b, const char *model, uint64_t n_scores, bool with_merges, uint32_t bos,
                           const char *pre)
{
    gb_header(b, 3, 0, 4 + (n_scores ? 1 : 0) + (with_merges ? 1 : 0) + (pre ? 1 : 0));
    if (pre) gb_key(b, "tokenizer.ggml.pre", 8), gb_str(b, pre);
    if (model) gb_key(b, "tokenizer.ggml.model", 8), gb_str(b, model);
    else gb_key(b, "general.name", 8), gb_str(b, "no model");
    gb_key(b, "tokenizer.ggml.tokens", 9), gb_u32(b, 8), gb_u64(b, 3);
    gb_str(b, "<s>"), gb_str(b, "a"), gb_str(b, "b");
    if (n_scores) {
        gb_key(b, "tokenizer.ggml.scores", 9), gb_u32(b, 6), gb_u64(b, n_scores);
        for (uint64_t i = 0; i < n_scores; i++) gb_f32(b, -(float)i);
    }
    if (with_merges) gb_key(b, "tokenizer.ggml.merges", 9), gb_u32(b, 8), gb_u64(b, 1), gb_str(b, "a b");
    gb_key(b, "tokenizer.ggml.bos_token_id", 4), gb_u32(b, bos);
    gb_key(b, "tokenizer.ggml.add_bos_token", 7), gb_u8(b, 0);
}

static void vocab_file(gguf_builder *b, const char *model, uint64_t n_scores, bool with_merges, uint32_t bos)
{
    vocab_file_pre(b, model, n_scores, with_merges, bos, NULL);
}

static void check_gguf_loader(void)
{
    gguf_builder b = {0};
    char msg[KILN_GGUF_MESSAGE_SIZE] = "";
    kiln_vocab *v = NULL;
    vocab_file(&b, "llama", 3, false, 0);
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_OK);
    REQUIRE(v);
    EXPECT(kiln_vocab_get_kind(v) == KILN_VOCAB_LLAMA && kiln_vocab_n_tokens(v) == 3);
    EXPECT(kiln_vocab_bos(v) == 0 && !kiln_vocab_adds_bos(v) && kiln_vocab_eos(v) == -1);
    kiln_vocab_destroy(v);
    vocab_file(&b, "gpt2", 0, true, 0);
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_OK);
    EXPECT(v && kiln_vocab_get_kind(v) == KILN_VOCAB_GPT2);
    kiln_vocab_destroy(v);

    msg[0] = '\0';
    vocab_file(&b, "bert", 3, false, 0);
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_ERROR_NOT_SUPPORTED);
    EXPECT(v == NULL && strstr(msg, "'bert'"));
    vocab_file_pre(&b, "gpt2", 0, true, 0, "gpt-2");
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_OK);
    kiln_vocab_destroy(v);
    msg[0] = '\0';
    vocab_file_pre(&b, "gpt2", 0, true, 0, "qwen2");
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_ERROR_NOT_SUPPORTED);
    EXPECT(v == NULL && strstr(msg, "pre-tokenizer 'qwen2'"));
    vocab_file_pre(&b, "llama", 3, false, 0, "whatever");   /* SentencePiece ignores it */
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_OK);
    kiln_vocab_destroy(v);
    msg[0] = '\0';
    vocab_file(&b, NULL, 3, false, 0);
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_ERROR_MODEL);
    EXPECT(strstr(msg, "tokenizer.ggml.model") != NULL);
    msg[0] = '\0';
    vocab_file(&b, "llama", 2, false, 0);
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_ERROR_MODEL);
    EXPECT(strstr(msg, "tokenizer.ggml.scores has 2 entries for 3 tokens") != NULL);
    msg[0] = '\0';
    vocab_file(&b, "gpt2", 0, false, 0);
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_ERROR_MODEL);
    EXPECT(strstr(msg, "tokenizer.ggml.merges") != NULL);
    msg[0] = '\0';
    vocab_file(&b, "llama", 3, false, 3);
    EXPECT_STATUS(load(&b, msg, sizeof msg, &v), KILN_ERROR_MODEL);
    EXPECT(strstr(msg, "bos_token_id is 3, not a token id") != NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1) return run_shared(argv[1]);
    unit_section("a small llama vocabulary");
    check_small_llama();
    unit_section("a small gpt2 vocabulary");
    check_small_gpt2();
    unit_section("the GGUF loader");
    check_gguf_loader();
    return unit_finish("test_llm_tokenizer");
}
