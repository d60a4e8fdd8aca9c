/* aot_backend.h — the `cpu` backend's entry in the compiler's table of compile-time backends
 * (src/compiler/compiler_backend.h), and its compile-spec keys.
 *
 * Layer: backends/cpu/aot. Registered by src/compiler/builtin_backends.c, the one compiler file
 * that includes it.
 *
 * Keys (values are strings; docs/design.md lists them):
 *   target          one per target, in record order; none: the best target the compiling machine
 *                   runs that executes the precision asked for (bf16: x86-64-v4-bf16)
 *   precision       none (f32 for all), one (for all) or one per target, in target order
 *   slc, no_strassen, weight_sharing   "1" sets the context-binary spec flag
 * The normal form lists exactly n targets, then n precisions, then the flags that are set.
 */
#ifndef KILN_BACKENDS_CPU_AOT_AOT_BACKEND_H
#define KILN_BACKENDS_CPU_AOT_AOT_BACKEND_H

#include "compiler/compiler_backend.h"

extern const kiln_compiler_backend kiln_cpu_compiler_backend;

#endif
