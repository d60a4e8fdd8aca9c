/* aot_backend.c — the `cpu` backend as a compile-time backend: its compile-spec keys (targets,
 * precisions, flags) checked and normalised, and compile reading the normal form (see
 * aot_backend.h for the keys); reading a binary back for the tools is ctxbin_print.c, the
 * scratch-group hooks ctxbin_group.c.
 *
 * Layer: backends/cpu/aot. The checks run in a fixed order, so a spec with several problems
 * always reports the same one first: unknown keys, the default target (when none is named),
 * each target name, then the precisions (their count, each name, whether its target executes
 * it). Messages say what is wrong and what to do, in the words of both the API field and the
 * command-line flag, since both reach this code through the compiler's translation of
 * kiln_compile_options.
 */
#include "backends/cpu/aot/aot_backend.h"

#include <stdio.h>
#include <string.h>

#include "backends/cpu/aot/cpu_aot.h"
#include "backends/cpu/aot/ctxbin_group.h"
#include "backends/cpu/aot/ctxbin_print.h"
#include "backends/cpu/cpu_format.h"
#include "backends/cpu/targets.h"
#include "core/check.h"
#include "core/diag.h"

/* More than the known targets, each of which may be named once. */
#define MAX_TARGETS 16

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

/* The flag keys and the context-binary spec flag each sets. */
static const struct {
    const char *key;
    uint32_t flag;
} flag_keys[] = {
    {"slc", KILN_CTX_SPEC_SLC},
    {"weight_sharing", KILN_CTX_SPEC_WEIGHT_SHARING},
    {"no_strassen", KILN_CTX_SPEC_NO_STRASSEN},
};
#define N_FLAGS (sizeof flag_keys / sizeof flag_keys[0])

/* A spec's lists, pointing into the kv entries. */
typedef struct cpu_spec {
    const char *targets[MAX_TARGETS];
    size_t n_targets;
    const char *precisions[MAX_TARGETS];
    size_t n_precisions;
    uint32_t flags;
} cpu_spec;

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

/* Sort kv into the lists; an unknown key or value is refused naming the keys this backend has. */
static kiln_status split(const kiln_compile_kv *kv, size_t n, cpu_spec *s, char *message, size_t size)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        const char *key = kv[i].key ? kv[i].key : "(null)", *value = kv[i].value;
        bool listed = strcmp(key, "target") == 0 || strcmp(key, "precision") == 0;
        if (!value && listed) value = "(null)"; /* refused below by name, as any unknown name */
        if (!value)
            return kiln_reject(KILN_ERROR_INVALID_ARGUMENT, message, size, "cpu compile spec: key '%s' has no value",
                               key);
        if (listed) {
            bool target = key[0] == 't';
            size_t *count = target ? &s->n_targets : &s->n_precisions;
            if (*count == MAX_TARGETS)
                return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size, "more than %d %ss", MAX_TARGETS, key);
            (target ? s->targets : s->precisions)[(*count)++] = value;
            continue;
        }
        size_t f = 0;
        while (f < N_FLAGS && strcmp(flag_keys[f].key, key) != 0) f++;
        if (f == N_FLAGS)
            return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                               "unknown cpu compile-spec key '%s'; the cpu backend takes target, precision, slc, "
                               "weight_sharing and no_strassen", key);
        if (strcmp(value, "1") != 0 && strcmp(value, "0") != 0)
            return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                               "cpu compile-spec key '%s' has the value '%s'; give 1 (on) or 0 (off)", key, value);
        if (value[0] == '1') s->flags |= flag_keys[f].flag;
    }
    return KILN_OK;
}

/* No target named: the highest-ranked target a machine with host_features runs that executes the
   one precision asked for (f32 when none or several are given: several then fail their count
   against this one target; an unknown name fails later, by name). The first of equal rank wins,
   so f32 keeps choosing x86-64-v4 over x86-64-v4-bf16, which ranks with it. */
static kiln_status default_target(cpu_spec *s, uint64_t host_features, char *message, size_t size)
{
    const precision_info *p = s->n_precisions == 1 ? find_precision(s->precisions[0]) : NULL;
    if (!p) p = &precision_table[0];
    const kiln_cpu_target *best = NULL;
    for (size_t k = 0; k < kiln_cpu_target_count(); k++) {
        const kiln_cpu_target *t = kiln_cpu_target_at(k);
        bool runs = (host_features & t->features) == t->features;
        if (runs && executes(p, t->name) && (!best || t->rank > best->rank)) best = t;
    }
    if (!best) {
        char who[256];
        supporters(p, who, sizeof who);
        return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                           "precision %s without a target needs one that executes it (%s) and that this machine runs, "
                           "and this machine runs none; name the target to compile for another machine (--target %s "
                           "--precision %s) or leave the precision out", p->name, who,
                           p->targets ? p->targets[0] : "generic", p->name);
    }
    s->targets[0] = best->name;
    s->n_targets = 1;
    return KILN_OK;
}

