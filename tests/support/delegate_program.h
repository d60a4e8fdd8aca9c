/* delegate_program.h — programs of chained DELEGATE calls, for the tests that run a backend
 * through the runtime over hand-made payloads (test_backend_registry.c, test_backend_toy.c and
 * the cpu runtime tests through test_cpu_support.h).
 * Test support code (not part of the library).
 */
#ifndef KILN_TESTS_DELEGATE_PROGRAM_H
#define KILN_TESTS_DELEGATE_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "format/program_writer.h"
#include "kiln/kiln.h"

/* One DELEGATE call of a chain. */
typedef struct kiln_test_delegate_call {
    const char *backend;        /* the instruction's op: the backend that runs it */
    const void *payload;        /* its segment; referenced until kiln_program_builder_finish */
    size_t payload_size;
} kiln_test_delegate_call;

/* Adds method `name` to b: f32 [n] values v0..v<n_calls> in the arena (each in its own 64-byte
 * aligned slot), input v0, output v<n_calls>, and call k reading v_k and writing v_{k+1}.
 * KILN_OK or the builder's status. */
kiln_status kiln_test_delegate_method_add(kiln_program_builder *b, const char *name, int64_t n,
                                          const kiln_test_delegate_call *calls, size_t n_calls);

/* A program of one such method, "forward" over f32 [4]. On KILN_OK *data_out holds the program
 * bytes, from kiln_allocator_default() (kiln_free them once the program opened over them is
 * closed), and *size_out their size; on failure nothing is left to free. */
kiln_status kiln_test_delegate_program(const kiln_test_delegate_call *calls, size_t n_calls, void **data_out,
                                       size_t *size_out);

#endif
