/* f32-pack-rows-sse.h — TEMPLATE (x86): row-panel packing (kiln_cpu_pack_rows_fn) by 4 x 4 transposes, and
 * the same of the sum of two row sets (kiln_cpu_pack_rows_sum_fn); defines
 * KILN_CPU_ISA(f32_pack_rows) and KILN_CPU_ISA(f32_pack_rows_sum). Include after the ISA's
 * vector layer.
 *
 * Layer: backends/cpu/kernels/x86: templates of the x86 ISA directories only (avx2/, avx512/),
 * which CMakeLists.txt builds only for an x86 processor: it uses 128-bit SSE registers, which
 * every table that includes it has. Panel row k (width floats at dst + k * width) holds element k of
 * every row. Four rows by four k at a time: four loads, one in-register transpose, four stores
 * of four floats — where the plain loop stores one float per element and was about a tenth of a
 * small-M GEMM's time (the BERT-like encoder); a gather per panel row measured slower still.
 * The rows and k past the last whole block take the plain loop. The sum form adds sign * y's
 * rows as it loads x's (Strassen's A sums: adding first, through a row buffer, cost about twice
 * the packing at half sizes of 512).
 */
#include <immintrin.h>

/* x + sign * y (y NULL: x alone) packed; inlined twice, so the one-operand loop has no add. */
static inline __attribute__((always_inline)) void pack_rows_core(const float *x, const float *y, float sign,
                                                                 int64_t rs, int64_t live, int64_t kc,
                                                                 uint32_t width, float *dst)
{
    const __m128 s = _mm_set1_ps(sign);
#define PACK_LOAD(r, k) (y ? _mm_add_ps(_mm_loadu_ps(x + (r) * rs + (k)), _mm_mul_ps(s, _mm_loadu_ps(y + (r) * rs + (k)))) \
                           : _mm_loadu_ps(x + (r) * rs + (k)))
#define PACK_ONE(r, k) (y ? x[(r) * rs + (k)] + sign * y[(r) * rs + (k)] : x[(r) * rs + (k)])
    int64_t i = 0;
    for (; i + 4 <= live; i += 4) {
        float *out = dst + i;
        int64_t k = 0;
        for (; k + 4 <= kc; k += 4) {
            __m128 a = PACK_LOAD(i, k), b = PACK_LOAD(i + 1, k), c = PACK_LOAD(i + 2, k), d = PACK_LOAD(i + 3, k);
            _MM_TRANSPOSE4_PS(a, b, c, d);
            _mm_storeu_ps(out + k * width, a);
            _mm_storeu_ps(out + (k + 1) * width, b);
            _mm_storeu_ps(out + (k + 2) * width, c);
            _mm_storeu_ps(out + (k + 3) * width, d);
        }
        for (; k < kc; k++)
            for (int64_t r = 0; r < 4; r++) out[k * width + r] = PACK_ONE(i + r, k);
    }
    for (; i < live; i++)
        for (int64_t k = 0; k < kc; k++) dst[k * width + i] = PACK_ONE(i, k);
#undef PACK_LOAD
#undef PACK_ONE
}

void KILN_CPU_ISA(f32_pack_rows)(const float *src, int64_t rs, int64_t live, int64_t kc, uint32_t width, float *dst)
{
    KILN_CONTRACT(live >= 0 && live <= (int64_t)width && kc >= 0 && (live == 0 || (src != NULL && dst != NULL)));
    pack_rows_core(src, NULL, 0.0f, rs, live, kc, width, dst);
}

void KILN_CPU_ISA(f32_pack_rows_sum)(const float *x, const float *y, float sign, int64_t rs, int64_t live, int64_t kc,
                                     uint32_t width, float *dst)
{
    KILN_CONTRACT(live >= 0 && live <= (int64_t)width && kc >= 0 && (live == 0 || (x && y && dst)));
    pack_rows_core(x, y, sign, rs, live, kc, width, dst);
}
