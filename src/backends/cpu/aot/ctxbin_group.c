/* ctxbin_group.c — scratch need and scratch-group size of a written context binary (see
 * ctxbin_group.h).
 *
 * Layer: backends/cpu/aot. Reads only the header, the record table and each record's graph
 * table, each proved inside the bytes before it is read; the header is copied in and out with
 * memcpy so the caller's bytes need no particular alignment beyond the reader's 8.
 */
#include "backends/cpu/aot/ctxbin_group.h"

#include <string.h>

#include "backends/cpu/cpu_format.h"
#include "core/check.h"

#define MAX_GROUP_SCRATCH ((uint64_t)1 << 46) /* the reader's bound */

static bool table_in(uint64_t offset, uint64_t count, uint64_t elem, uint64_t size)
{
    uint64_t bytes;
    return offset % 8 == 0 && kiln_mul_u64(count, elem, &bytes) && kiln_range_ok(offset, bytes, size);
}

static kiln_status read_header(const void *data, size_t size, kiln_ctx_header *h)
{
    KILN_CHECK(data && (uintptr_t)data % 8 == 0 && size >= KILN_CTX_HEADER_SIZE, KILN_ERROR_INCOMPATIBLE);
    memcpy(h, data, sizeof *h);
    /* Every version this build reads has this header (programs written by an older build keep
       getting their group size). */
    KILN_CHECK(memcmp(h->magic, KILN_CTX_MAGIC, 8) == 0 && h->version >= KILN_CTX_VERSION_MIN &&
                   h->version <= KILN_CTX_VERSION && h->file_size == size,
               KILN_ERROR_INCOMPATIBLE);
    return KILN_OK;
}

kiln_status kiln_cpu_aot_scratch_info(const void *data, size_t size, uint64_t *need, uint64_t *group)
{
    *need = 0;
    *group = 0;
    kiln_ctx_header h;
    KILN_TRY(read_header(data, size, &h));
    KILN_CHECK(table_in(h.records_offset, h.n_records, sizeof(kiln_ctx_record), size), KILN_ERROR_INCOMPATIBLE);
    const uint8_t *base = data;
    uint64_t max = 0;
    for (uint32_t r = 0; r < h.n_records; r++) {
        kiln_ctx_record rec;
        memcpy(&rec, base + h.records_offset + (uint64_t)r * sizeof rec, sizeof rec);
        KILN_CHECK(table_in(rec.graphs_offset, rec.n_graphs, sizeof(kiln_ctx_graph), size), KILN_ERROR_INCOMPATIBLE);
        for (uint32_t g = 0; g < rec.n_graphs; g++) {
            kiln_ctx_graph graph;
            memcpy(&graph, base + rec.graphs_offset + (uint64_t)g * sizeof graph, sizeof graph);
            if (graph.scratch_size > max) max = graph.scratch_size;
        }
    }
    *need = max;
    *group = h.group_scratch_size;
    return KILN_OK;
}

kiln_status kiln_cpu_aot_set_group_scratch(void *data, size_t size, uint64_t group_size)
{
    uint64_t need, old;
    KILN_TRY(kiln_cpu_aot_scratch_info(data, size, &need, &old));
    KILN_CHECK(group_size <= MAX_GROUP_SCRATCH && (group_size == 0 || group_size >= need), KILN_ERROR_INVALID_ARGUMENT);
    kiln_ctx_header h;
    memcpy(&h, data, sizeof h);
    h.group_scratch_size = group_size;
    memcpy(data, &h, sizeof h);
    return KILN_OK;
}
