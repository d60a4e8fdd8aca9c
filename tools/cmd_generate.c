/* cmd_generate.c — `kiln generate MODEL -p TEXT [...]`: streams the generated text to stdout,
 * then one summary line to stderr (or, with --json, one JSON object on stdout instead of both).
 * The prompt is printed first. Layer: tools. Public API: kiln/llm.h over the model llm_model.h
 * opens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "llm_model.h"

#define MAX_STOPS 16

typedef struct gen_args {
    const char *model, *prompt, *target;
    const char *stops[MAX_STOPS];
    size_t n_stops;
    long n, threads;
    kiln_llm_sampling sampling;
    bool context_shift, json;
} gen_args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln generate MODEL(.gguf|.kiln) -p TEXT [options]\n"
            "\n"
            "Prints the prompt and streams the text generated after it to stdout, then one line to\n"
            "stderr: load time, prompt tokens and their speed, generated tokens and theirs, peak RSS\n"
            "and why generation stopped. A GGUF model is compiled in memory first.\n"
            "\n"
            "options:\n"
            "  -p, --prompt TEXT        the prompt (BOS first when the model adds it)\n"
            "  -n N                     generate at most N tokens (default 128; 0: until a stop)\n"
            "  --temp T                 temperature (default 0.8; 0: greedy, the most likely token)\n"
            "  --top-k K                keep the K most likely tokens (default 40; 0: off)\n"
            "  --top-p P                keep the most likely tokens summing to P (default 0.95; 1: off)\n"
            "  --min-p P                drop tokens below P times the most likely (default 0.05; 0: off)\n"
            "  --repeat-penalty R       penalise the last 64 tokens' logits by R (default 1: off)\n"
            "  --seed S                 the sampler's seed (default 0; same seed, same text)\n"
            "  --threads N              worker threads (0 = one per core)\n"
            "  --target T               force a context-binary record (as kiln run)\n"
            "  --context-shift          when the context is full, keep the BOS, drop the older half of\n"
            "                           the rest and go on (instead of stopping)\n"
            "  --stop STR               stop when the text reaches STR (repeatable, up to 16)\n"
            "  --json                   print one JSON object: tokens, text, load_ms, prompt_tokens,\n"
            "                           prompt_tok_s, generated_tokens, gen_tok_s, peak_rss_bytes, stop\n"
            "  -h, --help               show this help\n");
}

static bool bad_value(const char *opt, const char *want, const char *got)
{
    char shown[KILN_ESCAPED_NAME_SIZE];
    cli_error("generate: %s wants %s, got '%s'", opt, want, cli_esc(shown, got));
    return false;
}

/* One option with a value at argv[i + 1]; false after reporting a bad value. */
static bool parse_value(gen_args *g, const char *a, const char *v)
{
    kiln_llm_sampling *s = &g->sampling;
    double d;
    long l;
    if (strcmp(a, "-p") == 0 || strcmp(a, "--prompt") == 0) g->prompt = v;
    else if (strcmp(a, "-n") == 0) {
        if (!cli_parse_int(v, 0, 1L << 30, &g->n)) return bad_value(a, "a token count 0..2^30", v);
    } else if (strcmp(a, "--temp") == 0) {
        if (!cli_parse_double(v, 0, 100, &d)) return bad_value(a, "a temperature 0..100", v);
        s->temperature = (float)d;
    } else if (strcmp(a, "--top-k") == 0) {
        if (!cli_parse_int(v, 0, INT32_MAX, &l)) return bad_value(a, "a count 0..2^31-1", v);
        s->top_k = (int32_t)l;
    } else if (strcmp(a, "--top-p") == 0) {
        if (!cli_parse_double(v, 0, 1, &d)) return bad_value(a, "a probability 0..1", v);
        s->top_p = (float)d;
    } else if (strcmp(a, "--min-p") == 0) {
        if (!cli_parse_double(v, 0, 1, &d)) return bad_value(a, "a probability 0..1", v);
        s->min_p = (float)d;
    } else if (strcmp(a, "--repeat-penalty") == 0) {
        if (!cli_parse_double(v, 1e-3, 1e3, &d)) return bad_value(a, "a factor 0.001..1000", v);
        s->repeat_penalty = (float)d;
    } else if (strcmp(a, "--seed") == 0) {
        char *end;
        unsigned long long seed = strtoull(v, &end, 10);
        if (end == v || *end || v[0] == '-') return bad_value(a, "an unsigned integer", v);
        s->seed = seed;
    } else if (strcmp(a, "--threads") == 0) {
        return cli_parse_threads(v, &g->threads);
    } else if (strcmp(a, "--target") == 0) g->target = v;
    else if (strcmp(a, "--stop") == 0) {
        if (g->n_stops == MAX_STOPS) return bad_value(a, "at most 16 stop strings", v);
        if (!v[0]) return bad_value(a, "a non-empty string", v);
        g->stops[g->n_stops++] = v;
    } else return false;
    return true;
}

static bool takes_value(const char *a)
{
    static const char *const with_value[] = {"-p", "--prompt", "-n", "--temp", "--top-k", "--top-p", "--min-p",
                                             "--repeat-penalty", "--seed", "--threads", "--target", "--stop"};
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
        if (strcmp(a, with_value[i]) == 0) return true;
    return false;
}

