/* compile_spec.c — the options of a compilation as key/value compile specs (see compile_spec.h).
 *
 * Layer: compiler. The checks run in a fixed order, so a spec with several problems always
 * reports the same one first: the shape of the target list, contradictions with no_delegate,
 * then the backend's own checks (its keys, the default target, each target name, the
 * precisions). Messages say what is wrong and what to do, in the words of both the API field
 * and the command-line flag, since both reach this code.
 */
#include "compiler/compile_spec.h"

#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "core/diag.h"
#include "core/cpu_features.h"

/* The target list's shape: the list or the scalar, never both, never an empty list. */
static kiln_status check_targets(const kiln_compile_options *opt, char *message, size_t size)
{
    if (opt->n_targets && !opt->targets)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, size,
                           "n_targets is %zu but the target list is NULL; pass the list or set n_targets to 0",
                           opt->n_targets);
    if (opt->target && opt->targets)
        return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                           "targets were given twice, as target ('%s') and as a list of %zu; give only the list "
                           "(a list of one target is the same as the scalar form)", opt->target, opt->n_targets);
    if (opt->targets && opt->n_targets == 0)
        return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                           "the target list is empty; name at least one target (--target T), or pass no list to "
                           "compile for this machine's best target");
    if (opt->n_targets > KILN_COMPILE_SPEC_MAX_TARGETS)
        return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size, "%zu targets, more than %d; give each target once",
                           opt->n_targets, KILN_COMPILE_SPEC_MAX_TARGETS);
    if (opt->n_precisions && !opt->precisions)
        return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, size,
                           "n_precisions is %zu but the precision list is NULL; pass the list or set n_precisions to 0",
                           opt->n_precisions);
    if (opt->n_precisions > KILN_COMPILE_SPEC_MAX_TARGETS)
        return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                           "%zu precisions, more than %d; give one precision for all targets or one per target",
                           opt->n_precisions, KILN_COMPILE_SPEC_MAX_TARGETS);
    return KILN_OK;
}

/* Options that only mean something for the cpu delegates, against no_delegate. */
static kiln_status check_no_delegate(const kiln_compile_options *opt, char *message, size_t size)
{
    const char *what = NULL;
    if (opt->targets || opt->target) what = "targets (--target)";
    else if (opt->precisions || opt->n_precisions) what = "precisions (--precision)";
    else if (opt->slc) what = "slc (--slc)";
    else if (opt->weight_sharing) what = "weight_sharing (--weight-sharing)";
    else if (opt->no_strassen) what = "no_strassen (--no-strassen)";
    if (!what) return KILN_OK;
    return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                       "%s cannot be combined with no_delegate (--no-delegate): it applies to the cpu delegates, "
                       "and no_delegate keeps every op on the portable kernels; drop one of the two", what);
}

/* The options' fields as key/value pairs (check_targets bounds the counts to fit). */
static void to_keys(const kiln_compile_options *opt, kiln_compile_spec *spec)
{
    size_t k = 0;
    if (opt->target) spec->kv[k++] = (kiln_compile_kv){"target", opt->target};
    for (size_t i = 0; opt->targets && i < opt->n_targets; i++)
        spec->kv[k++] = (kiln_compile_kv){"target", opt->targets[i]};
    for (size_t i = 0; i < opt->n_precisions; i++) spec->kv[k++] = (kiln_compile_kv){"precision", opt->precisions[i]};
    if (opt->slc) spec->kv[k++] = (kiln_compile_kv){"slc", "1"};
    if (opt->weight_sharing) spec->kv[k++] = (kiln_compile_kv){"weight_sharing", "1"};
    if (opt->no_strassen) spec->kv[k++] = (kiln_compile_kv){"no_strassen", "1"};
    spec->n_kv = k;
}

kiln_status kiln_compile_spec_make(const kiln_compile_options *opt, kiln_compile_spec *spec, char *message,
                                   size_t message_size)
{
    return kiln_compile_spec_make_for(opt, kiln_cpu_features(), spec, message, message_size);
}

kiln_status kiln_compile_spec_make_for(const kiln_compile_options *opt, uint64_t cpu_features, kiln_compile_spec *spec,
                                       char *message, size_t message_size)
{
    memset(spec, 0, sizeof *spec);
    spec->delegate = !opt->no_delegate;
    if (opt->no_delegate) {
        if (opt->n_targets && !opt->targets) return check_targets(opt, message, message_size);
        return check_no_delegate(opt, message, message_size);
    }
    KILN_TRY(check_targets(opt, message, message_size));
    spec->weight_sharing = opt->weight_sharing != 0;
    to_keys(opt, spec);
    size_t n;
    const kiln_compiler_backend *first = kiln_compiler_builtin_backends(&n)[0];
    return first->validate_spec(spec->kv, spec->n_kv, cpu_features, spec->normal, KILN_COMPILE_KV_MAX,
                                &spec->n_normal, message, message_size);
}

const char *kiln_compile_spec_value(const kiln_compile_spec *spec, const char *key, size_t i)
{
    for (size_t k = 0; k < spec->n_normal; k++)
        if (strcmp(spec->normal[k].key, key) == 0 && i-- == 0) return spec->normal[k].value;
    return NULL;
}

size_t kiln_compile_spec_count(const kiln_compile_spec *spec, const char *key)
{
    size_t n = 0;
    while (kiln_compile_spec_value(spec, key, n)) n++;
    return n;
}
