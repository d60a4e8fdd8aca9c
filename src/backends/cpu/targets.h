/* targets.h — the `cpu` backend's targets: ISA levels with the cache sizes lowering assumes.
 *
 * Layer: backends/cpu. The table (targets.c) is const; docs/targets.md documents it and must
 * be kept in step. Records of a context binary name their target; at load the runtime picks
 * the runnable record with the highest rank, or the one kiln_module_options.target forces.
 */
#ifndef KILN_BACKENDS_CPU_TARGETS_H
#define KILN_BACKENDS_CPU_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/kernels/cpu_kernels.h"

typedef struct kiln_cpu_target {
    const char *name;               /* "generic", "x86-64-v3", "x86-64-v4" */
    const char *description;
    uint64_t features;              /* required kiln_cpu_feature bits */
    int rank;                       /* preference among runnable targets: higher wins */
    size_t l1_size, l2_size, l3_size; /* cache sizes assumed by tiling */
    const kiln_cpu_kernels *kernels;
} kiln_cpu_target;

size_t kiln_cpu_target_count(void);
const kiln_cpu_target *kiln_cpu_target_at(size_t i);
const kiln_cpu_target *kiln_cpu_target_find(const char *name);
/* The best target this machine can run (never NULL: generic runs everywhere). */
const kiln_cpu_target *kiln_cpu_target_best(void);
/* true when this machine has every feature the target needs. */
int kiln_cpu_target_runnable(const kiln_cpu_target *t);

#endif
