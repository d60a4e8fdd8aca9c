/* ctxbin_describe.h — metadata query over a `cpu` context binary: its records, graphs, their
 * inputs and outputs, and the scratch they need, without creating executable state.
 *
 * Layer: backends/cpu/rt. Built on the validating reader (ctxbin_reader.h): a binary the query
 * accepts is exactly one a module would accept up to record selection. Unlike loading a
 * context it binds no weights, selects no kernel table, joins no scratch group and puts nothing
 * in the delegate cache, so the tools (`kiln inspect`, `verify`, `scratch-size`, through the
 * cpu compile-time backend's check and describe: backends/cpu/aot/ctxbin_print.h) can describe
 * binaries built for CPUs this machine cannot run.
 *
 * Scratch sizing: a context reserves the largest scratch_size over the graphs of the record it
 * runs; a binary's `scratch_need` is that maximum over every record, so it holds whichever
 * record is picked. A non-zero header `group_scratch_size` is the size of the scratch group the
 * binary's contexts join; it must be at least the running record's need (the runtime refuses a
 * smaller one as incompatible), so `group_fits` says whether it covers every record.
 */
#ifndef KILN_BACKENDS_CPU_RT_CTXBIN_DESCRIBE_H
#define KILN_BACKENDS_CPU_RT_CTXBIN_DESCRIBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/rt/ctxbin_reader.h"
#include "core/arena.h"
#include "kiln/kiln.h"

typedef struct kiln_cpu_graph_desc {
    const char *name;               /* the method it serves */
    uint32_t n_inputs, n_outputs;
    const kiln_tensor *inputs;      /* (n_inputs) dtype and shape, data NULL, in call order */
    const kiln_tensor *outputs;     /* (n_outputs) */
    uint32_t n_steps;
    uint64_t scratch_size;          /* intermediates + workspace */
    uint64_t workspace_size;        /* the workspace part */
    const kiln_ctx_graph *fmt;      /* the record in the binary, for further detail */
} kiln_cpu_graph_desc;

typedef struct kiln_cpu_record_desc {
    const char *target;
    uint64_t features;              /* kiln_cpu_feature bits the record needs */
    uint32_t n_graphs;
    const kiln_cpu_graph_desc *graphs; /* (n_graphs) */
    uint64_t scratch_need;          /* max scratch_size over its graphs */
    const kiln_ctx_record *fmt;
} kiln_cpu_record_desc;

typedef struct kiln_cpu_ctxbin_desc {
    kiln_ctxbin bin;                /* the validated view (its tables a copy; weights in the caller's bytes) */
    uint64_t signature;
    uint32_t precision, spec_flags;
    uint64_t group_scratch_size;    /* header field; 0: contexts size scratch to their own need */
    uint64_t scratch_need;          /* max over every graph of every record */
    bool group_fits;                /* group_scratch_size is 0 or >= scratch_need */
    uint32_t n_blocks;
    uint64_t weight_bytes;          /* sum of the weight blocks (each stored once) */
    uint32_t n_records;
    const kiln_cpu_record_desc *records; /* (n_records), in file order */
    kiln_arena arena;               /* holds the arrays above */
} kiln_cpu_ctxbin_desc;

/* Validate the binary at data (8-byte aligned, size bytes; it must stay put while *out is used)
 * and describe it. The allocator holds the description (kiln_cpu_ctxbin_desc_free releases it).
 * KILN_OK, KILN_ERROR_INCOMPATIBLE (message says why), KILN_ERROR_OUT_OF_MEMORY; on failure
 * nothing is held and *out needs no free (calling the free is harmless). */
kiln_status kiln_cpu_ctxbin_describe(const void *data, size_t size, const kiln_allocator *allocator,
                                     kiln_cpu_ctxbin_desc *out, char *message, size_t message_size);

void kiln_cpu_ctxbin_desc_free(kiln_cpu_ctxbin_desc *desc);

#endif
