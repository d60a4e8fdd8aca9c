/* einsum.c — the portable Einsum kernel: one generic contraction loop.
 *
 * Layer: kernels/portable. Depends on kernel.h.
 * The equation ("bij,bjk->bik", "...ii->...i", "i,i") is parsed into labels: each letter is
 * one label, and the dims an ellipsis stands for are labels of their own, right-aligned and
 * broadcast across the operands as numpy does. Without "->" the output is the ellipsis dims
 * followed by the letters used exactly once, in alphabetical (ASCII) order. Every label has a
 * size and, per operand, an element stride — the sum of the strides of the operand's dims that
 * carry it, which is how a repeated letter ("ii") reads a diagonal; 0 where the operand lacks
 * the label or broadcasts it. The kernel then walks the output labels and, for each output
 * element, all the other (summed) labels, multiplying the operands' elements: transpose,
 * diagonal, reduction, batched products and outer products are all this one loop. Floats
 * accumulate in double, integers in int64 (wrapping as the output type would).
 */
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/gemm_f32.h"
#include "kernels/portable/reduce_row.h"

#define EINSUM_MAX_INPUTS 8
#define EINSUM_LETTERS 52
#define EINSUM_MAX_LABELS (EINSUM_LETTERS + KILN_MAX_RANK) /* letters, then ellipsis dims */

typedef struct einsum_plan {
    size_t n_inputs;
    int n_labels;                                     /* labels in use are 0 .. n_labels-1 */
    int64_t size[EINSUM_MAX_LABELS];                  /* (n_labels) */
    int64_t stride[EINSUM_MAX_INPUTS][EINSUM_MAX_LABELS]; /* (n_inputs, n_labels) */
    int n_out;
    int out[KILN_MAX_RANK];                           /* output labels, in output dim order */
    int n_sum;
    int sum[EINSUM_MAX_LABELS];                       /* summed labels */
    uint8_t uses[EINSUM_MAX_INPUTS][EINSUM_MAX_LABELS]; /* dims of input i that carry the label */
} einsum_plan;

static int letter_index(char c)
{
    if (c >= 'a' && c <= 'z') return c - 'a';
    if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
    return -1;
}

/* One operand's term as parsed: its letters (-1 marks where the ellipsis stands). */
typedef struct einsum_term {
    int labels[KILN_MAX_RANK + 1];
    int n;
    bool ellipsis;
} einsum_term;

/* Parses the characters [p, end) of a term; spaces are ignored. */
static kiln_status term_parse(const char *p, const char *end, einsum_term *t)
{
    t->n = 0;
    t->ellipsis = false;
    while (p < end) {
        if (*p == ' ') {
            p++;
            continue;
        }
        if (t->n > KILN_MAX_RANK) return KILN_ERROR_NOT_SUPPORTED;
        if (*p == '.') {
            if (end - p < 3 || p[1] != '.' || p[2] != '.' || t->ellipsis) return KILN_ERROR_INVALID_ARGUMENT;
            t->ellipsis = true;
            t->labels[t->n++] = -1;
            p += 3;
            continue;
        }
        int l = letter_index(*p++);
        if (l < 0) return KILN_ERROR_INVALID_ARGUMENT;
        t->labels[t->n++] = l;
    }
    return KILN_OK;
}

