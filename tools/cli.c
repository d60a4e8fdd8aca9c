/* cli.c — shared helpers of the kiln tool (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compiler/importer.h"
#include "core/alloc.h"
#include "core/file_open.h"
#include "core/text_escape.h"
#include "format/program_format.h"
#include "io/npy.h"
#include "program_file.h"
#include "read_file.h"
#include "tensor_pb.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kiln: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_exit_status(kiln_status st)
{
    switch (st) {
    case KILN_OK: return KILN_EXIT_OK;
    case KILN_ERROR_UNSUPPORTED_OP: return KILN_EXIT_UNSUPPORTED;
    case KILN_ERROR_INVALID_ARGUMENT: case KILN_ERROR_COMPILE_SPEC: return KILN_EXIT_USAGE;
    case KILN_ERROR_FORMAT: case KILN_ERROR_VERSION: case KILN_ERROR_MODEL: case KILN_ERROR_SHAPE_MISMATCH:
    case KILN_ERROR_DTYPE_MISMATCH: case KILN_ERROR_INCOMPATIBLE: return KILN_EXIT_INVALID;
    default: return KILN_EXIT_FAILURE;
    }
}

bool cli_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return false;
    *out = v;
    return true;
}

bool cli_parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min && v <= max)) return false;
    *out = v;
    return true;
}

bool cli_parse_shape(char *spec, kiln_input_shape *out)
{
    memset(out, 0, sizeof *out);
    char *eq = strrchr(spec, '=');
    const char *dims = eq ? eq + 1 : spec;
    if (eq) {
        *eq = '\0'; /* the name is used in place: argv outlives the command */
        out->name = spec;
    }
    if (!*dims) return true; /* NAME= : a scalar */
    while (*dims) {
        if (out->rank == KILN_MAX_RANK) return false;
        char *end;
        errno = 0;
        long long v = strtoll(dims, &end, 10);
        if (errno || end == dims || v < 0) return false;
        out->dims[out->rank++] = v;
        if (*end == ',') end++;
        else if (*end) return false;
        dims = end;
    }
    return true;
}

bool cli_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

cli_file_kind cli_file_kind_of(const char *path, const char **format)
{
    if (format) *format = NULL;
    int fd;
    if (kiln_file_open_read(path, &fd, NULL, NULL) != KILN_OK) return CLI_FILE_UNREADABLE;
    char head[sizeof KILN_FORMAT_MAGIC - 1];
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    if (n < 0) return CLI_FILE_UNREADABLE;
    if ((size_t)n == sizeof head && memcmp(head, KILN_FORMAT_MAGIC, sizeof head) == 0) return CLI_FILE_PROGRAM;
    uint8_t *bytes;
    size_t size;
    if (cli_read_file(path, kiln_allocator_default(), SIZE_MAX, &bytes, &size, NULL, 0) != KILN_OK)
        return CLI_FILE_UNREADABLE;
    const kiln_importer *im = kiln_importer_pick(bytes, size);
    kiln_free(kiln_allocator_default(), bytes);
    if (format && im) *format = im->name;
    return im ? CLI_FILE_MODEL : CLI_FILE_OTHER;
}

int cli_load_tensor(const char *path, kiln_tensor *out)
{
    char why[KILN_NPY_MESSAGE_SIZE], shown[KILN_ESCAPED_NAME_SIZE];
    kiln_status st = cli_ends_with(path, ".pb")
                         ? cli_read_tensor_pb(path, kiln_allocator_default(), out, why, sizeof why)
                         : kiln_npy_read(path, kiln_allocator_default(), out, why, sizeof why);
    if (st == KILN_OK) return 0;
    cli_error("cannot read input '%s': %s", cli_esc(shown, path), why[0] ? why : kiln_status_str(st));
    /* Every refusal is a bad input file (docs/cli.md), whatever status the reader used for it;
       only running out of memory is a failure of the run. */
    return st == KILN_ERROR_OUT_OF_MEMORY ? KILN_EXIT_FAILURE : KILN_EXIT_INVALID;
}

const char *cli_esc(char buf[KILN_ESCAPED_NAME_SIZE], const char *s)
{
    return kiln_text_escape(buf, KILN_ESCAPED_NAME_SIZE, s, (size_t)-1);
}

void cli_json_string(const char *s)
{
    kiln_json_string(stdout, s);
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void cli_sort_doubles(double *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_doubles);
}

bool cli_parse_threads(const char *value, long *out)
{
    if (cli_parse_int(value, 0, 1024, out)) return true;
    char shown[KILN_ESCAPED_NAME_SIZE];
    cli_error("--threads wants an integer 0..1024, got '%s'", cli_esc(shown, value));
    return false;
}

bool cli_take_program(const char *cmd, const char *arg, const char **program)
{
    char shown[KILN_ESCAPED_NAME_SIZE], other[KILN_ESCAPED_NAME_SIZE];
    if (arg[0] == '-') {
        cli_error("%s: unknown or incomplete option '%s' (try 'kiln %s --help')", cmd, cli_esc(shown, arg), cmd);
        return false;
    }
    if (*program) {
        cli_error("%s: more than one program given ('%s' and '%s')", cmd, cli_esc(shown, *program), cli_esc(other, arg));
        return false;
    }
    *program = arg;
    return true;
}

