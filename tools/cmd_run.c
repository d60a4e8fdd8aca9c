/* cmd_run.c — `kiln run`: load a program (or compile an .onnx in memory), feed inputs, write
 * outputs, report timing. Layer: tools. Output lines are printed by run_print.c; names from the
 * program are printed escaped. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/alloc.h"
#include "core/file_write.h"
#include "io/npy.h"
#include "run_shards.h"

#define MAX_INPUTS 64

typedef struct run_args {
    const char *program, *method, *inputs_dir, *outputs_dir, *target;
    char *input_specs[MAX_INPUTS];
    size_t n_input_specs;
    kiln_input_shape shapes[MAX_INPUTS];
    size_t n_shapes;
    long threads, iterations;
    bool quiet, stats;
} run_args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln run (PROGRAM.kiln|MODEL|shard manifest) [options]\n"
            "\n"
            "Runs a method of a program on input tensors (.npy, or ONNX TensorProto .pb) and prints\n"
            "each output's shape, its first values and the time taken. A file that is not a kiln\n"
            "program (by its bytes, whatever its name) is compiled in memory first as a model (ONNX)\n"
            "(input shapes taken from the input files unless --input-shape is given).\n"
            "\n"
            "options:\n"
            "  --method NAME              method to run (needed when the program has several)\n"
            "  --inputs DIR               read input_<i>.npy or input_<i>.pb for every input i\n"
            "  --input [NAME=]FILE        one input, by name or by position (repeatable)\n"
            "  --outputs DIR              write output_<i>.npy for every output i\n"
            "  --input-shape NAME=D0,..   input shape when compiling a model (repeatable)\n"
            "  --target T                 force a context-binary record (e.g. generic); a name the\n"
            "                             program has no record for is a usage error listing them.\n"
            "                             With a model: compile for T\n"
            "  --threads N                worker threads (0 = one per core)\n"
            "  --iterations N             execute N times and report min/median time (default 1)\n"
            "  -q, --quiet                print nothing but errors\n"
            "  --stats                    print the runtime counters (live contexts, scratch groups\n"
            "                             and scratch bytes reserved) after executing\n"
            "  -h, --help                 show this help\n"
            "\n"
            "A shard manifest (kiln compile --shards) runs its shard programs in sequence, each in\n"
            "its own module, all sharing one explicit scratch group; inputs and outputs are the\n"
            "whole model's.\n");
}

static int parse(int argc, char **argv, run_args *r)
{
    memset(r, 0, sizeof *r);
    r->iterations = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--method") == 0 && v) r->method = argv[++i];
        else if (strcmp(a, "--inputs") == 0 && v) r->inputs_dir = argv[++i];
        else if (strcmp(a, "--outputs") == 0 && v) r->outputs_dir = argv[++i];
        else if (strcmp(a, "--target") == 0 && v) r->target = argv[++i];
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) r->quiet = true;
        else if (strcmp(a, "--stats") == 0) r->stats = true;
        else if (strcmp(a, "--input") == 0 && v) {
            if (r->n_input_specs == MAX_INPUTS) return KILN_EXIT_USAGE;
            r->input_specs[r->n_input_specs++] = argv[++i];
        } else if (strcmp(a, "--input-shape") == 0 && v) {
            char *spec = argv[++i];
            if (r->n_shapes == MAX_INPUTS || !cli_parse_shape(spec, &r->shapes[r->n_shapes]) || !r->shapes[r->n_shapes].name) {
                char shown[KILN_ESCAPED_NAME_SIZE];
                cli_error("--input-shape wants NAME=D0,D1,..., got '%s'", cli_esc(shown, spec));
                return KILN_EXIT_USAGE;
            }
            r->n_shapes++;
        } else if (strcmp(a, "--threads") == 0 && v) {
            if (!cli_parse_threads(argv[++i], &r->threads)) return KILN_EXIT_USAGE;
        } else if (strcmp(a, "--iterations") == 0 && v) {
            if (!cli_parse_int(argv[++i], 1, 1000000, &r->iterations)) {
                char shown[KILN_ESCAPED_NAME_SIZE];
                cli_error("--iterations wants an integer 1..1000000, got '%s'", cli_esc(shown, argv[i]));
                return KILN_EXIT_USAGE;
            }
        } else if (!cli_take_program("run", a, &r->program)) return KILN_EXIT_USAGE;
    }
    if (!cli_require_program("run", r->program)) return KILN_EXIT_USAGE;
    if (r->inputs_dir && r->n_input_specs) {
        cli_error("run: use either --inputs DIR or --input options, not both");
        return KILN_EXIT_USAGE;
    }
    return 0;
}

/* Input tensors in positional order, plus the names given with --input NAME=FILE. */
typedef struct input_set {
    kiln_tensor t[MAX_INPUTS];
    const char *name[MAX_INPUTS];
    size_t n;
} input_set;