/* Letters are labels 0..51 as parsed; the ellipsis dims are compacted after them at the end. */
static kiln_status plan_make(const kiln_node *node, const kiln_tensor *const *in, einsum_plan *p)
{
    memset(p, 0, sizeof *p);
    const char *eq = kiln_node_attr_string(node, "equation", NULL);
    if (!eq) return KILN_ERROR_INVALID_ARGUMENT;
    if (node->n_inputs < 1 || node->n_inputs > EINSUM_MAX_INPUTS) return KILN_ERROR_NOT_SUPPORTED;
    p->n_inputs = node->n_inputs;
    const char *arrow = strstr(eq, "->"), *lhs_end = arrow ? arrow : eq + strlen(eq);
    kiln_dtype dtype = in[0] ? in[0]->dtype : KILN_DTYPE_F32;
    int64_t letter_size[EINSUM_LETTERS];
    int letter_count[EINSUM_LETTERS] = {0};
    for (int l = 0; l < EINSUM_LETTERS; l++) letter_size[l] = -1;
    int64_t ell_size[KILN_MAX_RANK]; /* right-aligned: ell_size[0] is the last ellipsis dim */
    int ell_rank = 0;
    const char *p_term = eq;
    for (size_t i = 0; i < p->n_inputs; i++) {
        const kiln_tensor *x = in[i];
        if (!x) return KILN_ERROR_INVALID_ARGUMENT;
        if (x->dtype != dtype) return KILN_ERROR_DTYPE_MISMATCH;
        const char *comma = memchr(p_term, ',', (size_t)(lhs_end - p_term));
        const char *term_end = i + 1 < p->n_inputs ? comma : lhs_end;
        if (!term_end || (i + 1 == p->n_inputs && comma)) return KILN_ERROR_INVALID_ARGUMENT;
        einsum_term t;
        KILN_TRY(term_parse(p_term, term_end, &t));
        p_term = term_end + 1;
        int n_letters = t.n - (t.ellipsis ? 1 : 0);
        int this_ell = (int)x->rank - n_letters;
        if (this_ell < 0 || (!t.ellipsis && this_ell != 0)) return KILN_ERROR_SHAPE_MISMATCH;
        int dim = 0;
        for (int k = 0; k < t.n; k++) {
            if (t.labels[k] < 0) {
                for (int e = 0; e < this_ell; e++, dim++) {
                    int from_right = this_ell - 1 - e;
                    int64_t s = x->shape[dim];
                    while (ell_rank <= from_right) ell_size[ell_rank++] = 1; /* not seen yet: broadcasts */
                    if (ell_size[from_right] == 1) ell_size[from_right] = s;
                    else if (s != 1 && s != ell_size[from_right]) return KILN_ERROR_SHAPE_MISMATCH;
                }
                continue;
            }
            int l = t.labels[k];
            int64_t s = x->shape[dim++];
            if (letter_size[l] < 0 || letter_size[l] == 1) letter_size[l] = s; /* a size-1 dim broadcasts */
            else if (s != letter_size[l] && s != 1) return KILN_ERROR_SHAPE_MISMATCH;
            letter_count[l]++;
        }
    }
    /* Compact: letters in use get labels 0.., then the ellipsis dims (outermost first). */
    int label_of_letter[EINSUM_LETTERS], label_of_ell[KILN_MAX_RANK];
    for (int l = 0; l < EINSUM_LETTERS; l++) {
        label_of_letter[l] = -1;
        if (letter_count[l] == 0) continue;
        label_of_letter[l] = p->n_labels;
        p->size[p->n_labels++] = letter_size[l];
    }
    for (int e = ell_rank - 1; e >= 0; e--) {
        label_of_ell[e] = p->n_labels;
        p->size[p->n_labels++] = ell_size[e];
    }
    /* Strides, from a second pass over the terms. */
    p_term = eq;
    for (size_t i = 0; i < p->n_inputs; i++) {
        const kiln_tensor *x = in[i];
        const char *term_end = i + 1 < p->n_inputs ? memchr(p_term, ',', (size_t)(lhs_end - p_term)) : lhs_end;
        einsum_term t;
        KILN_TRY(term_parse(p_term, term_end, &t));
        p_term = term_end + 1;
        int64_t dim_stride[KILN_MAX_RANK], acc = 1;
        for (int d = (int)x->rank - 1; d >= 0; d--) {
            dim_stride[d] = x->shape[d] == 1 ? 0 : acc; /* size 1 broadcasts */
            acc *= x->shape[d];
        }
        int this_ell = (int)x->rank - (t.n - (t.ellipsis ? 1 : 0)), dim = 0;
        for (int k = 0; k < t.n; k++) {
            if (t.labels[k] < 0) {
                for (int e = 0; e < this_ell; e++, dim++) {
                    p->stride[i][label_of_ell[this_ell - 1 - e]] += dim_stride[dim];
                    p->uses[i][label_of_ell[this_ell - 1 - e]]++;
                }
                continue;
            }
            p->stride[i][label_of_letter[t.labels[k]]] += dim_stride[dim++];
            p->uses[i][label_of_letter[t.labels[k]]]++;
        }
    }
    /* Output labels: explicit, or the ellipsis then the letters used once, alphabetically. */
    bool in_out[EINSUM_MAX_LABELS] = {false};
    if (arrow) {
        einsum_term t;
        KILN_TRY(term_parse(arrow + 2, arrow + 2 + strlen(arrow + 2), &t));
        for (int k = 0; k < t.n; k++) {
            if (t.labels[k] < 0) {
                for (int e = ell_rank - 1; e >= 0; e--) {
                    if (p->n_out >= KILN_MAX_RANK) return KILN_ERROR_NOT_SUPPORTED;
                    p->out[p->n_out++] = label_of_ell[e];
                }
                continue;
            }
            int label = label_of_letter[t.labels[k]];
            if (label < 0 || in_out[label]) return KILN_ERROR_INVALID_ARGUMENT;
            if (p->n_out >= KILN_MAX_RANK) return KILN_ERROR_NOT_SUPPORTED;
            in_out[label] = true;
            p->out[p->n_out++] = label;
        }
        if (!t.ellipsis && ell_rank > 0) return KILN_ERROR_INVALID_ARGUMENT;
        for (int e = 0; e < ell_rank; e++) in_out[label_of_ell[e]] = true;
    } else {
        for (int e = ell_rank - 1; e >= 0; e--) p->out[p->n_out++] = label_of_ell[e];
        static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"; /* ASCII order */
        for (const char *c = alphabet; *c; c++) {
            int l = letter_index(*c);
            if (letter_count[l] != 1) continue;
            if (p->n_out >= KILN_MAX_RANK) return KILN_ERROR_NOT_SUPPORTED;
            p->out[p->n_out++] = label_of_letter[l];
        }
        for (int k = 0; k < p->n_out; k++) in_out[p->out[k]] = true;
    }
    for (int l = 0; l < p->n_labels; l++)
        if (!in_out[l]) p->sum[p->n_sum++] = l;
    return KILN_OK;
}

