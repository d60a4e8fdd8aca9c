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
    {"BatchNormalization", 1, kiln_norm_batch_infer, kiln_norm_batch_run, {{0, 5, 5, 1, 5}, {14, 5, 5, 1, 3}},
     "consumed_inputs:I epsilon:f is_test:i momentum:f spatial:i training_mode:i"},
    {"InstanceNormalization", 1, kiln_norm_instance_infer, kiln_norm_instance_run, {{0, 3, 3, 1, 1}},
     "consumed_inputs:I epsilon:f"},
    {"LRN", 1, kiln_norm_lrn_infer, kiln_norm_lrn_run, {{0, 1, 1, 1, 1}}, "alpha:f beta:f bias:f size:i"},
    {"LayerNormalization", 17, kiln_norm_layer_infer, kiln_norm_layer_run, {{0, 2, 3, 1, 3}},
     "axis:i epsilon:f stash_type:i"},
    {"MeanVarianceNormalization", 9, kiln_norm_mvn_infer, kiln_norm_mvn_run, {{0, 1, 1, 1, 1}}, "axes:I"},
    {"LpNormalization", 1, kiln_norm_lp_infer, kiln_norm_lp_run, {{0, 1, 1, 1, 1}}, "axis:i p:i"},
    {0},
};
