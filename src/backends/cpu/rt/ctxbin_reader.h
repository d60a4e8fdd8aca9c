/* ctxbin_reader.h — validating, zero-copy view of a `cpu` context binary (cpu_format.h).
 *
 * Layer: backends/cpu/rt. Depends on core, cpu_format.h and the kernels' step validation.
 * kiln_ctxbin_open proves everything in the binary before it returns: header, every table
 * offset, count and size (overflow-safe), every string, block, record, graph, tensor and step
 * of every record, and each step's parameters against its tensors (kiln_cpu_step_validate
 * with the record's register tile). Afterwards the runtime follows any reference without
 * further checks. A binary that fails a check is KILN_ERROR_INCOMPATIBLE, with one line saying
 * what is wrong — never a fallback to some other reading of the bytes — except for two
 * version refusals: a version this build does not read (newer than KILN_CTX_VERSION, older
 * than KILN_CTX_VERSION_MIN) is KILN_ERROR_VERSION, and a version 1 file holding something
 * only version 2 writers produce (ctxbin_version.c) is KILN_ERROR_FORMAT.
 *
 * Like the program reader, it does not re-hash the weight blocks or the signature: loading
 * stays O(metadata); `kiln inspect` checks the signature against the contents.
 *
 * Tables are copied, weights are not: the payload may be a mapped file that someone rewrites
 * in place (kiln.h, "Program files changed after open"). kiln_ctxbin_open first copies the
 * binary's tables — header, strings, block, record, graph, tensor and step tables, i.e. bytes
 * [0, end of the last table), which for binaries kiln writes is everything before the first
 * weight block — into memory of its own, and validates that copy; the view's tables point into
 * the copy and only weight blocks (read as numbers) into the payload. A change to the payload
 * after open therefore cannot change a reference the runtime follows.
 */
#ifndef KILN_BACKENDS_CPU_RT_CTXBIN_READER_H
#define KILN_BACKENDS_CPU_RT_CTXBIN_READER_H

#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/cpu_format.h"
#include "kiln/kiln.h"

typedef struct kiln_ctxbin {
    const uint8_t *base;                /* the copy of the tables: the binary's bytes [0, size) */
    uint64_t size;
    const uint8_t *payload;             /* the binary itself: weight blocks are read from here */
    uint64_t payload_size;
    void *tables;                       /* owned copy behind base (allocator), NULL when closed */
    const kiln_allocator *allocator;
    const kiln_ctx_header *header;
    const char *strings;                /* (strings_size bytes); first and last byte NUL */
    uint64_t strings_size;
    const kiln_ctx_block *blocks;       /* (header->n_blocks) */
    const kiln_ctx_record *records;     /* (header->n_records) */
} kiln_ctxbin;

/* Copy the tables of the binary at data (8-byte aligned, size bytes), validate the copy and fill
 * *bin. The copy comes from allocator and is held until kiln_ctxbin_close; data must stay mapped
 * while the weights are read. Statuses: KILN_OK, KILN_ERROR_INCOMPATIBLE (message says why),
 * KILN_ERROR_VERSION, KILN_ERROR_FORMAT (see above), KILN_ERROR_OUT_OF_MEMORY; on failure nothing is held. */
kiln_status kiln_ctxbin_open(kiln_ctxbin *bin, const void *data, size_t size, const kiln_allocator *allocator,
                             char *message, size_t message_size);
/* Free the copy of the tables; the view is empty afterwards. Harmless on an empty view. */
void kiln_ctxbin_close(kiln_ctxbin *bin);

/* The signature from the header of a binary that has not been validated yet (for cache lookup:
 * only the header's magic, size and alignment are checked). KILN_ERROR_INCOMPATIBLE if the bytes
 * are not even a context-binary header. */
kiln_status kiln_ctxbin_peek_signature(const void *data, size_t size, uint64_t *out);

