/* compiled_ctxbin.h — the cpu context binary of a model compiled in memory, for the tests that
 * pin what the lowering makes of a graph (test_compile_lowering*.c).
 * Test support code (not part of the library).
 */
#ifndef KILN_TESTS_COMPILED_CTXBIN_H
#define KILN_TESTS_COMPILED_CTXBIN_H

#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/rt/ctxbin_reader.h"
#include "kiln/compiler.h"

/* Compiles method "forward" of onnx (not retained) with opt and opens the first cpu context
 * binary of the program in *bin; *program_out is the program (free() it after
 * kiln_ctxbin_close). Aborts the test, saying why, when either step fails. */
void kiln_test_compiled_ctxbin(const kiln_compile_options *opt, const uint8_t *onnx, size_t onnx_size,
                               void **program_out, kiln_ctxbin *bin);

#endif
