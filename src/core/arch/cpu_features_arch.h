/* cpu_features_arch.h — the processor-specific probes behind cpu_features.c, one file per
 * processor family: cpu_features_x86.c (CPUID) or cpu_features_none.c (nothing known), chosen by
 * CMakeLists.txt from CMAKE_SYSTEM_PROCESSOR.
 *
 * Layer: core (internal to cpu_features.c). Called once, under cpu_features.c's pthread_once.
 */
#ifndef KILN_CORE_ARCH_CPU_FEATURES_ARCH_H
#define KILN_CORE_ARCH_CPU_FEATURES_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/cpu_features.h"

/* kiln_cpu_feature bits of this CPU that its OS also enabled; 0 when unknown. */
uint64_t kiln_cpu_arch_features(void);
/* Data cache sizes in bytes from the processor's own description; leaves a size it cannot
 * tell as it is (cpu_features.c asks only when sysfs gave no L1 size). */
void kiln_cpu_arch_caches(size_t *l1, size_t *l2, size_t *l3);

#endif
