/* program_file.c — program files for inspect, verify and the --target check (see
 * program_file.h). Layer: tools. */
#include "program_file.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/alloc.h"
#include "core/hash.h"
#include "read_file.h"

#define MAX_PROGRAM_FILE ((uint64_t)1 << 46)
#define MAX_CTX 1024

/* Each distinct delegate payload once, in program order (identical payloads share a segment),
 * checked by the compile-time backend its calls name. false when out of memory. */
static bool collect_ctx(const kiln_program_view *v, cli_ctx_entry *out, size_t max, size_t *n_out)
{
    size_t n = 0;
    for (uint64_t k = 0; k < v->n_instrs; k++) {
        const kiln_fmt_instr *in = &v->instrs[k];
        if (in->kind != KILN_INSTR_DELEGATE) continue;
        size_t i = 0;
        while (i < n && out[i].segment != in->segment) i++;
        if (i < n) out[i].uses++;
        if (i < n || n == max) continue;
        cli_ctx_entry *e = &out[n++];
        memset(e, 0, sizeof *e);
        e->segment = in->segment;
        e->uses = 1;
        e->op = kiln_view_string(v, in->op);
        e->backend = kiln_compiler_backend_find(e->op);
        kiln_status st = kiln_payload_check_run(e->backend, kiln_view_segment_data(v, in->segment),
                                                (size_t)v->segments[in->segment].size, &e->check);
        if (st != KILN_OK) return false;
    }
    *n_out = n;
    return true;
}

int cli_program_file_init(cli_program_file *out, const void *bytes, size_t size, char *message, size_t message_size)
{
    memset(out, 0, sizeof *out);
    kiln_status st = kiln_program_view_init(&out->view, bytes, size);
    if (st != KILN_OK) {
        snprintf(message, message_size, "not a valid kiln program: %s", kiln_status_str(st));
        return st == KILN_ERROR_OUT_OF_MEMORY ? KILN_EXIT_FAILURE : KILN_EXIT_INVALID;
    }
    size_t max_ctx = out->view.n_instrs < MAX_CTX ? (size_t)out->view.n_instrs : MAX_CTX;
    out->ctx = kiln_alloc(kiln_allocator_default(), (max_ctx ? max_ctx : 1) * sizeof *out->ctx, _Alignof(cli_ctx_entry));
    if (!out->ctx) {
        snprintf(message, message_size, "out of memory");
        return KILN_EXIT_FAILURE;
    }
    if (!collect_ctx(&out->view, out->ctx, max_ctx, &out->n_ctx)) {
        cli_program_file_free(out);
        snprintf(message, message_size, "out of memory");
        return KILN_EXIT_FAILURE;
    }
    return 0;
}

int cli_program_file_read(const char *path, cli_program_file *out, char *message, size_t message_size)
{
    memset(out, 0, sizeof *out);
    uint8_t *bytes;
    size_t size;
    char why[256];
    kiln_status st = cli_read_file(path, kiln_allocator_default(), MAX_PROGRAM_FILE, &bytes, &size, why, sizeof why);
    if (st != KILN_OK) {
        snprintf(message, message_size, "cannot read it: %s", why);
        return st == KILN_ERROR_OUT_OF_MEMORY ? KILN_EXIT_FAILURE : KILN_EXIT_INVALID;
    }
    int rc = cli_program_file_init(out, bytes, size, message, message_size);
    if (rc) {
        cli_program_file_free(out);
        kiln_free(kiln_allocator_default(), bytes);
        return rc;
    }
    out->owned = bytes;
    return 0;
}

void cli_program_file_free(cli_program_file *f)
{
    if (!f) return;
    kiln_free(kiln_allocator_default(), f->ctx);
    kiln_free(kiln_allocator_default(), f->owned);
    memset(f, 0, sizeof *f);
}

/* The problem of one binary, or false. */
static bool ctx_problem(const cli_ctx_entry *e, char *buf, size_t size)
{
    if (e->check.status != KILN_OK)
        snprintf(buf, size, "context binary in segment %u is invalid: %s", e->segment, e->check.message);
    else if (!e->check.intact)
        snprintf(buf, size, "context binary in segment %u: %s", e->segment, e->check.message);
    else
        return false;
    return true;
}

static bool segment_reported(const cli_program_file *f, uint64_t segment)
{
    for (size_t i = 0; i < f->n_ctx; i++) {
        char ignored[8];
        if (f->ctx[i].segment == segment && ctx_problem(&f->ctx[i], ignored, sizeof ignored)) return true;
    }
    return false;
}

