/* cpu_aot.c — kiln_cpu_aot_compile: partition graphs -> one context binary with a record per
 * target (see cpu_aot.h).
 *
 * Layer: backends/cpu/aot. The pipeline, each stage in its own file:
 *   aot_lower.c   describe + fuse every node into steps over tensors (target independent; once
 *                 per precision the records ask for)
 *   aot_plan.c    place the intermediates in scratch (target independent; aot_plan_slc.c with slc)
 *   aot_record.c  per target: pack weights into the shared pool, size step workspaces
 *   ctxbin_writer.c  lay out and write the binary, sign it
 * Everything temporary lives in one arena and the pool, both released on every path.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cpu/aot/aot_plan.h"
#include "backends/cpu/aot/aot_record.h"
#include "backends/cpu/aot/cpu_aot.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/diag.h"

static void set_message(char *message, size_t size, const char *fmt, const char *a, const char *b)
{
    kiln_diag d = kiln_diag_over(message, size);
    kiln_diag_fail(&d, KILN_OK, fmt, a, b);
}

kiln_status kiln_cpu_aot_validate_targets(const char *const *targets, size_t n_targets, char *message,
                                          size_t message_size)
{
    if (n_targets == 0 || !targets) {
        set_message(message, message_size, "the target list is empty%s%s; name at least one target or pass none", "", "");
        return KILN_ERROR_COMPILE_SPEC;
    }
    for (size_t i = 0; i < n_targets; i++) {
        if (!targets[i] || !kiln_cpu_target_find(targets[i])) {
            char known[256] = "";
            for (size_t k = 0; k < kiln_cpu_target_count(); k++) {
                size_t used = strlen(known);
                snprintf(known + used, sizeof known - used, "%s%s", k ? ", " : "", kiln_cpu_target_at(k)->name);
            }
            set_message(message, message_size, "unknown target '%s' (known targets: %s)", targets[i] ? targets[i] : "",
                        known);
            return KILN_ERROR_COMPILE_SPEC;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(targets[i], targets[j]) == 0) {
                set_message(message, message_size, "target '%s' is listed twice%s; give each target once", targets[i], "");
                return KILN_ERROR_COMPILE_SPEC;
            }
        }
    }
    return KILN_OK;
}

/* Scratch placement is target independent: with `slc` the cache-resident region is sized for
   the smallest last-level cache among the targets, so it fits on every record's CPU. */
static kiln_status plan_graph(const kiln_cpu_aot_spec *spec, aot_graph *g, kiln_arena *arena)
{
    if (!(spec->flags & KILN_CTX_SPEC_SLC)) return aot_plan_scratch(g, arena);
    return aot_plan_scratch_slc(g, aot_slc_budget(spec->targets, spec->n_targets), arena, NULL);
}

static kiln_status lower_all(const kiln_cpu_aot_spec *spec, uint32_t precision, const kiln_cpu_aot_graph *graphs,
                             size_t n_graphs, kiln_arena *arena, aot_graph *lowered, char *message, size_t message_size)
{
    for (size_t i = 0; i < n_graphs; i++) {
        KILN_TRY(aot_lower_graph(&graphs[i], precision, spec->flags, arena, &lowered[i], message, message_size));
        KILN_TRY(plan_graph(spec, &lowered[i], arena));
    }
    return KILN_OK;
}

static uint32_t record_precision(const kiln_cpu_aot_spec *spec, size_t t)
{
    return spec->record_precisions ? spec->record_precisions[t] : spec->precision;
}

/* The graphs lowered once per precision some record asks for (lowering depends on the precision,
   not on the target): lowered[p] for kiln_ctx_precision p, NULL when no record uses it. */
static kiln_status lower_per_precision(const kiln_cpu_aot_spec *spec, const kiln_cpu_aot_graph *graphs,
                                       size_t n_graphs, kiln_arena *arena, aot_graph *lowered[KILN_CTX_PRECISION_BF16 + 1],
                                       char *message, size_t message_size)
{
    for (uint32_t p = 0; p <= KILN_CTX_PRECISION_BF16; p++) {
        lowered[p] = NULL;
        bool used = false;
        for (size_t t = 0; t < spec->n_targets && !used; t++) used = record_precision(spec, t) == p;
        if (!used) continue;
        lowered[p] = KILN_ARENA_ARRAY(arena, aot_graph, n_graphs);
        KILN_CHECK(lowered[p], KILN_ERROR_OUT_OF_MEMORY);
        KILN_TRY(lower_all(spec, p, graphs, n_graphs, arena, lowered[p], message, message_size));
    }
    return KILN_OK;
}

kiln_status kiln_cpu_aot_compile(const kiln_cpu_aot_spec *spec, const kiln_cpu_aot_graph *graphs, size_t n_graphs,
                                 void **out, size_t *out_size, char *message, size_t message_size)
{
    KILN_CHECK(out && out_size, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    *out_size = 0;
    if (message && message_size) message[0] = '\0';
    KILN_CHECK(spec && graphs && n_graphs > 0, KILN_ERROR_INVALID_ARGUMENT);
    KILN_TRY(kiln_cpu_aot_validate_targets(spec->targets, spec->n_targets, message, message_size));
    /* The header's precision is the highest any record uses: bf16 when some record stores bf16
       weights (which ones, their steps say). */
    kiln_cpu_aot_spec header = *spec;
    header.precision = KILN_CTX_PRECISION_F32;
    for (size_t t = 0; t < spec->n_targets; t++) {
        uint32_t p = record_precision(spec, t);
        if (p != KILN_CTX_PRECISION_F32 && p != KILN_CTX_PRECISION_BF16) {
            set_message(message, message_size, "unknown precision in the compile spec%s%s; use f32 or bf16", "", "");
            return KILN_ERROR_COMPILE_SPEC;
        }
        if (p > header.precision) header.precision = p;
    }
    const kiln_allocator *a = spec->allocator ? spec->allocator : kiln_allocator_default();
    kiln_arena arena;
    kiln_arena_init(&arena, a, 64 * 1024);
    aot_pool pool;
    aot_pool_init(&pool, a);
    kiln_status st = KILN_OK;
    aot_graph *lowered[KILN_CTX_PRECISION_BF16 + 1];
    aot_record *records = KILN_ARENA_ARRAY(&arena, aot_record, spec->n_targets);
    KILN_CHECK_GOTO(records, st, KILN_ERROR_OUT_OF_MEMORY);
    KILN_TRY_GOTO(st, lower_per_precision(spec, graphs, n_graphs, &arena, lowered, message, message_size));
    for (size_t t = 0; t < spec->n_targets; t++)
        KILN_TRY_GOTO(st, aot_record_build(&records[t], kiln_cpu_target_find(spec->targets[t]),
                                           lowered[record_precision(spec, t)], n_graphs, &pool, &arena, message,
                                           message_size));
    KILN_TRY_GOTO(st, aot_write_binary(&header, records, spec->n_targets, &pool, a, out, out_size));
fail:
    aot_pool_deinit(&pool);
    kiln_arena_deinit(&arena);
    if (st != KILN_OK) set_message(message, message_size, "cpu backend: %s%s", kiln_status_str(st), "");
    return st;
}
