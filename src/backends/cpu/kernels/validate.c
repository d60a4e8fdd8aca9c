/* validate.c — load-time validation of step parameters against tensors (see cpu_kernels.h).
 * Layer: backends/cpu/kernels. */
#include "backends/cpu/kernels/cpu_kernels.h"

kiln_status kiln_cpu_step_validate(uint32_t op, const void *params, const kiln_tensor *const *in, size_t n_in,
                                   const size_t *in_sizes, kiln_tensor *const *out, size_t n_out,
                                   const size_t *out_sizes, uint32_t mr, uint32_t nr)
{
    (void)op, (void)params, (void)in, (void)n_in, (void)in_sizes, (void)out, (void)n_out, (void)out_sizes, (void)mr, (void)nr;
    return KILN_ERROR_INCOMPATIBLE;
}

size_t kiln_cpu_workspace_size(const kiln_cpu_kernels *k, uint32_t op, const void *params, size_t l1, size_t l2)
{
    (void)k, (void)op, (void)params, (void)l1, (void)l2;
    return 0;
}
