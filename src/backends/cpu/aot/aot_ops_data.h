/* aot_ops_data.h — the data-movement ops of the lowering (aot_ops_data.c): their describe
 * functions, for the table of aot_ops.c, and the layouts of Concat and Split, which the
 * lowering turns into steps itself (aot_lower_data.c).
 *
 * Layer: backends/cpu/aot (internal).
 */
#ifndef KILN_BACKENDS_CPU_AOT_AOT_OPS_DATA_H
#define KILN_BACKENDS_CPU_AOT_AOT_OPS_DATA_H

#include "backends/cpu/aot/aot_ops.h"

#define AOT_CONCAT_MAX 64   /* inputs of a Concat, outputs of a Split: the partitioner's limit */

/* A Concat as rows: the output is `outer` rows of out_row elements; input i fills elements
   [offset[i], offset[i] + row[i]) of each. */
typedef struct aot_concat {
    uint32_t n;
    int64_t outer, out_row;
    int64_t row[AOT_CONCAT_MAX], offset[AOT_CONCAT_MAX];
} aot_concat;

/* A Split: part[j] elements of the axis for output j, in order. */
typedef struct aot_split {
    uint32_t axis;
    int64_t part[AOT_CONCAT_MAX];
} aot_split;

/* false when the backend does not take the node (an input not f32 or empty, shapes that do not
   line up, more than AOT_CONCAT_MAX inputs). */
bool aot_concat_layout(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_concat *c);
/* out: the used outputs' shapes (NULL where unused). false as aot_concat_layout. */
bool aot_split_layout(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out,
                      aot_split *s);
/* The SLICE step of output j of a Split of x. */
void aot_split_part(const kiln_tensor *x, const aot_split *s, size_t j, kiln_cpu_slice_params *p);
/* A gather that reads one contiguous run of the input: its output can be laid out inside the
   input's bytes, at element params->offset. */
bool aot_slice_is_contiguous(const kiln_cpu_slice_params *p);

bool aot_describe_concat(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_split(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_slice(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_pad(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);
bool aot_describe_where(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d);

#endif