size_t cli_program_file_problems(const cli_program_file *f, char *first, size_t first_size)
{
    size_t n = 0;
    char line[512];
    if (first_size) first[0] = '\0';
    for (size_t i = 0; i < f->n_ctx; i++) {
        if (!ctx_problem(&f->ctx[i], line, sizeof line)) continue;
        if (n++ == 0) snprintf(first, first_size, "%s", line);
    }
    /* A binary already reported also fails its segment hash: counted once, as the binary. */
    const kiln_program_view *v = &f->view;
    for (uint64_t s = 0; s < v->n_segments; s++) {
        if (kiln_hash64(kiln_view_segment_data(v, (uint32_t)s), (size_t)v->segments[s].size, 0) == v->segments[s].hash ||
            segment_reported(f, s))
            continue;
        if (n++ == 0) snprintf(first, first_size, "segment %llu does not match its hash", (unsigned long long)s);
    }
    return n;
}

/* ---- records: the targets a binary's backend lists ------------------------------------------- */

/* Binaries with records to force: those whose backend lists targets. */
static bool has_records(const cli_ctx_entry *e)
{
    return e->backend && e->backend->targets;
}

/* Of those, the ones that decide the --target check: an invalid one fails loading for its own
   reason. */
static bool lists_targets(const cli_ctx_entry *e)
{
    return has_records(e) && e->check.status == KILN_OK;
}

static const void *entry_payload(const cli_program_file *f, const cli_ctx_entry *e, size_t *size)
{
    *size = (size_t)f->view.segments[e->segment].size;
    return kiln_view_segment_data(&f->view, e->segment);
}

typedef struct record_search {
    const char *target;
    bool found;
} record_search;

static void match_record(void *arg, const char *target)
{
    record_search *s = arg;
    if (strcmp(s->target, target) == 0) s->found = true;
}

/* Whether binary e has a record named target. */
static bool has_record(const cli_program_file *f, const cli_ctx_entry *e, const char *target)
{
    record_search s = {target, false};
    size_t size;
    const void *payload = entry_payload(f, e, &size);
    return lists_targets(e) && e->backend->targets(payload, size, match_record, &s) == KILN_OK && s.found;
}

/* The record names seen so far, each once, in file order, and the listing they make. */
typedef struct record_list {
    char *names[64];
    size_t n_names;
    char *buf;                      /* "'generic', 'x86-64-v4'" */
    size_t size, used;
} record_list;

static void add_record(void *arg, const char *target)
{
    record_list *l = arg;
    for (size_t i = 0; i < l->n_names; i++)
        if (strcmp(l->names[i], target) == 0) return;
    if (l->n_names < sizeof l->names / sizeof l->names[0]) {
        size_t len = strlen(target) + 1;
        char *copy = kiln_alloc(kiln_allocator_default(), len, 1);
        if (copy) l->names[l->n_names++] = memcpy(copy, target, len);
    }
    char shown[KILN_ESCAPED_NAME_SIZE];
    if (l->used >= l->size) return;
    int w = snprintf(l->buf + l->used, l->size - l->used, "%s'%s'", l->used ? ", " : "", cli_esc(shown, target));
    if (w > 0) l->used += (size_t)w;
}

/* "'generic', 'x86-64-v4'": every record name of the file once, in file order. */
static void list_records(const cli_program_file *f, char *buf, size_t size)
{
    record_list l = {.buf = buf, .size = size};
    buf[0] = '\0';
    for (size_t i = 0; i < f->n_ctx; i++) {
        size_t payload_size;
        const void *payload = entry_payload(f, &f->ctx[i], &payload_size);
        if (lists_targets(&f->ctx[i])) (void)f->ctx[i].backend->targets(payload, payload_size, add_record, &l);
    }
    for (size_t i = 0; i < l.n_names; i++) kiln_free(kiln_allocator_default(), l.names[i]);
}

int cli_check_target(const char *cmd, const char *path, const void *bytes, size_t size, const char *target)
{
    cli_program_file f;
    char message[256];
    int rc = bytes ? cli_program_file_init(&f, bytes, size, message, sizeof message)
                   : cli_program_file_read(path, &f, message, sizeof message);
    if (rc) return 0;
    size_t with_records = 0;
    bool everywhere = true;
    for (size_t i = 0; i < f.n_ctx; i++) {
        if (!has_records(&f.ctx[i])) continue;
        with_records++;
        everywhere = everywhere && (!lists_targets(&f.ctx[i]) || has_record(&f, &f.ctx[i], target));
    }
    everywhere = everywhere && with_records > 0;
    char shown_target[KILN_ESCAPED_NAME_SIZE], shown_path[KILN_ESCAPED_NAME_SIZE], records[1024];
    cli_esc(shown_target, target);
    cli_esc(shown_path, path);
    if (with_records == 0) {
        cli_error("%s: --target '%s': '%s' has no context binaries, so there is no record to force (leave --target out)",
                  cmd, shown_target, shown_path);
    } else if (!everywhere) {
        list_records(&f, records, sizeof records);
        cli_error("%s: '%s' has no record '%s'; its records: %s (pass one of them to --target, or leave --target out)",
                  cmd, shown_path, shown_target, records);
    }
    cli_program_file_free(&f);
    return everywhere ? 0 : KILN_EXIT_USAGE;
}
