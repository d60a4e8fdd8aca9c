/* aot_fuse.c — growing a node's step over the nodes that follow it (see aot_fuse.h).
 *
 * Layer: backends/cpu/aot (internal). Every pattern is checked through the same descriptions
 * the step would get on its own (aot_describe), so a fused node satisfies exactly the
 * conditions it would satisfy unfused, plus the pattern's: its other operands are constants,
 * its output has the shape of the value it replaces (no broadcast may grow it), and every value
 * that disappears has no reader outside the pattern.
 *
 *   Conv -> BatchNormalization             w' = w * scale[m], b' = b * scale[m] + shift[m]
 *   GEMM -> Add(c[N] or scalar)            bias, beta = 1 (c[N] may be a computed row)
 *   GEMM -> Add(r) (r of the output's shape, computed before the GEMM)   full bias, beta = 1
 *   Conv (Winograd, pixel rows, taps) -> Add(r) (r likewise)   residual, added before the act
 *   GEMM -> Mul(s) / Div(s)                alpha *= s (1/s), beta likewise
 *   GEMM (batched) -> Transpose [b, M, N] -> [M, b, N]   batch stride N, row stride b * N
 *   step -> Relu / Clip / Sigmoid ...      act
 *   step -> {Sigmoid, Mul(x, sigmoid)}     act = SiLU
 *   step -> {Div(x, sqrt2) -> Erf -> Add(1), Mul(x, .)} -> Mul(0.5)   act = GELU (erf form)
 *   step -> {Mul(x, x) -> Mul(x, .) -> Mul(0.044715) -> Add(x, .) -> Mul(sqrt(2/pi)) -> Tanh
 *            -> Add(1), Mul(x, .)} -> Mul(0.5)   act = GELU (tanh form)
 *   Sigmoid(x) -> Mul(x, sigmoid)          UNARY SiLU
 *   Add(a, b) (same shapes) -> LayerNormalization   LAYERNORM of a, b its residual
 *   Pow(x, 2) -> ReduceMean(-1) -> Add(eps) -> Sqrt -> 1/. -> Mul(x, .) -> Mul(w)
 *                                          LAYERNORM rms (RMSNorm), scale w
 */
#include <math.h>
#include <string.h>

#include "backends/cpu/aot/aot_fuse.h"

void aot_view_node(const aot_lowering *L, size_t k, aot_node_view *v)
{
    const kiln_cpu_aot_node *n = &L->g->nodes[k];
    memset(v, 0, sizeof *v);
    v->node = n->node;
    for (size_t i = 0; i < n->node->n_inputs; i++)
        if (n->inputs[i] >= 0) v->in[i] = &L->g->values[n->inputs[i]].t;
    for (size_t j = 0; j < n->node->n_outputs; j++) {
        int32_t o = n->outputs[j];
        if (o >= 0 && (j == 0 || L->uses[o] > 0 || L->is_output[o])) v->out[j] = &L->g->values[o].t;
    }
}

/* ---- who reads what ------------------------------------------------------------------------- */

/* The nodes after k reading v, one entry per reading slot, when v is an intermediate with
   exactly `want` readers, none of them taken by an earlier fusion. */
static bool readers(const aot_lowering *L, size_t k, int32_t v, int64_t *out, uint32_t want)
{
    if (v < 0 || L->uses[v] != want || L->is_output[v]) return false;
    uint32_t n = 0;
    for (size_t c = k + 1; c < L->g->n_nodes && n < want; c++) {
        const kiln_cpu_aot_node *node = &L->g->nodes[c];
        for (size_t i = 0; i < node->node->n_inputs && n < want; i++) {
            if (node->inputs[i] != v) continue;
            if (L->absorbed[c]) return false;
            out[n++] = (int64_t)c;
        }
    }
    return n == want;
}

static int64_t only_reader(const aot_lowering *L, size_t k, int32_t v)
{
    int64_t c;
    return readers(L, k, v, &c, 1) ? c : -1;
}

