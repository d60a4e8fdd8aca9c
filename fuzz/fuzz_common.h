/* fuzz_common.h — pieces shared by the fuzz targets: a budgeted, counting allocator.
 *
 * Layer: fuzz (test code over the public API). Header-only so each target stays one file.
 *
 * Why a budget: fuzzed programs and models may declare any tensor size, and a library that
 * honestly tries to allocate 2^45 bytes is behaving correctly (it must get NULL and report
 * KILN_ERROR_OUT_OF_MEMORY), but the sanitizers would report the attempt as a crash. Capping the
 * live bytes also bounds the work any kernel can be asked to do, so slow inputs stay bounded.
 *
 * Why a count: every block taken must be given back by the time the library's objects are
 * destroyed. The count catches leaks in builds without LeakSanitizer (the replay tests built
 * with gcc), and fuzz_budget_check_clean() aborts, which libFuzzer records as a crash.
 */
#ifndef KILN_FUZZ_COMMON_H
#define KILN_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"

typedef struct fuzz_budget {
    size_t limit;       /* most live bytes at once */
    size_t live_bytes;
    size_t live_blocks;
} fuzz_budget;

/* Each block carries its size in a header of `alignment` bytes in front of it, so free() can
   give the bytes back to the budget. */
typedef struct fuzz_block_header {
    size_t size;
    size_t offset;      /* from the start of the malloc'd block to the user pointer */
} fuzz_block_header;

static void *fuzz_budget_alloc(void *ctx, size_t size, size_t alignment)
{
    fuzz_budget *b = ctx;
    if (alignment < sizeof(fuzz_block_header)) alignment = sizeof(fuzz_block_header);
    if (size > b->limit || b->live_bytes > b->limit - size) return NULL;
    void *raw = NULL;
    if (posix_memalign(&raw, alignment, alignment + size) != 0) return NULL;
    uint8_t *user = (uint8_t *)raw + alignment;
    fuzz_block_header *h = (fuzz_block_header *)(void *)(user - sizeof *h);
    h->size = size;
    h->offset = alignment;
    b->live_bytes += size;
    b->live_blocks++;
    return user;
}

static void fuzz_budget_free(void *ctx, void *ptr)
{
    fuzz_budget *b = ctx;
    if (!ptr) return;
    fuzz_block_header *h = (fuzz_block_header *)(void *)((uint8_t *)ptr - sizeof *h);
    b->live_bytes -= h->size;
    b->live_blocks--;
    free((uint8_t *)ptr - h->offset);
}

static inline kiln_allocator fuzz_budget_allocator(fuzz_budget *b, size_t limit)
{
    b->limit = limit;
    b->live_bytes = 0;
    b->live_blocks = 0;
    kiln_allocator a = {b, fuzz_budget_alloc, fuzz_budget_free};
    return a;
}

/* Abort (a finding) when anything allocated through the budget is still live. */
static inline void fuzz_budget_check_clean(const fuzz_budget *b, const char *what)
{
    if (b->live_blocks == 0 && b->live_bytes == 0) return;
    fprintf(stderr, "fuzz: %s leaked %zu blocks (%zu bytes)\n", what, b->live_blocks, b->live_bytes);
    abort();
}

/* Abort when a library call returned a status outside KILN_STATUS_MAP. */
static inline void fuzz_check_status(kiln_status st, const char *what)
{
    if (strcmp(kiln_status_name(st), "UNKNOWN") != 0) return;
    fprintf(stderr, "fuzz: %s returned unknown status %d\n", what, (int)st);
    abort();
}

/* Abort unless a refusal's message is one printable line: non-empty, terminated inside its
   buffer, free of control bytes (quoted file text is escaped), so it cannot split an error line
   or reach a terminal raw. `what` names the call in the report. */
static inline void fuzz_check_message(const char *message, size_t size, const char *what)
{
    size_t n = strnlen(message, size);
    int ok = n > 0 && n < size;
    for (size_t i = 0; ok && i < n; i++) ok = (unsigned char)message[i] >= 0x20 && message[i] != 0x7f;
    if (ok) return;
    fprintf(stderr, "fuzz: failed %s gave no printable one-line message\n", what);
    abort();
}

#endif /* KILN_FUZZ_COMMON_H */
