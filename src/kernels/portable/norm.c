/* norm.c — portable kernels of the norm family: the family table and shared checks.
 *
 * Layer: kernels/portable. The kernels themselves live in norm_batch.c (BatchNormalization),
 * norm_layer.c (LayerNormalization), norm_stats.c (InstanceNormalization,
 * MeanVarianceNormalization, LpNormalization) and norm_lrn.c (LRN). All of them load the values
 * they normalise into dense double rows (reduce_row.h), so statistics accumulate in double
 * whatever the tensor dtype.
 */
#include "kernels/portable/families.h"
#include "kernels/portable/norm_kernels.h"
#include "kernels/portable/reduce_row.h"

kiln_status kiln_norm_check_float(kiln_dtype dtype)
{
    if (dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16) return KILN_ERROR_NOT_SUPPORTED;
    return kiln_reduce_row_is_float(dtype) ? KILN_OK : KILN_ERROR_DTYPE_MISMATCH;
}

const kiln_kernel kiln_kernels_norm[] = {
    {"BatchNormalization", 1, kiln_norm_batch_infer, kiln_norm_batch_run},
    {"InstanceNormalization", 1, kiln_norm_instance_infer, kiln_norm_instance_run},
    {"LRN", 1, kiln_norm_lrn_infer, kiln_norm_lrn_run},
    {"LayerNormalization", 17, kiln_norm_layer_infer, kiln_norm_layer_run},
    {"MeanVarianceNormalization", 9, kiln_norm_mvn_infer, kiln_norm_mvn_run},
    {"LpNormalization", 1, kiln_norm_lp_infer, kiln_norm_lp_run},
    {0},
};