static int32_t output_of(const aot_lowering *L, int64_t c) { return L->g->nodes[c].outputs[0]; }

static bool same_shape_tensor(const kiln_tensor *x, const kiln_tensor *y)
{
    return x->rank == y->rank && memcmp(x->shape, y->shape, x->rank * sizeof x->shape[0]) == 0;
}

static bool same_shape(const aot_lowering *L, int32_t a, int32_t b)
{
    return same_shape_tensor(&L->g->values[a].t, &L->g->values[b].t);
}

/* Node c described as op `op`, when it writes a tensor of v's shape. */
static bool describe_as(aot_lowering *L, int64_t c, uint32_t op, int32_t v, aot_step_desc *d)
{
    if (c < 0 || output_of(L, c) < 0 || !same_shape(L, output_of(L, c), v)) return false;
    aot_node_view view;
    aot_view_node(L, (size_t)c, &view);
    return aot_describe(view.node, view.in, view.out, L->arena, d) && d->op == op;
}

static bool is_act(aot_lowering *L, int64_t c, int32_t v, uint32_t kind, aot_step_desc *d)
{
    return describe_as(L, c, KILN_CPU_OP_UNARY, v, d) && L->g->nodes[c].inputs[0] == v && d->params.unary.act.kind == kind;
}

/* Node c is `kind`(v, s) (or (s, v) unless v_first) for a constant scalar s. */
static bool binary_with_scalar(aot_lowering *L, int64_t c, int32_t v, uint32_t kind, bool v_first, float *s)
{
    aot_step_desc d;
    if (!describe_as(L, c, KILN_CPU_OP_BINARY, v, &d) || d.params.binary.kind != kind) return false;
    const kiln_cpu_aot_node *n = &L->g->nodes[c];
    int at = n->inputs[0] == v ? 0 : 1;
    if (n->inputs[at] != v || n->inputs[1 - at] == v || (v_first && at != 0)) return false;
    const aot_operand *o = &d.in[1 - at];
    if (o->kind != AOT_OPERAND_WEIGHT || !o->t.data || aot_numel(&o->t) != 1) return false;
    *s = ((const float *)o->t.data)[0];
    return true;
}

/* Node c is `kind`(a, b) in either order (a == b: `kind`(a, a)). */
static bool is_binary_pair(aot_lowering *L, int64_t c, uint32_t kind, int32_t a, int32_t b)
{
    aot_step_desc d;
    const kiln_cpu_aot_node *n = c >= 0 ? &L->g->nodes[c] : NULL;
    if (!n || !((n->inputs[0] == a && n->inputs[1] == b) || (n->inputs[0] == b && n->inputs[1] == a))) return false;
    return describe_as(L, c, KILN_CPU_OP_BINARY, a, &d) && d.params.binary.kind == kind;
}

/* Node c is `kind`(a, b) in either order, a != b. */
static bool is_binary_of(aot_lowering *L, int64_t c, uint32_t kind, int32_t a, int32_t b)
{
    return a != b && is_binary_pair(L, c, kind, a, b);
}

/* Node c is Mul(a, b) in either order, a != b. */
static bool is_mul_of(aot_lowering *L, int64_t c, int32_t a, int32_t b)
{
    return is_binary_of(L, c, KILN_CPU_BIN_MUL, a, b);
}

static void absorb(aot_lowering *L, int64_t c, int32_t *y)
{
    L->absorbed[c] = true;
    *y = output_of(L, c);
}

/* ---- folding into the step's arithmetic --------------------------------------------------------- */