/* -1 after --help, 0 or an exit status. */
static int parse(int argc, char **argv, gen_args *g)
{
    memset(g, 0, sizeof *g);
    g->n = 128;
    kiln_llm_sampling_default(&g->sampling);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (takes_value(a) && i + 1 < argc) {
            if (!parse_value(g, a, argv[++i])) return KILN_EXIT_USAGE;
        } else if (strcmp(a, "--context-shift") == 0) g->context_shift = true;
        else if (strcmp(a, "--json") == 0) g->json = true;
        else if (!cli_take_program("generate", a, &g->model)) return KILN_EXIT_USAGE;
    }
    if (!cli_require_program("generate", g->model)) return KILN_EXIT_USAGE;
    if (!g->prompt) {
        cli_error("generate: no prompt (-p TEXT)");
        return KILN_EXIT_USAGE;
    }
    return 0;
}

/* What the callback collects: the ids, and the text for --json. */
typedef struct gen_out {
    bool json;
    int32_t *ids;
    size_t n_ids, cap_ids;
    char *text;
    size_t n_text, cap_text;
    bool oom;
} gen_out;

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t cap2 = need * 2 + 16;
    void *q = realloc(*p, cap2 * elem);
    if (!q) return false;
    *p = q, *cap = cap2;
    return true;
}

static int on_token(void *user, int32_t token, const char *text, size_t size)
{
    gen_out *o = user;
    if (token >= 0) {
        if (!grow((void **)&o->ids, &o->cap_ids, o->n_ids + 1, sizeof *o->ids)) return o->oom = true;
        o->ids[o->n_ids++] = token;
    }
    if (!o->json) {
        fwrite(text, 1, size, stdout);
        fflush(stdout);
        return 0;
    }
    if (!grow((void **)&o->text, &o->cap_text, o->n_text + size + 1, 1)) return o->oom = true;
    memcpy(o->text + o->n_text, text, size);
    o->n_text += size;
    o->text[o->n_text] = '\0';
    return 0;
}

static void print_json(const gen_out *o, const kiln_llm_stats *s, double load_ms)
{
    printf("{\"tokens\": [");
    for (size_t i = 0; i < o->n_ids; i++) printf(i ? ", %d" : "%d", (int)o->ids[i]);
    printf("], \"text\": ");
    cli_json_string(o->text ? o->text : "");
    printf(", \"load_ms\": %.3f, \"prompt_tokens\": %zu, \"prompt_tok_s\": %.3f, \"generated_tokens\": %zu, "
           "\"gen_tok_s\": %.3f, \"peak_rss_bytes\": %llu, \"stop\": ",
           load_ms, s->prompt_tokens, s->prompt_tokens_per_second, s->generated_tokens, s->generated_tokens_per_second,
           cli_peak_rss_bytes());
    cli_json_string(kiln_llm_stop_name(s->stop));
    printf("}\n");
}

int cmd_generate(int argc, char **argv)
{
    gen_args g;
    int rc = parse(argc, argv, &g);
    if (rc) return rc < 0 ? KILN_EXIT_OK : rc;
    cli_llm m;
    if ((rc = cli_llm_open("generate", g.model, (int)g.threads, g.target, &m)) != 0) return rc;
    int32_t *prompt = NULL;
    size_t n_prompt = 0;
    gen_out out = {.json = g.json};
    kiln_status st = kiln_llm_tokenize(m.llm, g.prompt, strlen(g.prompt), 1, &prompt, &n_prompt);
    if (st == KILN_OK && n_prompt == 0) {
        cli_error("generate: the prompt is empty and the model adds no BOS: nothing to start from");
        rc = KILN_EXIT_USAGE;
        goto done;
    }
    if (st == KILN_OK) {
        kiln_llm_generate_options o = {.struct_size = sizeof o, .max_tokens = (size_t)g.n, .sampling = &g.sampling,
                                       .stop_strings = g.stops, .n_stop_strings = g.n_stops,
                                       .context_shift = g.context_shift,
                                       .n_keep = prompt[0] == kiln_llm_bos(m.llm) ? 1 : 0,
                                       .on_token = on_token, .user = &out};
        if (!g.json) { /* the prompt first, so the text reads as one (as llama.cpp's cli shows it) */
            fputs(g.prompt, stdout);
            fflush(stdout);
        }
        st = kiln_llm_generate(m.llm, prompt, n_prompt, &o);
    }
    if (st != KILN_OK || out.oom) {
        cli_error("generate: %s", out.oom ? "out of memory" : kiln_llm_last_error(m.llm));
        /* A prompt longer than the context is the caller's to shorten. */
        rc = out.oom ? KILN_EXIT_FAILURE : st == KILN_ERROR_LIMIT ? KILN_EXIT_USAGE : cli_exit_status(st);
        goto done;
    }
    kiln_llm_stats s = {.struct_size = sizeof s};
    kiln_llm_stats_get(m.llm, &s);
    if (g.json) {
        print_json(&out, &s, m.load_ms);
    } else {
        printf("\n");
        fflush(stdout); /* the text before the summary line, also when both go to one file */
        fprintf(stderr,
                "load %.1f ms%s, prompt %zu tokens at %.1f tok/s, generated %zu tokens at %.1f tok/s, "
                "peak RSS %.1f MB, stopped: %s\n",
                m.load_ms, m.compile_ms > 0 ? " (after compiling the GGUF)" : "", s.prompt_tokens,
                s.prompt_tokens_per_second, s.generated_tokens, s.generated_tokens_per_second,
                (double)cli_peak_rss_bytes() / 1e6, kiln_llm_stop_name(s.stop));
    }
done:
    kiln_llm_free(m.llm, prompt);
    free(out.ids);
    free(out.text);
    cli_llm_close(&m);
    return rc;
}
