/* ctxbin_reader.c — validation of a context binary's header, tables, records, graphs and
 * tensors (steps: ctxbin_steps.c). See ctxbin_reader.h for the contract.
 *
 * Layer: backends/cpu/rt. Every size computation goes through the overflow-safe helpers of
 * core/check.h; nothing is dereferenced before the range holding it has been proved inside
 * the binary. Records must agree with each other on the graphs they serve and on those graphs'
 * inputs and outputs, because the program's delegate call has one fixed signature whichever
 * record the runtime picks.
 */
#include "backends/cpu/rt/ctxbin_reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/cpu_features.h"
#include "core/diag.h"

#define MAX_RECORDS 64
#define MAX_GRAPHS 1024
#define MAX_SCRATCH ((uint64_t)1 << 46)
#define MAX_TILE 64

_Static_assert(sizeof(kiln_ctx_header) == KILN_CTX_HEADER_SIZE, "header layout");
_Static_assert(sizeof(kiln_ctx_tensor) == 88, "tensor layout");
_Static_assert(sizeof(kiln_ctx_step) == 304, "step layout");

/* "context binary: " and the line, into the caller's diag (first failure wins). */
static kiln_status reject_v(kiln_status status, char *message, size_t message_size, const char *fmt, va_list ap)
{
    kiln_diag d = kiln_diag_over(message, message_size);
    if (!d.text || kiln_diag_has_text(&d)) return status;
    kiln_diag_fail(&d, status, "context binary: ");
    size_t used = strlen(d.text);
    kiln_diag rest = kiln_diag_over(d.text + used, d.size - used); /* the reason after the prefix */
    return kiln_diag_vfail(&rest, status, fmt, ap);
}

kiln_status kiln_ctxbin_reject(char *message, size_t message_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln_status st = reject_v(KILN_ERROR_INCOMPATIBLE, message, message_size, fmt, ap);
    va_end(ap);
    return st;
}

kiln_status kiln_ctxbin_reject_as(kiln_status status, char *message, size_t message_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln_status st = reject_v(status, message, message_size, fmt, ap);
    va_end(ap);
    return st;
}

typedef struct reader {
    kiln_ctxbin *bin;
    const kiln_allocator *allocator;
    char *message;
    size_t message_size;
} reader;

#define REJECT(rd, ...) kiln_ctxbin_reject((rd)->message, (rd)->message_size, __VA_ARGS__)

/* A version 1 binary holding `feature`, which only version 2 writers produce (ctxbin_version.c). */
static kiln_status reject_v2_feature(reader *rd, const char *where, const char *feature)
{
    return kiln_ctxbin_reject_as(KILN_ERROR_FORMAT, rd->message, rd->message_size,
                                 "%s: version 1 file holds %s, which only version 2 writes", where, feature);
}

static bool is_v1(const kiln_ctxbin *b) { return b->header->version == 1; }

/* A table of count records of elem bytes at offset: aligned, after the header, inside the file. */
static bool table_ok(const kiln_ctxbin *b, uint64_t offset, uint64_t count, uint64_t elem, uint64_t align)
{
    uint64_t bytes;
    if (count == 0) return offset <= b->size; /* even empty tables must not point past the end: base + offset must stay a valid pointer */
    return offset % align == 0 && offset >= KILN_CTX_HEADER_SIZE && kiln_mul_u64(count, elem, &bytes) &&
           kiln_range_ok(offset, bytes, b->size);
}

/* The reader proved the last byte of the strings NUL, so any in-range offset is terminated. */
static bool string_ok(const kiln_ctxbin *b, uint32_t offset) { return offset < b->strings_size; }

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

