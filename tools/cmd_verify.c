/* cmd_verify.c — `kiln verify FILE...`: is each program file whole and loadable?
 *
 * Layer: tools. Per file, everything the runtime checks when it opens a program and loads its
 * methods, plus what loading deliberately skips to stay O(metadata) (program_file.h): the
 * format reader's validation of every table; every context binary's check by the compile-time
 * backend its DELEGATE names (for cpu: its validation, signature and weight-block hashes); every
 * segment's hash recomputed from the bytes; then kiln_program_open_memory and kiln_method_load of every method, whose plan
 * verification (arena overlap, dataflow, shapes) happens only at load. A method that cannot load
 * on this machine because no record of a binary runs on this CPU (or its backend is not in this
 * build) is not a defect of the file: the line says so and the file still passes.
 *
 * One line per file on stdout — "FILE: ok, N context binaries, signatures match" or
 * "FILE: <the first problem>" — or one JSON object with --json. Exit status 0 when every file
 * is fine, 4 when any is not (docs/cli.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "program_file.h"

typedef struct verify_result {
    bool ok;
    size_t n_ctx, n_problems;
    char problem[512];          /* the first problem, when !ok */
    char note[512];             /* what could not be checked on this machine, or "" */
} verify_result;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln verify PROGRAM.kiln ... [--json]\n"
            "\n"
            "Checks each program file as loading would (the file's tables, every context binary,\n"
            "loading every method) and recomputes what loading does not: every context binary's\n"
            "signature and weight-block hashes and every segment's hash. Prints one line per file,\n"
            "'FILE: ok, N context binaries, signatures match' or 'FILE: <the first problem>'.\n"
            "\n"
            "options:\n"
            "  --json       one JSON object: {\"files\": [{\"path\", \"ok\", \"context_binaries\",\n"
            "               \"problems\", \"problem\", \"note\"}], \"ok\"}\n"
            "  -h, --help   show this help\n"
            "\n"
            "Exit status: 0 every file is fine, 2 usage error, 4 a file is not.\n");
}

/* Statuses of kiln_method_load that speak of this machine or build, not of the file. */
static bool machine_status(kiln_status st)
{
    return st == KILN_ERROR_NO_RUNNABLE_TARGET || st == KILN_ERROR_BACKEND_UNAVAILABLE;
}

/* Loads every method of the validated program in one single-threaded module. */
static void check_loading(const cli_program_file *f, verify_result *r)
{
    kiln_program *program = NULL;
    kiln_module *module = NULL;
    kiln_module_options mo = {.struct_size = sizeof mo, .num_threads = 1};
    kiln_status st = kiln_program_open_memory(f->view.base, (size_t)f->view.size, &program);
    if (st == KILN_OK) st = kiln_module_create(program, &mo, &module);
    if (st != KILN_OK) {
        r->n_problems++;
        snprintf(r->problem, sizeof r->problem, "the runtime does not open it: %s", kiln_status_str(st));
    }
    for (size_t i = 0; st == KILN_OK && i < kiln_program_method_count(program); i++) {
        const char *name = kiln_program_method_name(program, i);
        char shown[KILN_ESCAPED_NAME_SIZE], why[256];
        kiln_method *method = NULL;
        kiln_status load = kiln_method_load(module, name, &method);
        kiln_method_unload(method);
        if (load == KILN_OK) continue;
        const char *last = kiln_module_last_error(module);
        kiln_text_escape(why, sizeof why, last && *last ? last : kiln_status_str(load), (size_t)-1);
        cli_esc(shown, name);
        if (machine_status(load)) {
            if (!r->note[0]) snprintf(r->note, sizeof r->note, "method '%s' not loaded on this machine: %s", shown, why);
            continue;
        }
        if (r->n_problems++ == 0)
            snprintf(r->problem, sizeof r->problem, "method '%s' does not load: %s", shown, why);
    }
    kiln_module_destroy(module);
    kiln_program_close(program);
}

static void verify_file(const char *path, verify_result *r)
{
    memset(r, 0, sizeof *r);
    cli_program_file f;
    if (cli_program_file_read(path, &f, r->problem, sizeof r->problem) != 0) {
        r->n_problems = 1;
        return;
    }
    r->n_ctx = f.n_ctx;
    r->n_problems = cli_program_file_problems(&f, r->problem, sizeof r->problem);
    if (r->n_problems == 0) check_loading(&f, r);
    r->ok = r->n_problems == 0;
    cli_program_file_free(&f);
}

static void print_text(const char *path, const verify_result *r)
{
    char shown[KILN_ESCAPED_NAME_SIZE];
    printf("%s: ", cli_esc(shown, path));
    if (!r->ok) {
        printf("%s", r->problem);
        if (r->n_problems > 1) printf(" (and %zu more problem%s)", r->n_problems - 1, r->n_problems == 2 ? "" : "s");
    } else if (r->n_ctx == 0) {
        printf("ok, no context binaries");
    } else {
        printf("ok, %zu context binar%s, signatures match", r->n_ctx, r->n_ctx == 1 ? "y" : "ies");
    }
    printf("%s%s\n", r->note[0] ? "; " : "", r->note);
}

static void print_json(const char *path, const verify_result *r, bool first)
{
    printf("%s{\"path\": ", first ? "" : ", ");
    cli_json_string(path);
    printf(", \"ok\": %s, \"context_binaries\": %zu, \"problems\": %zu, \"problem\": ", r->ok ? "true" : "false",
           r->n_ctx, r->n_problems);
    if (r->ok) printf("null");
    else cli_json_string(r->problem);
    printf(", \"note\": ");
    if (r->note[0]) cli_json_string(r->note);
    else printf("null");
    printf("}");
}

int cmd_verify(int argc, char **argv)
{
    bool json = false;
    int n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return KILN_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") == 0) json = true;
        else if (argv[i][0] == '-') {
            char shown[KILN_ESCAPED_NAME_SIZE];
            cli_error("verify: unknown option '%s' (try 'kiln verify --help')", cli_esc(shown, argv[i]));
            return KILN_EXIT_USAGE;
        } else n_files++;
    }
    if (n_files == 0) {
        cli_error("verify: no program given (try 'kiln verify --help')");
        return KILN_EXIT_USAGE;
    }
    bool all_ok = true, first = true;
    if (json) printf("{\"files\": [");
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue;
        verify_result r;
        verify_file(argv[i], &r);
        all_ok &= r.ok;
        if (json) print_json(argv[i], &r, first);
        else print_text(argv[i], &r);
        first = false;
        fflush(stdout);
    }
    if (json) printf("], \"ok\": %s}\n", all_ok ? "true" : "false");
    return all_ok ? KILN_EXIT_OK : KILN_EXIT_INVALID;
}
