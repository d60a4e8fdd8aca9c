/* cpu_backend.h — runtime half of the `cpu` backend: its vtable for the backend registry.
 * Layer: backends/cpu/rt. */
#ifndef KILN_BACKENDS_CPU_RT_CPU_BACKEND_H
#define KILN_BACKENDS_CPU_RT_CPU_BACKEND_H

#include "kiln/backend.h"

/* The `cpu` backend's vtable (static storage, lives for the process). */
const kiln_backend *kiln_cpu_backend(void);

#endif
