/* compile_spec.c — checking and normalising the compile spec (see compile_spec.h).
 *
 * Layer: compiler. The checks run in a fixed order, so a spec with several problems always
 * reports the same one first: the shape of the target list, contradictions with no_delegate,
 * the default target (when none is named: the best one the machine runs that executes the
 * precision asked for), each target name, then the precisions (their count, each name, whether
 * its target executes it). Messages say what is wrong and what to do, in the words of both the API field and the
 * command-line flag, since both reach this code.
 */
#include "compiler/compile_spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backends/cpu/cpu_format.h"
#include "backends/cpu/targets.h"
#include "core/check.h"
#include "core/cpu_features.h"

/* Which targets execute each precision. NULL `targets`: every target does. */
typedef struct precision_info {
    const char *name;
    uint32_t id;                    /* kiln_ctx_precision */
    const char *const *targets;     /* NULL-terminated names, or NULL for all */
} precision_info;

/* bf16: GEMM weights stored as bf16 and multiplied by AVX512-BF16 (docs/targets.md). */
static const char *const bf16_targets[] = {"x86-64-v4-bf16", NULL};

static const precision_info precision_table[] = {
    {"f32", KILN_CTX_PRECISION_F32, NULL},
    {"bf16", KILN_CTX_PRECISION_BF16, bf16_targets},
};
#define N_PRECISIONS (sizeof precision_table / sizeof precision_table[0])

