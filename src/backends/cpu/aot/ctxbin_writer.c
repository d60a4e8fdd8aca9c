/* ctxbin_writer.c — serialising records and their weight pool as a context binary
 * (cpu_format.h, docs/format.md part 2).
 *
 * Layer: backends/cpu/aot (internal, see aot_record.h). The layout is computed first, then the
 * file is allocated zeroed and filled, so every reserved field, pad and unused shape slot is 0
 * and equal inputs give equal bytes (and so an equal signature):
 *
 *   0        header (128 B)
 *   128      strings: "" then target and graph names, NUL-terminated, each once
 *   8-align  blocks table, records table, each record's graphs table,
 *            then per record and graph its tensors and its steps
 *   64-align weight blocks, each 64-aligned, in pool order; the file is padded to 64
 */
#include <string.h>

#include "backends/cpu/aot/aot_record.h"
#include "core/alloc.h"
#include "core/check.h"

typedef struct layout {
    uint64_t strings_offset, strings_size;
    uint64_t blocks_offset, records_offset;
    uint64_t *graphs_offset;    /* (n_records) */
    uint64_t *tensors_offset;   /* (n_records * n_graphs) */
    uint64_t *steps_offset;     /* (n_records * n_graphs) */
    uint64_t *block_offset;     /* (n_blocks) */
    uint64_t size;
} layout;

/* ---- strings ---------------------------------------------------------------------------------- */

typedef struct strings {
    const char **items;     /* (cap) distinct non-empty strings, in first-use order */
    uint32_t *offsets;      /* (cap) their offsets */
    size_t n, cap;
    uint64_t size;          /* bytes, starting with the "" at 0 */
} strings;

/* Offset of s in the table, adding it the first time; false past the table's capacity. */
static bool string_ref(strings *st, const char *s, uint32_t *out)
{
    if (!s[0]) {
        *out = 0;
        return true;
    }
    for (size_t i = 0; i < st->n; i++) {
        if (strcmp(st->items[i], s) == 0) {
            *out = st->offsets[i];
            return true;
        }
    }
    size_t len = strlen(s);
    if (st->n == st->cap || st->size + len + 1 > UINT32_MAX) return false;
    st->items[st->n] = s;
    st->offsets[st->n] = (uint32_t)st->size;
    *out = (uint32_t)st->size;
    st->size += len + 1;
    st->n++;
    return true;
}

/* ---- layout ------------------------------------------------------------------------------------- */

static bool add_bytes(uint64_t *at, uint64_t count, uint64_t elem_size)
{
    uint64_t bytes;
    return kiln_mul_u64(count, elem_size, &bytes) && kiln_add_u64(*at, bytes, at);
}

static bool align_to(uint64_t *at, uint64_t a)
{
    if (*at > UINT64_MAX - a) return false;
    *at = (*at + a - 1) & ~(a - 1);
    return true;
}

static kiln_status plan_layout(const aot_record *records, size_t n_records, const aot_pool *pool, uint64_t strings_size,
                               kiln_arena *arena, layout *l)
{
    size_t n_graphs = n_records ? records[0].n_graphs : 0;
    l->graphs_offset = KILN_ARENA_ARRAY(arena, uint64_t, n_records ? n_records : 1);
    l->tensors_offset = KILN_ARENA_ARRAY(arena, uint64_t, n_records * n_graphs + 1);
    l->steps_offset = KILN_ARENA_ARRAY(arena, uint64_t, n_records * n_graphs + 1);
    l->block_offset = KILN_ARENA_ARRAY(arena, uint64_t, pool->n_blocks + 1);
    KILN_CHECK(l->graphs_offset && l->tensors_offset && l->steps_offset && l->block_offset, KILN_ERROR_OUT_OF_MEMORY);
    uint64_t at = KILN_CTX_HEADER_SIZE;
    l->strings_offset = at;
    l->strings_size = strings_size;
    bool ok = add_bytes(&at, strings_size, 1) && align_to(&at, 8);
    l->blocks_offset = at;
    ok = ok && add_bytes(&at, pool->n_blocks, sizeof(kiln_ctx_block));
    l->records_offset = at;
    ok = ok && add_bytes(&at, n_records, sizeof(kiln_ctx_record));
    for (size_t r = 0; ok && r < n_records; r++) {
        l->graphs_offset[r] = at;
        ok = add_bytes(&at, records[r].n_graphs, sizeof(kiln_ctx_graph));
    }
    for (size_t r = 0; ok && r < n_records; r++) {
        for (size_t g = 0; ok && g < n_graphs; g++) {
            const aot_graph *graph = records[r].graphs[g].graph;
            l->tensors_offset[r * n_graphs + g] = at;
            ok = add_bytes(&at, graph->n_tensors, sizeof(kiln_ctx_tensor));
            l->steps_offset[r * n_graphs + g] = at;
            ok = ok && add_bytes(&at, graph->n_steps, sizeof(kiln_ctx_step));
        }
    }
    for (size_t b = 0; ok && b < pool->n_blocks; b++) {
        ok = align_to(&at, 64);
        l->block_offset[b] = at;
        ok = ok && add_bytes(&at, pool->blocks[b].size, 1);
    }
    ok = ok && align_to(&at, 64) && at <= SIZE_MAX;
    KILN_CHECK(ok, KILN_ERROR_LIMIT);
    l->size = at;
    return KILN_OK;
}

