/* cpu_format.h — the context binary of the `cpu` backend, version 2 (docs/format.md, part 2;
 * its version table says what each version holds: version 1 files, a subset, still load).
 *
 * Layer: backends/cpu. Written by aot/ctxbin_writer.c, validated and read in place by
 * rt/ctxbin_reader.c. A context binary is the payload of a DELEGATE instruction: one record
 * per target, each holding one graph per method it serves, over one weight pool whose blocks
 * the graphs reference (records whose packed layouts agree reference the same blocks).
 *
 *   0    header (128 B): magic, version, signature, compile spec, table locations
 *   ...  strings (NUL-terminated, referenced by offset; offset 0 is "")
 *   ...  blocks table        n_blocks  x kiln_ctx_block
 *   ...  records table       n_records x kiln_ctx_record
 *   ...  graphs tables       per record: n_graphs x kiln_ctx_graph
 *   ...  tensors and steps   per graph
 *   ...  weight blocks       64-byte aligned, each distinct content once
 *
 * Every offset is absolute from the start of the binary and 8-byte aligned (64 for blocks).
 * The signature is kiln_hash64 of bytes [128, file_size) with the header's version as seed: a
 * content hash, never a timestamp; equal binaries have equal signatures.
 */
#ifndef KILN_BACKENDS_CPU_CPU_FORMAT_H
#define KILN_BACKENDS_CPU_CPU_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/cpu/cpu_ops.h"
#include "core/hash.h"

#define KILN_CTX_MAGIC "KILNCTXB"
#define KILN_CTX_VERSION 3u          /* what this build writes */
#define KILN_CTX_VERSION_MIN 1u      /* oldest version it reads (each version a subset of the next) */
#define KILN_CTX_HEADER_SIZE 128u
#define KILN_CTX_TARGET_NAME_MAX 32

typedef enum kiln_ctx_precision { KILN_CTX_PRECISION_F32 = 0, KILN_CTX_PRECISION_BF16 = 1 } kiln_ctx_precision;
#define KILN_CTX_SPEC_SLC (1u << 0)
#define KILN_CTX_SPEC_WEIGHT_SHARING (1u << 1)
#define KILN_CTX_SPEC_NO_STRASSEN (1u << 2)   /* every GEMM classical (kiln_compile_options) */

typedef struct kiln_ctx_header {
    char magic[8];
    uint32_t version;
    uint32_t flags;                 /* 0 */
    uint64_t file_size;
    uint64_t signature;
    /* compile spec */
    uint32_t precision;             /* kiln_ctx_precision */
    uint32_t spec_flags;            /* KILN_CTX_SPEC_* */
    uint64_t group_scratch_size;    /* 0: the graphs' own need; else the scratch group size to join */
    /* tables */
    uint64_t strings_offset, strings_size;
    uint64_t blocks_offset;
    uint64_t records_offset;
    uint32_t n_blocks, n_records;
    uint8_t reserved[40];           /* zero */
} kiln_ctx_header;                  /* 128 bytes */

typedef struct kiln_ctx_block {
    uint64_t offset, size, hash;    /* hash = kiln_hash64(bytes, size, 0) */
} kiln_ctx_block;

typedef struct kiln_ctx_record {
    uint32_t target;                /* string: target name ("generic", "x86-64-v4" ...) */
    uint32_t n_graphs;
    uint64_t features;              /* kiln_cpu_feature bits the record's kernels need */
    uint64_t graphs_offset;         /* kiln_ctx_graph[n_graphs] */
    uint64_t l1_size, l2_size, l3_size; /* cache sizes the lowering assumed */
    uint32_t gemm_mr, gemm_nr;      /* register tile the packed weights were laid out for */
} kiln_ctx_record;

typedef struct kiln_ctx_graph {
    uint32_t name;                  /* string: the method this graph serves */
    uint32_t n_inputs, n_outputs;   /* tensors [0, n_inputs) are inputs, the next n_outputs outputs */
    uint32_t n_tensors, n_steps;
    uint32_t reserved;
    uint64_t tensors_offset;        /* kiln_ctx_tensor[n_tensors] */
    uint64_t steps_offset;          /* kiln_ctx_step[n_steps] */
    uint64_t scratch_size;          /* intermediates + workspace, bytes */
    uint64_t workspace_offset;      /* start of the per-step workspace inside scratch (64-aligned) */
} kiln_ctx_graph;

typedef enum kiln_ctx_tensor_kind {
    KILN_CTX_TENSOR_INPUT = 1,      /* offset = input index */
    KILN_CTX_TENSOR_OUTPUT = 2,     /* offset = output index */
    KILN_CTX_TENSOR_SCRATCH = 3,    /* offset = byte offset in the scratch buffer (64-aligned) */
    KILN_CTX_TENSOR_WEIGHT = 4,     /* block index + byte offset in the block */
} kiln_ctx_tensor_kind;

typedef struct kiln_ctx_tensor {
    uint8_t dtype;                  /* kiln_dtype */
    uint8_t rank;
    uint8_t kind;                   /* kiln_ctx_tensor_kind */
    uint8_t reserved0;
    uint32_t block;                 /* WEIGHT: block index */
    uint64_t offset;
    uint64_t size;                  /* bytes; for packed weights the packed size */
    int64_t shape[8];               /* logical shape (packed weights: the unpacked shape) */
} kiln_ctx_tensor;                  /* 88 bytes */

typedef struct kiln_ctx_step {
    uint32_t op;                    /* kiln_cpu_op */
    uint16_t n_inputs, n_outputs;
    int32_t tensors[KILN_CPU_MAX_STEP_TENSORS]; /* inputs then outputs; -1 = absent */
    uint64_t workspace_size;        /* bytes of workspace the step uses (<= graph workspace) */
    uint8_t params[KILN_CPU_PARAMS_SIZE];
} kiln_ctx_step;                    /* 304 bytes */

/* The signature a binary of size bytes (size >= KILN_CTX_HEADER_SIZE) must carry: what the
   writer stores and what `kiln inspect` and `kiln verify` recompute. Seeded with the version
   in the binary's own header, so a version 1 file keeps the signature it was written with. */
static inline uint64_t kiln_ctx_signature(const void *binary, size_t size)
{
    uint32_t version;
    memcpy(&version, (const uint8_t *)binary + offsetof(kiln_ctx_header, version), sizeof version);
    return kiln_hash64((const uint8_t *)binary + KILN_CTX_HEADER_SIZE, size - KILN_CTX_HEADER_SIZE, version);
}

#endif
