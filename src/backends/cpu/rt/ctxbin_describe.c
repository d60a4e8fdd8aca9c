/* ctxbin_describe.c — the metadata query (see ctxbin_describe.h).
 *
 * Layer: backends/cpu/rt. kiln_ctxbin_open proves every reference first; this file only reads
 * what it proved, copying the I/O shapes into kiln_tensor form in one arena. Nothing here
 * touches the runtime state (cache, groups, counters).
 */
#include "backends/cpu/rt/ctxbin_describe.h"

#include <string.h>

#include "core/check.h"

static kiln_status describe_graph(kiln_cpu_ctxbin_desc *d, const kiln_ctx_graph *g, kiln_cpu_graph_desc *out)
{
    const kiln_ctxbin *b = &d->bin;
    uint32_t n_io = g->n_inputs + g->n_outputs; /* the reader proved it <= n_tensors */
    kiln_tensor *io = KILN_ARENA_ARRAY(&d->arena, kiln_tensor, n_io ? n_io : 1);
    KILN_CHECK(io, KILN_ERROR_OUT_OF_MEMORY);
    const kiln_ctx_tensor *tensors = kiln_ctxbin_tensors(b, g);
    for (uint32_t i = 0; i < n_io; i++) kiln_ctxbin_tensor_view(&tensors[i], &io[i]);
    *out = (kiln_cpu_graph_desc){.name = kiln_ctxbin_string(b, g->name), .n_inputs = g->n_inputs,
                                 .n_outputs = g->n_outputs, .inputs = io, .outputs = io + g->n_inputs,
                                 .n_steps = g->n_steps, .scratch_size = g->scratch_size,
                                 .workspace_size = g->scratch_size - g->workspace_offset, .fmt = g};
    return KILN_OK;
}

static kiln_status describe_record(kiln_cpu_ctxbin_desc *d, const kiln_ctx_record *r, kiln_cpu_record_desc *out)
{
    const kiln_ctxbin *b = &d->bin;
    kiln_cpu_graph_desc *graphs = KILN_ARENA_ARRAY(&d->arena, kiln_cpu_graph_desc, r->n_graphs);
    KILN_CHECK(graphs, KILN_ERROR_OUT_OF_MEMORY);
    const kiln_ctx_graph *fmt = kiln_ctxbin_graphs(b, r);
    uint64_t need = 0;
    for (uint32_t i = 0; i < r->n_graphs; i++) {
        KILN_TRY(describe_graph(d, &fmt[i], &graphs[i]));
        if (graphs[i].scratch_size > need) need = graphs[i].scratch_size;
    }
    *out = (kiln_cpu_record_desc){.target = kiln_ctxbin_string(b, r->target), .features = r->features,
                                  .n_graphs = r->n_graphs, .graphs = graphs, .scratch_need = need, .fmt = r};
    return KILN_OK;
}

static kiln_status describe_all(kiln_cpu_ctxbin_desc *d)
{
    const kiln_ctx_header *h = d->bin.header;
    d->signature = h->signature;
    d->precision = h->precision;
    d->spec_flags = h->spec_flags;
    d->group_scratch_size = h->group_scratch_size;
    d->n_blocks = h->n_blocks;
    for (uint32_t i = 0; i < h->n_blocks; i++) d->weight_bytes += d->bin.blocks[i].size;
    kiln_cpu_record_desc *records = KILN_ARENA_ARRAY(&d->arena, kiln_cpu_record_desc, h->n_records);
    KILN_CHECK(records, KILN_ERROR_OUT_OF_MEMORY);
    for (uint32_t r = 0; r < h->n_records; r++) {
        KILN_TRY(describe_record(d, &d->bin.records[r], &records[r]));
        if (records[r].scratch_need > d->scratch_need) d->scratch_need = records[r].scratch_need;
    }
    d->records = records;
    d->n_records = h->n_records;
    d->group_fits = d->group_scratch_size == 0 || d->group_scratch_size >= d->scratch_need;
    return KILN_OK;
}

kiln_status kiln_cpu_ctxbin_describe(const void *data, size_t size, const kiln_allocator *allocator,
                                     kiln_cpu_ctxbin_desc *out, char *message, size_t message_size)
{
    memset(out, 0, sizeof *out);
    KILN_CHECK(allocator, KILN_ERROR_INVALID_ARGUMENT);
    if (message && message_size) message[0] = '\0';
    KILN_TRY(kiln_ctxbin_open(&out->bin, data, size, allocator, message, message_size));
    kiln_arena_init(&out->arena, allocator, 4096);
    kiln_status st = describe_all(out);
    if (st != KILN_OK) kiln_cpu_ctxbin_desc_free(out);
    return st;
}

void kiln_cpu_ctxbin_desc_free(kiln_cpu_ctxbin_desc *desc)
{
    if (!desc) return;
    if (desc->arena.allocator) kiln_arena_deinit(&desc->arena);
    kiln_ctxbin_close(&desc->bin);
    memset(desc, 0, sizeof *desc);
}
