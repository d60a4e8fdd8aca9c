/* pack.c — weight packing into the panel layouts of the GEMM microkernels (see cpu_kernels.h).
 * Layer: backends/cpu/kernels. Plain C: it runs ahead of time in the compiler; at run time the
 * GEMM driver packs activations with its own loops (f32-gemm-driver.c) into the same layout.
 * The size functions double as validation helpers for untrusted params, so they saturate to
 * SIZE_MAX on negative dims, a zero panel width or overflow instead of wrapping. */
#include <string.h>

#include "backends/cpu/kernels/cpu_kernels.h"

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "64-bit size_t assumed");

/* ceil(rows / width) * width * cols floats, in bytes; SIZE_MAX when not representable. */
static size_t panels_bytes(int64_t rows, int64_t cols, uint32_t width)
{
    if (rows < 0 || cols < 0 || width == 0) return SIZE_MAX;
    uint64_t panels = ((uint64_t)rows + width - 1) / width, bytes;
    if (__builtin_mul_overflow(panels, (uint64_t)width, &bytes) || __builtin_mul_overflow(bytes, (uint64_t)cols, &bytes) ||
        __builtin_mul_overflow(bytes, (uint64_t)sizeof(float), &bytes))
        return SIZE_MAX;
    return (size_t)bytes;
}

size_t kiln_cpu_pack_b_size(int64_t K, int64_t N, uint32_t nr) { return panels_bytes(N, K, nr); }

void kiln_cpu_pack_b(const float *src, int64_t K, int64_t N, int trans, uint32_t nr, float *dst)
{
    for (int64_t p0 = 0; p0 < N; p0 += nr) {
        for (int64_t k = 0; k < K; k++) {
            for (uint32_t j = 0; j < nr; j++) {
                int64_t n = p0 + j;
                *dst++ = n < N ? (trans ? src[n * K + k] : src[k * N + n]) : 0.0f;
            }
        }
    }
}

/* Strassen's seven products (Strassen 1969), in the order the driver runs them: a product's
   second C quadrant has always had a product already (the microkernel adds into it, c2), and its
   first one gets its first product with a + sign (stored with the bias, as a classical tile). */
const kiln_cpu_strassen_product kiln_cpu_strassen[KILN_CPU_STRASSEN_PRODUCTS] = {
    {{2, 0}, {1, -1}, {0, 1}, {1, 1}, {3, 0}, {1, 0}},  /* (A21 - A11)(B11 + B12): C22 */
    {{1, 3}, {1, -1}, {2, 3}, {1, 1}, {0, 0}, {1, 0}},  /* (A12 - A22)(B21 + B22): C11 */
    {{2, 3}, {1, 1}, {0, 0}, {1, 0}, {2, 3}, {1, -1}},  /* (A21 + A22) B11: C21, -C22 */
    {{0, 0}, {1, 0}, {1, 3}, {1, -1}, {1, 3}, {1, 1}},  /* A11 (B12 - B22): C12, C22 */
    {{0, 3}, {1, 1}, {0, 3}, {1, 1}, {0, 3}, {1, 1}},   /* (A11 + A22)(B11 + B22): C11, C22 */
    {{3, 0}, {1, 0}, {2, 0}, {1, -1}, {0, 2}, {1, 1}},  /* A22 (B21 - B11): C11, C21 */
    {{0, 1}, {1, 1}, {3, 0}, {1, 0}, {0, 1}, {-1, 1}},  /* (A11 + A12) B22: -C11, C12 */
};

size_t kiln_cpu_pack_b_strassen_size(int64_t K, int64_t N, uint32_t nr)
{
    if (K < 0 || N < 0 || K % 2 || N % 2) return SIZE_MAX;
    size_t one = panels_bytes(N / 2, K / 2, nr);
    return one == SIZE_MAX || one > SIZE_MAX / KILN_CPU_STRASSEN_PRODUCTS ? SIZE_MAX
                                                                          : KILN_CPU_STRASSEN_PRODUCTS * one;
}

void kiln_cpu_pack_b_strassen(const float *src, int64_t K, int64_t N, int trans, uint32_t nr, float *dst)
{
    const int64_t hk = K / 2, hn = N / 2;
    for (int q = 0; q < KILN_CPU_STRASSEN_PRODUCTS; q++) {
        const kiln_cpu_strassen_product *pr = &kiln_cpu_strassen[q];
        for (int64_t p0 = 0; p0 < hn; p0 += nr) {
            for (int64_t k = 0; k < hk; k++) {
                for (uint32_t j = 0; j < nr; j++) {
                    int64_t n = p0 + j;
                    float v = 0.0f;
                    for (int t = 0; t < 2 && n < hn; t++) {
                        if (!pr->b_sign[t]) continue;
                        int64_t r = k + pr->b_quad[t] / 2 * hk, c = n + pr->b_quad[t] % 2 * hn;
                        v += (float)pr->b_sign[t] * (trans ? src[c * K + r] : src[r * N + c]);
                    }
                    *dst++ = v;
                }
            }
        }
    }
}