kiln_status kiln_ctxbin_peek_signature(const void *data, size_t size, uint64_t *out)
{
    *out = 0;
    if (!data || ((uintptr_t)data % 8) != 0 || size < KILN_CTX_HEADER_SIZE) return KILN_ERROR_INCOMPATIBLE;
    const kiln_ctx_header *h = data;
    if (memcmp(h->magic, KILN_CTX_MAGIC, 8) != 0) return KILN_ERROR_INCOMPATIBLE;
    *out = h->signature;
    return KILN_OK;
}

/* The header of the copy at b->base (b->size bytes of tables, at least the header). */
static kiln_status check_header(reader *rd)
{
    kiln_ctxbin *b = rd->bin;
    const kiln_ctx_header *h = (const kiln_ctx_header *)(const void *)b->base;
    b->header = h;
    if (memcmp(h->magic, KILN_CTX_MAGIC, 8) != 0) return REJECT(rd, "bad magic (not a cpu context binary)");
    if (h->version < KILN_CTX_VERSION_MIN || h->version > KILN_CTX_VERSION)
        return kiln_ctxbin_reject_as(KILN_ERROR_VERSION, rd->message, rd->message_size,
                                     "format version %u; this runtime reads versions %u to %u", h->version,
                                     KILN_CTX_VERSION_MIN, KILN_CTX_VERSION);
    if (h->flags != 0) return REJECT(rd, "unknown header flags 0x%x", h->flags);
    if (h->file_size != b->payload_size)
        return REJECT(rd, "header says %llu bytes, payload has %llu", (unsigned long long)h->file_size,
                      (unsigned long long)b->payload_size);
    if (h->precision > KILN_CTX_PRECISION_BF16) return REJECT(rd, "unknown precision %u", h->precision);
    if (h->spec_flags & ~(KILN_CTX_SPEC_SLC | KILN_CTX_SPEC_WEIGHT_SHARING | KILN_CTX_SPEC_NO_STRASSEN))
        return REJECT(rd, "unknown compile-spec flags 0x%x", h->spec_flags);
    if (h->group_scratch_size > MAX_SCRATCH) return REJECT(rd, "scratch group size too large");
    if (!all_zero(h->reserved, sizeof h->reserved)) return REJECT(rd, "reserved header bytes are not zero");
    const char *v2 = h->version == 1 ? kiln_ctxbin_v2_header_feature(h) : NULL;
    if (v2) return reject_v2_feature(rd, "header", v2);
    if (h->strings_size == 0 || !table_ok(b, h->strings_offset, h->strings_size, 1, 8))
        return REJECT(rd, "string table out of range");
    b->strings = (const char *)(b->base + h->strings_offset);
    b->strings_size = h->strings_size;
    if (b->strings[0] != '\0' || b->strings[b->strings_size - 1] != '\0')
        return REJECT(rd, "string table does not start and end with NUL");
    if (!table_ok(b, h->blocks_offset, h->n_blocks, sizeof(kiln_ctx_block), 8))
        return REJECT(rd, "block table out of range");
    if (h->n_records == 0 || h->n_records > MAX_RECORDS)
        return REJECT(rd, "%u records (1 to %d allowed)", h->n_records, MAX_RECORDS);
    if (!table_ok(b, h->records_offset, h->n_records, sizeof(kiln_ctx_record), 8))
        return REJECT(rd, "record table out of range");
    b->blocks = (const kiln_ctx_block *)(const void *)(b->base + h->blocks_offset);
    b->records = (const kiln_ctx_record *)(const void *)(b->base + h->records_offset);
    return KILN_OK;
}

/* Weight blocks lie after every table, in table order, without overlapping each other, as the
   writer lays them out: so no byte is both a reference the runtime follows and a weight, and no
   two blocks (of distinct content by their hashes) share bytes. */