/* ---- records ------------------------------------------------------------------------------------ */

static void write_tensor(const aot_record_graph *rg, size_t i, kiln_ctx_tensor *dst)
{
    const aot_tensor *t = &rg->graph->tensors[i];
    dst->dtype = (uint8_t)t->t.dtype;
    dst->rank = (uint8_t)t->t.rank;
    dst->kind = t->kind;
    dst->size = rg->tensor_size[i];
    for (uint32_t d = 0; d < t->t.rank; d++) dst->shape[d] = t->t.shape[d];
    switch (t->kind) {
    case KILN_CTX_TENSOR_INPUT: case KILN_CTX_TENSOR_OUTPUT: dst->offset = t->io_index; break;
    case KILN_CTX_TENSOR_SCRATCH: dst->offset = rg->graph->buffers[t->buffer].offset + t->buffer_offset; break;
    default: dst->block = rg->tensor_block[i]; break; /* offset 0: one block per tensor */
    }
}

static void write_step(const aot_record_graph *rg, size_t s, kiln_ctx_step *dst)
{
    const aot_step *step = &rg->graph->steps[s];
    dst->op = step->op;
    dst->n_inputs = step->n_inputs;
    dst->n_outputs = step->n_outputs;
    memcpy(dst->tensors, step->tensors, sizeof dst->tensors);
    dst->workspace_size = rg->step_workspace[s];
    memcpy(dst->params, step->params.bytes, sizeof dst->params);
}

static bool write_graph(uint8_t *file, const layout *l, size_t r, size_t g, size_t n_graphs, const aot_record_graph *rg,
                        strings *st)
{
    const aot_graph *graph = rg->graph;
    kiln_ctx_graph rec = {0};
    if (!string_ref(st, graph->name, &rec.name)) return false;
    if (graph->n_tensors > UINT32_MAX || graph->n_steps > UINT32_MAX) return false;
    rec.n_inputs = graph->n_inputs;
    rec.n_outputs = graph->n_outputs;
    rec.n_tensors = (uint32_t)graph->n_tensors;
    rec.n_steps = (uint32_t)graph->n_steps;
    rec.tensors_offset = l->tensors_offset[r * n_graphs + g];
    rec.steps_offset = l->steps_offset[r * n_graphs + g];
    rec.scratch_size = rg->scratch_size;
    rec.workspace_offset = rg->workspace_offset;
    memcpy(file + l->graphs_offset[r] + g * sizeof rec, &rec, sizeof rec);
    for (size_t i = 0; i < graph->n_tensors; i++) {
        kiln_ctx_tensor t = {0};
        write_tensor(rg, i, &t);
        memcpy(file + rec.tensors_offset + i * sizeof t, &t, sizeof t);
    }
    for (size_t s = 0; s < graph->n_steps; s++) {
        kiln_ctx_step step = {0};
        write_step(rg, s, &step);
        memcpy(file + rec.steps_offset + s * sizeof step, &step, sizeof step);
    }
    return true;
}

