/* cmd_bench.c — `kiln bench`: time a method of a compiled program and print latency statistics.
 *
 * Layer: tools. Uses the public API (kiln.h) and the tool's helpers (cli.h) only, so what it
 * measures is exactly what an embedding application gets from kiln_method_execute.
 *
 * Inputs are either files (--inputs DIR, as `kiln run`) or deterministic pseudo-random tensors of
 * each input's declared dtype and shape: floats uniform in [-1, 1), integers and booleans 0 or 1.
 * 0 and 1 are the only integer values that are valid for every model — they index any embedding
 * table and are the two values of any attention mask — so a random run never fails on an index
 * check that a real input would pass. The same seed gives the same bytes on every run.
 *
 * Timing: --warmup executions are run and discarded (first-touch page faults, lazy delegate
 * initialisation, cold caches), then --iterations executions are timed one by one with the
 * monotonic clock; min, median, mean and max are reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/splitmix.h"

#define BENCH_MAX_INPUTS 64
#define BENCH_SEED 0x6b696c6e62656e63ull /* "kilnbenc" */

typedef struct bench_args {
    const char *program, *method, *inputs_dir, *target;
    long threads, iterations, warmup;
    bool json;
} bench_args;

typedef struct bench_stats {
    double min_ms, median_ms, mean_ms, max_ms;
} bench_stats;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln bench PROGRAM.kiln [options]\n"
            "\n"
            "Times a method of a compiled program: runs it --warmup times untimed, then --iterations\n"
            "times, and prints the min, median and mean latency of one execution in milliseconds.\n"
            "Without --inputs every input gets deterministic pseudo-random data of its declared dtype\n"
            "and shape (floats in [-1, 1), integers and booleans 0 or 1).\n"
            "\n"
            "options:\n"
            "  --method NAME       method to time (needed when the program has several)\n"
            "  --inputs DIR        read input_<i>.npy or input_<i>.pb for every input i\n"
            "  --iterations N      timed executions (default 20)\n"
            "  --warmup N          untimed executions first (default 3)\n"
            "  --threads N         worker threads (0 = one per core, the default)\n"
            "  --target T          force a context-binary record (e.g. generic, x86-64-v4); a name\n"
            "                      the program has no record for is a usage error listing them\n"
            "  --json              print one JSON object instead of text\n"
            "  -h, --help          show this help\n"
            "\n"
            "Exit status: 0 ok, 1 failure, 2 usage error, 4 invalid program or input file.\n");
}

static bool parse_count(const char *opt, const char *value, long min, long *out)
{
    if (cli_parse_int(value, min, 100000000, out)) return true;
    char shown[KILN_ESCAPED_NAME_SIZE];
    cli_error("%s wants an integer %ld..100000000, got '%s'", opt, min, cli_esc(shown, value));
    return false;
}

/* 0 to go on, -1 after --help, else an exit status. */
static int parse(int argc, char **argv, bench_args *b)
{
    memset(b, 0, sizeof *b);
    b->iterations = 20;
    b->warmup = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--method") == 0 && v) b->method = argv[++i];
        else if (strcmp(a, "--inputs") == 0 && v) b->inputs_dir = argv[++i];
        else if (strcmp(a, "--target") == 0 && v) b->target = argv[++i];
        else if (strcmp(a, "--json") == 0) b->json = true;
        else if (strcmp(a, "--iterations") == 0 && v) {
            if (!parse_count(a, argv[++i], 1, &b->iterations)) return KILN_EXIT_USAGE;
        } else if (strcmp(a, "--warmup") == 0 && v) {
            if (!parse_count(a, argv[++i], 0, &b->warmup)) return KILN_EXIT_USAGE;
        } else if (strcmp(a, "--threads") == 0 && v) {
            if (!cli_parse_threads(argv[++i], &b->threads)) return KILN_EXIT_USAGE;
        } else if (!cli_take_program("bench", a, &b->program)) return KILN_EXIT_USAGE;
    }
    if (!cli_require_program("bench", b->program)) return KILN_EXIT_USAGE;
    const char *format;
    if (cli_file_kind_of(b->program, &format) == CLI_FILE_MODEL) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        cli_error("bench: '%s' is a model (%s), not a program; compile it first (kiln compile MODEL -o MODEL.kiln)",
                  cli_esc(shown, b->program), format);
        return KILN_EXIT_USAGE;
    }
    return 0;
}