static kiln_status check_blocks(reader *rd)
{
    const kiln_ctxbin *b = rd->bin;
    uint64_t end = b->size; /* the end of the tables */
    for (uint32_t i = 0; i < b->header->n_blocks; i++) {
        const kiln_ctx_block *k = &b->blocks[i];
        if (k->offset % 64 != 0 || k->offset < KILN_CTX_HEADER_SIZE || !kiln_range_ok(k->offset, k->size, b->payload_size))
            return REJECT(rd, "weight block %u is out of range or not 64-byte aligned", i);
        if (k->offset < end) return REJECT(rd, "weight block %u overlaps the tables or the block before it", i);
        end = k->offset + k->size;
    }
    return KILN_OK;
}

uint64_t kiln_ctxbin_tensor_bytes(const kiln_ctx_tensor *t)
{
    uint64_t n = kiln_dtype_size((kiln_dtype)t->dtype);
    for (uint32_t d = 0; d < t->rank && d < KILN_CPU_MAX_RANK; d++) n *= (uint64_t)t->shape[d];
    return n;
}

void kiln_ctxbin_tensor_view(const kiln_ctx_tensor *t, kiln_tensor *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = (kiln_dtype)t->dtype;
    out->rank = t->rank;
    for (uint32_t d = 0; d < t->rank && d < KILN_MAX_RANK; d++) out->shape[d] = t->shape[d];
}

/* dtype, rank and shape sane and the logical bytes (computed without overflow) within size. */
static bool tensor_shape_ok(const kiln_ctx_tensor *t)
{
    uint64_t bytes = t->dtype < KILN_DTYPE_COUNT ? kiln_dtype_size((kiln_dtype)t->dtype) : 0;
    if (bytes == 0 || t->rank > KILN_CPU_MAX_RANK || t->reserved0 != 0) return false;
    for (uint32_t d = 0; d < t->rank; d++)
        if (t->shape[d] < 0 || !kiln_mul_u64(bytes, (uint64_t)t->shape[d], &bytes)) return false;
    return bytes <= t->size;
}

static kiln_status check_tensor(reader *rd, const char *where, const kiln_ctx_graph *g, uint32_t i,
                                const kiln_ctx_tensor *t)
{
    const kiln_ctxbin *b = rd->bin;
    if (!tensor_shape_ok(t)) return REJECT(rd, "%s: tensor %u has a bad dtype, rank or shape, or is too small", where, i);
    uint64_t n_io = (uint64_t)g->n_inputs + g->n_outputs;
    if (i < n_io) {
        bool input = i < g->n_inputs;
        uint64_t index = input ? i : i - g->n_inputs;
        if (t->kind != (input ? KILN_CTX_TENSOR_INPUT : KILN_CTX_TENSOR_OUTPUT) || t->offset != index)
            return REJECT(rd, "%s: tensor %u must be %s %llu", where, i, input ? "input" : "output",
                          (unsigned long long)index);
        if (t->size != kiln_ctxbin_tensor_bytes(t) || t->block != 0)
            return REJECT(rd, "%s: %s tensor %u is not dense", where, input ? "input" : "output", i);
        return KILN_OK;
    }
    if (t->kind == KILN_CTX_TENSOR_SCRATCH) {
        /* The workspace is [workspace_offset, scratch_size); intermediates live below it. */
        if (t->offset % 64 != 0 || t->block != 0 || !kiln_range_ok(t->offset, t->size, g->workspace_offset))
            return REJECT(rd, "%s: scratch tensor %u is misaligned or outside the scratch below the workspace", where, i);
        return KILN_OK;
    }
    if (t->kind == KILN_CTX_TENSOR_WEIGHT) {
        uint64_t align = kiln_dtype_size((kiln_dtype)t->dtype);
        if (t->block >= b->header->n_blocks || t->offset % align != 0 ||
            !kiln_range_ok(t->offset, t->size, b->blocks[t->block].size))
            return REJECT(rd, "%s: weight tensor %u lies outside its block or is misaligned", where, i);
        return KILN_OK;
    }
    return REJECT(rd, "%s: tensor %u has kind %u where scratch or weight is required", where, i, t->kind);
}