static bool fold_batchnorm(aot_lowering *L, size_t k, aot_step_desc *conv, int32_t *y)
{
    aot_step_desc bn;
    int64_t c = only_reader(L, k, *y);
    if (!describe_as(L, c, KILN_CPU_OP_CHANNEL_AFFINE, *y, &bn) || L->g->nodes[c].inputs[0] != *y ||
        bn.params.affine.C != conv->params.conv.M)
        return false;
    const float *scale = bn.in[1].t.data, *shift = bn.in[2].t.data;
    const float *w = conv->in[1].t.data, *b = conv->in[2].kind == AOT_OPERAND_WEIGHT ? conv->in[2].t.data : NULL;
    int64_t m = conv->params.conv.M, per_row = aot_numel(&conv->in[1].t) / m;
    float *w2 = KILN_ARENA_ARRAY(L->arena, float, (size_t)(m * per_row));
    float *b2 = KILN_ARENA_ARRAY(L->arena, float, (size_t)m);
    if (!w2 || !b2 || !scale || !shift || !w) return false;
    for (int64_t r = 0; r < m; r++) {
        for (int64_t i = 0; i < per_row; i++) w2[r * per_row + i] = w[r * per_row + i] * scale[r];
        b2[r] = (b ? b[r] : 0.0f) * scale[r] + shift[r];
    }
    conv->in[1].t.data = w2;
    kiln_tensor bias = {.dtype = KILN_DTYPE_F32, .rank = 1, .shape = {m}, .data = b2};
    conv->in[2] = aot_weight_raw(&bias);
    conv->params.conv.has_bias = 1;
    absorb(L, c, y);
    return true;
}

/* How a GEMM can take the other operand of an Add as its bias: a constant row of N (or a
   scalar), or any tensor of the output's own shape that exists when the GEMM runs. */
static uint8_t bias_kind_for(const aot_lowering *L, const kiln_cpu_gemm_params *p, const aot_operand *o, int32_t y)
{
    const kiln_tensor *t = o->kind == AOT_OPERAND_WEIGHT ? &o->t : &L->g->values[o->value].t;
    const kiln_tensor *out = &L->g->values[y].t;
    if (o->kind == AOT_OPERAND_VALUE && !L->ready[o->value]) return KILN_CPU_BIAS_NONE;
    if (t->rank == out->rank && memcmp(t->shape, out->shape, t->rank * sizeof t->shape[0]) == 0)
        return KILN_CPU_BIAS_FULL;
    int64_t count = aot_numel(t);
    /* A row of N computed earlier (attention's additive mask, [1, 1, 1, tokens]) is read like a
       constant bias; a scalar value is not worth its own path. */
    if (count == p->N && t->rank >= 1 && t->shape[t->rank - 1] == p->N && aot_is_f32(t)) return KILN_CPU_BIAS_PER_COL;
    if (o->kind == AOT_OPERAND_WEIGHT && count == 1) return KILN_CPU_BIAS_SCALAR;
    return KILN_CPU_BIAS_NONE;
}

/* GEMM + Add: the Add's other operand becomes the bias (beta 1). */
static bool fuse_bias_add(aot_lowering *L, size_t k, aot_step_desc *gemm, int32_t *y)
{
    kiln_cpu_gemm_params *p = &gemm->params.gemm;
    aot_step_desc add;
    int64_t c = only_reader(L, k, *y);
    if (p->bias_kind != KILN_CPU_BIAS_NONE || !describe_as(L, c, KILN_CPU_OP_BINARY, *y, &add)) return false;
    const kiln_cpu_aot_node *n = &L->g->nodes[c];
    if (add.params.binary.kind != KILN_CPU_BIN_ADD || n->node->opset < 7) return false;
    int other = n->inputs[0] == *y ? 1 : 0;
    if (n->inputs[1 - other] != *y || n->inputs[other] == *y) return false;
    aot_operand bias = add.in[other];
    if (bias.kind == AOT_OPERAND_VALUE) bias.value = n->inputs[other];
    uint8_t kind = bias_kind_for(L, p, &bias, *y);
    if (kind == KILN_CPU_BIAS_NONE) return false;
    p->bias_kind = kind;
    p->bias_batch_stride = kind == KILN_CPU_BIAS_FULL && p->batch > 1 ? p->M * p->N : 0;
    p->beta = 1.0f;
    gemm->in[2] = bias;
    absorb(L, c, y);
    return true;
}

