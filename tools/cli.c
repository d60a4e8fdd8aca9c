/* cli.c — shared helpers of the kiln tool (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "compiler/onnx/onnx_tensor.h"
#include "core/alloc.h"
#include "io/npy.h"

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

kiln_status cli_load_tensor(const char *path, kiln_tensor *out)
{
    if (cli_ends_with(path, ".pb")) return kiln_onnx_read_tensor_file(path, kiln_allocator_default(), out);
    return kiln_npy_read(path, kiln_allocator_default(), out);
}

void cli_format_shape(const kiln_tensor *t, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s [", kiln_dtype_name(t->dtype));
    for (uint32_t d = 0; d < t->rank && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, d ? ",%lld" : "%lld", (long long)t->shape[d]);
    if (n < size) snprintf(buf + n, size - n, "]");
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
    cli_error("--threads wants an integer 0..1024, got '%s'", value);
    return false;
}

bool cli_take_program(const char *cmd, const char *arg, const char **program)
{
    if (arg[0] == '-') {
        cli_error("%s: unknown or incomplete option '%s' (try 'kiln %s --help')", cmd, arg, cmd);
        return false;
    }
    if (*program) {
        cli_error("%s: more than one program given ('%s' and '%s')", cmd, *program, arg);
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

const char *cli_method_name(const kiln_program *program, const char *requested)
{
    if (requested) return requested;
    return kiln_program_method_count(program) == 1 ? kiln_program_method_name(program, 0) : "forward";
}

int cli_load_input_dir(const char *dir, kiln_tensor *inputs, size_t max, size_t *n)
{
    char path[4096];
    for (*n = 0; *n < max; ++*n) {
        struct stat sb;
        snprintf(path, sizeof path, "%s/input_%zu.npy", dir, *n);
        if (stat(path, &sb) != 0) {
            snprintf(path, sizeof path, "%s/input_%zu.pb", dir, *n);
            if (stat(path, &sb) != 0) break;
        }
        kiln_status st = cli_load_tensor(path, &inputs[*n]);
        if (st != KILN_OK) {
            cli_error("cannot read input '%s': %s", path, kiln_status_str(st));
            return cli_exit_status(st);
        }
    }
    return 0;
}