static kiln_status check_graph(reader *rd, const kiln_ctx_record *r, const kiln_ctx_graph *g)
{
    const kiln_ctxbin *b = rd->bin;
    char where[160];
    if (!string_ok(b, g->name)) return REJECT(rd, "record '%s': graph name out of range", kiln_ctxbin_string(b, r->target));
    snprintf(where, sizeof where, "record '%s' graph '%s'", kiln_ctxbin_string(b, r->target), kiln_ctxbin_string(b, g->name));
    if (g->reserved != 0) return REJECT(rd, "%s: reserved field is not zero", where);
    if (g->n_outputs == 0 || (uint64_t)g->n_inputs + g->n_outputs > g->n_tensors)
        return REJECT(rd, "%s: %u inputs and %u outputs do not fit %u tensors", where, g->n_inputs, g->n_outputs,
                      g->n_tensors);
    if (!table_ok(b, g->tensors_offset, g->n_tensors, sizeof(kiln_ctx_tensor), 8) ||
        !table_ok(b, g->steps_offset, g->n_steps, sizeof(kiln_ctx_step), 8))
        return REJECT(rd, "%s: tensor or step table out of range", where);
    if (g->scratch_size > MAX_SCRATCH || g->workspace_offset % 64 != 0 || g->workspace_offset > g->scratch_size)
        return REJECT(rd, "%s: scratch size or workspace offset invalid", where);
    const kiln_ctx_tensor *tensors = kiln_ctxbin_tensors(b, g);
    for (uint32_t i = 0; i < g->n_tensors; i++) KILN_TRY(check_tensor(rd, where, g, i, &tensors[i]));
    const kiln_ctx_step *steps = kiln_ctxbin_steps(b, g);
    for (uint32_t i = 0; is_v1(b) && i < g->n_tensors; i++) {
        const char *v2 = kiln_ctxbin_v2_tensor_feature(&tensors[i]);
        if (v2) return reject_v2_feature(rd, where, v2);
    }
    for (uint32_t i = 0; is_v1(b) && i < g->n_steps; i++) {
        const char *v2 = kiln_ctxbin_v2_step_feature(&steps[i]);
        if (v2) return reject_v2_feature(rd, where, v2);
    }
    for (uint32_t i = 0; b->header->version < 3 && i < g->n_tensors + g->n_steps; i++) {
        const char *v3 = i < g->n_tensors ? kiln_ctxbin_v3_tensor_feature(&tensors[i])
                                          : kiln_ctxbin_v3_step_feature(&steps[i - g->n_tensors]);
        if (v3)
            return kiln_ctxbin_reject_as(KILN_ERROR_FORMAT, rd->message, rd->message_size,
                                         "%s: version %u file holds %s, which only version 3 writes", where,
                                         b->header->version, v3);
    }
    return kiln_ctxbin_check_steps(b, r, g, rd->allocator, rd->message, rd->message_size);
}

/* Whether name is `<method>/<delegate>`. */
static bool names_call(const char *name, const char *method, const char *delegate)
{
    size_t m = strlen(method);
    return strncmp(name, method, m) == 0 && name[m] == '/' && strcmp(name + m + 1, delegate) == 0;
}

int64_t kiln_ctxbin_find_graph(const kiln_ctxbin *b, const kiln_ctx_record *r, const char *method,
                               const char *delegate)
{
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(b, r);
    for (uint32_t i = 0; method && delegate && i < r->n_graphs; i++)
        if (names_call(kiln_ctxbin_string(b, graphs[i].name), method, delegate)) return i;
    for (uint32_t i = 0; method && i < r->n_graphs; i++)
        if (strcmp(kiln_ctxbin_string(b, graphs[i].name), method) == 0) return i;
    return r->n_graphs == 1 ? 0 : -1;
}

