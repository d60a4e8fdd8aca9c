/* ctx_select.c — picking the record of a context binary that this CPU runs best.
 *
 * Layer: backends/cpu/rt. A record is runnable when this runtime knows its target, the CPU has
 * every feature the target requires and every feature the record itself says its kernels need.
 * Among runnable records the highest target rank wins; a forced target (module option) must be
 * present and runnable. Failures say which records the binary holds and what this CPU has, so
 * the user can tell "wrong machine" from "wrong file".
 */
#include <stdio.h>
#include <string.h>

#include "backends/cpu/rt/context.h"
#include "backends/cpu/targets.h"
#include "core/cpu_features.h"
#include "core/diag.h"

/* "x86-64-v4, generic" */
static void list_targets(const kiln_ctxbin *b, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < b->header->n_records && n < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", kiln_ctxbin_string(b, b->records[i].target));
        if (w < 0) break;
        n += (size_t)w;
    }
}

static const kiln_cpu_target *runnable_target(const kiln_ctxbin *b, const kiln_ctx_record *r)
{
    const kiln_cpu_target *t = kiln_cpu_target_find(kiln_ctxbin_string(b, r->target));
    if (!t || !kiln_cpu_target_runnable(t) || (r->features & ~kiln_cpu_features()) != 0) return NULL;
    return t;
}

static kiln_status select_forced(const kiln_ctxbin *b, const char *forced, const kiln_ctx_record **out,
                                 const char *targets, const char *cpu, char *message, size_t message_size)
{
    kiln_diag diag = kiln_diag_over(message, message_size);
    for (uint32_t i = 0; i < b->header->n_records; i++) {
        const kiln_ctx_record *r = &b->records[i];
        if (strcmp(kiln_ctxbin_string(b, r->target), forced) != 0) continue;
        if (runnable_target(b, r)) {
            *out = r;
            return KILN_OK;
        }
        const kiln_cpu_target *t = kiln_cpu_target_find(forced);
        if (!t) {
            kiln_diag_fail(&diag, KILN_OK, "record '%s' of this context binary is for a target this runtime does not know",
                           forced);
        } else {
            char needs[256];
            kiln_cpu_features_format(t->features | r->features, needs, sizeof needs);
            kiln_diag_fail(&diag, KILN_OK, "record '%s' of this context binary cannot run here: it needs [%s]; this CPU has [%s]",
                           forced, needs, cpu);
        }
        return KILN_ERROR_NO_RUNNABLE_TARGET;
    }
    return kiln_diag_fail(&diag, KILN_ERROR_NO_RUNNABLE_TARGET, "target '%s' is not in this context binary: binary has [%s]",
                          forced, targets);
}

kiln_status kiln_cpu_select_record(const kiln_ctxbin *b, const char *forced, const kiln_ctx_record **out,
                                   char *message, size_t message_size)
{
    *out = NULL;
    char targets[512], cpu[512];
    list_targets(b, targets, sizeof targets);
    kiln_cpu_features_format(kiln_cpu_features(), cpu, sizeof cpu);
    if (forced) return select_forced(b, forced, out, targets, cpu, message, message_size);
    const kiln_ctx_record *best = NULL;
    int best_rank = 0;
    for (uint32_t i = 0; i < b->header->n_records; i++) {
        const kiln_cpu_target *t = runnable_target(b, &b->records[i]);
        if (t && (!best || t->rank > best_rank)) {
            best = &b->records[i];
            best_rank = t->rank;
        }
    }
    if (!best) {
        kiln_diag diag = kiln_diag_over(message, message_size);
        return kiln_diag_fail(&diag, KILN_ERROR_NO_RUNNABLE_TARGET,
                              "no record of this context binary runs here: binary has [%s]; this CPU has [%s]", targets, cpu);
    }
    *out = best;
    return KILN_OK;
}