/* Winograd or pixel-rows Conv + Add(r), r of the output's shape and computed before the Conv:
   the step adds r before the activation, so ResNet's blocks need no separate Add step (one pass
   over the block's output less). In a block with a downsample, r is the Winograd convolution's
   output and the Add joins the downsample convolution (pixels as rows from 14x14 down). */
static bool fuse_residual_add(aot_lowering *L, size_t k, aot_step_desc *conv, int32_t *y)
{
    kiln_cpu_conv_params *p = &conv->params.conv;
    aot_step_desc add;
    int64_t c = only_reader(L, k, *y);
    if (!(p->winograd || p->pixel_rows || p->taps) || p->has_residual || !describe_as(L, c, KILN_CPU_OP_BINARY, *y, &add))
        return false;
    const kiln_cpu_aot_node *n = &L->g->nodes[c];
    if (add.params.binary.kind != KILN_CPU_BIN_ADD || n->node->opset < 7) return false;
    int other = n->inputs[0] == *y ? 1 : 0;
    if (n->inputs[1 - other] != *y || n->inputs[other] == *y) return false;
    aot_operand r = add.in[other];
    const kiln_tensor *t = r.kind == AOT_OPERAND_WEIGHT  ? &r.t
                           : r.kind == AOT_OPERAND_VALUE ? &L->g->values[n->inputs[other]].t
                                                         : NULL;
    if (!t || !aot_is_f32(t) || (r.kind == AOT_OPERAND_VALUE && !L->ready[n->inputs[other]]) ||
        !same_shape_tensor(t, &L->g->values[*y].t))
        return false;
    if (r.kind == AOT_OPERAND_VALUE) r.value = n->inputs[other];
    p->has_residual = 1;
    conv->in[3] = r;
    conv->n_inputs = 4;
    absorb(L, c, y);
    return true;
}

/* GEMM + Mul(s) or Div(s): (alpha A.B + beta bias) * s. */
static bool fuse_scale(aot_lowering *L, size_t k, aot_step_desc *gemm, int32_t *y)
{
    int64_t c = only_reader(L, k, *y);
    float s;
    if (binary_with_scalar(L, c, *y, KILN_CPU_BIN_MUL, false, &s)) {
        /* s as it is */
    } else if (binary_with_scalar(L, c, *y, KILN_CPU_BIN_DIV, true, &s) && isfinite(s) && s != 0.0f) {
        s = 1.0f / s;
    } else {
        return false;
    }
    if (!isfinite(s)) return false;
    gemm->params.gemm.alpha *= s;
    gemm->params.gemm.beta *= s;
    absorb(L, c, y);
    return true;
}

/* Batched GEMM -> Transpose [batch, M, N] -> [M, batch, N] (attention's heads merged back into
   rows before the output projection): each product writes its N columns straight into their
   place in the transposed layout, batch stride N and row stride batch * N, instead of a
   Transpose pass over the result. The validation allows batches that share rows in disjoint
   column bands (validate.c). */
static bool fuse_output_transpose(aot_lowering *L, size_t k, aot_step_desc *gemm, int32_t *y)
{
    kiln_cpu_gemm_params *p = &gemm->params.gemm;
    int64_t c = only_reader(L, k, *y);
    if (c < 0 || p->batch < 2 || p->ldy != p->N || p->y_batch_stride != p->M * p->N || output_of(L, c) < 0 ||
        strcmp(L->g->nodes[c].node->op, "Transpose") != 0)
        return false;
    aot_node_view view;
    aot_step_desc t;
    aot_view_node(L, (size_t)c, &view);
    if (!aot_describe(view.node, view.in, view.out, L->arena, &t) || t.op != KILN_CPU_OP_TRANSPOSE) return false;
    const kiln_cpu_transpose_params *tp = &t.params.transpose;
    const int64_t *is = tp->in_shape;
    if (tp->rank != 3 || tp->perm[0] != 1 || tp->perm[1] != 0 || tp->perm[2] != 2 || is[0] != p->batch ||
        is[1] != p->M || is[2] != p->N)
        return false;
    p->y_batch_stride = p->N;
    p->ldy = p->batch * p->N;
    absorb(L, c, y);
    return true;
}

