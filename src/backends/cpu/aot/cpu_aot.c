/* cpu_aot.c — the `cpu` backend's lowering (placeholder: supports nothing yet, so the
 * partitioner keeps every node on the portable kernels). Layer: backends/cpu/aot. */
#include "backends/cpu/aot/cpu_aot.h"

bool kiln_cpu_aot_supports(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out)
{
    (void)node, (void)in, (void)out;
    return false;
}

kiln_status kiln_cpu_aot_compile(const kiln_cpu_aot_spec *spec, const kiln_cpu_aot_graph *graphs, size_t n_graphs,
                                 void **out, size_t *out_size, char *message, size_t message_size)
{
    (void)spec, (void)graphs, (void)n_graphs, (void)message, (void)message_size;
    *out = NULL;
    *out_size = 0;
    return KILN_ERROR_NOT_SUPPORTED;
}
