/* cmd_inspect.c — `kiln inspect`: what a program file holds (methods, I/O, ops, memory plan,
 * segments, metadata keys and sizes, delegate calls) and what each delegate payload (context binary) holds — for the
 * `cpu` backend its signature (checked against the contents), compile spec, records, graphs,
 * weight and scratch sizes — as text or --json. Reads the program through the validating
 * format reader and prints each payload through the compile-time backend its DELEGATE names
 * (compiler_backend.h: check, then describe; a backend validates its payload as loading does),
 * so what inspect calls valid is exactly what a module would load; a payload whose backend has
 * no describe is shown by its size. Names from the file are
 * printed escaped (cli_esc), so a newline or terminal escape in one cannot forge output lines.
 * The exit status is 4 when a context binary is invalid or a signature or hash does not match
 * (program_file.h says what is checked), after the whole description is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compiler/compiler_backend.h"
#include "format/program_reader.h"
#include "program_file.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln inspect PROGRAM.kiln [--json]\n"
            "\n"
            "Describes a program: format version, segments (deduplicated constant data), metadata\n"
            "keys with the byte size of each value, and per method its inputs, outputs, instruction\n"
            "count, op histogram, planned activation arena and scratch sizes, and its delegate calls.\n"
            "For each context binary of the cpu backend: signature (checked against the contents),\n"
            "compile spec, weight bytes, and per record its target, required CPU features, register\n"
            "tile, cache sizes, its bytes, the bytes it shares with other records and what it added\n"
            "to the binary (bytes and percent over the records listed before it), and per graph its\n"
            "steps, inputs, outputs and scratch size.\n"
            "Invalid binaries are reported as such. Exit status 4 when a context binary is invalid or a\n"
            "signature or hash does not match the contents (kiln verify checks files without the\n"
            "description).\n"
            "\n"
            "options:\n"
            "  --json       machine-readable output\n"
            "  -h, --help   show this help\n");
}

static void value_shape(const kiln_program_view *v, const kiln_fmt_value *val, char *buf, size_t size)
{
    kiln_tensor t = {.dtype = (kiln_dtype)val->dtype, .rank = val->rank};
    if (val->storage == KILN_STORAGE_DYNAMIC) {
        snprintf(buf, size, "%s [dynamic]", kiln_dtype_name(t.dtype));
        return;
    }
    for (uint32_t d = 0; d < val->rank; d++) t.shape[d] = v->i64[val->shape + d];
    kiln_format_shape(&t, buf, size);
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
            cli_json_string(kiln_view_string(v, val->name));
            printf(", \"type\": ");
            cli_json_string(shape);
            printf("}");
        } else {
            char name[KILN_ESCAPED_NAME_SIZE];
            printf("    %s %u '%s': %s\n", inputs ? "input " : "output", i, cli_esc(name, kiln_view_string(v, val->name)),
                   shape);
        }
    }
}

static bool holds_metadata(const kiln_program_view *v, uint64_t segment)
{
    for (uint64_t k = 0; k < v->n_metadata; k++)
        if (v->metadata[k].segment == segment) return true;
    return false;
}

/* Bytes of the segments constants and payloads use; a metadata value's segment is listed with
   the metadata instead (one whose bytes equal a constant's, shared, is counted there too). */
static uint64_t const_bytes(const kiln_program_view *v)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < v->n_segments; i++)
        if (!holds_metadata(v, i)) total += v->segments[i].size;
    return total;
}

/* The program metadata (format version 2): each key and the byte size of its value. */
static void print_metadata(const kiln_program_view *v, bool json)
{
    for (uint64_t k = 0; k < v->n_metadata; k++) {
        const char *key = kiln_view_string(v, v->metadata[k].key);
        unsigned long long size = (unsigned long long)v->segments[v->metadata[k].segment].size;
        if (json) {
            printf("%s{\"key\": ", k ? ", " : "");
            cli_json_string(key);
            printf(", \"size\": %llu}", size);
        } else {
            char name[KILN_ESCAPED_NAME_SIZE];
            printf("  metadata '%s': %llu bytes\n", cli_esc(name, key), size);
        }
    }
}

/* One delegate payload, printed by its compile-time backend (kiln_payload_print). */
static void print_ctx(const cli_program_file *f, const cli_ctx_entry *e, kiln_describe_format format)
{
    const void *payload = kiln_view_segment_data(&f->view, e->segment);
    size_t size = (size_t)f->view.segments[e->segment].size;
    kiln_status st = kiln_payload_print(e->backend, e->op, payload, size, e->segment, e->uses, &e->check, format, stdout);
    if (st != KILN_OK) cli_error("inspect: context binary in segment %u: cannot describe it: %s", e->segment, kiln_status_str(st));
}

