/* cmd_scratch_size.c — `kiln scratch-size A.kiln B.kiln ... [--write]`: the largest scratch need
 * of the given programs' cpu context binaries (for example the shards of one model), per
 * program and overall, and with --write that size recorded as the scratch-group size of every
 * one of their binaries, so that at load their contexts join one scratch group of that size.
 *
 * Layer: tools. Each program is validated by the format reader and each binary by its
 * compile-time backend's check (compiler_backend.h: the validation loading does, without any
 * executable state) through program_scratch.h, all before anything is written; the group size is then set and each file replaced atomically
 * through the compiler's program_scratch.h (a link is followed to the program it names). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compiler/onnx/onnx_tensor.h"
#include "compiler/program_scratch.h"
#include "core/alloc.h"
#include "format/program_reader.h"

typedef struct program_scratch {
    const char *path;
    uint8_t *bytes;
    size_t size;
    kiln_program_scratch facts; /* its binaries' largest need and recorded group size */
} program_scratch;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln scratch-size PROGRAM.kiln ... [--write] [--json]\n"
            "\n"
            "Reports the scratch memory the cpu context binaries of the given programs need (the\n"
            "largest graph scratch size over every record), per program and the largest overall —\n"
            "for example over the shards of one model. With --write, records that largest need as\n"
            "the scratch-group size in every context binary of every program (each file replaced\n"
            "atomically), so their contexts join one scratch group of that size when loaded: one\n"
            "buffer for all of them instead of one each. Nothing is written unless every program\n"
            "and binary is valid.\n"
            "\n"
            "options:\n"
            "  --write      record the largest need as the group size in every program\n"
            "  --json       machine-readable output\n"
            "  -h, --help   show this help\n"
            "\n"
            "Exit status: 0 ok, 1 I/O failure, 2 usage error, 4 invalid program or context binary.\n");
}

/* Validate every context binary of the program through its backend's check, then query. */
static int describe_program(program_scratch *p)
{
    kiln_program_view v;
    kiln_status st = kiln_program_view_init(&v, p->bytes, p->size);
    if (st != KILN_OK) {
        cli_error("'%s' is not a valid kiln program: %s", p->path, kiln_status_str(st));
        return cli_exit_status(st);
    }
    uint32_t segment = 0;
    char error[256] = "";
    st = kiln_program_scratch_check(p->bytes, p->size, &segment, error, sizeof error);
    if (st != KILN_OK) {
        if (error[0]) cli_error("'%s', segment %u: %s", p->path, segment, error);
        else cli_error("'%s': %s", p->path, kiln_status_str(st));
        return cli_exit_status(st);
    }
    st = kiln_program_scratch_query(p->bytes, p->size, &p->facts);
    if (st != KILN_OK) {
        cli_error("'%s': %s", p->path, kiln_status_str(st));
        return cli_exit_status(st);
    }
    return 0;
}

static int load_program(program_scratch *p)
{
    const char *why;
    kiln_status st = kiln_read_file(p->path, kiln_allocator_default(), &p->bytes, &p->size, &why);
    if (st != KILN_OK) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        cli_error("cannot read '%s': %s", cli_esc(shown, p->path), why);
        return cli_exit_status(st);
    }
    return describe_program(p);
}

static int write_group(program_scratch *p, uint64_t group)
{
    if (!p->facts.n_binaries) return 0;
    char message[1024] = "";
    kiln_status st = kiln_program_scratch_write(NULL, p->path, p->bytes, p->size, group, message, sizeof message);
    if (st != KILN_OK) {
        cli_error("%s", message[0] ? message : kiln_status_str(st));
        return cli_exit_status(st);
    }
    p->facts.group = group;
    p->facts.groups_differ = false;
    return 0;
}

static void print_group(const program_scratch *p)
{
    if (!p->facts.n_binaries) printf("no context binaries");
    else if (p->facts.groups_differ) printf("group sizes differ (largest %llu bytes)", (unsigned long long)p->facts.group);
    else if (p->facts.group) printf("group size %llu bytes", (unsigned long long)p->facts.group);
    else printf("group size unset (each context sizes its own)");
}

static void print_text(const program_scratch *ps, size_t n, uint64_t need, bool written)
{
    for (size_t i = 0; i < n; i++) {
        printf("%s: %zu context binar%s, scratch need %llu bytes, ", ps[i].path, ps[i].facts.n_binaries,
               ps[i].facts.n_binaries == 1 ? "y" : "ies", (unsigned long long)ps[i].facts.need);
        print_group(&ps[i]);
        printf("\n");
    }
    printf("largest scratch need: %llu bytes over %zu program%s\n", (unsigned long long)need, n, n == 1 ? "" : "s");
    if (written) printf("recorded group size %llu bytes in every context binary\n", (unsigned long long)need);
}

static void print_json(const program_scratch *ps, size_t n, uint64_t need, bool written)
{
    printf("{\"programs\": [");
    for (size_t i = 0; i < n; i++) {
        printf("%s{\"path\": \"", i ? ", " : "");
        for (const char *c = ps[i].path; *c; c++) {
            if (*c == '"' || *c == '\\') putchar('\\');
            if ((unsigned char)*c >= 0x20) putchar(*c);
        }
        printf("\", \"context_binaries\": %zu, \"scratch_need\": %llu, \"group_scratch_size\": %llu, "
               "\"group_sizes_differ\": %s}",
               ps[i].facts.n_binaries, (unsigned long long)ps[i].facts.need, (unsigned long long)ps[i].facts.group,
               ps[i].facts.groups_differ ? "true" : "false");
    }
    printf("], \"scratch_need\": %llu, \"written\": %s}\n", (unsigned long long)need, written ? "true" : "false");
}

static int run(program_scratch *ps, size_t n, bool write, bool json)
{
    uint64_t need = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = load_program(&ps[i]);
        if (rc) return rc;
        if (ps[i].facts.need > need) need = ps[i].facts.need;
    }
    /* A need of 0 (no binary has intermediates) leaves nothing to group. */
    bool written = write && need > 0;
    for (size_t i = 0; written && i < n; i++) {
        int rc = write_group(&ps[i], need);
        if (rc) return rc;
    }
    if (json) print_json(ps, n, need, written);
    else print_text(ps, n, need, written);
    return KILN_EXIT_OK;
}

int cmd_scratch_size(int argc, char **argv)
{
    program_scratch *programs = calloc((size_t)argc, sizeof *programs);
    if (!programs) {
        cli_error("scratch-size: out of memory");
        return KILN_EXIT_FAILURE;
    }
    size_t n = 0;
    int rc = KILN_EXIT_USAGE;
    bool write = false, json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            rc = KILN_EXIT_OK;
            goto done;
        } else if (strcmp(a, "--write") == 0) {
            write = true;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (a[0] == '-') {
            cli_error("scratch-size: unknown option '%s' (try 'kiln scratch-size --help')", a);
            goto done;
        } else {
            programs[n++].path = a;
        }
    }
    if (!n) cli_error("scratch-size: no program given (try 'kiln scratch-size --help')");
    else rc = run(programs, n, write, json);
done:
    for (size_t i = 0; i < n; i++) kiln_free(kiln_allocator_default(), programs[i].bytes);
    free(programs);
    return rc;
}