/* ---- activations ------------------------------------------------------------------------------- */

static bool fuse_single_act(aot_lowering *L, size_t k, kiln_cpu_act *act, int32_t *y)
{
    aot_step_desc d;
    int64_t c = only_reader(L, k, *y);
    if (!describe_as(L, c, KILN_CPU_OP_UNARY, *y, &d) || L->g->nodes[c].inputs[0] != *y) return false;
    *act = d.params.unary.act;
    absorb(L, c, y);
    return true;
}

/* y read by Sigmoid and by Mul(y, sigmoid(y)) only. */
static bool fuse_silu(aot_lowering *L, size_t k, kiln_cpu_act *act, int32_t *y)
{
    int64_t r[2];
    aot_step_desc d;
    if (!readers(L, k, *y, r, 2) || r[0] == r[1]) return false;
    int sig = is_act(L, r[0], *y, KILN_CPU_ACT_SIGMOID, &d) ? 0 : 1;
    if (!is_act(L, r[sig], *y, KILN_CPU_ACT_SIGMOID, &d)) return false;
    int64_t mul = r[1 - sig];
    if (only_reader(L, k, output_of(L, r[sig])) != mul || !is_mul_of(L, mul, *y, output_of(L, r[sig]))) return false;
    *act = (kiln_cpu_act){.kind = KILN_CPU_ACT_SILU};
    L->absorbed[r[sig]] = true;
    absorb(L, mul, y);
    return true;
}

static bool near(float v, double want) { return fabs((double)v - want) <= 1e-6 * fabs(want); }

/* y read by Div(y, sqrt 2) (or Mul(y, 1/sqrt 2)) -> Erf -> Add(1) -> Mul(y, .) -> Mul(0.5): the
   erf form of GELU that PyTorch exports. */
static bool fuse_gelu(aot_lowering *L, size_t k, kiln_cpu_act *act, int32_t *y)
{
    int64_t r[2];
    aot_step_desc d;
    float s;
    if (!readers(L, k, *y, r, 2) || r[0] == r[1]) return false;
    for (int first = 0; first < 2; first++) {
        int64_t scale = r[first], mul = r[1 - first];
        bool div = binary_with_scalar(L, scale, *y, KILN_CPU_BIN_DIV, true, &s) && near(s, sqrt(2.0));
        if (!div && !(binary_with_scalar(L, scale, *y, KILN_CPU_BIN_MUL, false, &s) && near(s, sqrt(0.5)))) continue;
        int64_t erf = only_reader(L, k, output_of(L, scale));
        if (!is_act(L, erf, output_of(L, scale), KILN_CPU_ACT_ERF, &d)) continue;
        int64_t add = only_reader(L, k, output_of(L, erf));
        if (!binary_with_scalar(L, add, output_of(L, erf), KILN_CPU_BIN_ADD, false, &s) || s != 1.0f) continue;
        if (only_reader(L, k, output_of(L, add)) != mul || !is_mul_of(L, mul, *y, output_of(L, add))) continue;
        int64_t half = only_reader(L, k, output_of(L, mul));
        if (!binary_with_scalar(L, half, output_of(L, mul), KILN_CPU_BIN_MUL, false, &s) || s != 0.5f) continue;
        *act = (kiln_cpu_act){.kind = KILN_CPU_ACT_GELU_ERF};
        L->absorbed[scale] = L->absorbed[erf] = L->absorbed[add] = L->absorbed[mul] = true;
        absorb(L, half, y);
        return true;
    }
    return false;
}

