/* f32-winograd.h — TEMPLATE: the Winograd F(2x2, 3x3) input and output transforms
 * (kiln_cpu_wino_in_fn, kiln_cpu_wino_out_fn), a vector of tiles at a time; defines
 * KILN_CPU_ISA(f32_wino_in) and KILN_CPU_ISA(f32_wino_out). Include after the ISA's vector layer
 * and template/window-lanes.h.
 *
 * Layer: backends/cpu/kernels (template). Lane i of a vector is tile tw + i of one tile row; its
 * input column for patch column q is 2 * (tw + i) + q - pad_left, a stride-2 window whose lanes
 * window-lanes.h computes (masked at the padding). The transforms are the usual ones:
 *   V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *   Y = A^T M A, A^T = [1 1 1 0; 0 1 -1 -1]
 * d B is taken before B^T (.), and A^T M before (.) A; the plain-C versions
 * (generic/f32-winograd-generic.c) compute the same sums in the same order.
 */
#include <string.h>

/* Tiles from t (< end) that one vector takes: one tile row, at most VF_WIDTH tiles, and not
   across a multiple of `panel` tiles counted from t0 (V's panels). */
static inline int64_t wino_run(int64_t t, int64_t end, int64_t t0, int64_t TW, int64_t panel)
{
    int64_t n = TW - t % TW;
    if (n > end - t) n = end - t;
    if (n > panel - (t - t0) % panel) n = panel - (t - t0) % panel;
    return n > VF_WIDTH ? VF_WIDTH : n;
}

void KILN_CPU_ISA(f32_wino_in)(const kiln_cpu_conv_params *p, const float *x, int64_t t0, int64_t live, uint32_t nr,
                               float *v, size_t v_stride)
{
    KILN_CONTRACT(p != NULL && x != NULL && v != NULL);
    KILN_CONTRACT(t0 >= 0 && live >= 0 && nr >= 1); /* live may span several nr-wide panels */
    const int64_t TW = (p->OW + 1) / 2, plane = p->H * p->W;
    if (live % nr) {
        size_t last = (size_t)(live / nr) * (size_t)p->C * nr;
        for (int pos = 0; pos < 16; pos++) memset(v + pos * v_stride + last, 0, (size_t)p->C * nr * sizeof(float));
    }
    for (int64_t t = t0; t < t0 + live;) {
        int64_t n = wino_run(t, t0 + live, t0, TW, nr), th = t / TW, tw = t % TW, jj = t - t0;
        /* Per patch column q, the input columns its lanes read (none past the input's edges),
           and per patch row whether it lies inside the input: fixed for all channels, so the
           channel loop below runs without a branch on the geometry. */
        vm_cols cols[4];
        int64_t col0 = 2 * tw - p->pad_left, ih0 = 2 * th - p->pad_top;
        for (int q = 0; q < 4; q++) {
            int64_t lo, hi;
            win_columns(q - p->pad_left, 2, p->W, TW, &lo, &hi);
            win_lanes l = win_lanes_of(tw, (size_t)n, lo, hi);
            cols[q] = vm_even_cols(l.a >= l.b ? vm_first_mask(0) : l.full ? vm_first_mask((size_t)n) : l.m);
        }
        bool row_in[4];
        for (int r = 0; r < 4; r++) row_in[r] = ih0 + r >= 0 && ih0 + r < p->H;
        float *dst = v + (size_t)(jj / nr) * (size_t)p->C * nr + (size_t)(jj % nr);
        for (int64_t c = 0; c < p->C; c++, dst += nr) {
            /* d B row by row (4 loads, 4 results live), then B^T of those: 20 vectors live, not
               32, so nothing spills. */
            vf w[4][4];
            for (int r = 0; r < 4; r++) {
                vf d[4] = {vf_zero(), vf_zero(), vf_zero(), vf_zero()};
                if (row_in[r]) {
                    uintptr_t row = (uintptr_t)(x + c * plane + (ih0 + r) * p->W);
                    for (int q = 0; q < 4; q++)
                        d[q] = vf_load_even_cols(row + (uintptr_t)((col0 + q) * (int64_t)sizeof(float)), cols[q]);
                }
                w[r][0] = vf_sub(d[0], d[2]);
                w[r][1] = vf_add(d[1], d[2]);
                w[r][2] = vf_sub(d[2], d[1]);
                w[r][3] = vf_sub(d[1], d[3]);
            }
            for (int q = 0; q < 4; q++) {
                float *col = dst + (size_t)q * v_stride;
                win_store(col, vf_sub(w[0][q], w[2][q]), (size_t)n);
                win_store(col + 4 * v_stride, vf_add(w[1][q], w[2][q]), (size_t)n);
                win_store(col + 8 * v_stride, vf_sub(w[2][q], w[1][q]), (size_t)n);
                win_store(col + 12 * v_stride, vf_sub(w[1][q], w[3][q]), (size_t)n);
            }
        }
        t += n;
    }
}

