/* compile_spec.h — the compile spec of a kiln_compile_options, checked and normalised before
 * any work (no file is read, no model imported, until it passes).
 *
 * Layer: compiler. Depends on backends/cpu (the target table, the context-binary spec fields).
 * Every rejection is KILN_ERROR_COMPILE_SPEC with one line naming the problem and the fix (the
 * `kiln` tool exits with status 2 on it, docs/cli.md), except API misuse the command line cannot
 * produce (a count without its array: KILN_ERROR_INVALID_ARGUMENT).
 *
 * Normal form: the scalar `target` and a list of one name the same target list, so they compile
 * to the same bytes; no target at all means the best target of the compiling machine; per-target
 * precisions collapse to the one precision of the binary (today every target executes f32 only,
 * so that is the only one that passes).
 */
#ifndef KILN_COMPILER_COMPILE_SPEC_H
#define KILN_COMPILER_COMPILE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/compiler.h"

typedef struct kiln_compile_spec {
    bool delegate;                  /* false: every op stays portable */
    const char *const *targets;     /* (n_targets) validated names: known, each once, n >= 1 */
    size_t n_targets;
    const char *single[1];          /* storage behind `targets` for the scalar or default target */
    uint32_t precision;             /* kiln_ctx_precision of every record */
    uint32_t flags;                 /* KILN_CTX_SPEC_* the binaries carry (slc, weight sharing) */
    bool weight_sharing;
} kiln_compile_spec;

/* Check opt's delegation options (targets, precisions, slc, weight sharing against no_delegate
 * and each other) and fill *spec. *spec must not be copied: `targets` may point into it.
 * KILN_OK, KILN_ERROR_COMPILE_SPEC or KILN_ERROR_INVALID_ARGUMENT; message gets one line. */
kiln_status kiln_compile_spec_make(const kiln_compile_options *opt, kiln_compile_spec *spec, char *message,
                                   size_t message_size);

#endif