/* Uniform in [-1, 1), from the top 24 bits so every value is exact in float. */
static float random_unit(uint64_t *state)
{
    return (float)(kiln_splitmix64(state) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

/* IEEE half of x for |x| < 2 (the range random_unit makes): truncated mantissa, values below the
   smallest normal half flushed to signed zero — plenty for benchmark data. */
static uint16_t half_from_unit(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    int exponent = (int)((bits >> 23) & 0xffu) - 127 + 15;
    if (exponent <= 0) return sign;
    return (uint16_t)(sign | (uint16_t)(exponent << 10) | (uint16_t)((bits >> 13) & 0x3ffu));
}

static void fill_random(kiln_tensor *t, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; i++) {
        float x = random_unit(state);
        uint32_t bits;
        memcpy(&bits, &x, sizeof bits);
        uint8_t bit = (uint8_t)(kiln_splitmix64(state) >> 63);
        switch (t->dtype) {
        case KILN_DTYPE_F32: ((float *)t->data)[i] = x; break;
        case KILN_DTYPE_F64: ((double *)t->data)[i] = x; break;
        case KILN_DTYPE_F16: ((uint16_t *)t->data)[i] = half_from_unit(x); break;
        case KILN_DTYPE_BF16: ((uint16_t *)t->data)[i] = (uint16_t)(bits >> 16); break;
        case KILN_DTYPE_I8: case KILN_DTYPE_U8: case KILN_DTYPE_BOOL: ((uint8_t *)t->data)[i] = bit; break;
        case KILN_DTYPE_I16: case KILN_DTYPE_U16: ((uint16_t *)t->data)[i] = bit; break;
        case KILN_DTYPE_I32: case KILN_DTYPE_U32: ((uint32_t *)t->data)[i] = bit; break;
        case KILN_DTYPE_I64: case KILN_DTYPE_U64: ((uint64_t *)t->data)[i] = bit; break;
        default: break; /* block-quantized: refused by make_random_inputs */
        }
    }
}

/* Input tensors in method-input order; data from malloc or cli_load_tensor (both free()). */
typedef struct input_set {
    kiln_tensor t[BENCH_MAX_INPUTS];
    size_t n;
} input_set;

static void free_inputs(input_set *in)
{
    for (size_t i = 0; i < in->n; i++) free(in->t[i].data);
    in->n = 0;
}

static int make_random_inputs(kiln_method *method, input_set *in)
{
    uint64_t state = BENCH_SEED;
    size_t n = kiln_method_input_count(method);
    if (n > BENCH_MAX_INPUTS) {
        cli_error("the method takes %zu inputs; kiln bench handles at most %d", n, BENCH_MAX_INPUTS);
        return KILN_EXIT_FAILURE;
    }
    for (; in->n < n; in->n++) {
        kiln_tensor *t = &in->t[in->n];
        kiln_method_input_info(method, in->n, t);
        int64_t numel = kiln_tensor_numel(t);
        size_t size = kiln_dtype_size(t->dtype);
        if (kiln_dtype_is_quantized(t->dtype)) {
            char shown[KILN_ESCAPED_NAME_SIZE];
            cli_error("input %zu '%s' is %s, a block-quantized type, which kiln bench makes no random values of",
                      in->n, cli_esc(shown, kiln_method_input_name(method, in->n)), kiln_dtype_name(t->dtype));
            return KILN_EXIT_FAILURE;
        }
        if (numel < 0 || size == 0 || (uint64_t)numel > SIZE_MAX / size) {
            char shown[KILN_ESCAPED_NAME_SIZE];
            cli_error("input %zu '%s' has no usable declared shape", in->n,
                      cli_esc(shown, kiln_method_input_name(method, in->n)));
            return KILN_EXIT_FAILURE;
        }
        t->data = malloc(numel ? (size_t)numel * size : 1);
        if (!t->data) {
            cli_error("out of memory for input %zu", in->n);
            return KILN_EXIT_FAILURE;
        }
        fill_random(t, numel, &state);
    }
    return 0;
}

static int bind_inputs(kiln_method *method, const input_set *in)
{
    size_t n = kiln_method_input_count(method);
    if (in->n != n) {
        cli_error("the method takes %zu input%s, %zu given", n, n == 1 ? "" : "s", in->n);
        return KILN_EXIT_USAGE;
    }
    for (size_t i = 0; i < n; i++) {
        kiln_status st = kiln_method_set_input(method, i, &in->t[i]);
        if (st != KILN_OK) {
            char have[160];
            kiln_format_shape(&in->t[i], have, sizeof have);
            char shown[KILN_ESCAPED_NAME_SIZE];
            cli_error("input %zu '%s' (%s): %s", i, cli_esc(shown, kiln_method_input_name(method, i)), have,
                      kiln_status_str(st));
            return cli_exit_status(st);
        }
    }
    return 0;
}

/* Warm up, then time every execution; the statistics are over the timed ones only. */
static int time_executions(const bench_args *b, kiln_method *method, bench_stats *s)
{
    double *ms = calloc((size_t)b->iterations, sizeof *ms);
    if (!ms) return KILN_EXIT_FAILURE;
    kiln_status st = KILN_OK;
    for (long i = 0; i < b->warmup && st == KILN_OK; i++) st = kiln_method_execute(method);
    for (long i = 0; i < b->iterations && st == KILN_OK; i++) {
        double t0 = cli_now();
        st = kiln_method_execute(method);
        ms[i] = 1e3 * (cli_now() - t0);
    }
    if (st != KILN_OK) {
        free(ms);
        cli_error("execute failed: %s", kiln_status_str(st));
        return cli_exit_status(st);
    }
    size_t n = (size_t)b->iterations;
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += ms[i];
    cli_sort_doubles(ms, n);
    s->min_ms = ms[0];
    s->max_ms = ms[n - 1];
    s->median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    s->mean_ms = sum / (double)n;
    free(ms);
    return 0;
}

static void report(const bench_args *b, const char *method_name, size_t n_delegates, const bench_stats *s)
{
    if (!b->json) {
        char program[KILN_ESCAPED_NAME_SIZE], method[KILN_ESCAPED_NAME_SIZE], target[KILN_ESCAPED_NAME_SIZE];
        printf("%s (%s): %ld runs after %ld warm-up, threads %ld%s%s, %zu delegate call%s\n", cli_esc(program, b->program),
               cli_esc(method, method_name), b->iterations, b->warmup, b->threads, b->target ? ", target " : "",
               b->target ? cli_esc(target, b->target) : "", n_delegates, n_delegates == 1 ? "" : "s");
        printf("latency: min %.3f ms, median %.3f ms, mean %.3f ms, max %.3f ms\n", s->min_ms, s->median_ms,
               s->mean_ms, s->max_ms);
        return;
    }
    printf("{\"program\": ");
    cli_json_string(b->program);
    printf(", \"method\": ");
    cli_json_string(method_name);
    printf(", \"inputs\": ");
    cli_json_string(b->inputs_dir ? b->inputs_dir : "random");
    printf(", \"target\": ");
    if (b->target) cli_json_string(b->target);
    else printf("null");
    printf(", \"threads\": %ld, \"delegate_calls\": %zu, \"warmup\": %ld, \"iterations\": %ld", b->threads,
           n_delegates, b->warmup, b->iterations);
    printf(", \"min_ms\": %.6f, \"median_ms\": %.6f, \"mean_ms\": %.6f, \"max_ms\": %.6f}\n", s->min_ms, s->median_ms,
           s->mean_ms, s->max_ms);
}

int cmd_bench(int argc, char **argv)
{
    bench_args b;
    int rc = parse(argc, argv, &b);
    if (rc) return rc < 0 ? KILN_EXIT_OK : rc;
    input_set in = {.n = 0};
    kiln_program *program = NULL;
    kiln_module *module = NULL;
    kiln_method *method = NULL;
    if ((rc = cli_open_program("bench", b.program, &program)) != 0) return rc;
    kiln_module_options opt = {sizeof opt, NULL, NULL, (int)b.threads, b.target};
    const char *name = NULL;
    if ((rc = cli_load_method("bench", b.program, NULL, 0, program, &opt, b.method, &name, &module, &method)) != 0)
        goto done;
    rc = b.inputs_dir ? cli_load_input_dir(b.inputs_dir, in.t, BENCH_MAX_INPUTS, &in.n) : make_random_inputs(method, &in);
    if (rc == 0) rc = bind_inputs(method, &in);
    bench_stats s = {0, 0, 0, 0};
    if (rc == 0) rc = time_executions(&b, method, &s);
    if (rc == 0) report(&b, name, kiln_method_delegate_count(method), &s);
done:
    kiln_module_destroy(module);
    kiln_program_close(program);
    free_inputs(&in);
    return rc;
}
