/* fuzz_onnx.c — libFuzzer target for the compiler: arbitrary bytes as an ONNX model (or, with
 * the GGUF magic, a GGUF LLM: its importer, compiled as prefill and decode).
 *
 * Layer: fuzz (public compiler API only). Drives the protobuf import, attribute decoding, shape
 * inference (every portable kernel's infer()), constant folding (their run()), the memory
 * planner and the program writer. A model that compiles must also open as a program: the
 * compiler may never write a file its own reader rejects. Every compile-time allocation goes
 * through a budgeted counting allocator (fuzz_common.h), so an absurd declared shape ends as
 * KILN_ERROR_OUT_OF_MEMORY and anything left live afterwards is reported as a leak.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "kiln/compiler.h"
#include "kiln/kiln.h"

/* Live bytes a compile may hold: generous for the IR of a few-kB model, small enough that
   constant folding cannot be asked for minutes of arithmetic. */
#define COMPILE_BUDGET ((size_t)8 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_program_opens(void *program, size_t program_size)
{
    kiln_program *p;
    kiln_status st = kiln_program_open_memory(program, program_size, &p);
    if (st != KILN_OK) {
        fprintf(stderr, "fuzz: the compiler wrote a program its reader rejects: %s\n", kiln_status_name(st));
        abort();
    }
    kiln_program_close(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_budget budget;
    kiln_allocator a = fuzz_budget_allocator(&budget, COMPILE_BUDGET);
    kiln_compile_options opt = {.struct_size = sizeof opt, .allocator = &a};
    /* model_data must be non-NULL even for an empty model, or the call is a usage error. */
    static const uint8_t empty[1];
    kiln_compile_method method = {"forward", NULL, size ? (const void *)data : empty, size};
    void *program = NULL;
    size_t program_size = 0;
    char message[256];
    kiln_status st = kiln_compile_memory(&opt, &method, 1, &program, &program_size, message, sizeof message);
    fuzz_check_status(st, "kiln_compile_memory");
    if (st == KILN_OK) {
        check_program_opens(program, program_size);
        a.free(a.ctx, program);
    } else if (program) {
        fprintf(stderr, "fuzz: failed compile (%s) left *out_data set\n", kiln_status_name(st));
        abort();
    }
    fuzz_budget_check_clean(&budget, "kiln_compile_memory");
    return 0;
}