static kiln_status check_target_names(const cpu_spec *s, char *message, size_t size)
{
    for (size_t i = 0; i < s->n_targets; i++) {
        const char *name = s->targets[i];
        if (!kiln_cpu_target_find(name)) {
            char known[256];
            known_targets(known, sizeof known);
            return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size, "unknown target '%s'; known targets: %s", name,
                               known);
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(name, s->targets[j]) == 0)
                return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                                   "target '%s' is listed twice; give each target once", name);
    }
    return KILN_OK;
}

/* The precision of target i: none given is f32, one applies to all, else one per target in
   order; s->precisions becomes one per target. Records of one binary may differ: each is
   lowered at its own precision. */
static kiln_status check_precisions(cpu_spec *s, char *message, size_t size)
{
    size_t n = s->n_precisions;
    if (n != 0 && n != 1 && n != s->n_targets)
        return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                           "%zu precisions for %zu target%s; give one precision for all targets or exactly one per "
                           "target, in target order", n, s->n_targets, s->n_targets == 1 ? "" : "s");
    for (size_t i = 0; i < s->n_targets; i++) {
        const char *name = n == 0 ? "f32" : s->precisions[n == 1 ? 0 : i];
        const precision_info *p = find_precision(name);
        if (!p)
            return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size, "unknown precision '%s'; known precisions: f32, bf16",
                               name);
        if (!executes(p, s->targets[i])) {
            char who[256];
            supporters(p, who, sizeof who);
            return kiln_reject(KILN_ERROR_COMPILE_SPEC, message, size,
                               "target '%s' cannot execute precision %s (targets supporting %s: %s); use f32 "
                               "(--precision f32) or leave the precision out", s->targets[i], p->name, p->name, who);
        }
    }
    const char *first = n ? s->precisions[0] : "f32";
    for (size_t i = 0; i < s->n_targets; i++)
        if (n <= 1) s->precisions[i] = first;
    s->n_precisions = s->n_targets;
    return KILN_OK;
}

static kiln_status cpu_validate_spec(const kiln_compile_kv *kv, size_t n, uint64_t host_features,
                                     kiln_compile_kv *normal, size_t cap, size_t *n_normal, char *message, size_t size)
{
    cpu_spec s;
    KILN_TRY(split(kv, n, &s, message, size));
    if (s.n_targets == 0) KILN_TRY(default_target(&s, host_features, message, size));
    KILN_TRY(check_target_names(&s, message, size));
    KILN_TRY(check_precisions(&s, message, size));
    size_t k = 0;
    KILN_CHECK(2 * s.n_targets + N_FLAGS <= cap, KILN_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < s.n_targets; i++) normal[k++] = (kiln_compile_kv){"target", s.targets[i]};
    for (size_t i = 0; i < s.n_targets; i++) normal[k++] = (kiln_compile_kv){"precision", s.precisions[i]};
    for (size_t f = 0; f < N_FLAGS; f++)
        if (s.flags & flag_keys[f].flag) normal[k++] = (kiln_compile_kv){flag_keys[f].key, "1"};
    *n_normal = k;
    return KILN_OK;
}

/* compile: the normal form (validated) as a kiln_cpu_aot_spec. */
static kiln_status cpu_compile(const kiln_compile_kv *spec, size_t n_spec, const kiln_allocator *allocator,
                               const kiln_backend_graph *graphs, size_t n_graphs, void **out, size_t *out_size,
                               char *message, size_t message_size)
{
    cpu_spec s;
    KILN_TRY(split(spec, n_spec, &s, message, message_size));
    KILN_TRY(check_precisions(&s, message, message_size));
    uint32_t precisions[MAX_TARGETS];
    for (size_t i = 0; i < s.n_targets; i++) precisions[i] = find_precision(s.precisions[i])->id;
    kiln_cpu_aot_spec aot = {.targets = s.targets, .n_targets = s.n_targets, .record_precisions = precisions,
                             .flags = s.flags, .allocator = allocator};
    return kiln_cpu_aot_compile(&aot, graphs, n_graphs, out, out_size, message, message_size);
}

const kiln_compiler_backend kiln_cpu_compiler_backend = {
    .name = "cpu",
    .validate_spec = cpu_validate_spec,
    .supports = kiln_cpu_aot_supports,
    .compile = cpu_compile,
    .check = kiln_cpu_aot_check,
    .describe = kiln_cpu_aot_describe,
    .targets = kiln_cpu_aot_targets,
    .scratch_info = kiln_cpu_aot_scratch_info,
    .set_group_scratch = kiln_cpu_aot_set_group_scratch,
};
