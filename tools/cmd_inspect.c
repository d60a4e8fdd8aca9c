/* cmd_inspect.c — `kiln inspect`: what a program file holds (methods, I/O, ops, memory plan,
 * segments, delegate calls) and, for each context binary of the `cpu` backend, its signature
 * (checked against the contents), compile spec, records, graphs, weight and scratch sizes — as
 * text or --json. Reads the program through the validating format reader and each context
 * binary through the runtime's metadata query (backends/cpu/rt/ctxbin_describe.h: its own
 * validating reader, without binding weights, choosing kernels or touching the delegate cache),
 * so what inspect calls valid is exactly what a module would load. Names from the file are
 * printed escaped (cli_esc), so a newline or terminal escape in one cannot forge output lines.
 * The exit status is 4 when a context binary is invalid or a signature or hash does not match
 * (program_file.h says what is checked), after the whole description is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/rt/ctxbin_describe.h"
#include "backends/cpu/rt/ctxbin_reader.h"
#include "cli.h"
#include "core/alloc.h"
#include "core/cpu_features.h"
#include "format/program_reader.h"
#include "program_file.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln inspect PROGRAM.kiln [--json]\n"
            "\n"
            "Describes a program: format version, segments (deduplicated constant data), and per\n"
            "method its inputs, outputs, instruction count, op histogram, planned activation arena\n"
            "and scratch sizes, and its delegate calls. For each context binary of the cpu backend:\n"
            "signature (checked against the contents), compile spec, weight bytes, and per record\n"
            "its target, required CPU features, register tile, cache sizes, its bytes, the bytes it\n"
            "shares with other records and what it added to the binary (bytes and percent over the\n"
            "records listed before it), and per graph its steps, inputs, outputs and scratch size.\n"
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

static uint64_t const_bytes(const kiln_program_view *v)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < v->n_segments; i++) total += v->segments[i].size;
    return total;
}

/* ---- context binaries: the payloads of the cpu backend's DELEGATE instructions ---------- */

static uint64_t weight_bytes(const kiln_ctxbin *b)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < b->header->n_blocks; i++) total += b->blocks[i].size;
    return total;
}

/* ---- what each record costs ------------------------------------------------------------------
 * A record's bytes are its own tables (record entry, graph table, tensors, steps, target name)
 * plus every weight block its graphs use, each counted once with its table entry and its 64-byte
 * alignment. Of those, `shared` are the bytes of blocks another record uses too. `added` is what
 * the record cost the binary on top of the records listed before it: its tables and the blocks no
 * earlier record uses; its percentage is relative to the binary those earlier records make
 * alone (file size minus what this record and the later ones added). The header, graph names
 * and padding are common to all. */

typedef struct record_size {
    uint64_t bytes, shared, added;
    double added_percent;           /* < 0 for the first record: nothing before it */
} record_size;

static uint64_t block_cost(const kiln_ctxbin *b, uint32_t block)
{
    return ((b->blocks[block].size + 63) & ~(uint64_t)63) + sizeof(kiln_ctx_block);
}

static uint64_t record_table_bytes(const kiln_ctxbin *b, const kiln_ctx_record *r)
{
    uint64_t bytes = sizeof(kiln_ctx_record) + (uint64_t)r->n_graphs * sizeof(kiln_ctx_graph) +
                     strlen(kiln_ctxbin_string(b, r->target)) + 1;
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(b, r);
    for (uint32_t g = 0; g < r->n_graphs; g++)
        bytes += (uint64_t)graphs[g].n_tensors * sizeof(kiln_ctx_tensor) + (uint64_t)graphs[g].n_steps * sizeof(kiln_ctx_step);
    return bytes;
}

/* users[block]: bit r set when record r references the block (the reader allows 64 records). */
static void mark_block_users(const kiln_ctxbin *b, uint64_t *users)
{
    for (uint32_t r = 0; r < b->header->n_records; r++) {
        const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(b, &b->records[r]);
        for (uint32_t g = 0; g < b->records[r].n_graphs; g++) {
            const kiln_ctx_tensor *t = kiln_ctxbin_tensors(b, &graphs[g]);
            for (uint32_t i = 0; i < graphs[g].n_tensors; i++)
                if (t[i].kind == KILN_CTX_TENSOR_WEIGHT) users[t[i].block] |= (uint64_t)1 << r;
        }
    }
}