/* Accessors for references kiln_ctxbin_open proved valid. */
static inline const char *kiln_ctxbin_string(const kiln_ctxbin *b, uint32_t offset) { return b->strings + offset; }
static inline const kiln_ctx_graph *kiln_ctxbin_graphs(const kiln_ctxbin *b, const kiln_ctx_record *r)
{
    return (const kiln_ctx_graph *)(const void *)(b->base + r->graphs_offset);
}
static inline const kiln_ctx_tensor *kiln_ctxbin_tensors(const kiln_ctxbin *b, const kiln_ctx_graph *g)
{
    return (const kiln_ctx_tensor *)(const void *)(b->base + g->tensors_offset);
}
static inline const kiln_ctx_step *kiln_ctxbin_steps(const kiln_ctxbin *b, const kiln_ctx_graph *g)
{
    return (const kiln_ctx_step *)(const void *)(b->base + g->steps_offset);
}
static inline const uint8_t *kiln_ctxbin_block_data(const kiln_ctxbin *b, uint32_t block)
{
    return b->payload + b->blocks[block].offset;
}

/* Index of the graph of record r that serves delegate call `delegate` (NULL: unknown) of
 * `method`: the graph named `<method>/<delegate>` (a binary shared by several calls of a method,
 * docs/format.md), else the graph named `method`, else the record's only graph whatever its
 * name. -1 if there is none. */
int64_t kiln_ctxbin_find_graph(const kiln_ctxbin *b, const kiln_ctx_record *r, const char *method,
                               const char *delegate);

/* Bytes of a tensor's logical content (numel x dtype size); the reader proved it fits in size. */
uint64_t kiln_ctxbin_tensor_bytes(const kiln_ctx_tensor *t);

/* Shape and dtype of a binary tensor as a kiln_tensor (data NULL). */
void kiln_ctxbin_tensor_view(const kiln_ctx_tensor *t, kiln_tensor *out);

/* "gemm", "conv2d" ... for a kiln_cpu_op, "?" for anything else. Static. */
const char *kiln_ctxbin_op_name(uint32_t op);

/* ---- internal to the reader (ctxbin_reader.c, ctxbin_steps.c) ---------------------------- */

/* Writes "context binary: <what>" into message and returns KILN_ERROR_INCOMPATIBLE. */
kiln_status kiln_ctxbin_reject(char *message, size_t message_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, returning status (KILN_ERROR_VERSION, KILN_ERROR_FORMAT: see kiln_ctxbin_open). */
kiln_status kiln_ctxbin_reject_as(kiln_status status, char *message, size_t message_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The first version 2 feature of a header, record, tensor or step, as a phrase ("a Winograd
 * convolution"), NULL when a version 1 writer could have written it (ctxbin_version.c). */
const char *kiln_ctxbin_v2_header_feature(const kiln_ctx_header *h);
const char *kiln_ctxbin_v2_record_feature(const kiln_ctx_record *r);
const char *kiln_ctxbin_v2_tensor_feature(const kiln_ctx_tensor *t);
const char *kiln_ctxbin_v2_step_feature(const kiln_ctx_step *s);
/* The same for version 3 (the CONCAT, SLICE, PAD, WHERE and QLINEAR steps, tap-list
 * convolutions, bool tensors): NULL when a version 2 writer could have written it. */
const char *kiln_ctxbin_v3_step_feature(const kiln_ctx_step *s);
const char *kiln_ctxbin_v3_tensor_feature(const kiln_ctx_tensor *t);

/* Check the steps of graph g of record r (tensors already checked): ops, tensor references,
 * writes only to scratch or outputs, every scratch tensor and output written before it is read,
 * workspaces inside the graph's workspace, kiln_cpu_step_validate with the record's tile. */
kiln_status kiln_ctxbin_check_steps(const kiln_ctxbin *b, const kiln_ctx_record *r, const kiln_ctx_graph *g,
                                    const kiln_allocator *allocator, char *message, size_t message_size);

#endif
