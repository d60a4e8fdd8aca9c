/* cpu_features_none.c — the processor probes (cpu_features_arch.h) of a build for a processor
 * kiln has no kernels for beyond the generic ones (e.g. aarch64): no feature bit, and no cache
 * size beyond what Linux's sysfs says (cpu_features.c). Layer: core; the non-x86 counterpart of
 * cpu_features_x86.c, picked by CMakeLists.txt.
 */
#include "core/arch/cpu_features_arch.h"

uint64_t kiln_cpu_arch_features(void) { return 0; }

void kiln_cpu_arch_caches(size_t *l1, size_t *l2, size_t *l3)
{
    (void)l1;
    (void)l2;
    (void)l3;
}
