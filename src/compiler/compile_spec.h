/* compile_spec.h — the compile spec of a kiln_compile_options, checked and normalised before
 * any work (no file is read, no model imported, until it passes).
 *
 * Layer: compiler. Backend-neutral: the options' delegation fields (targets, precisions, slc,
 * weight_sharing, no_strassen) become key/value pairs of the first built-in backend
 * (compiler_backend.h), whose validate_spec interprets and normalises them; this file checks
 * only what belongs to the options struct itself (a count without its array, the target given
 * twice, an empty list, contradictions with no_delegate). Every rejection is
 * KILN_ERROR_COMPILE_SPEC with one line naming the problem and the fix (the `kiln` tool exits
 * with status 2 on it, docs/cli.md), except API misuse the command line cannot produce (a count
 * without its array: KILN_ERROR_INVALID_ARGUMENT).
 *
 * Keys: each target of the list (or the scalar `target`) is a "target" pair, each precision a
 * "precision" pair, and slc, weight_sharing and no_strassen a pair with the value "1" when set.
 * For the cpu backend the normal form lists n targets (the default one when none is named: the
 * best target of the compiling machine that executes the precision asked for), then one
 * precision per target, then the flags (the cpu backend's aot_backend.h).
 */
#ifndef KILN_COMPILER_COMPILE_SPEC_H
#define KILN_COMPILER_COMPILE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/compiler_backend.h"
#include "kiln/compiler.h"

/* More than the known targets, each of which may be named once. */
#define KILN_COMPILE_SPEC_MAX_TARGETS 16

typedef struct kiln_compile_spec {
    bool delegate;                  /* false: every op stays portable */
    bool weight_sharing;            /* pair partition i of every method into one payload */
    kiln_compile_kv kv[KILN_COMPILE_KV_MAX]; /* (n_kv) the options as the first backend's keys */
    size_t n_kv;
    kiln_compile_kv normal[KILN_COMPILE_KV_MAX]; /* (n_normal) their normal form */
    size_t n_normal;
} kiln_compile_spec;

/* Check opt's delegation options (targets, precisions, slc, weight sharing against no_delegate
 * and each other) and fill *spec, for a compiling machine with the kiln_cpu_feature bits
 * cpu_features (they choose the default target). *spec must not be copied: `normal` may point
 * into `kv`. KILN_OK, KILN_ERROR_COMPILE_SPEC or KILN_ERROR_INVALID_ARGUMENT; message gets one
 * line. */
kiln_status kiln_compile_spec_make_for(const kiln_compile_options *opt, uint64_t cpu_features, kiln_compile_spec *spec,
                                       char *message, size_t message_size);

/* kiln_compile_spec_make_for this machine (kiln_cpu_features()). */
kiln_status kiln_compile_spec_make(const kiln_compile_options *opt, kiln_compile_spec *spec, char *message,
                                   size_t message_size);

/* The i-th value of key in spec's normal form, or NULL; the number of them. */
const char *kiln_compile_spec_value(const kiln_compile_spec *spec, const char *key, size_t i);
size_t kiln_compile_spec_count(const kiln_compile_spec *spec, const char *key);

#endif
