/* aot_ops_layout.c — the ops that only move bytes: the reshaping family (Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity, inference Dropout) as COPY, and Transpose.
 *
 * Layer: backends/cpu/aot (internal, see aot_ops.h). Reshapes are dense row-major
 * reinterpretations, so their step is one copy of the bytes (and the lowering turns every one
 * whose result stays inside the graph into no step at all: readers read the input's tensor). A Transpose is first
 * simplified: unit dims dropped, dims that stay neighbours in the same order merged; one that
 * then moves nothing is a COPY too.
 */
#include <string.h>

#include "backends/cpu/aot/aot_ops.h"

void aot_describe_copy_of(const kiln_node *node, const kiln_tensor *const *in, aot_step_desc *d)
{
    d->op = KILN_CPU_OP_COPY;
    d->n_inputs = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    d->params.copy.bytes = aot_numel(in[0]) * (int64_t)sizeof(float);
}

/* Dropout from opset 12 is inference only when training_mode is absent or constant false. */
static bool dropout_is_inference(const kiln_node *node, const kiln_tensor *const *in)
{
    const kiln_tensor *training = aot_input(node, in, 2);
    if (node->opset < 12 || !training) return true;
    return training->dtype == KILN_DTYPE_BOOL && training->data && kiln_tensor_numel(training) == 1 &&
           ((const uint8_t *)training->data)[0] == 0;
}

bool aot_describe_copy(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y, aot_step_desc *d)
{
    if (aot_numel(in[0]) != aot_numel(y)) return false;
    if (strcmp(node->op, "Dropout") == 0 && !dropout_is_inference(node, in)) return false;
    aot_describe_copy_of(node, in, d);
    return true;
}

/* The transpose of shape by perm with unit dims dropped and neighbouring dims merged: output
 * dims j, j+1 whose source dims are i, i+1 move together, as one dim of their product. */
static void simplify_transpose(uint32_t rank, const int64_t *shape, const int64_t *perm, kiln_cpu_transpose_params *p)
{
    int64_t kept[KILN_CPU_MAX_RANK], renum[KILN_CPU_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t i = 0; i < rank; i++) renum[i] = shape[i] == 1 ? -1 : (int64_t)r++;
    uint32_t n = 0;
    for (uint32_t j = 0; j < rank; j++)
        if (renum[perm[j]] >= 0) kept[n++] = renum[perm[j]];
    int64_t kept_shape[KILN_CPU_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++)
        if (renum[i] >= 0) kept_shape[renum[i]] = shape[i];
    /* runs of consecutive source dims, in output order */
    int64_t run_start[KILN_CPU_MAX_RANK], run_size[KILN_CPU_MAX_RANK];
    uint32_t runs = 0;
    for (uint32_t j = 0; j < n; j++) {
        if (j > 0 && kept[j] == kept[j - 1] + 1) {
            run_size[runs - 1] *= kept_shape[kept[j]];
            continue;
        }
        run_start[runs] = kept[j];
        run_size[runs++] = kept_shape[kept[j]];
    }
    /* The input of the simplified transpose lists the runs by source position; perm says which
       of them each output dim is. */
    memset(p, 0, sizeof *p);
    p->rank = runs ? runs : 1;
    p->elem_size = sizeof(float);
    p->in_shape[0] = 1;
    for (uint32_t a = 0; a < runs; a++) {
        uint32_t position = 0;
        for (uint32_t b = 0; b < runs; b++) position += run_start[b] < run_start[a];
        p->in_shape[position] = run_size[a];
        p->perm[a] = position;
    }
}

bool aot_describe_transpose(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *y,
                            aot_step_desc *d)
{
    const kiln_tensor *x = in[0];
    uint32_t rank = x->rank;
    int64_t perm[KILN_CPU_MAX_RANK];
    const int64_t *attr;
    size_t n = kiln_node_attr_ints(node, "perm", &attr);
    if (!kiln_node_attr(node, "perm")) {
        for (uint32_t i = 0; i < rank; i++) perm[i] = rank - 1 - i;
    } else {
        if (n != rank) return false;
        memcpy(perm, attr, n * sizeof *perm);
    }
    bool seen[KILN_CPU_MAX_RANK] = {0};
    if (y->rank != rank) return false;
    for (uint32_t j = 0; j < rank; j++) {
        if (perm[j] < 0 || perm[j] >= (int64_t)rank || seen[perm[j]] || y->shape[j] != x->shape[perm[j]]) return false;
        seen[perm[j]] = true;
    }
    kiln_cpu_transpose_params p;
    simplify_transpose(rank, x->shape, perm, &p);
    if (p.rank == 1) { /* nothing moves */
        aot_describe_copy_of(node, in, d);
        return true;
    }
    d->op = KILN_CPU_OP_TRANSPOSE;
    d->n_inputs = 1;
    d->in[0] = aot_operand_of(node, in, 0);
    d->params.transpose = p;
    return true;
}
