/* ctxbin_print.h — a `cpu` context binary read back for the tools, through the compile-time
 * backend's check, describe and targets entries (compiler_backend.h): validity, integrity,
 * and what it holds (signature, compile spec, weights, scratch, per record its target, needs,
 * tile, caches and cost in bytes, per graph its steps, inputs, outputs and scratch).
 *
 * Layer: backends/cpu/aot. Each call validates the binary with the runtime's metadata query
 * (backends/cpu/rt/ctxbin_describe.h: the reader loading uses, without binding weights,
 * choosing kernels or touching the delegate cache), so what these call valid is exactly what a
 * module would load, also for binaries built for CPUs this machine cannot run; and recomputes
 * what loading deliberately skips: the signature (kiln_ctx_signature) and every weight block's
 * hash (docs/format.md part 2). Names from the binary are printed escaped.
 */
#ifndef KILN_BACKENDS_CPU_AOT_CTXBIN_PRINT_H
#define KILN_BACKENDS_CPU_AOT_CTXBIN_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "compiler/compiler_backend.h"

kiln_status kiln_cpu_aot_check(const void *payload, size_t size, kiln_payload_check *check);

kiln_status kiln_cpu_aot_describe(const void *payload, size_t size, kiln_describe_format format, FILE *out);

kiln_status kiln_cpu_aot_targets(const void *payload, size_t size, void (*fn)(void *arg, const char *target), void *arg);

#endif
