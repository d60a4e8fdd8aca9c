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

static bool is_cpu_delegate(const kiln_program_view *v, const kiln_fmt_instr *in)
{
    return in->kind == KILN_INSTR_DELEGATE && strcmp(kiln_view_string(v, in->op), "cpu") == 0;
}

/* Validity, signature and block hashes of one binary. */
static void check_ctx(cli_ctx_entry *e, const uint8_t *data, uint64_t size)
{
    e->bad_block = CLI_NO_BLOCK;
    e->status = kiln_cpu_ctxbin_describe(data, (size_t)size, kiln_allocator_default(), &e->desc, e->error,
                                         sizeof e->error);
    if (e->status == KILN_OK) e->bin = e->desc.bin;
    if (size >= KILN_CTX_HEADER_SIZE) {
        e->signature_stored = ((const kiln_ctx_header *)(const void *)data)->signature;
        e->signature_computed = kiln_ctx_signature(data, (size_t)size);
        e->signature_ok = e->signature_stored == e->signature_computed;
    }
    if (e->status != KILN_OK) return;
    for (uint32_t b = 0; b < e->bin.header->n_blocks && e->bad_block == CLI_NO_BLOCK; b++) {
        const kiln_ctx_block *k = &e->bin.blocks[b];
        if (kiln_hash64(kiln_ctxbin_block_data(&e->bin, b), (size_t)k->size, 0) != k->hash) e->bad_block = b;
    }
}

/* Each distinct cpu payload once, in program order (identical binaries share a segment). */
static size_t collect_ctx(const kiln_program_view *v, cli_ctx_entry *out, size_t max)
{
    size_t n = 0;
    for (uint64_t k = 0; k < v->n_instrs; k++) {
        const kiln_fmt_instr *in = &v->instrs[k];
        if (!is_cpu_delegate(v, in)) continue;
        size_t i = 0;
        while (i < n && out[i].segment != in->segment) i++;
        if (i < n) out[i].uses++;
        if (i < n || n == max) continue;
        cli_ctx_entry *e = &out[n++];
        memset(e, 0, sizeof *e);
        e->segment = in->segment;
        e->uses = 1;
        check_ctx(e, kiln_view_segment_data(v, in->segment), v->segments[in->segment].size);
    }
    return n;
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
    out->n_ctx = collect_ctx(&out->view, out->ctx, max_ctx);
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
    for (size_t i = 0; f->ctx && i < f->n_ctx; i++) kiln_cpu_ctxbin_desc_free(&f->ctx[i].desc);
    kiln_free(kiln_allocator_default(), f->ctx);
    kiln_free(kiln_allocator_default(), f->owned);
    memset(f, 0, sizeof *f);
}

/* The problem of one binary, or false. */
static bool ctx_problem(const cli_ctx_entry *e, char *buf, size_t size)
{
    if (e->status != KILN_OK) {
        snprintf(buf, size, "context binary in segment %u is invalid: %s", e->segment, e->error);
    } else if (!e->signature_ok) {
        snprintf(buf, size, "context binary in segment %u: signature %016llx does not match its contents (they hash to %016llx)",
                 e->segment, (unsigned long long)e->signature_stored, (unsigned long long)e->signature_computed);
    } else if (e->bad_block != CLI_NO_BLOCK) {
        snprintf(buf, size, "context binary in segment %u: weight block %u does not match its hash", e->segment,
                 e->bad_block);
    } else {
        return false;
    }
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

/* Whether binary e has a record named target. */
static bool has_record(const cli_ctx_entry *e, const char *target)
{
    for (uint32_t r = 0; e->status == KILN_OK && r < e->desc.n_records; r++)
        if (strcmp(e->desc.records[r].target, target) == 0) return true;
    return false;
}

/* "'generic', 'x86-64-v4'": every record name of the file once, in file order. */
static void list_records(const cli_program_file *f, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n_ctx; i++) {
        for (uint32_t r = 0; f->ctx[i].status == KILN_OK && r < f->ctx[i].desc.n_records && n < size; r++) {
            const char *name = f->ctx[i].desc.records[r].target;
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++) seen = has_record(&f->ctx[j], name);
            for (uint32_t q = 0; q < r && !seen; q++) seen = strcmp(f->ctx[i].desc.records[q].target, name) == 0;
            if (seen) continue;
            char shown[KILN_ESCAPED_NAME_SIZE];
            int w = snprintf(buf + n, size - n, "%s'%s'", n ? ", " : "", cli_esc(shown, name));
            if (w < 0) break;
            n += (size_t)w;
        }
    }
}

int cli_check_target(const char *cmd, const char *path, const void *bytes, size_t size, const char *target)
{
    cli_program_file f;
    char message[256];
    int rc = bytes ? cli_program_file_init(&f, bytes, size, message, sizeof message)
                   : cli_program_file_read(path, &f, message, sizeof message);
    if (rc) return 0;
    /* Invalid binaries decide nothing here: loading fails on them for their own reason. */
    bool everywhere = f.n_ctx > 0;
    for (size_t i = 0; i < f.n_ctx && everywhere; i++)
        everywhere = f.ctx[i].status != KILN_OK || has_record(&f.ctx[i], target);
    char shown_target[KILN_ESCAPED_NAME_SIZE], shown_path[KILN_ESCAPED_NAME_SIZE], records[1024];
    cli_esc(shown_target, target);
    cli_esc(shown_path, path);
    if (f.n_ctx == 0) {
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