/* Node c is Mul(v, s) or Mul(s, v) with s a constant scalar within near() of `want`. */
static bool is_scaled_by(aot_lowering *L, int64_t c, int32_t v, double want)
{
    float s;
    return binary_with_scalar(L, c, v, KILN_CPU_BIN_MUL, false, &s) && near(s, want);
}

/* y read by Mul(y, y) -> Mul(y, .) -> Mul(0.044715) -> Add(y, .) -> Mul(sqrt(2/pi)) -> Tanh ->
   Add(1) -> Mul(y, .) -> Mul(0.5): the tanh form of GELU that PyTorch exports (GPT-2's,
   approximate="tanh"). y has five reading slots: two in the square, one each in the cube, the
   inner sum and the final product; everything else reads only the chain's previous value. */
static bool fuse_gelu_tanh(aot_lowering *L, size_t k, kiln_cpu_act *act, int32_t *y)
{
    int64_t r[5];
    aot_step_desc d;
    float s;
    if (!readers(L, k, *y, r, 5)) return false;
    /* The square comes first in node order: every other reader depends on it. */
    int64_t sq = r[0];
    if (r[1] != sq || !is_binary_pair(L, sq, KILN_CPU_BIN_MUL, *y, *y)) return false;
    int64_t cube = only_reader(L, k, output_of(L, sq));
    if (!is_mul_of(L, cube, *y, output_of(L, sq))) return false;
    int64_t cubic = only_reader(L, k, output_of(L, cube));
    if (!is_scaled_by(L, cubic, output_of(L, cube), 0.044715)) return false;
    int64_t inner = only_reader(L, k, output_of(L, cubic));
    if (!is_binary_of(L, inner, KILN_CPU_BIN_ADD, *y, output_of(L, cubic))) return false;
    int64_t scaled = only_reader(L, k, output_of(L, inner));
    if (!is_scaled_by(L, scaled, output_of(L, inner), sqrt(2.0 / 3.14159265358979323846))) return false;
    int64_t tanh_node = only_reader(L, k, output_of(L, scaled));
    if (!is_act(L, tanh_node, output_of(L, scaled), KILN_CPU_ACT_TANH, &d)) return false;
    int64_t add = only_reader(L, k, output_of(L, tanh_node));
    if (!binary_with_scalar(L, add, output_of(L, tanh_node), KILN_CPU_BIN_ADD, false, &s) || s != 1.0f) return false;
    int64_t mul = only_reader(L, k, output_of(L, add));
    if (!is_mul_of(L, mul, *y, output_of(L, add))) return false;
    int64_t half = only_reader(L, k, output_of(L, mul));
    if (!binary_with_scalar(L, half, output_of(L, mul), KILN_CPU_BIN_MUL, false, &s) || s != 0.5f) return false;
    *act = (kiln_cpu_act){.kind = KILN_CPU_ACT_GELU_TANH};
    L->absorbed[sq] = L->absorbed[cube] = L->absorbed[cubic] = L->absorbed[inner] = L->absorbed[scaled] = true;
    L->absorbed[tanh_node] = L->absorbed[add] = L->absorbed[mul] = true;
    absorb(L, half, y);
    return true;
}

/* Sigmoid(x) read only by Mul(x, sigmoid(x)): one UNARY SiLU. */
static bool fuse_sigmoid_mul(aot_lowering *L, size_t k, aot_step_desc *d, int32_t *y)
{
    if (d->op != KILN_CPU_OP_UNARY || d->params.unary.act.kind != KILN_CPU_ACT_SIGMOID) return false;
    int32_t x = L->g->nodes[k].inputs[0];
    int64_t mul = only_reader(L, k, *y);
    if (!is_mul_of(L, mul, x, *y)) return false;
    d->params.unary.act.kind = KILN_CPU_ACT_SILU;
    absorb(L, mul, y);
    return true;
}

