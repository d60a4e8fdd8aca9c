/* cmd_perplexity.c — `kiln perplexity MODEL --file TEXT [--logits OUT.npy] [--json]`: the
 * teacher-forced perplexity of a text, defined exactly as tests/llm/oracle.mjs `perplexity`
 * (llama.cpp's through node-llama-cpp): the text tokenized with BOS first (when the model adds
 * it), cut into consecutive chunks of the context length C, each evaluated from an empty cache;
 * token j > 0 of a chunk is scored with the logits after tokens 0..j-1 of that chunk (a last
 * chunk of one token is not evaluated). perplexity = exp(total negative log-likelihood /
 * scored tokens). Layer: tools. Public API (kiln/llm.h) and tools/io's npy writer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/alloc.h"
#include "core/file_write.h"
#include "io/npy.h"
#include "llm_model.h"
#include "read_file.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln perplexity MODEL(.gguf|.kiln) --file TEXT [--logits OUT.npy] [--json]\n"
            "\n"
            "Prints the perplexity of the text, teacher-forced: the text is tokenized (BOS first when\n"
            "the model adds it) and cut into chunks of the context length, each evaluated from an\n"
            "empty cache; token j > 0 of a chunk is scored by the logits after tokens 0..j-1.\n"
            "\n"
            "options:\n"
            "  --file TEXT        the text\n"
            "  --logits OUT.npy   also write the logits, f32 [positions, vocab]: row i the logits after\n"
            "                     tokens 0..i of its chunk (every evaluated position, in text order)\n"
            "  --threads N        worker threads (0 = one per core)\n"
            "  --target T         force a context-binary record (as kiln run)\n"
            "  --json             print one JSON object: tokens, chunks, scored, nll, perplexity,\n"
            "                     load_ms, tok_s, peak_rss_bytes\n"
            "  -h, --help         show this help\n");
}

/* -log softmax(row)[index], in double as the oracle computes it. */
static double nll_at(const float *row, size_t n, int32_t index)
{
    double max = -INFINITY, sum = 0;
    for (size_t i = 0; i < n; i++) max = row[i] > max ? row[i] : max;
    for (size_t i = 0; i < n; i++) sum += exp((double)row[i] - max);
    return -((double)row[index] - max - log(sum));
}

typedef struct ppl_result {
    size_t chunks, scored, positions;
    double nll, seconds;
} ppl_result;

/* Evaluates every chunk; rows (positions x V, or NULL) receives every evaluated position's
   logits, chunk (C x V) is the buffer of one chunk otherwise. */
static kiln_status evaluate(kiln_llm *llm, const int32_t *ids, size_t n, float *rows, float *chunk, ppl_result *r)
{
    size_t C = kiln_llm_context_length(llm), V = kiln_llm_n_vocab(llm);
    double t0 = cli_now();
    for (size_t start = 0; start + 1 < n; start += C) {
        size_t len = n - start < C ? n - start : C;
        if (len < 2) break;
        float *out = rows ? rows + r->positions * V : chunk;
        kiln_llm_reset(llm);
        kiln_status st = kiln_llm_eval(llm, ids + start, len, out);
        if (st != KILN_OK) return st;
        for (size_t j = 1; j < len; j++) r->nll += nll_at(out + (j - 1) * V, V, ids[start + j]);
        r->scored += len - 1;
        r->positions += len;
        r->chunks++;
    }
    r->seconds = cli_now() - t0;
    return KILN_OK;
}

static int write_logits(const char *path, float *rows, size_t positions, size_t V)
{
    kiln_tensor t = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {(int64_t)positions, (int64_t)V}, .data = rows};
    char why[1024] = "";
    kiln_status st = kiln_npy_write_io(NULL, path, &t, why, sizeof why);
    if (st == KILN_OK) return 0;
    char shown[KILN_ESCAPED_NAME_SIZE];
    if (why[0]) cli_error("perplexity: %s", why);
    else cli_error("perplexity: cannot write '%s': %s", cli_esc(shown, path), kiln_status_str(st));
    return cli_exit_status(st);
}