/* sizes[n_records]; false when out of memory. */
static bool record_sizes(const kiln_ctxbin *b, uint64_t file_size, record_size *sizes)
{
    uint32_t n_records = b->header->n_records, n_blocks = b->header->n_blocks;
    uint64_t *users = kiln_alloc_zero(kiln_allocator_default(), ((size_t)n_blocks + 1) * sizeof *users, 8);
    if (!users) return false;
    mark_block_users(b, users);
    uint64_t added_total = 0;
    for (uint32_t r = 0; r < n_records; r++) {
        uint64_t self = (uint64_t)1 << r, earlier = self - 1;
        record_size *s = &sizes[r];
        s->bytes = s->added = record_table_bytes(b, &b->records[r]);
        s->shared = 0;
        for (uint32_t k = 0; k < n_blocks; k++) {
            if (!(users[k] & self)) continue;
            uint64_t cost = block_cost(b, k);
            s->bytes += cost;
            if (users[k] & ~self) s->shared += cost;
            if (!(users[k] & earlier)) s->added += cost;
        }
        added_total += s->added;
    }
    uint64_t later = added_total; /* what records r, r+1, ... added */
    for (uint32_t r = 0; r < n_records; r++) {
        uint64_t before = file_size > later ? file_size - later : 0;
        sizes[r].added_percent = r == 0 || before == 0 ? -1.0 : 100.0 * (double)sizes[r].added / (double)before;
        later -= sizes[r].added;
    }
    kiln_free(kiln_allocator_default(), users);
    return true;
}

static void print_record_size_text(const record_size *s)
{
    printf("      size: %llu bytes, %llu shared with other records; ", (unsigned long long)s->bytes,
           (unsigned long long)s->shared);
    if (s->added_percent < 0) printf("first record: %llu bytes of the binary\n", (unsigned long long)s->added);
    else printf("this target added %llu bytes (+%.2f%%)\n", (unsigned long long)s->added, s->added_percent);
}

static void print_record_size_json(const record_size *s)
{
    printf(", \"bytes\": %llu, \"shared_bytes\": %llu, \"added_bytes\": %llu, \"added_percent\": ",
           (unsigned long long)s->bytes, (unsigned long long)s->shared, (unsigned long long)s->added);
    if (s->added_percent < 0) printf("null");
    else printf("%.4f", s->added_percent);
}

/* "gemm 2, unary 3" (text) or "\"gemm\": 2, \"unary\": 3" (json) */
static void step_histogram(const kiln_ctxbin *b, const kiln_ctx_graph *g, bool json)
{
    size_t counts[KILN_CPU_OP_COUNT] = {0};
    const kiln_ctx_step *steps = kiln_ctxbin_steps(b, g);
    for (uint32_t k = 0; k < g->n_steps; k++) counts[steps[k].op]++;
    bool first = true;
    for (uint32_t op = 1; op < KILN_CPU_OP_COUNT; op++) {
        if (!counts[op]) continue;
        if (json) printf("%s\"%s\": %zu", first ? "" : ", ", kiln_ctxbin_op_name(op), counts[op]);
        else printf("%s%s %zu", first ? "" : ", ", kiln_ctxbin_op_name(op), counts[op]);
        first = false;
    }
}

static void graph_io(const kiln_cpu_graph_desc *g, bool inputs, bool json)
{
    const kiln_tensor *t = inputs ? g->inputs : g->outputs;
    uint32_t n = inputs ? g->n_inputs : g->n_outputs;
    for (uint32_t i = 0; i < n; i++) {
        char shape[160];
        cli_format_shape(&t[i], shape, sizeof shape);
        if (json) {
            printf("%s", i ? ", " : "");
            cli_json_string(shape);
        } else {
            printf("%s%s", i ? ", " : "", shape);
        }
    }
}

