/* op_info.h — the per-op functions kiln_cpu_op_info gathers (internal to backends/cpu/kernels).
 *
 * Layer: backends/cpu/kernels. Each is one column of one op's row in op_info.c; the types are
 * those of the kiln_cpu_op_info fields (cpu_kernels.h). Validators live in validate.c,
 * workspace sizes in workspace.c.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_OP_INFO_H
#define KILN_BACKENDS_CPU_KERNELS_OP_INFO_H

#include "backends/cpu/kernels/cpu_kernels.h"

kiln_status kiln_cpu_validate_gemm(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_conv(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_pool(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_unary(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_binary(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_softmax(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_layernorm(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_affine(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_copy(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_transpose(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
/* In validate_data.c. */
kiln_status kiln_cpu_validate_concat(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_slice(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_pad(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_where(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
kiln_status kiln_cpu_validate_embed(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);
/* In validate.c. */
kiln_status kiln_cpu_validate_qlinear(const void *params, const kiln_cpu_step_io *io, uint32_t mr, uint32_t nr);

size_t kiln_cpu_gemm_step_workspace(const kiln_cpu_kernels *k, const void *params, size_t l2);
size_t kiln_cpu_conv_step_workspace(const kiln_cpu_kernels *k, const void *params, size_t l2);

#endif
