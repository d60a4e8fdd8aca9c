/* f32-pack-rows.h — TEMPLATE: row-panel packing (kiln_cpu_pack_rows_fn) by 4 x 4 transposes;
 * defines KILN_CPU_ISA(f32_pack_rows). Include after the ISA's vector layer.
 *
 * Layer: backends/cpu/kernels (template, x86 only: it uses 128-bit SSE registers, which every
 * table that includes it has). Panel row k (width floats at dst + k * width) holds element k of
 * every row. Four rows by four k at a time: four loads, one in-register transpose, four stores
 * of four floats — where the plain loop stores one float per element and was about a tenth of a
 * small-M GEMM's time (the BERT-like encoder); a gather per panel row measured slower still.
 * The rows and k past the last whole block take the plain loop.
 */
#include <immintrin.h>

void KILN_CPU_ISA(f32_pack_rows)(const float *src, int64_t rs, int64_t live, int64_t kc, uint32_t width, float *dst)
{
    int64_t i = 0;
    for (; i + 4 <= live; i += 4) {
        const float *r0 = src + i * rs, *r1 = r0 + rs, *r2 = r1 + rs, *r3 = r2 + rs;
        float *out = dst + i;
        int64_t k = 0;
        for (; k + 4 <= kc; k += 4) {
            __m128 a = _mm_loadu_ps(r0 + k), b = _mm_loadu_ps(r1 + k), c = _mm_loadu_ps(r2 + k),
                   d = _mm_loadu_ps(r3 + k);
            _MM_TRANSPOSE4_PS(a, b, c, d);
            _mm_storeu_ps(out + k * width, a);
            _mm_storeu_ps(out + (k + 1) * width, b);
            _mm_storeu_ps(out + (k + 2) * width, c);
            _mm_storeu_ps(out + (k + 3) * width, d);
        }
        for (; k < kc; k++) {
            out[k * width] = r0[k];
            out[k * width + 1] = r1[k];
            out[k * width + 2] = r2[k];
            out[k * width + 3] = r3[k];
        }
    }
    for (; i < live; i++) {
        const float *row = src + i * rs;
        for (int64_t k = 0; k < kc; k++) dst[k * width + i] = row[k];
    }
}
