/* f32-vbinary.h — TEMPLATE: binary rows (kiln_cpu_binary_fn) and scale-shift rows
 * (kiln_cpu_scale_shift_fn) of an ISA, defining KILN_CPU_ISA(f32_vbinary) and
 * KILN_CPU_ISA(f32_vscaleshift); include after the ISA's vector layer.
 *
 * Layer: backends/cpu/kernels (template). The contiguous forms the broadcast driver produces
 * after coalescing — both operands walking (1, 1), or one of them a broadcast scalar (1, 0) /
 * (0, 1) — are vectorised; other strides and Pow go to the generic scalar loop, which defines
 * the semantics (Max/Min propagate NaN from either side).
 */
#include "backends/cpu/kernels/generic/kernels-generic.h"

static inline vf vbinary_op(uint32_t kind, vf a, vf b)
{
    switch (kind) {
    case KILN_CPU_BIN_ADD: return vf_add(a, b);
    case KILN_CPU_BIN_SUB: return vf_sub(a, b);
    case KILN_CPU_BIN_MUL: return vf_mul(a, b);
    case KILN_CPU_BIN_DIV: return vf_div(a, b);
    /* vf_max(a, b) already gives b when b is NaN; a NaN a must win too. */
    case KILN_CPU_BIN_MAX: return vf_select(vm_isnan(a), vf_max(a, b), a);
    default: return vf_select(vm_isnan(a), vf_min(a, b), a); /* MIN */
    }
}

/* One loop per (kind, stride pattern); `LOAD_A`/`LOAD_B` read the operand vector at i. */
#define VBINARY_LOOP(KIND, LOAD_A, LOAD_B, PART_A, PART_B)                                       \
    do {                                                                                         \
        size_t i = 0;                                                                            \
        for (; i + VF_WIDTH <= n; i += VF_WIDTH) vf_storeu(y + i, vbinary_op(KIND, LOAD_A, LOAD_B)); \
        if (i < n) vf_store_part(y + i, vbinary_op(KIND, PART_A, PART_B), n - i);               \
    } while (0)

#define VBINARY_DISPATCH(LOAD_A, LOAD_B, PART_A, PART_B)                                         \
    switch (kind) {                                                                              \
    case KILN_CPU_BIN_ADD: VBINARY_LOOP(KILN_CPU_BIN_ADD, LOAD_A, LOAD_B, PART_A, PART_B); break; \
    case KILN_CPU_BIN_SUB: VBINARY_LOOP(KILN_CPU_BIN_SUB, LOAD_A, LOAD_B, PART_A, PART_B); break; \
    case KILN_CPU_BIN_MUL: VBINARY_LOOP(KILN_CPU_BIN_MUL, LOAD_A, LOAD_B, PART_A, PART_B); break; \
    case KILN_CPU_BIN_DIV: VBINARY_LOOP(KILN_CPU_BIN_DIV, LOAD_A, LOAD_B, PART_A, PART_B); break; \
    case KILN_CPU_BIN_MAX: VBINARY_LOOP(KILN_CPU_BIN_MAX, LOAD_A, LOAD_B, PART_A, PART_B); break; \
    default: VBINARY_LOOP(KILN_CPU_BIN_MIN, LOAD_A, LOAD_B, PART_A, PART_B); break;             \
    }

void KILN_CPU_ISA(f32_vbinary)(uint32_t kind, const float *a, int64_t sa, const float *b, int64_t sb, float *y,
                               size_t n)
{
    KILN_CONTRACT(n == 0 || (a != NULL && b != NULL && y != NULL));
    if (kind > KILN_CPU_BIN_MIN || !((sa == 1 && sb == 1) || (sa == 1 && sb == 0) || (sa == 0 && sb == 1))) {
        kiln_cpu_f32_vbinary__generic(kind, a, sa, b, sb, y, n);
        return;
    }
    if (sa == 1 && sb == 1) {
        VBINARY_DISPATCH(vf_loadu(a + i), vf_loadu(b + i), vf_load_part(a + i, n - i), vf_load_part(b + i, n - i))
    } else if (sa == 1) {
        const vf vb = vf_set1(b[0]);
        VBINARY_DISPATCH(vf_loadu(a + i), vb, vf_load_part(a + i, n - i), vb)
    } else {
        const vf va = vf_set1(a[0]);
        VBINARY_DISPATCH(va, vf_loadu(b + i), va, vf_load_part(b + i, n - i))
    }
}

void KILN_CPU_ISA(f32_vscaleshift)(const float *x, float scale, float shift, float *y, size_t n)
{
    KILN_CONTRACT(n == 0 || (x != NULL && y != NULL));
    const vf s = vf_set1(scale), t = vf_set1(shift);
    size_t i = 0;
    for (; i + VF_WIDTH <= n; i += VF_WIDTH) vf_storeu(y + i, vf_fmadd(vf_loadu(x + i), s, t));
    if (i < n) vf_store_part(y + i, vf_fmadd(vf_load_part(x + i, n - i), s, t), n - i);
}

#undef VBINARY_DISPATCH
#undef VBINARY_LOOP
