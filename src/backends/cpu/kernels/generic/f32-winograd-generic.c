/* f32-winograd-generic.c — the generic table's Winograd F(2x2, 3x3) transforms
 * (kiln_cpu_wino_in_fn, kiln_cpu_wino_out_fn) in plain C, tile by tile.
 *
 * Layer: backends/cpu/kernels/generic. The same sums in the same order as the vector versions
 * (template/f32-winograd.h; d B before B^T (.), A^T M before (.) A):
 *   V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *   Y = A^T M A, A^T = [1 1 1 0; 0 1 -1 -1]
 */
#include <string.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

void kiln_cpu_f32_wino_in__generic(const kiln_cpu_conv_params *p, const float *x, int64_t t0, int64_t live,
                                   uint32_t nr, float *v, size_t v_stride)
{
    const int64_t TW = (p->OW + 1) / 2, plane = p->H * p->W;
    if (live % nr) {
        size_t last = (size_t)(live / nr) * (size_t)p->C * nr;
        for (int pos = 0; pos < 16; pos++) memset(v + pos * v_stride + last, 0, (size_t)p->C * nr * sizeof(float));
    }
    for (int64_t jj = 0; jj < live; jj++) {
        int64_t t = t0 + jj, ih0 = 2 * (t / TW) - p->pad_top, iw0 = 2 * (t % TW) - p->pad_left;
        float *dst = v + (size_t)(jj / nr) * (size_t)p->C * nr + (size_t)(jj % nr);
        for (int64_t c = 0; c < p->C; c++, dst += nr) {
            float w[4][4];
            for (int r = 0; r < 4; r++) {
                float d[4];
                for (int q = 0; q < 4; q++) {
                    int64_t ih = ih0 + r, iw = iw0 + q;
                    d[q] = ih >= 0 && ih < p->H && iw >= 0 && iw < p->W ? x[c * plane + ih * p->W + iw] : 0.0f;
                }
                w[r][0] = d[0] - d[2];
                w[r][1] = d[1] + d[2];
                w[r][2] = d[2] - d[1];
                w[r][3] = d[1] - d[3];
            }
            for (int q = 0; q < 4; q++) {
                float *col = dst + (size_t)q * v_stride;
                col[0] = w[0][q] - w[2][q];
                col[4 * v_stride] = w[1][q] + w[2][q];
                col[8 * v_stride] = w[2][q] - w[1][q];
                col[12 * v_stride] = w[1][q] - w[3][q];
            }
        }
    }
}

void kiln_cpu_f32_wino_out__generic(const kiln_cpu_conv_params *p, const float *m, size_t m_stride, int64_t ldm,
                                    int64_t rows, int64_t t0, int64_t live, const float *bias, const float *res,
                                    float *y)
{
    const int64_t TW = (p->OW + 1) / 2, plane = p->OH * p->OW;
    for (int64_t r = 0; r < rows; r++) {
        const float b = bias ? bias[r] : 0.0f;
        for (int64_t jj = 0; jj < live; jj++) {
            int64_t t = t0 + jj, oh = 2 * (t / TW), ow = 2 * (t % TW);
            const float *mr = m + r * ldm + jj;
            float s[2][4], out[2][2];
            for (int q = 0; q < 4; q++) {
                float m0 = mr[q * m_stride], m1 = mr[(4 + q) * m_stride], m2 = mr[(8 + q) * m_stride],
                      m3 = mr[(12 + q) * m_stride];
                s[0][q] = m0 + m1 + m2;
                s[1][q] = m1 - m2 - m3;
            }
            for (int i = 0; i < 2; i++) {
                out[i][0] = s[i][0] + s[i][1] + s[i][2] + b;
                out[i][1] = s[i][1] - s[i][2] - s[i][3] + b;
            }
            for (int i = 0; i < 2 && oh + i < p->OH; i++)
                for (int j = 0; j < 2 && ow + j < p->OW; j++) {
                    int64_t at = r * plane + (oh + i) * p->OW + ow + j;
                    y[at] = kiln_cpu_f32_act_scalar(&p->act, res ? out[i][j] + res[at] : out[i][j]);
                }
        }
    }
}