size_t kiln_cpu_pack_b_bf16_size(int64_t K, int64_t N, uint32_t nr)
{
    /* A pair of bf16 is one float's bytes: the f32 layout of ceil(K / 2) rows. */
    return K < 0 ? SIZE_MAX : panels_bytes(N, (K + 1) / 2, nr);
}

void kiln_cpu_panels_to_bf16(const float *src, int64_t K, int64_t panels, uint32_t width, uint32_t *dst)
{
    for (int64_t p = 0; p < panels; p++, src += K * width) {
        for (int64_t k = 0; k < K; k += 2) {
            for (uint32_t j = 0; j < width; j++) {
                uint32_t lo = kiln_cpu_f32_to_bf16(src[k * width + j]);
                uint32_t hi = k + 1 < K ? kiln_cpu_f32_to_bf16(src[(k + 1) * width + j]) : 0;
                *dst++ = lo | hi << 16;
            }
        }
    }
}

void kiln_cpu_pack_b_bf16(const float *src, int64_t K, int64_t N, int trans, uint32_t nr, uint32_t *dst)
{
    for (int64_t p0 = 0; p0 < N; p0 += nr) {
        for (int64_t k = 0; k < K; k += 2) {
            for (uint32_t j = 0; j < nr; j++) {
                int64_t n = p0 + j;
                uint32_t lo = 0, hi = 0;
                if (n < N) {
                    lo = kiln_cpu_f32_to_bf16(trans ? src[n * K + k] : src[k * N + n]);
                    if (k + 1 < K) hi = kiln_cpu_f32_to_bf16(trans ? src[n * K + k + 1] : src[(k + 1) * N + n]);
                }
                *dst++ = lo | hi << 16;
            }
        }
    }
}

size_t kiln_cpu_pack_a_size(int64_t M, int64_t K, uint32_t mr) { return panels_bytes(M, K, mr); }

void kiln_cpu_pack_a(const float *src, int64_t M, int64_t K, int trans, uint32_t mr, float *dst)
{
    for (int64_t p0 = 0; p0 < M; p0 += mr) {
        for (int64_t k = 0; k < K; k++) {
            for (uint32_t i = 0; i < mr; i++) {
                int64_t m = p0 + i;
                *dst++ = m < M ? (trans ? src[k * M + m] : src[m * K + k]) : 0.0f;
            }
        }
    }
}

size_t kiln_cpu_pack_winograd_size(int64_t M, int64_t C, uint32_t width)
{
    size_t one = kiln_cpu_pack_a_size(M, C, width);
    return one == SIZE_MAX || one > SIZE_MAX / 16 ? SIZE_MAX : 16 * one;
}

void kiln_cpu_pack_winograd(const float *src, int64_t M, int64_t C, uint32_t width, float *dst)
{
    size_t position = kiln_cpu_pack_a_size(M, C, width) / sizeof(float);
    memset(dst, 0, 16 * position * sizeof(float));
    for (int64_t m = 0; m < M; m++) {
        for (int64_t c = 0; c < C; c++) {
            const float *g = src + (m * C + c) * 9;
            /* t = G g (4 x 3), then U = t G^T (4 x 4), in double: the filter is transformed once. */
            double t[4][3], u[4][4];
            for (int j = 0; j < 3; j++) {
                t[0][j] = g[j];
                t[1][j] = 0.5 * ((double)g[j] + g[3 + j] + g[6 + j]);
                t[2][j] = 0.5 * ((double)g[j] - g[3 + j] + g[6 + j]);
                t[3][j] = g[6 + j];
            }
            for (int i = 0; i < 4; i++) {
                u[i][0] = t[i][0];
                u[i][1] = 0.5 * (t[i][0] + t[i][1] + t[i][2]);
                u[i][2] = 0.5 * (t[i][0] - t[i][1] + t[i][2]);
                u[i][3] = t[i][2];
            }
            size_t at = (size_t)(m / width) * (size_t)C * width + (size_t)c * width + (size_t)(m % width);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) dst[(size_t)(i * 4 + j) * position + at] = (float)u[i][j];
        }
    }
}
