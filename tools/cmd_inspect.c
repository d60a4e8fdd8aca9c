/* cmd_inspect.c — `kiln inspect`: what a program file holds (methods, I/O, ops, memory plan,
 * segments), as text or --json. Reads the file through the validating format reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compiler/onnx/onnx_tensor.h"
#include "core/alloc.h"
#include "format/program_reader.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln inspect PROGRAM.kiln [--json]\n"
            "\n"
            "Describes a program: format version, segments (deduplicated constant data), and per\n"
            "method its inputs, outputs, instruction count, op histogram, planned activation arena\n"
            "and scratch sizes.\n"
            "\n"
            "options:\n"
            "  --json       machine-readable output\n"
            "  -h, --help   show this help\n");
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void value_shape(const kiln_program_view *v, const kiln_fmt_value *val, char *buf, size_t size)
{
    kiln_tensor t = {.dtype = (kiln_dtype)val->dtype, .rank = val->rank};
    if (val->storage == KILN_STORAGE_DYNAMIC) {
        snprintf(buf, size, "%s [dynamic]", kiln_dtype_name(t.dtype));
        return;
    }
    for (uint32_t d = 0; d < val->rank; d++) t.shape[d] = v->i64[val->shape + d];
    cli_format_shape(&t, buf, size);
}

typedef struct op_count {
    const char *op;
    size_t n;
} op_count;

static size_t histogram(const kiln_program_view *v, const kiln_fmt_method *m, op_count *ops, size_t max)
{
    size_t n = 0;
    for (uint32_t k = 0; k < m->n_instrs; k++) {
        const char *op = kiln_view_string(v, v->instrs[m->first_instr + k].op);
        size_t i = 0;
        while (i < n && strcmp(ops[i].op, op) != 0) i++;
        if (i == n) {
            if (n == max) continue;
            ops[n++] = (op_count){op, 0};
        }
        ops[i].n++;
    }
    return n;
}

static void print_io(const kiln_program_view *v, const kiln_fmt_method *m, bool inputs, bool json)
{
    uint32_t first = inputs ? m->inputs : m->outputs, n = inputs ? m->n_inputs : m->n_outputs;
    for (uint32_t i = 0; i < n; i++) {
        const kiln_fmt_value *val = &v->values[m->first_value + v->i32[first + i]];
        char shape[160];
        value_shape(v, val, shape, sizeof shape);
        if (json) {
            printf("%s{\"name\": ", i ? ", " : "");
            json_string(kiln_view_string(v, val->name));
            printf(", \"type\": ");
            json_string(shape);
            printf("}");
        } else {
            printf("    %s %u '%s': %s\n", inputs ? "input " : "output", i, kiln_view_string(v, val->name), shape);
        }
    }
}

static uint64_t const_bytes(const kiln_program_view *v)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < v->n_segments; i++) total += v->segments[i].size;
    return total;
}

static void print_text(const kiln_program_view *v, const char *path)
{
    printf("program %s\n", path);
    printf("  format version %u, %llu bytes, %llu segments (%llu bytes of constants, each stored once)\n",
           KILN_FORMAT_VERSION, (unsigned long long)v->size, (unsigned long long)v->n_segments,
           (unsigned long long)const_bytes(v));
    for (uint64_t i = 0; i < v->n_methods; i++) {
        const kiln_fmt_method *m = &v->methods[i];
        printf("  method '%s': %u instructions, arena %llu bytes, scratch %llu bytes\n", kiln_view_string(v, m->name),
               m->n_instrs, (unsigned long long)m->arena_size, (unsigned long long)m->scratch_size);
        print_io(v, m, true, false);
        print_io(v, m, false, false);
        op_count ops[256];
        size_t n = histogram(v, m, ops, 256);
        printf("    ops:");
        for (size_t k = 0; k < n; k++) printf(" %s x%zu", ops[k].op, ops[k].n);
        printf("\n");
    }
}

static void print_json(const kiln_program_view *v)
{
    printf("{\"format_version\": %u, \"file_size\": %llu, \"segments\": %llu, \"constant_bytes\": %llu, \"methods\": [",
           KILN_FORMAT_VERSION, (unsigned long long)v->size, (unsigned long long)v->n_segments,
           (unsigned long long)const_bytes(v));
    for (uint64_t i = 0; i < v->n_methods; i++) {
        const kiln_fmt_method *m = &v->methods[i];
        printf("%s{\"name\": ", i ? ", " : "");
        json_string(kiln_view_string(v, m->name));
        printf(", \"instructions\": %u, \"arena_size\": %llu, \"scratch_size\": %llu, \"inputs\": [", m->n_instrs,
               (unsigned long long)m->arena_size, (unsigned long long)m->scratch_size);
        print_io(v, m, true, true);
        printf("], \"outputs\": [");
        print_io(v, m, false, true);
        printf("], \"ops\": {");
        op_count ops[256];
        size_t n = histogram(v, m, ops, 256);
        for (size_t k = 0; k < n; k++) {
            printf(k ? ", " : "");
            json_string(ops[k].op);
            printf(": %zu", ops[k].n);
        }
        printf("}}");
    }
    printf("]}\n");
}

int cmd_inspect(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return KILN_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (argv[i][0] == '-' || path) {
            cli_error("inspect: unexpected argument '%s' (try 'kiln inspect --help')", argv[i]);
            return KILN_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        cli_error("inspect: no program given (try 'kiln inspect --help')");
        return KILN_EXIT_USAGE;
    }
    const kiln_allocator *a = kiln_allocator_default();
    uint8_t *bytes;
    size_t size;
    kiln_status st = kiln_read_file(path, a, &bytes, &size);
    if (st != KILN_OK) {
        cli_error("cannot read '%s'", path);
        return cli_exit_status(st);
    }
    kiln_program_view v;
    st = kiln_program_view_init(&v, bytes, size);
    if (st != KILN_OK) {
        cli_error("'%s' is not a valid kiln program: %s", path, kiln_status_str(st));
        kiln_free(a, bytes);
        return cli_exit_status(st);
    }
    if (json) print_json(&v);
    else print_text(&v, path);
    kiln_free(a, bytes);
    return KILN_EXIT_OK;
}