/* ---- RMSNorm ----------------------------------------------------------------------------------- */

/* Node c, reading v, is ReduceMean over v's last axis keeping it (lowered as a GEMM against a
   column of ones, aot_ops_norm.c); n out: the length of that axis. */
static bool is_row_mean(aot_lowering *L, int64_t c, int32_t v, int64_t *n)
{
    if (c < 0 || strcmp(L->g->nodes[c].node->op, "ReduceMean") != 0 || L->g->nodes[c].inputs[0] != v) return false;
    const kiln_tensor *x = &L->g->values[v].t, *m = &L->g->values[output_of(L, c)].t;
    if (m->rank != x->rank || x->rank < 1 || m->shape[x->rank - 1] != 1) return false;
    for (uint32_t i = 0; i + 1 < x->rank; i++)
        if (m->shape[i] != x->shape[i]) return false;
    aot_node_view view;
    aot_step_desc d;
    aot_view_node(L, (size_t)c, &view);
    *n = x->shape[x->rank - 1];
    return aot_describe(view.node, view.in, view.out, NULL, &d) && d.op == KILN_CPU_OP_GEMM && d.params.gemm.K == *n;
}

/* Node c is 1 / v: Div(1, v) or Reciprocal(v). */
static bool is_reciprocal_of(aot_lowering *L, int64_t c, int32_t v)
{
    aot_step_desc d;
    float one;
    if (is_act(L, c, v, KILN_CPU_ACT_RECIPROCAL, &d)) return true;
    return binary_with_scalar(L, c, v, KILN_CPU_BIN_DIV, false, &one) && one == 1.0f && L->g->nodes[c].inputs[1] == v;
}

/* Node c is Mul(v, w) in either order with w a constant of n floats (the RMSNorm weight); w
   out. */
static bool is_mul_by_row_weight(aot_lowering *L, int64_t c, int32_t v, int64_t n, aot_operand *w)
{
    aot_step_desc d;
    if (!describe_as(L, c, KILN_CPU_OP_BINARY, v, &d) || d.params.binary.kind != KILN_CPU_BIN_MUL) return false;
    const kiln_cpu_aot_node *node = &L->g->nodes[c];
    int at = node->inputs[0] == v ? 0 : 1;
    if (node->inputs[at] != v || node->inputs[1 - at] == v) return false;
    *w = d.in[1 - at];
    return w->kind == AOT_OPERAND_WEIGHT && w->t.data && aot_numel(&w->t) == n && w->t.shape[w->t.rank - 1] == n;
}

/* Pow(x, 2) -> ReduceMean(last axis) -> Add(eps) -> Sqrt -> 1 / . -> Mul(x, .) -> Mul(., w):
   LLaMA's RMSNorm as PyTorch exports it, one LAYERNORM step with rms set. */