static void free_inputs(input_set *in)
{
    for (size_t i = 0; i < in->n; i++) free(in->t[i].data);
}

static int load_inputs(run_args *r, input_set *in)
{
    memset(in, 0, sizeof *in);
    if (r->inputs_dir) return cli_load_input_dir(r->inputs_dir, in->t, MAX_INPUTS, &in->n);
    for (size_t i = 0; i < r->n_input_specs; i++) {
        char *spec = r->input_specs[i], *eq = strchr(spec, '=');
        const char *file = spec;
        if (eq) {
            *eq = '\0';
            in->name[in->n] = spec;
            file = eq + 1;
        }
        int rc = cli_load_tensor(file, &in->t[in->n]);
        if (rc) return rc;
        in->n++;
    }
    return 0;
}

/* The program to run: opened from its file, or, when the file is no kiln program (by its bytes,
   whatever its name), compiled into *bytes (*size_out); the compiler's importers then say what
   the file is or that it is not a model they read. */
static int open_program(run_args *r, const input_set *in, void **bytes, size_t *size_out, kiln_program **program)
{
    kiln_status st;
    char shown[KILN_ESCAPED_NAME_SIZE];
    *bytes = NULL;
    *size_out = 0;
    cli_file_kind kind = cli_file_kind_of(r->program, NULL);
    if (kind == CLI_FILE_MODEL || kind == CLI_FILE_OTHER) {
        kiln_input_shape shapes[MAX_INPUTS];
        kiln_compile_options opt = {.struct_size = sizeof opt, .input_shapes = r->shapes, .n_input_shapes = r->n_shapes,
                                    .target = r->target};
        bool named = false;
        for (size_t i = 0; i < in->n; i++) named |= in->name[i] != NULL;
        if (!r->n_shapes && in->n) {
            for (size_t i = 0; i < in->n; i++) {
                shapes[i] = (kiln_input_shape){.name = in->name[i], .rank = in->t[i].rank};
                memcpy(shapes[i].dims, in->t[i].shape, sizeof shapes[i].dims);
            }
            opt.input_shapes = shapes;
            opt.n_input_shapes = in->n;
            opt.input_shapes_by_position = !named;
        }
        kiln_compile_method m = {.name = r->method ? r->method : "forward", .model_path = r->program};
        char message[1024];
        size_t size;
        st = kiln_compile_memory(&opt, &m, 1, bytes, &size, message, sizeof message);
        if (st != KILN_OK) {
            cli_error("compile failed: %s", message);
            return cli_exit_status(st);
        }
        *size_out = size;
        st = kiln_program_open_memory(*bytes, size, program);
        if (st != KILN_OK) {
            cli_error("run: the program compiled from '%s' does not open: %s", cli_esc(shown, r->program),
                      kiln_status_str(st));
            return cli_exit_status(st);
        }
        return 0;
    }
    return cli_open_program("run", r->program, program);
}

static int bind_inputs(kiln_method *method, const input_set *in)
{
    size_t n = kiln_method_input_count(method);
    if (in->n != n) {
        cli_error("the method takes %zu input%s, %zu given", n, n == 1 ? "" : "s", in->n);
        return KILN_EXIT_USAGE;
    }
    for (size_t k = 0; k < in->n; k++) {
        size_t index = k;
        if (in->name[k]) {
            for (index = 0; index < n; index++)
                if (strcmp(kiln_method_input_name(method, index), in->name[k]) == 0) break;
            if (index == n) {
                char shown[KILN_ESCAPED_NAME_SIZE];
                cli_error("the method has no input named '%s'", cli_esc(shown, in->name[k]));
                return KILN_EXIT_USAGE;
            }
        }
        kiln_status st = kiln_method_set_input(method, index, &in->t[k]);
        if (st != KILN_OK) {
            kiln_tensor want;
            char have_s[160], want_s[160], shown[KILN_ESCAPED_NAME_SIZE];
            kiln_method_input_info(method, index, &want);
            kiln_format_shape(&in->t[k], have_s, sizeof have_s);
            kiln_format_shape(&want, want_s, sizeof want_s);
            cli_error("input %zu '%s': got %s, the method wants %s", index,
                      cli_esc(shown, kiln_method_input_name(method, index)), have_s, want_s);
            return cli_exit_status(st);
        }
    }
    return 0;
}