bool cli_require_program(const char *cmd, const char *program)
{
    if (program) return true;
    cli_error("%s: no program given (try 'kiln %s --help')", cmd, cmd);
    return false;
}

/* "a, b, c" of the program's method names (escaped), cut to fit size. */
static void list_methods(const kiln_program *program, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < kiln_program_method_count(program) && n < size; i++) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        int w = snprintf(buf + n, size - n, "%s'%s'", i ? ", " : "", cli_esc(shown, kiln_program_method_name(program, i)));
        if (w < 0) break;
        n += (size_t)w;
    }
}

int cli_choose_method(const char *cmd, const char *path, const kiln_program *program, const char *requested,
                      const char **name)
{
    size_t n = kiln_program_method_count(program);
    char methods[1024], shown_path[KILN_ESCAPED_NAME_SIZE], shown[KILN_ESCAPED_NAME_SIZE];
    list_methods(program, methods, sizeof methods);
    if (requested) {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(kiln_program_method_name(program, i), requested) != 0) continue;
            *name = requested;
            return 0;
        }
        cli_error("%s: '%s' has no method '%s'; its methods: %s (pass one of them to --method)", cmd,
                  cli_esc(shown_path, path), cli_esc(shown, requested), methods);
        return KILN_EXIT_USAGE;
    }
    if (n == 1) {
        *name = kiln_program_method_name(program, 0);
        return 0;
    }
    if (n == 0) {
        cli_error("%s: '%s' has no methods", cmd, cli_esc(shown_path, path));
        return KILN_EXIT_INVALID;
    }
    cli_error("%s: '%s' has %zu methods (%s); pass --method NAME to choose one", cmd, cli_esc(shown_path, path), n,
              methods);
    return KILN_EXIT_USAGE;
}

int cli_load_input_dir(const char *dir, kiln_tensor *inputs, size_t max, size_t *n)
{
    char path[4096], shown[KILN_ESCAPED_NAME_SIZE];
    struct stat sb;
    *n = 0;
    if (stat(dir, &sb) != 0) {
        cli_error("--inputs '%s': %s", cli_esc(shown, dir), errno == ENOENT ? "no such directory" : strerror(errno));
        return KILN_EXIT_INVALID;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_error("--inputs '%s' is %s, not a directory", cli_esc(shown, dir), kiln_file_kind_name(sb.st_mode));
        return KILN_EXIT_INVALID;
    }
    for (; *n < max; ++*n) {
        snprintf(path, sizeof path, "%s/input_%zu.npy", dir, *n);
        if (stat(path, &sb) != 0) {
            snprintf(path, sizeof path, "%s/input_%zu.pb", dir, *n);
            if (stat(path, &sb) != 0) break;
        }
        int rc = cli_load_tensor(path, &inputs[*n]);
        if (rc) return rc;
    }
    return 0;
}

int cli_load_method(const char *cmd, const char *path, const void *bytes, size_t size, kiln_program *program,
                    const kiln_module_options *options, const char *requested, const char **name,
                    kiln_module **module, kiln_method **method)
{
    char shown_path[KILN_ESCAPED_NAME_SIZE], shown[KILN_ESCAPED_NAME_SIZE], why[256];
    *module = NULL;
    *method = NULL;
    int rc = cli_choose_method(cmd, path, program, requested, name);
    if (rc) return rc;
    kiln_status st = kiln_module_create(program, options, module);
    if (st == KILN_OK) st = kiln_method_load(*module, *name, method);
    if (st == KILN_OK) return 0;
    /* A forced target the file has no record for is a usage error naming the records it has;
       one the file has but this CPU cannot run stays a failure with the runtime's reason. */
    if (options->target && st != KILN_ERROR_OUT_OF_MEMORY && (rc = cli_check_target(cmd, path, bytes, size, options->target)))
        return rc;
    const char *last = *module ? kiln_module_last_error(*module) : "";
    kiln_text_escape(why, sizeof why, last ? last : "", (size_t)-1);
    cli_error("%s: cannot load method '%s' of '%s': %s%s%s", cmd, cli_esc(shown, *name), cli_esc(shown_path, path),
              kiln_status_str(st), why[0] ? ": " : "", why);
    return cli_exit_status(st);
}

int cli_open_program(const char *cmd, const char *path, kiln_program **out)
{
    char shown[KILN_ESCAPED_NAME_SIZE];
    int fd;
    const char *why;
    *out = NULL;
    /* kiln_program_open says only "could not be read"; this says why, and refuses a FIFO or a
       device before the runtime is asked to map it. */
    if (kiln_file_open_read(path, &fd, NULL, &why) != KILN_OK) {
        cli_error("%s: cannot open program '%s': %s", cmd, cli_esc(shown, path), why);
        return KILN_EXIT_INVALID;
    }
    close(fd);
    kiln_status st = kiln_program_open(path, out);
    if (st == KILN_OK) return 0;
    cli_error("%s: cannot open program '%s': %s", cmd, cli_esc(shown, path), kiln_status_str(st));
    return st == KILN_ERROR_IO ? KILN_EXIT_INVALID : cli_exit_status(st);
}