/* Advances the odometer idx over labels[n] (last fastest); false after the last combination. */
static bool odometer_next(const einsum_plan *p, const int *labels, int n, int64_t *idx)
{
    for (int k = n - 1; k >= 0; k--) {
        if (++idx[labels[k]] < p->size[labels[k]]) return true;
        idx[labels[k]] = 0;
    }
    return false;
}

/* ---- the GEMM form ----
 * Two f32 operands whose labels are each batch (in both and the output), M (A and output), N (B
 * and output) or K (A and B, summed), at most one label of M, N and K, none repeated within an
 * operand, and N the output's innermost label: every batch entry is then one product
 * C (M, N) = A (M, K) B (K, N) over strided views, which the shared GEMM does far faster than
 * the generic loop (attention's "bhqd,bhkd->bhqk" is this form). */

typedef struct einsum_gemm {
    int batch[EINSUM_MAX_LABELS], n_batch;
    int m, n, k;                      /* labels, or -1 when the group is empty (size 1) */
    int64_t out_stride[EINSUM_MAX_LABELS];
    int64_t ldc;
} einsum_gemm;

static int64_t label_size(const einsum_plan *p, int l) { return l < 0 ? 1 : p->size[l]; }
static int64_t label_stride(const einsum_plan *p, size_t i, int l) { return l < 0 ? 0 : p->stride[i][l]; }

static bool gemm_form(const einsum_plan *p, kiln_dtype dtype, einsum_gemm *g)
{
    if (p->n_inputs != 2 || dtype != KILN_DTYPE_F32) return false;
    g->n_batch = 0;
    g->m = g->n = g->k = -1;
    bool in_out[EINSUM_MAX_LABELS] = {false};
    int64_t acc = 1;
    for (int o = p->n_out - 1; o >= 0; o--) {
        in_out[p->out[o]] = true;
        g->out_stride[p->out[o]] = acc;
        acc *= p->size[p->out[o]];
    }
    for (int l = 0; l < p->n_labels; l++) {
        if (p->size[l] == 0 || p->uses[0][l] > 1 || p->uses[1][l] > 1) return false;
        bool a = p->uses[0][l], b = p->uses[1][l];
        if (a && b && in_out[l]) {
            g->batch[g->n_batch++] = l;
            continue;
        }
        int *slot = a && in_out[l] ? &g->m : b && in_out[l] ? &g->n : a && b ? &g->k : NULL;
        if (!slot || *slot != -1) return false; /* summed within one operand, or a second M, N or K label */
        *slot = l;
    }
    if (g->n >= 0 && g->out_stride[g->n] != 1) return false;
    g->ldc = g->m >= 0 ? g->out_stride[g->m] : label_size(p, g->n);
    return true;
}