static int execute_and_report(run_args *r, kiln_method *method)
{
    double *times = calloc((size_t)r->iterations, sizeof *times);
    if (!times) return KILN_EXIT_FAILURE;
    kiln_status st = KILN_OK;
    for (long it = 0; it < r->iterations && st == KILN_OK; it++) {
        double t0 = cli_now();
        st = kiln_method_execute(method);
        times[it] = cli_now() - t0;
    }
    if (st != KILN_OK) {
        free(times);
        cli_error("execute failed: %s", kiln_status_str(st));
        return cli_exit_status(st);
    }
    cli_sort_doubles(times, (size_t)r->iterations);
    int rc = 0;
    for (size_t i = 0; i < kiln_method_output_count(method) && rc == 0; i++) {
        kiln_tensor out;
        kiln_method_get_output(method, i, &out);
        if (!r->quiet) run_print_output(i, kiln_method_output_name(method, i), &out);
        if (r->outputs_dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/output_%zu.npy", r->outputs_dir, i);
            char why[1024] = "";
            st = kiln_npy_write_io(NULL, path, &out, why, sizeof why);
            if (st != KILN_OK) {
                char shown[KILN_ESCAPED_NAME_SIZE];
                if (why[0]) cli_error("%s", why); /* the writer escapes its paths */
                else cli_error("cannot write '%s': %s", cli_esc(shown, path), kiln_status_str(st));
                rc = cli_exit_status(st);
            }
        }
    }
    if (!r->quiet && rc == 0) {
        if (r->iterations == 1) printf("execute: %.3f ms\n", 1e3 * times[0]);
        else printf("execute: min %.3f ms, median %.3f ms over %ld runs\n", 1e3 * times[0],
                    1e3 * times[r->iterations / 2], r->iterations);
    }
    free(times);
    return rc;
}

/* Issue 12 item 2: an output_<i>.npy of --outputs that is one of the input files (the program,
   an --input FILE, an input_<k> of --inputs; same device and inode, after links) would be
   replaced by the output: refused before anything runs. */
static bool output_is_input(const run_args *r, const char *out)
{
    if (kiln_file_same(out, r->program)) return true;
    for (size_t k = 0; k < r->n_input_specs; k++) {
        const char *eq = strchr(r->input_specs[k], '=');
        if (kiln_file_same(out, eq ? eq + 1 : r->input_specs[k])) return true;
    }
    for (size_t k = 0; r->inputs_dir && k < MAX_INPUTS; k++) {
        char in[4096];
        snprintf(in, sizeof in, "%s/input_%zu.npy", r->inputs_dir, k);
        bool same = kiln_file_same(out, in);
        snprintf(in, sizeof in, "%s/input_%zu.pb", r->inputs_dir, k);
        if (same || kiln_file_same(out, in)) return true;
    }
    return false;
}

static int check_outputs_spare_inputs(const run_args *r)
{
    DIR *d = r->outputs_dir ? opendir(r->outputs_dir) : NULL;
    if (!d) return 0; /* absent: created later, holds nothing yet */
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        size_t i;
        char tail[8] = "";
        if (sscanf(e->d_name, "output_%zu.np%7s", &i, tail) != 2 || strcmp(tail, "y") != 0) continue;
        char out[4096];
        snprintf(out, sizeof out, "%s/%s", r->outputs_dir, e->d_name);
        if (!output_is_input(r, out)) continue;
        cli_error("run: '%s' is one of the input files; --outputs would replace it: choose another directory", out);
        rc = KILN_EXIT_USAGE;
    }
    closedir(d);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_args r;
    int rc = parse(argc, argv, &r);
    if (rc) return rc < 0 ? KILN_EXIT_OK : rc;
    if ((rc = check_outputs_spare_inputs(&r)) != 0) return rc;
    if (r.outputs_dir) {
        struct stat sb;
        if (stat(r.outputs_dir, &sb) != 0 && mkdir(r.outputs_dir, 0777) != 0) {
            char shown[KILN_ESCAPED_NAME_SIZE];
            cli_error("cannot create output directory '%s'", cli_esc(shown, r.outputs_dir));
            return KILN_EXIT_FAILURE;
        }
    }
    input_set in;
    void *bytes = NULL;
    size_t size = 0;
    kiln_program *program = NULL;
    kiln_module *module = NULL;
    kiln_method *method = NULL;
    if ((rc = load_inputs(&r, &in)) != 0) goto done;
    if (shard_manifest_detect(r.program)) {
        shard_run_options so = {in.t, in.name, in.n, r.method, r.outputs_dir, r.target, (int)r.threads, r.iterations,
                                r.quiet, r.stats};
        rc = run_shards(r.program, &so);
        goto done;
    }
    if ((rc = open_program(&r, &in, &bytes, &size, &program)) != 0) goto done;
    kiln_module_options opt = {sizeof opt, NULL, NULL, (int)r.threads, r.target};
    const char *name;
    if ((rc = cli_load_method("run", r.program, bytes, size, program, &opt, r.method, &name, &module, &method)) != 0)
        goto done;
    if ((rc = bind_inputs(method, &in)) != 0) goto done;
    rc = execute_and_report(&r, method);
    if (rc == 0 && r.stats) run_print_stats();
done:
    kiln_module_destroy(module);
    kiln_program_close(program);
    kiln_free(kiln_allocator_default(), bytes);
    free_inputs(&in);
    return rc;
}