int cmd_perplexity(int argc, char **argv)
{
    const char *model = NULL, *file = NULL, *logits = NULL, *target = NULL;
    long threads = 0;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return KILN_EXIT_OK;
        } else if (strcmp(a, "--file") == 0 && v) file = argv[++i];
        else if (strcmp(a, "--logits") == 0 && v) logits = argv[++i];
        else if (strcmp(a, "--target") == 0 && v) target = argv[++i];
        else if (strcmp(a, "--threads") == 0 && v) {
            if (!cli_parse_threads(argv[++i], &threads)) return KILN_EXIT_USAGE;
        } else if (strcmp(a, "--json") == 0) json = true;
        else if (!cli_take_program("perplexity", a, &model)) return KILN_EXIT_USAGE;
    }
    if (!cli_require_program("perplexity", model)) return KILN_EXIT_USAGE;
    if (!file) {
        cli_error("perplexity: no text (--file TEXT)");
        return KILN_EXIT_USAGE;
    }
    if (logits && (kiln_file_same(logits, model) || kiln_file_same(logits, file))) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        cli_error("perplexity: '%s' is one of the input files; --logits would replace it", cli_esc(shown, logits));
        return KILN_EXIT_USAGE;
    }
    const kiln_allocator *a = kiln_allocator_default();
    uint8_t *text = NULL;
    size_t size = 0;
    char why[256], shown[KILN_ESCAPED_NAME_SIZE];
    kiln_status st = cli_read_file(file, a, SIZE_MAX, &text, &size, why, sizeof why);
    if (st != KILN_OK) {
        cli_error("perplexity: cannot read '%s': %s", cli_esc(shown, file), why[0] ? why : kiln_status_str(st));
        return st == KILN_ERROR_OUT_OF_MEMORY ? KILN_EXIT_FAILURE : KILN_EXIT_INVALID;
    }
    cli_llm m;
    int rc = cli_llm_open("perplexity", model, (int)threads, target, &m);
    if (rc) {
        kiln_free(a, text);
        return rc;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    float *rows = NULL;
    ppl_result r = {0};
    size_t C = kiln_llm_context_length(m.llm), V = kiln_llm_n_vocab(m.llm);
    st = kiln_llm_tokenize(m.llm, (const char *)text, size, 1, &ids, &n);
    if (st == KILN_OK && n < 2) {
        cli_error("perplexity: the text gives %zu token%s; at least 2 are needed to score one", n, n == 1 ? "" : "s");
        rc = KILN_EXIT_USAGE;
        goto done;
    }
    if (st == KILN_OK) {
        size_t count = logits ? n : C; /* rows for every position only when they are written */
        rows = count <= SIZE_MAX / sizeof(float) / V ? malloc(count * V * sizeof(float)) : NULL;
        st = rows ? evaluate(m.llm, ids, n, logits ? rows : NULL, rows, &r) : KILN_ERROR_OUT_OF_MEMORY;
    }
    if (st != KILN_OK) {
        cli_error("perplexity: %s", st == KILN_ERROR_OUT_OF_MEMORY && !rows ? "out of memory for the logits"
                                                                          : kiln_llm_last_error(m.llm));
        rc = cli_exit_status(st);
        goto done;
    }
    if (logits && (rc = write_logits(logits, rows, r.positions, V)) != 0) goto done;
    double ppl = exp(r.nll / (double)r.scored), tok_s = r.seconds > 0 ? (double)r.positions / r.seconds : 0;
    if (json) {
        printf("{\"tokens\": %zu, \"chunks\": %zu, \"scored\": %zu, \"nll\": %.17g, \"perplexity\": %.17g, "
               "\"load_ms\": %.3f, \"tok_s\": %.3f, \"peak_rss_bytes\": %llu}\n",
               n, r.chunks, r.scored, r.nll, ppl, m.load_ms, tok_s, cli_peak_rss_bytes());
    } else {
        printf("perplexity %.4f over %zu scored tokens (%zu tokens, %zu chunks of at most %zu)\n", ppl, r.scored, n,
               r.chunks, C);
        fprintf(stderr, "load %.1f ms, %zu positions at %.1f tok/s, peak RSS %.1f MB\n", m.load_ms, r.positions, tok_s,
                (double)cli_peak_rss_bytes() / 1e6);
    }
done:
    free(rows);
    kiln_llm_free(m.llm, ids);
    cli_llm_close(&m);
    kiln_free(a, text);
    return rc;
}