static void einsum_gemm_run(const einsum_plan *p, const einsum_gemm *g, const kiln_tensor *const *in,
                            kiln_tensor *out, kiln_kernel_ctx *ctx)
{
    int64_t m = label_size(p, g->m), n = label_size(p, g->n), k = label_size(p, g->k), idx[EINSUM_MAX_LABELS] = {0};
    const float *a = in[0]->data, *b = in[1]->data;
    do {
        int64_t off_a = 0, off_b = 0, off_c = 0;
        for (int j = 0; j < g->n_batch; j++) {
            int l = g->batch[j];
            off_a += idx[l] * p->stride[0][l];
            off_b += idx[l] * p->stride[1][l];
            off_c += idx[l] * g->out_stride[l];
        }
        kiln_gemm_f32_operand op_a = {a + off_a, label_stride(p, 0, g->m), label_stride(p, 0, g->k)};
        kiln_gemm_f32_operand op_b = {b + off_b, label_stride(p, 1, g->k), label_stride(p, 1, g->n)};
        kiln_gemm_f32_parallel(m, n, k, 1.0f, op_a, op_b, 0.0f, (float *)out->data + off_c, g->ldc, ctx->scratch, ctx);
    } while (odometer_next(p, g->batch, g->n_batch, idx));
}

static kiln_status einsum_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                size_t *scratch_size)
{
    if (!out[0]) return KILN_ERROR_INVALID_ARGUMENT;
    einsum_plan p;
    KILN_TRY(plan_make(node, in, &p));
    if (!kiln_reduce_row_dtype_ok(in[0]->dtype)) return KILN_ERROR_NOT_SUPPORTED;
    int64_t shape[KILN_MAX_RANK];
    for (int k = 0; k < p.n_out; k++) shape[k] = p.size[p.out[k]];
    kiln_tensor_set_shape(out[0], in[0]->dtype, (uint32_t)p.n_out, shape);
    einsum_gemm g;
    if (gemm_form(&p, in[0]->dtype, &g))
        *scratch_size = kiln_gemm_f32_scratch_size(label_size(&p, g.m), label_size(&p, g.n), label_size(&p, g.k));
    return kiln_tensor_numel(out[0]) < 0 ? KILN_ERROR_LIMIT : KILN_OK;
}

static kiln_status einsum_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                              kiln_kernel_ctx *ctx)
{
    einsum_plan p;
    KILN_TRY(plan_make(node, in, &p));
    einsum_gemm g;
    if (gemm_form(&p, in[0]->dtype, &g)) {
        einsum_gemm_run(&p, &g, in, out[0], ctx);
        return KILN_OK;
    }
    bool is_float = kiln_reduce_row_is_float(in[0]->dtype);
    int64_t n_out = kiln_numel(out[0]), idx[EINSUM_MAX_LABELS] = {0};
    for (int l = 0; l < p.n_labels; l++)
        if (p.size[l] == 0) {
            /* An empty summed label gives zeros; an empty output label, no elements. */
            for (int64_t o = 0; o < n_out; o++) kiln_reduce_row_store_f64(out[0], o, 1, 1, &(double){0.0});
            return KILN_OK;
        }
    for (int64_t o = 0; o < n_out; o++) {
        double acc_f = 0.0;
        uint64_t acc_i = 0;
        do {
            double prod_f = 1.0;
            uint64_t prod_i = 1;
            for (size_t i = 0; i < p.n_inputs; i++) {
                int64_t off = 0;
                for (int l = 0; l < p.n_labels; l++) off += idx[l] * p.stride[i][l];
                if (is_float) prod_f *= kiln_tensor_get_f64(in[i], off);
                else prod_i *= (uint64_t)kiln_tensor_get_i64(in[i], off);
            }
            acc_f += prod_f;
            acc_i += prod_i;
        } while (odometer_next(&p, p.sum, p.n_sum, idx));
        if (is_float) kiln_reduce_row_store_f64(out[0], o, 1, 1, &acc_f);
        else kiln_reduce_row_store_i64(out[0], o, 1, 1, &(int64_t){(int64_t)acc_i});
        odometer_next(&p, p.out, p.n_out, idx);
    }
    return KILN_OK;
}

const kiln_kernel kiln_kernels_einsum[] = {
    {"Einsum", 12, einsum_infer, einsum_run, {{0, 1, KILN_ARITY_ANY, 1, 1}}, "equation:s"},
    {0},
};
