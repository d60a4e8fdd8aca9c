/* fuzz_ctxbin.c — libFuzzer target for the cpu backend's context binaries: the validating reader
 * (kiln_ctxbin_open) and the metadata query over it (kiln_cpu_ctxbin_describe), fed directly.
 *
 * Layer: fuzz (internal API of backends/cpu/rt: the program reader reaches a context binary
 * only through a valid program, so fuzz_program rarely gets deep into one). The bytes are
 * copied into an exact-size buffer (8-byte aligned, as a segment is), so ASan sees any read
 * past the end. A binary that opens has every reference followed as the runtime would follow
 * it, without further checks — strings, records, graphs, tensors, steps and every weight byte —
 * so a check the reader misses shows up as an out-of-bounds read. Invariants beyond "no crash":
 * the status is one the reader documents, describe agrees with open, a refusal comes with a
 * "context binary: " message, and nothing allocated stays live.
 * Seeds: fuzz/corpus/ctxbin/, the golden programs' context binaries (tests/golden/regenerate.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/rt/ctxbin_describe.h"
#include "backends/cpu/rt/ctxbin_reader.h"
#include "fuzz_common.h"

#define CTXBIN_BUDGET ((size_t)1 << 24)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink; /* keeps the reads below from being optimised away */

static void check_status(kiln_status st, const char *what)
{
    fuzz_check_status(st, what);
    if (st == KILN_OK || st == KILN_ERROR_INCOMPATIBLE || st == KILN_ERROR_VERSION || st == KILN_ERROR_FORMAT ||
        st == KILN_ERROR_OUT_OF_MEMORY)
        return;
    fprintf(stderr, "fuzz: %s returned %s, which it does not document\n", what, kiln_status_name(st));
    abort();
}

/* Follows every reference of an opened binary the way the runtime does: unchecked. */
static void walk(const kiln_ctxbin *b)
{
    uint64_t acc = 0;
    for (uint32_t k = 0; k < b->header->n_blocks; k++) {
        const uint8_t *w = kiln_ctxbin_block_data(b, k);
        for (uint64_t i = 0; i < b->blocks[k].size; i++) acc += w[i];
    }
    for (uint32_t r = 0; r < b->header->n_records; r++) {
        const kiln_ctx_record *rec = &b->records[r];
        acc += strlen(kiln_ctxbin_string(b, rec->target));
        const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(b, rec);
        for (uint32_t g = 0; g < rec->n_graphs; g++) {
            acc += strlen(kiln_ctxbin_string(b, graphs[g].name));
            const kiln_ctx_tensor *t = kiln_ctxbin_tensors(b, &graphs[g]);
            for (uint32_t i = 0; i < graphs[g].n_tensors; i++) {
                if (t[i].kind == KILN_CTX_TENSOR_WEIGHT) acc += kiln_ctxbin_block_data(b, t[i].block)[t[i].offset];
                acc += kiln_ctxbin_tensor_bytes(&t[i]);
            }
            const kiln_ctx_step *s = kiln_ctxbin_steps(b, &graphs[g]);
            for (uint32_t i = 0; i < graphs[g].n_steps; i++)
                for (uint32_t j = 0; j < (uint32_t)s[i].n_inputs + s[i].n_outputs; j++)
                    if (s[i].tensors[j] >= 0) acc += t[s[i].tensors[j]].size;
            acc += (uint64_t)kiln_ctxbin_find_graph(b, rec, "forward", "cpu_partition_0");
        }
    }
    sink = acc;
}

static void walk_desc(const kiln_cpu_ctxbin_desc *d)
{
    uint64_t acc = d->scratch_need + d->weight_bytes;
    for (uint32_t r = 0; r < d->n_records; r++) {
        acc += strlen(d->records[r].target);
        for (uint32_t g = 0; g < d->records[r].n_graphs; g++) {
            const kiln_cpu_graph_desc *gd = &d->records[r].graphs[g];
            acc += strlen(gd->name);
            for (uint32_t i = 0; i < gd->n_inputs; i++) acc += (uint64_t)gd->inputs[i].rank;
            for (uint32_t i = 0; i < gd->n_outputs; i++) acc += (uint64_t)gd->outputs[i].rank;
        }
    }
    sink = acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1); /* malloc: aligned for any header field */
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    fuzz_budget budget;
    kiln_allocator a = fuzz_budget_allocator(&budget, CTXBIN_BUDGET);
    char message[256] = "";
    kiln_ctxbin bin;
    kiln_status opened = kiln_ctxbin_open(&bin, copy, size, &a, message, sizeof message);
    check_status(opened, "kiln_ctxbin_open");
    if (opened == KILN_OK) walk(&bin);
    else if (opened != KILN_ERROR_OUT_OF_MEMORY && strncmp(message, "context binary: ", 16) != 0) {
        fprintf(stderr, "fuzz: refusal %s without its message ('%s')\n", kiln_status_name(opened), message);
        abort();
    }
    kiln_ctxbin_close(&bin);
    fuzz_budget_check_clean(&budget, "kiln_ctxbin_open/close");

    kiln_cpu_ctxbin_desc d;
    kiln_status described = kiln_cpu_ctxbin_describe(copy, size, &a, &d, message, sizeof message);
    check_status(described, "kiln_cpu_ctxbin_describe");
    if (described == KILN_OK) walk_desc(&d);
    if (described != opened && described != KILN_ERROR_OUT_OF_MEMORY && opened != KILN_ERROR_OUT_OF_MEMORY) {
        fprintf(stderr, "fuzz: describe gave %s where open gave %s\n", kiln_status_name(described),
                kiln_status_name(opened));
        abort();
    }
    kiln_cpu_ctxbin_desc_free(&d);
    fuzz_budget_check_clean(&budget, "kiln_cpu_ctxbin_describe");
    free(copy);
    return 0;
}
