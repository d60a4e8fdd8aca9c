/* aot_views.c — Transposes that GEMMs read through strides instead of a step (see aot_fuse.h).
 *
 * Layer: backends/cpu/aot (internal). Attention splits its projections into heads with
 * Reshape + Transpose ([tokens, heads, d] -> [heads, tokens, d], and [heads, d, tokens] for the
 * keys) before the batched products. Each such Transpose cost a pass over the tensor (the keys'
 * one 8 us of a 290 us BERT-like layer), while the product's driver packs its operands from any
 * row, column and batch strides anyway. So a Transpose whose result only products read is
 * deferred: it becomes a view, the source value with the strides of the transposed layout, and
 * a GEMM step that can read the view takes the source itself. A reader that cannot (another op,
 * a product whose shapes do not split the view into matrices) makes the lowering emit the
 * deferred step first (aot_lower.c), exactly as it would have been, only later.
 */
#include <string.h>

#include "backends/cpu/aot/aot_fuse.h"

static bool read_only_by_products(const aot_lowering *L, size_t k, int32_t y)
{
    if (L->uses[y] == 0 || L->is_output[y]) return false;
    for (size_t c = k + 1; c < L->g->n_nodes; c++) {
        const kiln_cpu_aot_node *n = &L->g->nodes[c];
        bool reads = false;
        for (size_t i = 0; i < n->node->n_inputs; i++) reads |= n->inputs[i] == y;
        if (reads && strcmp(n->node->op, "MatMul") != 0 && strcmp(n->node->op, "Gemm") != 0) return false;
    }
    return true;
}

bool aot_defer_transpose(aot_lowering *L, size_t k, const aot_step_desc *d, int32_t y)
{
    const kiln_cpu_transpose_params *p = &d->params.transpose;
    if (d->op != KILN_CPU_OP_TRANSPOSE || d->in[0].kind != AOT_OPERAND_VALUE || p->elem_size != sizeof(float) ||
        p->rank > KILN_CPU_MAX_RANK || !read_only_by_products(L, k, y))
        return false;
    aot_view *v = KILN_ARENA_NEW(L->arena, aot_view);
    if (!v) return false; /* the step then runs as it is */
    *v = (aot_view){.pending = true, .source = d->in[0].value, .node = k, .step = *d, .rank = p->rank};
    int64_t in_stride[KILN_CPU_MAX_RANK], s = 1;
    for (uint32_t i = p->rank; i-- > 0;) {
        in_stride[i] = s;
        s *= p->in_shape[i];
    }
    for (uint32_t j = 0; j < p->rank; j++) {
        v->size[j] = p->in_shape[p->perm[j]];
        v->stride[j] = in_stride[p->perm[j]];
    }
    L->views[y] = v;
    L->ready[y] = true;
    return true;
}

/* The view's dims as `batch` matrices of rows x cols: cols and then rows split off the innermost
   dims (a dim of size s and stride t is also s/q dims of stride t*q over q of stride t), the
   dims left must be at most one of size above 1. Strides in elements of the source. */
typedef struct matrix_strides {
    int64_t batch, batch_stride, row_stride, col_stride;
} matrix_strides;

static bool as_matrices(const aot_view *v, int64_t rows, int64_t cols, matrix_strides *m)
{
    int64_t size[KILN_CPU_MAX_RANK], stride[KILN_CPU_MAX_RANK], want[2] = {cols, rows}, got[2];
    uint32_t n = v->rank;
    memcpy(size, v->size, sizeof size);
    memcpy(stride, v->stride, sizeof stride);
    for (int w = 0; w < 2; w++) {
        if (n == 0 || want[w] < 1 || size[n - 1] % want[w] != 0) return false;
        got[w] = stride[n - 1];
        if (size[n - 1] == want[w]) {
            n--;
        } else {
            size[n - 1] /= want[w];
            stride[n - 1] *= want[w];
        }
    }
    *m = (matrix_strides){.batch = 1, .col_stride = got[0], .row_stride = got[1]};
    for (uint32_t i = 0; i < n; i++) {
        if (size[i] == 1) continue;
        if (m->batch != 1) return false;
        m->batch = size[i];
        m->batch_stride = stride[i];
    }
    return m->col_stride == 1 || m->row_stride == 1;
}

/* Operand `slot` of a GEMM (0: A, M x K; 1: B, K x N) read through view v, when v splits into
   matrices of the operand's shape, one per product of the batch or one shared by all (batch
   stride 0), and the operand is not transposed or packed already. */
static bool take_view(kiln_cpu_gemm_params *p, int slot, const aot_view *v)
{
    int64_t *ld = slot == 0 ? &p->lda : &p->ldb, *bs = slot == 0 ? &p->a_batch_stride : &p->b_batch_stride;
    uint8_t *trans = slot == 0 ? &p->trans_a : &p->trans_b;
    matrix_strides m;
    if (*trans || (slot == 1 && p->b_packed) || !as_matrices(v, slot == 0 ? p->M : p->K, slot == 0 ? p->K : p->N, &m))
        return false;
    bool per_product = m.batch == p->batch && (*bs != 0 || p->batch == 1), shared = m.batch == 1 && *bs == 0;
    if (!per_product && !shared) return false;
    *trans = m.col_stride != 1;
    *ld = m.col_stride == 1 ? m.row_stride : m.col_stride;
    *bs = m.batch > 1 ? m.batch_stride : 0;
    return true;
}

void aot_take_views(aot_lowering *L, aot_step_desc *d)
{
    if (d->op != KILN_CPU_OP_GEMM) return;
    for (int slot = 0; slot < 2; slot++) {
        aot_operand *o = &d->in[slot];
        const aot_view *v = o->kind == AOT_OPERAND_VALUE ? L->views[o->value] : NULL;
        if (v && v->pending && take_view(&d->params.gemm, slot, v)) o->value = v->source;
    }
}