static bool write_records(uint8_t *file, const layout *l, const aot_record *records, size_t n_records, strings *st)
{
    for (size_t r = 0; r < n_records; r++) {
        const aot_record *rec = &records[r];
        const kiln_cpu_target *t = rec->target;
        kiln_ctx_record out = {.n_graphs = (uint32_t)rec->n_graphs, .features = t->features,
                               .graphs_offset = l->graphs_offset[r], .l1_size = t->l1_size, .l2_size = t->l2_size,
                               .l3_size = t->l3_size, .gemm_mr = t->kernels->gemm_mr, .gemm_nr = t->kernels->gemm_nr};
        if (!string_ref(st, t->name, &out.target)) return false;
        memcpy(file + l->records_offset + r * sizeof out, &out, sizeof out);
        for (size_t g = 0; g < rec->n_graphs; g++)
            if (!write_graph(file, l, r, g, rec->n_graphs, &rec->graphs[g], st)) return false;
    }
    return true;
}

/* Every name the records use: at most one target name and n_graphs graph names per record. */
static kiln_status collect_strings(const aot_record *records, size_t n_records, kiln_arena *arena, strings *st)
{
    memset(st, 0, sizeof *st);
    st->size = 1;
    for (size_t r = 0; r < n_records; r++) st->cap += 1 + records[r].n_graphs;
    st->items = KILN_ARENA_ARRAY(arena, const char *, st->cap + 1);
    st->offsets = KILN_ARENA_ARRAY(arena, uint32_t, st->cap + 1);
    KILN_CHECK(st->items && st->offsets, KILN_ERROR_OUT_OF_MEMORY);
    uint32_t ignored;
    for (size_t r = 0; r < n_records; r++) {
        KILN_CHECK(string_ref(st, records[r].target->name, &ignored), KILN_ERROR_LIMIT);
        for (size_t g = 0; g < records[r].n_graphs; g++)
            KILN_CHECK(string_ref(st, records[r].graphs[g].graph->name, &ignored), KILN_ERROR_LIMIT);
    }
    return KILN_OK;
}

kiln_status aot_write_binary(const kiln_cpu_aot_spec *spec, const aot_record *records, size_t n_records,
                             const aot_pool *pool, const kiln_allocator *allocator, void **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    KILN_CHECK(n_records <= UINT32_MAX && pool->n_blocks <= UINT32_MAX, KILN_ERROR_LIMIT);
    kiln_arena arena;
    kiln_arena_init(&arena, allocator, 4096);
    strings st;
    layout l;
    kiln_status status = collect_strings(records, n_records, &arena, &st);
    if (status == KILN_OK) status = plan_layout(records, n_records, pool, st.size, &arena, &l);
    uint8_t *file = status == KILN_OK ? kiln_alloc_zero(allocator, (size_t)l.size, 64) : NULL;
    if (status == KILN_OK && !file) status = KILN_ERROR_OUT_OF_MEMORY;
    if (status != KILN_OK) goto done;
    for (size_t i = 0; i < st.n; i++) memcpy(file + l.strings_offset + st.offsets[i], st.items[i], strlen(st.items[i]));
    for (size_t b = 0; b < pool->n_blocks; b++) {
        kiln_ctx_block blk = {l.block_offset[b], pool->blocks[b].size, pool->blocks[b].hash};
        memcpy(file + l.blocks_offset + b * sizeof blk, &blk, sizeof blk);
        memcpy(file + blk.offset, pool->blocks[b].data, (size_t)blk.size);
    }
    if (!write_records(file, &l, records, n_records, &st)) {
        status = KILN_ERROR_INTERNAL; /* cannot happen: collect_strings saw every name */
        kiln_free(allocator, file);
        goto done;
    }
    kiln_ctx_header h = {.version = KILN_CTX_VERSION, .file_size = l.size, .precision = spec->precision,
                         .spec_flags = spec->flags, .group_scratch_size = spec->group_scratch_size,
                         .strings_offset = l.strings_offset, .strings_size = l.strings_size,
                         .blocks_offset = l.blocks_offset, .records_offset = l.records_offset,
                         .n_blocks = (uint32_t)pool->n_blocks, .n_records = (uint32_t)n_records};
    memcpy(h.magic, KILN_CTX_MAGIC, sizeof h.magic);
    memcpy(file, &h, sizeof h); /* the signature is seeded with the header's version */
    h.signature = kiln_ctx_signature(file, (size_t)l.size);
    memcpy(file, &h, sizeof h);
    *out = file;
    *out_size = (size_t)l.size;
done:
    kiln_arena_deinit(&arena);
    return status;
}
