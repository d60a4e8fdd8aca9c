/* f32-elementwise-driver.c — UNARY, BINARY and CHANNEL_AFFINE over the kit's row functions.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags. Binary broadcasting first
 * coalesces the dims (drops size-1 dims, merges neighbours both operands walk contiguously),
 * so the common cases — same shape, a scalar, a per-channel vector — become one long row or a
 * few long rows for the kit's vector loop; the odometer below only walks what is left.
 */
#include <string.h>

#include "backends/cpu/kernels/kernel_kit.h"

kiln_status kiln_cpu_unary_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_unary_params *p = params;
    const float *x = in[0]->data;
    float *y = out[0]->data;
    if (p->count <= 0) return KILN_OK;
    if (!kiln_cpu_act_is_identity(&p->act)) kit->act(&p->act, x, y, (size_t)p->count);
    else if (x != y) memmove(y, x, (size_t)p->count * sizeof(float));
    return KILN_OK;
}

/* The binary iteration space after coalescing: rank >= 1, out dense. */
typedef struct bin_space {
    int rank;
    int64_t shape[KILN_CPU_MAX_RANK], sa[KILN_CPU_MAX_RANK], sb[KILN_CPU_MAX_RANK];
} bin_space;

static void bin_coalesce(const kiln_cpu_binary_params *p, bin_space *s)
{
    int r = 0;
    for (uint32_t d = 0; d < p->rank; d++) {
        if (p->out_shape[d] == 1) continue;
        int64_t n = p->out_shape[d], a = p->a_strides[d], b = p->b_strides[d];
        if (r > 0 && s->sa[r - 1] == a * n && s->sb[r - 1] == b * n) {
            s->shape[r - 1] *= n;
            s->sa[r - 1] = a;
            s->sb[r - 1] = b;
            continue;
        }
        s->shape[r] = n;
        s->sa[r] = a;
        s->sb[r] = b;
        r++;
    }
    if (r == 0) {
        s->shape[0] = 1;
        s->sa[0] = s->sb[0] = 0;
        r = 1;
    }
    s->rank = r;
}

kiln_status kiln_cpu_binary_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_binary_params *p = params;
    for (uint32_t d = 0; d < p->rank; d++)
        if (p->out_shape[d] == 0) return KILN_OK;
    bin_space s;
    bin_coalesce(p, &s);
    const float *a = in[0]->data, *b = in[1]->data;
    float *y = out[0]->data;
    int inner = s.rank - 1;
    int64_t n = s.shape[inner], rows = 1;
    for (int d = 0; d < inner; d++) rows *= s.shape[d];
    int64_t idx[KILN_CPU_MAX_RANK] = {0}, a_off = 0, b_off = 0;
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * n;
        kit->binary(p->kind, a + a_off, s.sa[inner], b + b_off, s.sb[inner], yr, (size_t)n);
        if (!kiln_cpu_act_is_identity(&p->act)) kit->act(&p->act, yr, yr, (size_t)n);
        /* Odometer over the outer dims, innermost first. */
        for (int d = inner - 1; d >= 0; d--) {
            a_off += s.sa[d];
            b_off += s.sb[d];
            if (++idx[d] < s.shape[d]) break;
            a_off -= s.sa[d] * s.shape[d];
            b_off -= s.sb[d] * s.shape[d];
            idx[d] = 0;
        }
    }
    return KILN_OK;
}

kiln_status kiln_cpu_affine_step(const kiln_cpu_kit *kit, const void *params, const kiln_tensor *const *in,
                                 kiln_tensor *const *out, kiln_cpu_exec *exec)
{
    const kiln_cpu_affine_params *p = params;
    const float *x = in[0]->data, *scale = in[1]->data, *shift = in[2]->data;
    float *y = out[0]->data;
    for (int64_t n = 0; n < p->N; n++) {
        for (int64_t c = 0; c < p->C; c++) {
            int64_t off = (n * p->C + c) * p->inner;
            kit->scale_shift(x + off, scale[c], shift[c], y + off, (size_t)p->inner);
            if (!kiln_cpu_act_is_identity(&p->act)) kit->act(&p->act, y + off, y + off, (size_t)p->inner);
        }
    }
    return KILN_OK;
}
