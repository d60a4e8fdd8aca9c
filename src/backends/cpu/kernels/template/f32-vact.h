/* f32-vact.h — TEMPLATE: the activation rows (kiln_cpu_act_fn) of an ISA, defining
 * KILN_CPU_ISA(f32_vact); include after the ISA's vector layer, f32-vmath.h and f32-vact-vec.h.
 *
 * Layer: backends/cpu/kernels (template). One loop per kind so the kind is not re-decided per
 * vector (vact_kind's switch folds away on a constant kind); the tail is one partial vector.
 * The expressions, and how each follows generic/f32-vact-generic.c, are in f32-vact-vec.h.
 */

#define VACT_LOOP(EXPR)                                                                          \
    do {                                                                                         \
        size_t i = 0;                                                                            \
        for (; i + VF_WIDTH <= n; i += VF_WIDTH) {                                               \
            vf x = vf_loadu(in + i);                                                             \
            vf_storeu(out + i, (EXPR));                                                          \
        }                                                                                        \
        if (i < n) {                                                                             \
            vf x = vf_load_part(in + i, n - i);                                                  \
            vf_store_part(out + i, (EXPR), n - i);                                               \
        }                                                                                        \
    } while (0)

void KILN_CPU_ISA(f32_vact)(const kiln_cpu_act *act, const float *in, float *out, size_t n)
{
    KILN_CONTRACT(act != NULL && (n == 0 || (in != NULL && out != NULL)));
    KILN_CONTRACT(in == out || (uintptr_t)in + n * sizeof(float) <= (uintptr_t)out ||
                  (uintptr_t)out + n * sizeof(float) <= (uintptr_t)in); /* in place, or apart */
    const vf alpha = vf_set1(act->alpha), beta = vf_set1(act->beta);
    switch (act->kind) {
    case KILN_CPU_ACT_RELU: VACT_LOOP(vact_kind(KILN_CPU_ACT_RELU, x, alpha, beta)); break;
    case KILN_CPU_ACT_LEAKY_RELU: VACT_LOOP(vact_kind(KILN_CPU_ACT_LEAKY_RELU, x, alpha, beta)); break;
    case KILN_CPU_ACT_CLIP: VACT_LOOP(vact_kind(KILN_CPU_ACT_CLIP, x, alpha, beta)); break;
    case KILN_CPU_ACT_SIGMOID: VACT_LOOP(vact_kind(KILN_CPU_ACT_SIGMOID, x, alpha, beta)); break;
    case KILN_CPU_ACT_TANH: VACT_LOOP(vact_kind(KILN_CPU_ACT_TANH, x, alpha, beta)); break;
    case KILN_CPU_ACT_HARD_SIGMOID: VACT_LOOP(vact_kind(KILN_CPU_ACT_HARD_SIGMOID, x, alpha, beta)); break;
    case KILN_CPU_ACT_HARD_SWISH: VACT_LOOP(vact_kind(KILN_CPU_ACT_HARD_SWISH, x, alpha, beta)); break;
    case KILN_CPU_ACT_GELU_ERF: VACT_LOOP(vact_kind(KILN_CPU_ACT_GELU_ERF, x, alpha, beta)); break;
    case KILN_CPU_ACT_GELU_TANH: VACT_LOOP(vact_kind(KILN_CPU_ACT_GELU_TANH, x, alpha, beta)); break;
    case KILN_CPU_ACT_SILU: VACT_LOOP(vact_kind(KILN_CPU_ACT_SILU, x, alpha, beta)); break;
    case KILN_CPU_ACT_ELU: VACT_LOOP(vact_kind(KILN_CPU_ACT_ELU, x, alpha, beta)); break;
    case KILN_CPU_ACT_EXP: VACT_LOOP(vact_kind(KILN_CPU_ACT_EXP, x, alpha, beta)); break;
    case KILN_CPU_ACT_LOG: VACT_LOOP(vact_kind(KILN_CPU_ACT_LOG, x, alpha, beta)); break;
    case KILN_CPU_ACT_SQRT: VACT_LOOP(vact_kind(KILN_CPU_ACT_SQRT, x, alpha, beta)); break;
    case KILN_CPU_ACT_NEG: VACT_LOOP(vact_kind(KILN_CPU_ACT_NEG, x, alpha, beta)); break;
    case KILN_CPU_ACT_ABS: VACT_LOOP(vact_kind(KILN_CPU_ACT_ABS, x, alpha, beta)); break;
    case KILN_CPU_ACT_ERF: VACT_LOOP(vact_kind(KILN_CPU_ACT_ERF, x, alpha, beta)); break;
    case KILN_CPU_ACT_RECIPROCAL: VACT_LOOP(vact_kind(KILN_CPU_ACT_RECIPROCAL, x, alpha, beta)); break;
    case KILN_CPU_ACT_SOFTPLUS: VACT_LOOP(vact_kind(KILN_CPU_ACT_SOFTPLUS, x, alpha, beta)); break;
    default:
        if (in != out) memmove(out, in, n * sizeof(float));
        break;
    }
}

#undef VACT_LOOP