/* The delegate calls of a method: "    delegate 0: instruction 3, backend 'cpu', segment 2". */
static void print_delegates(const kiln_program_view *v, const kiln_fmt_method *m, bool json)
{
    size_t n = 0;
    for (uint32_t k = 0; k < m->n_instrs; k++) {
        const kiln_fmt_instr *in = &v->instrs[m->first_instr + k];
        if (in->kind != KILN_INSTR_DELEGATE) continue;
        if (json) {
            printf("%s{\"instruction\": %u, \"backend\": ", n ? ", " : "", k);
            cli_json_string(kiln_view_string(v, in->op));
            printf(", \"segment\": %u}", in->segment);
        } else {
            char backend[KILN_ESCAPED_NAME_SIZE];
            printf("    delegate %zu: instruction %u, backend '%s', context binary in segment %u\n", n, k,
                   cli_esc(backend, kiln_view_string(v, in->op)), in->segment);
        }
        n++;
    }
}

static void print_text(const cli_program_file *f, const char *path)
{
    const kiln_program_view *v = &f->view;
    char name[KILN_ESCAPED_NAME_SIZE];
    printf("program %s\n", cli_esc(name, path));
    printf("  format version %u, %llu bytes, %llu segments (%llu bytes of constants, each stored once)\n",
           v->version, (unsigned long long)v->size, (unsigned long long)v->n_segments,
           (unsigned long long)const_bytes(v));
    print_metadata(v, false);
    for (uint64_t i = 0; i < v->n_methods; i++) {
        const kiln_fmt_method *m = &v->methods[i];
        printf("  method '%s': %u instructions, arena %llu bytes, scratch %llu bytes\n", cli_esc(name, kiln_view_string(v, m->name)),
               m->n_instrs, (unsigned long long)m->arena_size, (unsigned long long)m->scratch_size);
        print_io(v, m, true, false);
        print_io(v, m, false, false);
        op_count ops[256];
        size_t n = histogram(v, m, ops, 256);
        printf("    ops:");
        for (size_t k = 0; k < n; k++) printf(" %s x%zu", cli_esc(name, ops[k].op), ops[k].n);
        printf("\n");
        print_delegates(v, m, false);
    }
    for (size_t i = 0; i < f->n_ctx; i++) print_ctx(f, &f->ctx[i], KILN_DESCRIBE_TEXT);
}

static void print_json(const cli_program_file *f)
{
    const kiln_program_view *v = &f->view;
    printf("{\"format_version\": %u, \"file_size\": %llu, \"segments\": %llu, \"constant_bytes\": %llu, \"metadata\": [",
           v->version, (unsigned long long)v->size, (unsigned long long)v->n_segments,
           (unsigned long long)const_bytes(v));
    print_metadata(v, true);
    printf("], \"methods\": [");
    for (uint64_t i = 0; i < v->n_methods; i++) {
        const kiln_fmt_method *m = &v->methods[i];
        printf("%s{\"name\": ", i ? ", " : "");
        cli_json_string(kiln_view_string(v, m->name));
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
            cli_json_string(ops[k].op);
            printf(": %zu", ops[k].n);
        }
        printf("}, \"delegates\": [");
        print_delegates(v, m, true);
        printf("]}");
    }
    printf("], \"context_binaries\": [");
    for (size_t i = 0; i < f->n_ctx; i++) {
        printf(i ? ", " : "");
        print_ctx(f, &f->ctx[i], KILN_DESCRIBE_JSON);
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
            char shown[KILN_ESCAPED_NAME_SIZE];
            cli_error("inspect: unexpected argument '%s' (try 'kiln inspect --help')", cli_esc(shown, argv[i]));
            return KILN_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        cli_error("inspect: no program given (try 'kiln inspect --help')");
        return KILN_EXIT_USAGE;
    }
    cli_program_file f;
    char message[512], shown[KILN_ESCAPED_NAME_SIZE];
    cli_esc(shown, path);
    int rc = cli_program_file_read(path, &f, message, sizeof message);
    if (rc) {
        cli_error("inspect: '%s': %s", shown, message);
        return rc;
    }
    if (json) print_json(&f);
    else print_text(&f, path);
    size_t problems = cli_program_file_problems(&f, message, sizeof message);
    cli_program_file_free(&f);
    if (!problems) return KILN_EXIT_OK;
    cli_error("inspect: '%s': %s%s", shown, message, problems > 1 ? " (and more problems: see 'kiln verify')" : "");
    return KILN_EXIT_INVALID;
}
