/* aot_plan.h — the scratch planners of the cpu backend's lowering.
 *
 * Layer: backends/cpu/aot (internal). Two planners give every scratch buffer of a lowered graph
 * a 64-aligned offset such that no two buffers alive at the same step share a byte (lifetimes
 * are the closed step ranges [first, last], so a step's output never overlaps its inputs):
 *
 *  - aot_plan_scratch (declared in aot_lower.h, aot_plan.c): compact best fit, the default;
 *  - aot_plan_scratch_slc (aot_plan_slc.c): `--slc`, cache-resident planning. Short-lived
 *    buffers go into a region at the start of scratch sized to the targets' cache budget, where
 *    the most recently freed block is reused first; the rest are packed best fit after it.
 *    docs/slc.md describes the layout and what it measured.
 *
 * Either way the result is only a placement: the steps, their order and every kernel are the
 * same, so outputs are bit-identical.
 */
#ifndef KILN_BACKENDS_CPU_AOT_AOT_PLAN_H
#define KILN_BACKENDS_CPU_AOT_AOT_PLAN_H

#include "backends/cpu/aot/aot_lower.h"

/* Place the n buffers which[] of g, largest first, each at the lowest 64-aligned offset >= base
 * that overlaps no buffer already placed by this call and alive at the same time. *end receives
 * the end of the highest placed buffer (base when n is 0). KILN_ERROR_OUT_OF_MEMORY,
 * KILN_ERROR_LIMIT on overflow. */
kiln_status aot_plan_best_fit(aot_graph *g, const int32_t *which, size_t n, uint64_t base, kiln_arena *arena,
                              uint64_t *end);

/* The cache-resident region's size for a binary with these targets: half the smallest last-level
 * cache among them (the other half is left to the weights streaming through and the step
 * workspace), rounded down to 64. Targets must be known names (validated). */
uint64_t aot_slc_budget(const char *const *targets, size_t n_targets);

/* Buffers whose lifetime spans at most this many steps after the one that writes them are
 * candidates for the cache-resident region: a chain's intermediates (1), a residual block's
 * skip tensor or an attention block's keys and values (3 to 5). */
#define AOT_SLC_SHORT_SPAN 4

typedef struct aot_slc_stats {
    uint64_t region_size;           /* bytes of the region actually used (64-aligned) */
    size_t n_region, n_rest;        /* buffers placed in the region / after it */
    uint64_t region_bytes;          /* sum of the sizes of the buffers in the region */
} aot_slc_stats;

/* The `--slc` planner: every buffer of g that is short-lived (AOT_SLC_SHORT_SPAN) and non-empty
 * is offered, in order of first write, to the region [0, budget): it takes the most recently
 * freed block that holds it (freed blocks merge with free neighbours), else fresh space below
 * budget; a buffer that finds neither, and every other buffer, is placed after the region by
 * aot_plan_best_fit. Sets intermediates_size; stats (optional) describes the outcome.
 * KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_LIMIT on overflow. */
kiln_status aot_plan_scratch_slc(aot_graph *g, uint64_t budget, kiln_arena *arena, aot_slc_stats *stats);

#endif
