/* f32-pack-rows-generic.c — the generic table's row-panel packing (kiln_cpu_pack_rows_fn, and
 * of a sum of rows: kiln_cpu_pack_rows_sum_fn) in plain C: each row read once and written down
 * its panel lane.
 *
 * Layer: backends/cpu/kernels/generic. The vector tables gather a panel row per k instead
 * (x86/f32-pack-rows-sse.h); all write the same panel.
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

void kiln_cpu_f32_pack_rows__generic(const float *src, int64_t rs, int64_t live, int64_t kc, uint32_t width,
                                     float *dst)
{
    KILN_CONTRACT(live >= 0 && live <= (int64_t)width && kc >= 0 && (live == 0 || (src != NULL && dst != NULL)));
    for (int64_t i = 0; i < live; i++) {
        const float *row = src + i * rs;
        for (int64_t k = 0; k < kc; k++) dst[k * width + i] = row[k];
    }
}

void kiln_cpu_f32_pack_rows_sum__generic(const float *x, const float *y, float sign, int64_t rs, int64_t live,
                                         int64_t kc, uint32_t width, float *dst)
{
    KILN_CONTRACT(live >= 0 && live <= (int64_t)width && kc >= 0 && (live == 0 || (x && y && dst)));
    for (int64_t i = 0; i < live; i++) {
        const float *xi = x + i * rs, *yi = y + i * rs;
        for (int64_t k = 0; k < kc; k++) dst[k * width + i] = xi[k] + sign * yi[k];
    }
}