static void print_ctx_text(const cli_ctx_entry *e, uint64_t size)
{
    printf("  context binary in segment %u: %llu bytes, %zu delegate call%s\n", e->segment, (unsigned long long)size,
           e->uses, e->uses == 1 ? "" : "s");
    if (e->status != KILN_OK) {
        char why[sizeof e->error];
        printf("    INVALID (%s): %s\n", kiln_status_name(e->status), kiln_text_escape(why, sizeof why, e->error, (size_t)-1));
        return;
    }
    const kiln_ctxbin *b = &e->bin;
    const kiln_ctx_header *h = b->header;
    if (e->signature_ok)
        printf("    signature %016llx (matches the contents)\n", (unsigned long long)h->signature);
    else
        printf("    signature %016llx (DOES NOT MATCH the contents, which hash to %016llx)\n",
               (unsigned long long)h->signature, (unsigned long long)e->signature_computed);
    if (e->bad_block != CLI_NO_BLOCK) printf("    weight block %u DOES NOT MATCH its hash\n", e->bad_block);
    printf("    spec: precision %s%s%s%s, scratch group %llu bytes%s\n", h->precision ? "bf16" : "f32",
           h->spec_flags & KILN_CTX_SPEC_WEIGHT_SHARING ? ", weight sharing" : "", h->spec_flags & KILN_CTX_SPEC_SLC ? ", slc" : "",
           h->spec_flags & KILN_CTX_SPEC_NO_STRASSEN ? ", no strassen" : "",
           (unsigned long long)h->group_scratch_size, h->group_scratch_size ? "" : " (the graphs' own need)");
    printf("    weights: %u block%s, %llu bytes\n", h->n_blocks, h->n_blocks == 1 ? "" : "s",
           (unsigned long long)weight_bytes(b));
    printf("    scratch need: %llu bytes (largest graph of any record)%s\n", (unsigned long long)e->desc.scratch_need,
           e->desc.group_fits ? "" : "; the group size is SMALLER: records that need more will not load");
    record_size sizes[64];
    bool sized = h->n_records <= 64 && record_sizes(b, size, sizes);
    for (uint32_t r = 0; r < h->n_records; r++) {
        const kiln_ctx_record *rec = &b->records[r];
        char features[256], target[KILN_ESCAPED_NAME_SIZE];
        kiln_cpu_features_format(rec->features, features, sizeof features);
        printf("    record '%s': needs [%s], tile %ux%u, caches L1 %lluK L2 %lluK L3 %lluK\n",
               cli_esc(target, kiln_ctxbin_string(b, rec->target)), features, rec->gemm_mr, rec->gemm_nr,
               (unsigned long long)rec->l1_size >> 10, (unsigned long long)rec->l2_size >> 10,
               (unsigned long long)rec->l3_size >> 10);
        if (sized) print_record_size_text(&sizes[r]);
        const kiln_cpu_record_desc *rd = &e->desc.records[r];
        for (uint32_t g = 0; g < rd->n_graphs; g++) {
            const kiln_cpu_graph_desc *gd = &rd->graphs[g];
            char name[KILN_ESCAPED_NAME_SIZE];
            printf("      graph '%s': %u steps (", cli_esc(name, gd->name), gd->n_steps);
            step_histogram(b, gd->fmt, false);
            printf("), inputs ");
            graph_io(gd, true, false);
            printf(", outputs ");
            graph_io(gd, false, false);
            printf(", scratch %llu bytes (workspace %llu)\n", (unsigned long long)gd->scratch_size,
                   (unsigned long long)gd->workspace_size);
        }
    }
}