/* Output columns ow0.. of one row: a0 b0 a1 b1 ... (count <= 2 * VF_WIDTH values), plus the
   residual row at res (NULL: none), then ReLU when asked (as f32_vact's vf_max(x, 0)). */
static inline void wino_store_pair(float *y, const float *res, vf a, vf b, int64_t count, bool relu)
{
    vf lo, hi;
    vf_interleave(a, b, &lo, &hi);
    size_t n0 = (size_t)(count < VF_WIDTH ? count : VF_WIDTH), n1 = (size_t)(count > VF_WIDTH ? count - VF_WIDTH : 0);
    if (res) {
        lo = vf_add(lo, vf_load_part(res, n0));
        if (n1) hi = vf_add(hi, vf_load_part(res + VF_WIDTH, n1));
    }
    if (relu) {
        lo = vf_max(lo, vf_zero());
        hi = vf_max(hi, vf_zero());
    }
    win_store(y, lo, n0);
    if (n1) win_store(y + VF_WIDTH, hi, n1);
}

void KILN_CPU_ISA(f32_wino_out)(const kiln_cpu_conv_params *p, const float *m, size_t m_stride, int64_t ldm,
                                int64_t rows, int64_t t0, int64_t live, const float *bias, const float *res,
                                float *y)
{
    KILN_CONTRACT(p != NULL && m != NULL && y != NULL);
    KILN_CONTRACT(t0 >= 0 && live >= 0 && live <= ldm && rows >= 0);
    const int64_t TW = (p->OW + 1) / 2, plane = p->OH * p->OW;
    /* ReLU (ResNet's) is applied in registers; other activations run over the stored row. */
    const bool relu = p->act.kind == KILN_CPU_ACT_RELU;
    const bool act = !relu && !kiln_cpu_act_is_identity(&p->act);
    for (int64_t t = t0; t < t0 + live;) {
        int64_t n = wino_run(t, t0 + live, t0, TW, VF_WIDTH), th = t / TW, tw = t % TW, jj = t - t0;
        int64_t oh = 2 * th, ow = 2 * tw, count = 2 * n < p->OW - ow ? 2 * n : p->OW - ow;
        for (int64_t r = 0; r < rows; r++) {
            const float *mr = m + r * ldm + jj;
            vf s0[4], s1[4];
            for (int q = 0; q < 4; q++) {
                vf m0 = vf_load_part(mr + q * m_stride, (size_t)n), m1 = vf_load_part(mr + (4 + q) * m_stride, (size_t)n);
                vf m2 = vf_load_part(mr + (8 + q) * m_stride, (size_t)n);
                vf m3 = vf_load_part(mr + (12 + q) * m_stride, (size_t)n);
                s0[q] = vf_add(vf_add(m0, m1), m2);
                s1[q] = vf_sub(vf_sub(m1, m2), m3);
            }
            const vf b = vf_set1(bias ? bias[r] : 0.0f);
            const int64_t at = r * plane + oh * p->OW + ow;
            float *out = y + at;
            wino_store_pair(out, res ? res + at : NULL, vf_add(vf_add(vf_add(s0[0], s0[1]), s0[2]), b),
                            vf_add(vf_sub(vf_sub(s0[1], s0[2]), s0[3]), b), count, relu);
            if (act) KILN_CPU_ISA(f32_vact)(&p->act, out, out, (size_t)count);
            if (oh + 1 >= p->OH) continue;
            wino_store_pair(out + p->OW, res ? res + at + p->OW : NULL, vf_add(vf_add(vf_add(s1[0], s1[1]), s1[2]), b),
                            vf_add(vf_sub(vf_sub(s1[1], s1[2]), s1[3]), b), count, relu);
            if (act) KILN_CPU_ISA(f32_vact)(&p->act, out + p->OW, out + p->OW, (size_t)count);
        }
        t += n;
    }
}