static bool same_io(const kiln_ctxbin *b, const kiln_ctx_graph *x, const kiln_ctx_graph *y)
{
    if (x->n_inputs != y->n_inputs || x->n_outputs != y->n_outputs) return false;
    const kiln_ctx_tensor *tx = kiln_ctxbin_tensors(b, x), *ty = kiln_ctxbin_tensors(b, y);
    for (uint32_t i = 0; i < x->n_inputs + x->n_outputs; i++) {
        if (tx[i].dtype != ty[i].dtype || tx[i].rank != ty[i].rank) return false;
        for (uint32_t d = 0; d < tx[i].rank; d++)
            if (tx[i].shape[d] != ty[i].shape[d]) return false;
    }
    return true;
}

/* Graph names unique in r; and when r is not the first record, the same graphs with the same
   inputs and outputs as the first record. */
static kiln_status check_graph_set(reader *rd, const kiln_ctx_record *r)
{
    const kiln_ctxbin *b = rd->bin;
    const kiln_ctx_record *first = &b->records[0];
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(b, r), *first_graphs = kiln_ctxbin_graphs(b, first);
    const char *target = kiln_ctxbin_string(b, r->target);
    for (uint32_t i = 0; i < r->n_graphs; i++) {
        const char *name = kiln_ctxbin_string(b, graphs[i].name);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(name, kiln_ctxbin_string(b, graphs[j].name)) == 0)
                return REJECT(rd, "record '%s' has two graphs named '%s'", target, name);
        if (r == first) continue;
        const kiln_ctx_graph *match = NULL;
        for (uint32_t j = 0; j < first->n_graphs && !match; j++)
            if (strcmp(name, kiln_ctxbin_string(b, first_graphs[j].name)) == 0) match = &first_graphs[j];
        if (!match || r->n_graphs != first->n_graphs || !same_io(b, match, &graphs[i]))
            return REJECT(rd, "records '%s' and '%s' disagree on graph '%s' or its inputs and outputs", target,
                          kiln_ctxbin_string(b, first->target), name);
    }
    return KILN_OK;
}

static kiln_status check_record(reader *rd, uint32_t index)
{
    const kiln_ctxbin *b = rd->bin;
    const kiln_ctx_record *r = &b->records[index];
    if (!string_ok(b, r->target)) return REJECT(rd, "record %u: target name out of range", index);
    const char *target = kiln_ctxbin_string(b, r->target);
    size_t len = strlen(target);
    if (len == 0 || len >= KILN_CTX_TARGET_NAME_MAX) return REJECT(rd, "record %u: target name empty or too long", index);
    for (uint32_t j = 0; j < index; j++)
        if (strcmp(target, kiln_ctxbin_string(b, b->records[j].target)) == 0)
            return REJECT(rd, "two records for target '%s'", target);
    if (r->features >> KILN_CPU_FEATURE_COUNT) return REJECT(rd, "record '%s' needs unknown CPU features", target);
    if (is_v1(b) && kiln_ctxbin_v2_record_feature(r)) return reject_v2_feature(rd, target, kiln_ctxbin_v2_record_feature(r));
    if (r->gemm_mr == 0 || r->gemm_mr > MAX_TILE || r->gemm_nr == 0 || r->gemm_nr > MAX_TILE)
        return REJECT(rd, "record '%s': register tile %ux%u out of range", target, r->gemm_mr, r->gemm_nr);
    if (r->n_graphs == 0 || r->n_graphs > MAX_GRAPHS ||
        !table_ok(b, r->graphs_offset, r->n_graphs, sizeof(kiln_ctx_graph), 8))
        return REJECT(rd, "record '%s': graph table out of range", target);
    const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(b, r);
    for (uint32_t i = 0; i < r->n_graphs; i++) KILN_TRY(check_graph(rd, r, &graphs[i]));
    return check_graph_set(rd, r);
}

/* end, moved past a table of count elem-byte records at offset when that table lies inside
   [0, limit). An empty table still counts with its offset, as table_ok requires. */
