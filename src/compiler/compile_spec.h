/* compile_spec.h — the compile spec of a kiln_compile_options, checked and normalised before
 * any work (no file is read, no model imported, until it passes).
 *
 * Layer: compiler. Depends on backends/cpu (the target table, the context-binary spec fields).
 * Every rejection is KILN_ERROR_COMPILE_SPEC with one line naming the problem and the fix (the
 * `kiln` tool exits with status 2 on it, docs/cli.md), except API misuse the command line cannot
 * produce (a count without its array: KILN_ERROR_INVALID_ARGUMENT).
 *
 * Normal form: the scalar `target` and a list of one name the same target list, so they compile
 * to the same bytes; no target at all means the best target of the compiling machine that
 * executes the precision asked for (bf16: x86-64-v4-bf16, if this machine runs it; else the spec
 * is refused, saying to name the target); precisions become one per target — none given is f32
 * for every target, one applies to every target, a list pairs with the targets in order — so a
 * binary may hold bf16 records for the CPUs that have a bf16 GEMM beside f32 records for others.
 */
#ifndef KILN_COMPILER_COMPILE_SPEC_H
#define KILN_COMPILER_COMPILE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/compiler.h"

/* More than the known targets, each of which may be named once. */
#define KILN_COMPILE_SPEC_MAX_TARGETS 16

typedef struct kiln_compile_spec {
    bool delegate;                  /* false: every op stays portable */
    const char *const *targets;     /* (n_targets) validated names: known, each once, n >= 1 */
    size_t n_targets;
    const char *single[1];          /* storage behind `targets` for the scalar or default target */
    uint32_t precisions[KILN_COMPILE_SPEC_MAX_TARGETS]; /* (n_targets) kiln_ctx_precision of record i */
    uint32_t flags;                 /* KILN_CTX_SPEC_* the binaries carry (slc, weight sharing) */
    bool weight_sharing;
} kiln_compile_spec;

/* Check opt's delegation options (targets, precisions, slc, weight sharing against no_delegate
 * and each other) and fill *spec, for a compiling machine with the kiln_cpu_feature bits
 * cpu_features (they choose the default target). *spec must not be copied: `targets` may point
 * into it. KILN_OK, KILN_ERROR_COMPILE_SPEC or KILN_ERROR_INVALID_ARGUMENT; message gets one
 * line. */
kiln_status kiln_compile_spec_make_for(const kiln_compile_options *opt, uint64_t cpu_features, kiln_compile_spec *spec,
                                       char *message, size_t message_size);

/* kiln_compile_spec_make_for this machine (kiln_cpu_features()). */
kiln_status kiln_compile_spec_make(const kiln_compile_options *opt, kiln_compile_spec *spec, char *message,
                                   size_t message_size);

#endif