static kiln_status reject(kiln_status status, char *message, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static kiln_status reject(kiln_status status, char *message, size_t size, const char *fmt, ...)
{
    if (message && size && !message[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message, size, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* "generic, x86-64-v3, x86-64-v4, x86-64-v4-bf16" */
static void known_targets(char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t k = 0; k < kiln_cpu_target_count(); k++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", k ? ", " : "", kiln_cpu_target_at(k)->name);
    }
}

static const precision_info *find_precision(const char *name)
{
    for (size_t i = 0; name && i < N_PRECISIONS; i++)
        if (strcmp(precision_table[i].name, name) == 0) return &precision_table[i];
    return NULL;
}

static bool executes(const precision_info *p, const char *target)
{
    if (!p->targets) return true;
    for (const char *const *t = p->targets; *t; t++)
        if (strcmp(*t, target) == 0) return true;
    return false;
}

/* "x86-64-v4, generic" or "none yet" */
static void supporters(const precision_info *p, char *buf, size_t size)
{
    if (!p->targets) {
        known_targets(buf, size);
        return;
    }
    buf[0] = '\0';
    for (const char *const *t = p->targets; *t; t++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", t == p->targets ? "" : ", ", *t);
    }
    if (!buf[0]) snprintf(buf, size, "none yet");
}

/* No target named: the highest-ranked target a machine with cpu_features runs that executes the
   one precision asked for (f32 when none or several are given: several then fail their count
   against this one target; an unknown name fails later, by name). The first of equal rank wins,
   so f32 keeps choosing x86-64-v4 over x86-64-v4-bf16, which ranks with it. */
static kiln_status default_target(const kiln_compile_options *opt, uint64_t cpu_features, kiln_compile_spec *spec,
                                  char *message, size_t size)
{
    const precision_info *p = opt->n_precisions == 1 && opt->precisions ? find_precision(opt->precisions[0]) : NULL;
    if (!p) p = &precision_table[0];
    const kiln_cpu_target *best = NULL;
    for (size_t k = 0; k < kiln_cpu_target_count(); k++) {
        const kiln_cpu_target *t = kiln_cpu_target_at(k);
        bool runs = (cpu_features & t->features) == t->features;
        if (runs && executes(p, t->name) && (!best || t->rank > best->rank)) best = t;
    }
    if (!best) {
        char who[256];
        supporters(p, who, sizeof who);
        return reject(KILN_ERROR_COMPILE_SPEC, message, size,
                      "precision %s without a target needs one that executes it (%s) and that this machine runs, "
                      "and this machine runs none; name the target to compile for another machine (--target %s "
                      "--precision %s) or leave the precision out", p->name, who, p->targets ? p->targets[0] : "generic",
                      p->name);
    }
    spec->single[0] = best->name;
    return KILN_OK;
}

/* The target list in normal form: the list, the scalar as a list of one, or the default target. */
static kiln_status normalise_targets(const kiln_compile_options *opt, uint64_t cpu_features, kiln_compile_spec *spec,
                                     char *message, size_t size)
{
    if (opt->n_targets && !opt->targets)
        return reject(KILN_ERROR_INVALID_ARGUMENT, message, size,
                      "n_targets is %zu but the target list is NULL; pass the list or set n_targets to 0",
                      opt->n_targets);
    if (opt->target && opt->targets)
        return reject(KILN_ERROR_COMPILE_SPEC, message, size,
                      "targets were given twice, as target ('%s') and as a list of %zu; give only the list "
                      "(a list of one target is the same as the scalar form)", opt->target, opt->n_targets);
    if (opt->targets && opt->n_targets == 0)
        return reject(KILN_ERROR_COMPILE_SPEC, message, size,
                      "the target list is empty; name at least one target (--target T), or pass no list to "
                      "compile for this machine's best target");
    if (opt->targets) {
        spec->targets = opt->targets;
        spec->n_targets = opt->n_targets;
        return KILN_OK;
    }
    if (opt->target) spec->single[0] = opt->target;
    else KILN_TRY(default_target(opt, cpu_features, spec, message, size));
    spec->targets = spec->single;
    spec->n_targets = 1;
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
    return reject(KILN_ERROR_COMPILE_SPEC, message, size,
                  "%s cannot be combined with no_delegate (--no-delegate): it applies to the cpu delegates, "
                  "and no_delegate keeps every op on the portable kernels; drop one of the two", what);
}

static kiln_status check_target_names(const kiln_compile_spec *spec, char *message, size_t size)
{
    for (size_t i = 0; i < spec->n_targets; i++) {
        const char *name = spec->targets[i];
        if (!name || !kiln_cpu_target_find(name)) {
            char known[256];
            known_targets(known, sizeof known);
            return reject(KILN_ERROR_COMPILE_SPEC, message, size, "unknown target '%s'; known targets: %s",
                          name ? name : "(null)", known);
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(name, spec->targets[j]) == 0)
                return reject(KILN_ERROR_COMPILE_SPEC, message, size,
                              "target '%s' is listed twice; give each target once", name);
    }
    /* Known and distinct, so at most kiln_cpu_target_count() of them: this cannot fail. */
    if (spec->n_targets > KILN_COMPILE_SPEC_MAX_TARGETS)
        return reject(KILN_ERROR_COMPILE_SPEC, message, size, "more than %d targets", KILN_COMPILE_SPEC_MAX_TARGETS);
    return KILN_OK;
}

/* The precision of target i: none given is f32, one applies to all, else one per target in
   order. Records of one binary may differ: each is lowered at its own precision. */
static kiln_status check_precisions(const kiln_compile_options *opt, kiln_compile_spec *spec, char *message,
                                    size_t size)
{
    for (size_t i = 0; i < spec->n_targets; i++) spec->precisions[i] = KILN_CTX_PRECISION_F32;
    size_t n = opt->n_precisions;
    if (n && !opt->precisions)
        return reject(KILN_ERROR_INVALID_ARGUMENT, message, size,
                      "n_precisions is %zu but the precision list is NULL; pass the list or set n_precisions to 0", n);
    if (n == 0) return KILN_OK;
    if (n != 1 && n != spec->n_targets)
        return reject(KILN_ERROR_COMPILE_SPEC, message, size,
                      "%zu precisions for %zu target%s; give one precision for all targets or exactly one per "
                      "target, in target order", n, spec->n_targets, spec->n_targets == 1 ? "" : "s");
    for (size_t i = 0; i < spec->n_targets; i++) {
        const char *name = opt->precisions[n == 1 ? 0 : i];
        const precision_info *p = find_precision(name);
        if (!p)
            return reject(KILN_ERROR_COMPILE_SPEC, message, size, "unknown precision '%s'; known precisions: f32, bf16",
                          name ? name : "(null)");
        if (!executes(p, spec->targets[i])) {
            char who[256];
            supporters(p, who, sizeof who);
            return reject(KILN_ERROR_COMPILE_SPEC, message, size,
                          "target '%s' cannot execute precision %s (targets supporting %s: %s); use f32 "
                          "(--precision f32) or leave the precision out", spec->targets[i], p->name, p->name, who);
        }
        spec->precisions[i] = p->id;
    }
    return KILN_OK;
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
        if (opt->n_targets && !opt->targets) return normalise_targets(opt, cpu_features, spec, message, message_size);
        return check_no_delegate(opt, message, message_size);
    }
    kiln_status st = normalise_targets(opt, cpu_features, spec, message, message_size);
    if (st == KILN_OK) st = check_target_names(spec, message, message_size);
    if (st == KILN_OK) st = check_precisions(opt, spec, message, message_size);
    if (st != KILN_OK) return st;
    spec->weight_sharing = opt->weight_sharing != 0;
    spec->flags = (opt->slc ? KILN_CTX_SPEC_SLC : 0u) | (spec->weight_sharing ? KILN_CTX_SPEC_WEIGHT_SHARING : 0u) |
                  (opt->no_strassen ? KILN_CTX_SPEC_NO_STRASSEN : 0u);
    return KILN_OK;
}