static bool fuse_rmsnorm(aot_lowering *L, size_t k, aot_step_desc *d, int32_t *y)
{
    if (d->op != KILN_CPU_OP_BINARY || d->params.binary.kind != KILN_CPU_BIN_POW) return false;
    const aot_operand *two = &d->in[1];
    if (two->kind != AOT_OPERAND_WEIGHT || !two->t.data || aot_numel(&two->t) != 1 || *(const float *)two->t.data != 2.0f)
        return false;
    int32_t x = L->g->nodes[k].inputs[0];
    int64_t n, mean = only_reader(L, k, *y);
    if (!is_row_mean(L, mean, *y, &n)) return false;
    float eps;
    int64_t add = only_reader(L, k, output_of(L, mean));
    if (!binary_with_scalar(L, add, output_of(L, mean), KILN_CPU_BIN_ADD, false, &eps) || !(eps >= 0.0f && isfinite(eps)))
        return false;
    aot_step_desc step;
    int64_t root = only_reader(L, k, output_of(L, add));
    if (!is_act(L, root, output_of(L, add), KILN_CPU_ACT_SQRT, &step)) return false;
    int64_t inv = only_reader(L, k, output_of(L, root));
    if (!is_reciprocal_of(L, inv, output_of(L, root))) return false;
    int64_t scaled = only_reader(L, k, output_of(L, inv));
    if (!is_mul_of(L, scaled, x, output_of(L, inv))) return false;
    aot_operand w;
    int64_t weighted = only_reader(L, k, output_of(L, scaled));
    if (!is_mul_by_row_weight(L, weighted, output_of(L, scaled), n, &w)) return false;
    aot_operand in_x = d->in[0];
    memset(&d->params, 0, sizeof d->params);
    d->op = KILN_CPU_OP_LAYERNORM;
    d->n_inputs = 3;
    d->params.layernorm = (kiln_cpu_layernorm_params){
        .outer = aot_numel(&L->g->values[x].t) / n, .n = n, .epsilon = eps, .rms = 1};
    d->in[0] = in_x;
    d->in[1] = w;
    d->in[2] = (aot_operand){.kind = AOT_OPERAND_ABSENT, .input = -1};
    L->absorbed[mean] = L->absorbed[add] = L->absorbed[root] = L->absorbed[inv] = L->absorbed[scaled] = true;
    absorb(L, weighted, y);
    return true;
}

/* Add(a, b) of two tensors of its output's shape, read only by a LayerNormalization whose other
   inputs are ready: one LAYERNORM step normalising a + b, b as its residual (a post-norm
   transformer's residual joins: the sum is never stored on its own). */
static bool fuse_add_layernorm(aot_lowering *L, size_t k, aot_step_desc *d, int32_t *y)
{
    const kiln_cpu_aot_node *add = &L->g->nodes[k];
    if (d->op != KILN_CPU_OP_BINARY || d->params.binary.kind != KILN_CPU_BIN_ADD || add->node->opset < 7 ||
        add->inputs[0] < 0 || add->inputs[1] < 0 || !same_shape(L, add->inputs[0], *y) ||
        !same_shape(L, add->inputs[1], *y))
        return false;
    aot_step_desc ln;
    int64_t c = only_reader(L, k, *y);
    if (!describe_as(L, c, KILN_CPU_OP_LAYERNORM, *y, &ln) || L->g->nodes[c].inputs[0] != *y) return false;
    for (uint32_t i = 1; i < ln.n_inputs; i++) {
        if (ln.in[i].kind != AOT_OPERAND_VALUE) continue;
        ln.in[i].value = L->g->nodes[c].inputs[ln.in[i].input];
        if (!L->ready[ln.in[i].value]) return false;
    }
    ln.in[0] = d->in[0];
    ln.in[3] = d->in[1];
    ln.n_inputs = 4;
    ln.params.layernorm.has_residual = 1;
    *d = ln;
    absorb(L, c, y);
    return true;
}

void aot_fuse_node(aot_lowering *L, size_t k, aot_step_desc *d, int32_t *y)
{
    if (fuse_rmsnorm(L, k, d, y) || fuse_add_layernorm(L, k, d, y)) return;
    if (d->op == KILN_CPU_OP_CONV2D) {
        fold_batchnorm(L, k, d, y);
        fuse_residual_add(L, k, d, y);
    }
    if (d->op == KILN_CPU_OP_GEMM) {
        fuse_scale(L, k, d, y);
        fuse_bias_add(L, k, d, y);
        fuse_scale(L, k, d, y);
    }
    if (fuse_sigmoid_mul(L, k, d, y)) return;
    kiln_cpu_act *act = aot_step_act(d);
    if (act && act->kind == KILN_CPU_ACT_NONE && !fuse_single_act(L, k, act, y) && !fuse_silu(L, k, act, y) &&
        !fuse_gelu(L, k, act, y))
        fuse_gelu_tanh(L, k, act, y);
    if (d->op == KILN_CPU_OP_GEMM) fuse_output_transpose(L, k, d, y);
}
