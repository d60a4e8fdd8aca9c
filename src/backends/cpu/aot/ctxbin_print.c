/* ctxbin_print.c — checking and describing a `cpu` context binary for the tools (see
 * ctxbin_print.h). Layer: backends/cpu/aot. */
#include "backends/cpu/aot/ctxbin_print.h"

#include <string.h>

#include "backends/cpu/cpu_format.h"
#include "backends/cpu/rt/ctxbin_describe.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/cpu_features.h"
#include "core/hash.h"
#include "core/text_escape.h"
#include "core/text_format.h"

#define NO_BLOCK UINT32_MAX

/* A validated binary with what loading does not check. */
typedef struct checked_binary {
    kiln_cpu_ctxbin_desc desc;
    uint64_t signature_computed;
    bool signature_ok;
    uint32_t bad_block;             /* first weight block whose hash is wrong, or NO_BLOCK */
} checked_binary;

/* KILN_OK with *c to release (kiln_cpu_ctxbin_desc_free), or why the reader refused it. */
static kiln_status check_binary(const void *data, size_t size, checked_binary *c, char *message, size_t message_size)
{
    memset(c, 0, sizeof *c);
    kiln_status st = kiln_cpu_ctxbin_describe(data, size, kiln_allocator_default(), &c->desc, message, message_size);
    if (st != KILN_OK) return st;
    c->signature_computed = kiln_ctx_signature(data, size);
    c->signature_ok = c->desc.signature == c->signature_computed;
    c->bad_block = NO_BLOCK;
    const kiln_ctxbin *b = &c->desc.bin;
    for (uint32_t k = 0; k < b->header->n_blocks && c->bad_block == NO_BLOCK; k++)
        if (kiln_hash64(kiln_ctxbin_block_data(b, k), (size_t)b->blocks[k].size, 0) != b->blocks[k].hash) c->bad_block = k;
    return KILN_OK;
}

kiln_status kiln_cpu_aot_check(const void *payload, size_t size, kiln_payload_check *check)
{
    checked_binary c;
    check->status = check_binary(payload, size, &c, check->message, sizeof check->message);
    check->intact = false;
    if (check->status != KILN_OK) return KILN_OK;
    if (!c.signature_ok)
        snprintf(check->message, sizeof check->message, "signature %016llx does not match its contents (they hash to %016llx)",
                 (unsigned long long)c.desc.signature, (unsigned long long)c.signature_computed);
    else if (c.bad_block != NO_BLOCK)
        snprintf(check->message, sizeof check->message, "weight block %u does not match its hash", c.bad_block);
    else
        check->intact = true;
    kiln_cpu_ctxbin_desc_free(&c.desc);
    return KILN_OK;
}