static void print_ctx_json(const cli_ctx_entry *e, uint64_t size)
{
    printf("{\"segment\": %u, \"size\": %llu, \"delegate_calls\": %zu, \"valid\": %s", e->segment,
           (unsigned long long)size, e->uses, e->status == KILN_OK ? "true" : "false");
    if (e->status != KILN_OK) {
        printf(", \"error\": ");
        cli_json_string(e->error);
        printf("}");
        return;
    }
    const kiln_ctxbin *b = &e->bin;
    const kiln_ctx_header *h = b->header;
    record_size sizes[64];
    bool sized = h->n_records <= 64 && record_sizes(b, size, sizes);
    printf(", \"signature\": \"%016llx\", \"signature_ok\": %s, \"weight_blocks_ok\": %s, \"precision\": \"%s\", \"weight_sharing\": %s, "
           "\"slc\": %s, \"no_strassen\": %s, \"group_scratch_size\": %llu, \"scratch_need\": %llu, \"group_fits\": %s, \"weight_blocks\": %u, "
           "\"weight_bytes\": %llu, \"records\": [",
           (unsigned long long)h->signature, e->signature_ok ? "true" : "false",
           e->bad_block == CLI_NO_BLOCK ? "true" : "false", h->precision ? "bf16" : "f32",
           h->spec_flags & KILN_CTX_SPEC_WEIGHT_SHARING ? "true" : "false", h->spec_flags & KILN_CTX_SPEC_SLC ? "true" : "false",
           h->spec_flags & KILN_CTX_SPEC_NO_STRASSEN ? "true" : "false",
           (unsigned long long)h->group_scratch_size, (unsigned long long)e->desc.scratch_need,
           e->desc.group_fits ? "true" : "false", h->n_blocks, (unsigned long long)weight_bytes(b));
    for (uint32_t r = 0; r < h->n_records; r++) {
        const kiln_ctx_record *rec = &b->records[r];
        char features[256];
        kiln_cpu_features_format(rec->features, features, sizeof features);
        printf("%s{\"target\": ", r ? ", " : "");
        cli_json_string(kiln_ctxbin_string(b, rec->target));
        printf(", \"features\": ");
        cli_json_string(features);
        printf(", \"gemm_mr\": %u, \"gemm_nr\": %u, \"l1_size\": %llu, \"l2_size\": %llu, \"l3_size\": %llu",
               rec->gemm_mr, rec->gemm_nr, (unsigned long long)rec->l1_size, (unsigned long long)rec->l2_size,
               (unsigned long long)rec->l3_size);
        if (sized) print_record_size_json(&sizes[r]);
        printf(", \"graphs\": [");
        const kiln_cpu_record_desc *rd = &e->desc.records[r];
        for (uint32_t g = 0; g < rd->n_graphs; g++) {
            const kiln_cpu_graph_desc *gd = &rd->graphs[g];
            printf("%s{\"name\": ", g ? ", " : "");
            cli_json_string(gd->name);
            printf(", \"steps\": %u, \"ops\": {", gd->n_steps);
            step_histogram(b, gd->fmt, true);
            printf("}, \"inputs\": [");
            graph_io(gd, true, true);
            printf("], \"outputs\": [");
            graph_io(gd, false, true);
            printf("], \"scratch_size\": %llu, \"workspace_size\": %llu}", (unsigned long long)gd->scratch_size,
                   (unsigned long long)gd->workspace_size);
        }
        printf("]}");
    }
    printf("]}");
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

static void print_text(const kiln_program_view *v, const char *path, const cli_ctx_entry *ctx, size_t n_ctx)
{
    char name[KILN_ESCAPED_NAME_SIZE];
    printf("program %s\n", cli_esc(name, path));
    printf("  format version %u, %llu bytes, %llu segments (%llu bytes of constants, each stored once)\n",
           KILN_FORMAT_VERSION, (unsigned long long)v->size, (unsigned long long)v->n_segments,
           (unsigned long long)const_bytes(v));
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
    for (size_t i = 0; i < n_ctx; i++) print_ctx_text(&ctx[i], v->segments[ctx[i].segment].size);
}

static void print_json(const kiln_program_view *v, const cli_ctx_entry *ctx, size_t n_ctx)
{
    printf("{\"format_version\": %u, \"file_size\": %llu, \"segments\": %llu, \"constant_bytes\": %llu, \"methods\": [",
           KILN_FORMAT_VERSION, (unsigned long long)v->size, (unsigned long long)v->n_segments,
           (unsigned long long)const_bytes(v));
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
    for (size_t i = 0; i < n_ctx; i++) {
        printf(i ? ", " : "");
        print_ctx_json(&ctx[i], v->segments[ctx[i].segment].size);
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
    if (json) print_json(&f.view, f.ctx, f.n_ctx);
    else print_text(&f.view, path, f.ctx, f.n_ctx);
    size_t problems = cli_program_file_problems(&f, message, sizeof message);
    cli_program_file_free(&f);
    if (!problems) return KILN_EXIT_OK;
    cli_error("inspect: '%s': %s%s", shown, message, problems > 1 ? " (and more problems: see 'kiln verify')" : "");
    return KILN_EXIT_INVALID;
}
