/* aot_record.h — lowered graphs made concrete for one target (packed weights, workspace sizes,
 * scratch totals), the weight pool they share, and the context-binary writer.
 *
 * Layer: backends/cpu/aot (internal). A record references weight blocks by index in one pool
 * shared by every record and graph of the binary: a block is stored once however many tensors,
 * graphs and targets use the same bytes (same hash and same bytes: a hash alone never merges).
 */
#ifndef KILN_BACKENDS_CPU_AOT_AOT_RECORD_H
#define KILN_BACKENDS_CPU_AOT_AOT_RECORD_H

#include "backends/cpu/aot/aot_lower.h"
#include "backends/cpu/targets.h"

typedef struct aot_block {
    const void *data;       /* (size) bytes; freed with the pool when owned */
    uint64_t size, hash;    /* hash = kiln_hash64(data, size, 0) */
    bool owned;
} aot_block;

typedef struct aot_pool {
    const kiln_allocator *allocator;
    aot_block *blocks;      /* (n_blocks) distinct contents, in first-use order */
    size_t n_blocks, cap_blocks;
    uint64_t total_size;    /* sum of block sizes */
} aot_pool;

void aot_pool_init(aot_pool *pool, const kiln_allocator *allocator);
void aot_pool_deinit(aot_pool *pool);
/* The index of a block holding exactly these bytes, adding one if none does. When owned, the
 * pool takes data (allocated from its allocator) in every case: kept as the new block, or freed
 * at once when an equal block exists or on failure. KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT. */
kiln_status aot_pool_add(aot_pool *pool, const void *data, size_t size, bool owned, uint32_t *index);

typedef struct aot_record_graph {
    const aot_graph *graph;
    uint32_t *tensor_block;     /* (n_tensors) WEIGHT tensors: block index */
    uint64_t *tensor_size;      /* (n_tensors) bytes as stored (packed size for packed weights) */
    uint64_t *step_workspace;   /* (n_steps) */
    uint64_t workspace_offset;  /* = intermediates_size */
    uint64_t scratch_size;      /* workspace_offset + largest step workspace (64-aligned) */
} aot_record_graph;

typedef struct aot_record {
    const kiln_cpu_target *target;
    aot_record_graph *graphs;   /* (n_graphs), one per partition graph, in input order */
    size_t n_graphs;
} aot_record;

/* Pack the graphs' weights for target into pool and size every step's workspace with the
 * target's kernel table and cache sizes. Arrays come from arena. KILN_ERROR_NOT_SUPPORTED (the
 * target's kernel table has no kernel for some step's op; message says which),
 * KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT. */
kiln_status aot_record_build(aot_record *r, const kiln_cpu_target *target, const aot_graph *graphs, size_t n_graphs,
                             aot_pool *pool, kiln_arena *arena, char *message, size_t message_size);

/* Write the context binary (cpu_format.h) for the records over pool: *out from allocator,
 * 64-byte aligned, *out_size bytes, signature filled in. KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT
 * (a count or offset past its field). */
kiln_status aot_write_binary(const kiln_cpu_aot_spec *spec, const aot_record *records, size_t n_records,
                             const aot_pool *pool, const kiln_allocator *allocator, void **out, size_t *out_size);

#endif