kiln_status kiln_cpu_aot_targets(const void *payload, size_t size, void (*fn)(void *arg, const char *target), void *arg)
{
    kiln_cpu_ctxbin_desc d;
    char ignored[8];
    KILN_TRY(kiln_cpu_ctxbin_describe(payload, size, kiln_allocator_default(), &d, ignored, sizeof ignored));
    for (uint32_t r = 0; r < d.n_records; r++) fn(arg, d.records[r].target);
    kiln_cpu_ctxbin_desc_free(&d);
    return KILN_OK;
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
    return kiln_align_up_u64(b->blocks[block].size, 64) + sizeof(kiln_ctx_block);
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

static void print_record_size_text(const record_size *s, FILE *out)
{
    fprintf(out, "      size: %llu bytes, %llu shared with other records; ", (unsigned long long)s->bytes,
            (unsigned long long)s->shared);
    if (s->added_percent < 0) fprintf(out, "first record: %llu bytes of the binary\n", (unsigned long long)s->added);
    else fprintf(out, "this target added %llu bytes (+%.2f%%)\n", (unsigned long long)s->added, s->added_percent);
}

static void print_record_size_json(const record_size *s, FILE *out)
{
    fprintf(out, ", \"bytes\": %llu, \"shared_bytes\": %llu, \"added_bytes\": %llu, \"added_percent\": ",
            (unsigned long long)s->bytes, (unsigned long long)s->shared, (unsigned long long)s->added);
    if (s->added_percent < 0) fprintf(out, "null");
    else fprintf(out, "%.4f", s->added_percent);
}

/* ---- graphs ---------------------------------------------------------------------------------- */

/* "gemm 2, unary 3" (text) or "\"gemm\": 2, \"unary\": 3" (json) */
static void step_histogram(const kiln_ctxbin *b, const kiln_ctx_graph *g, bool json, FILE *out)
{
    size_t counts[KILN_CPU_OP_COUNT] = {0};
    const kiln_ctx_step *steps = kiln_ctxbin_steps(b, g);
    for (uint32_t k = 0; k < g->n_steps; k++) counts[steps[k].op]++;
    bool first = true;
    for (uint32_t op = 1; op < KILN_CPU_OP_COUNT; op++) {
        if (!counts[op]) continue;
        if (json) fprintf(out, "%s\"%s\": %zu", first ? "" : ", ", kiln_ctxbin_op_name(op), counts[op]);
        else fprintf(out, "%s%s %zu", first ? "" : ", ", kiln_ctxbin_op_name(op), counts[op]);
        first = false;
    }
}

static void graph_io(const kiln_cpu_graph_desc *g, bool inputs, bool json, FILE *out)
{
    const kiln_tensor *t = inputs ? g->inputs : g->outputs;
    uint32_t n = inputs ? g->n_inputs : g->n_outputs;
    for (uint32_t i = 0; i < n; i++) {
        char shape[160];
        kiln_format_shape(&t[i], shape, sizeof shape);
        fprintf(out, "%s", i ? ", " : "");
        if (json) kiln_json_string(out, shape);
        else fprintf(out, "%s", shape);
    }
}

/* ---- the description ------------------------------------------------------------------------- */

static void print_text(const checked_binary *c, uint64_t size, FILE *out)
{
    const kiln_cpu_ctxbin_desc *d = &c->desc;
    const kiln_ctxbin *b = &d->bin;
    const kiln_ctx_header *h = b->header;
    if (c->signature_ok)
        fprintf(out, "    signature %016llx (matches the contents)\n", (unsigned long long)h->signature);
    else
        fprintf(out, "    signature %016llx (DOES NOT MATCH the contents, which hash to %016llx)\n",
                (unsigned long long)h->signature, (unsigned long long)c->signature_computed);
    if (c->bad_block != NO_BLOCK) fprintf(out, "    weight block %u DOES NOT MATCH its hash\n", c->bad_block);
    fprintf(out, "    spec: precision %s%s%s%s, scratch group %llu bytes%s\n", h->precision ? "bf16" : "f32",
            h->spec_flags & KILN_CTX_SPEC_WEIGHT_SHARING ? ", weight sharing" : "",
            h->spec_flags & KILN_CTX_SPEC_SLC ? ", slc" : "", h->spec_flags & KILN_CTX_SPEC_NO_STRASSEN ? ", no strassen" : "",
            (unsigned long long)h->group_scratch_size, h->group_scratch_size ? "" : " (the graphs' own need)");
    fprintf(out, "    weights: %u block%s, %llu bytes\n", h->n_blocks, h->n_blocks == 1 ? "" : "s",
            (unsigned long long)d->weight_bytes);
    fprintf(out, "    scratch need: %llu bytes (largest graph of any record)%s\n", (unsigned long long)d->scratch_need,
            d->group_fits ? "" : "; the group size is SMALLER: records that need more will not load");
    record_size sizes[64];
    bool sized = h->n_records <= 64 && record_sizes(b, size, sizes);
    for (uint32_t r = 0; r < h->n_records; r++) {
        const kiln_ctx_record *rec = &b->records[r];
        char features[256], target[KILN_ESCAPED_NAME_SIZE];
        kiln_cpu_features_format(rec->features, features, sizeof features);
        fprintf(out, "    record '%s': needs [%s], tile %ux%u, caches L1 %lluK L2 %lluK L3 %lluK\n",
                kiln_text_escape(target, sizeof target, kiln_ctxbin_string(b, rec->target), (size_t)-1), features,
                rec->gemm_mr, rec->gemm_nr, (unsigned long long)rec->l1_size >> 10, (unsigned long long)rec->l2_size >> 10,
                (unsigned long long)rec->l3_size >> 10);
        if (sized) print_record_size_text(&sizes[r], out);
        const kiln_cpu_record_desc *rd = &d->records[r];
        for (uint32_t g = 0; g < rd->n_graphs; g++) {
            const kiln_cpu_graph_desc *gd = &rd->graphs[g];
            char name[KILN_ESCAPED_NAME_SIZE];
            fprintf(out, "      graph '%s': %u steps (", kiln_text_escape(name, sizeof name, gd->name, (size_t)-1),
                    gd->n_steps);
            step_histogram(b, gd->fmt, false, out);
            fprintf(out, "), inputs ");
            graph_io(gd, true, false, out);
            fprintf(out, ", outputs ");
            graph_io(gd, false, false, out);
            fprintf(out, ", scratch %llu bytes (workspace %llu)\n", (unsigned long long)gd->scratch_size,
                    (unsigned long long)gd->workspace_size);
        }
    }
}

static void print_json(const checked_binary *c, uint64_t size, FILE *out)
{
    const kiln_cpu_ctxbin_desc *d = &c->desc;
    const kiln_ctxbin *b = &d->bin;
    const kiln_ctx_header *h = b->header;
    record_size sizes[64];
    bool sized = h->n_records <= 64 && record_sizes(b, size, sizes);
    fprintf(out,
            ", \"signature\": \"%016llx\", \"signature_ok\": %s, \"weight_blocks_ok\": %s, \"precision\": \"%s\", \"weight_sharing\": %s, "
            "\"slc\": %s, \"no_strassen\": %s, \"group_scratch_size\": %llu, \"scratch_need\": %llu, \"group_fits\": %s, \"weight_blocks\": %u, "
            "\"weight_bytes\": %llu, \"records\": [",
            (unsigned long long)h->signature, c->signature_ok ? "true" : "false", c->bad_block == NO_BLOCK ? "true" : "false",
            h->precision ? "bf16" : "f32", h->spec_flags & KILN_CTX_SPEC_WEIGHT_SHARING ? "true" : "false",
            h->spec_flags & KILN_CTX_SPEC_SLC ? "true" : "false", h->spec_flags & KILN_CTX_SPEC_NO_STRASSEN ? "true" : "false",
            (unsigned long long)h->group_scratch_size, (unsigned long long)d->scratch_need, d->group_fits ? "true" : "false",
            h->n_blocks, (unsigned long long)d->weight_bytes);
    for (uint32_t r = 0; r < h->n_records; r++) {
        const kiln_ctx_record *rec = &b->records[r];
        char features[256];
        kiln_cpu_features_format(rec->features, features, sizeof features);
        fprintf(out, "%s{\"target\": ", r ? ", " : "");
        kiln_json_string(out, kiln_ctxbin_string(b, rec->target));
        fprintf(out, ", \"features\": ");
        kiln_json_string(out, features);
        fprintf(out, ", \"gemm_mr\": %u, \"gemm_nr\": %u, \"l1_size\": %llu, \"l2_size\": %llu, \"l3_size\": %llu",
                rec->gemm_mr, rec->gemm_nr, (unsigned long long)rec->l1_size, (unsigned long long)rec->l2_size,
                (unsigned long long)rec->l3_size);
        if (sized) print_record_size_json(&sizes[r], out);
        fprintf(out, ", \"graphs\": [");
        const kiln_cpu_record_desc *rd = &d->records[r];
        for (uint32_t g = 0; g < rd->n_graphs; g++) {
            const kiln_cpu_graph_desc *gd = &rd->graphs[g];
            fprintf(out, "%s{\"name\": ", g ? ", " : "");
            kiln_json_string(out, gd->name);
            fprintf(out, ", \"steps\": %u, \"ops\": {", gd->n_steps);
            step_histogram(b, gd->fmt, true, out);
            fprintf(out, "}, \"inputs\": [");
            graph_io(gd, true, true, out);
            fprintf(out, "], \"outputs\": [");
            graph_io(gd, false, true, out);
            fprintf(out, "], \"scratch_size\": %llu, \"workspace_size\": %llu}", (unsigned long long)gd->scratch_size,
                    (unsigned long long)gd->workspace_size);
        }
        fprintf(out, "]}");
    }
    fprintf(out, "]");
}

kiln_status kiln_cpu_aot_describe(const void *payload, size_t size, kiln_describe_format format, FILE *out)
{
    checked_binary c;
    char ignored[8];
    KILN_TRY(check_binary(payload, size, &c, ignored, sizeof ignored));
    if (format == KILN_DESCRIBE_JSON) print_json(&c, size, out);
    else print_text(&c, size, out);
    kiln_cpu_ctxbin_desc_free(&c.desc);
    return KILN_OK;
}