static uint64_t extend(uint64_t end, uint64_t offset, uint64_t count, uint64_t elem, uint64_t limit)
{
    uint64_t bytes, last;
    if (kiln_mul_u64(count, elem, &bytes) && kiln_add_u64(offset, bytes, &last) && last <= limit && last > end) return last;
    return end;
}

/* Where the tables of the binary at data end, read from data itself (every read bounds-checked,
   records and graphs copied out with memcpy, nothing retained). Tables outside the payload are
   left out: the validation of the copy then rejects them. */
static uint64_t tables_extent(const uint8_t *data, uint64_t size)
{
    kiln_ctx_header h;
    memcpy(&h, data, sizeof h);
    uint64_t end = KILN_CTX_HEADER_SIZE;
    end = extend(end, h.strings_offset, h.strings_size, 1, size);
    end = extend(end, h.blocks_offset, h.n_blocks, sizeof(kiln_ctx_block), size);
    end = extend(end, h.records_offset, h.n_records, sizeof(kiln_ctx_record), size);
    uint64_t records_bytes = (uint64_t)h.n_records * sizeof(kiln_ctx_record);
    if (h.n_records > MAX_RECORDS || !kiln_range_ok(h.records_offset, records_bytes, size)) return end;
    for (uint32_t r = 0; r < h.n_records; r++) {
        kiln_ctx_record rec;
        memcpy(&rec, data + h.records_offset + r * sizeof rec, sizeof rec);
        end = extend(end, rec.graphs_offset, rec.n_graphs, sizeof(kiln_ctx_graph), size);
        uint64_t graphs_bytes = (uint64_t)rec.n_graphs * sizeof(kiln_ctx_graph);
        if (rec.n_graphs > MAX_GRAPHS || !kiln_range_ok(rec.graphs_offset, graphs_bytes, size)) continue;
        for (uint32_t g = 0; g < rec.n_graphs; g++) {
            kiln_ctx_graph graph;
            memcpy(&graph, data + rec.graphs_offset + g * sizeof graph, sizeof graph);
            end = extend(end, graph.tensors_offset, graph.n_tensors, sizeof(kiln_ctx_tensor), size);
            end = extend(end, graph.steps_offset, graph.n_steps, sizeof(kiln_ctx_step), size);
        }
    }
    return end;
}

kiln_status kiln_ctxbin_open(kiln_ctxbin *bin, const void *data, size_t size, const kiln_allocator *allocator,
                             char *message, size_t message_size)
{
    memset(bin, 0, sizeof *bin);
    kiln_diag entry = kiln_diag_over(message, message_size);
    kiln_diag_clear(&entry);
    reader rd = {bin, allocator, message, message_size};
    if (!data || ((uintptr_t)data % 8) != 0) return REJECT(&rd, "payload is not 8-byte aligned");
    if (size < KILN_CTX_HEADER_SIZE) return REJECT(&rd, "%zu bytes, shorter than its header", size);
    uint64_t extent = tables_extent(data, size);
    bin->tables = kiln_alloc(allocator, (size_t)extent, 64);
    KILN_CHECK(bin->tables, KILN_ERROR_OUT_OF_MEMORY);
    memcpy(bin->tables, data, (size_t)extent);
    bin->allocator = allocator;
    bin->base = bin->tables;
    bin->size = extent;
    bin->payload = data;
    bin->payload_size = size;
    kiln_status st = check_header(&rd);
    if (st == KILN_OK) st = check_blocks(&rd);
    for (uint32_t i = 0; st == KILN_OK && i < bin->header->n_records; i++) st = check_record(&rd, i);
    if (st != KILN_OK) kiln_ctxbin_close(bin);
    return st;
}

void kiln_ctxbin_close(kiln_ctxbin *bin)
{
    if (bin->tables) kiln_free(bin->allocator, bin->tables);
    memset(bin, 0, sizeof *bin);
}
