/* compiled_ctxbin.c — see compiled_ctxbin.h. */
#include "compiled_ctxbin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

void kiln_test_compiled_ctxbin(const kiln_compile_options *opt, const uint8_t *onnx, size_t onnx_size,
                               void **program_out, kiln_ctxbin *bin)
{
    kiln_compile_method m = {"forward", NULL, onnx, onnx_size};
    void *program = NULL;
    size_t size = 0;
    char message[512] = "";
    kiln_status st = kiln_compile_memory(opt, &m, 1, &program, &size, message, sizeof message);
    if (st != KILN_OK) {
        fprintf(stderr, "compile: %s\n", message);
        abort();
    }
    const uint8_t *bytes = program, *ctx = NULL;
    for (size_t at = 0; at + KILN_CTX_HEADER_SIZE <= size && !ctx; at += 64)
        if (memcmp(bytes + at, KILN_CTX_MAGIC, 8) == 0) ctx = bytes + at;
    if (!ctx || kiln_ctxbin_open(bin, ctx, (size_t)((const kiln_ctx_header *)ctx)->file_size, kiln_allocator_default(),
                                 message, sizeof message) != KILN_OK) {
        fprintf(stderr, "no cpu context binary that opens: %s\n", message);
        abort();
    }
    *program_out = program;
}
