/* f32-vact.h — TEMPLATE: the activation rows (kiln_cpu_act_fn) of an ISA, defining
 * KILN_CPU_ISA(f32_vact); include after the ISA's vector layer and f32-vmath.h.
 *
 * Layer: backends/cpu/kernels (template). One loop per kind so the kind is not re-decided per
 * vector; the tail is one partial vector. Each expression follows the scalar definition in
 * generic/f32-vact-generic.c, NaN handling included: vf_max(x, 0) maps NaN to 0 like Relu,
 * vf_max(lo, x) / vf_min(hi, x) pass it like Clip, and fmax/fminf-style clamps (hard sigmoid)
 * put x first so that NaN becomes the bound, as fmaxf/fminf do.
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

static inline vf vact_hard_sigmoid(vf x, vf alpha, vf beta)
{
    return vf_max(vf_min(vf_fmadd(alpha, x, beta), vf_set1(1.0f)), vf_zero());
}

static inline vf vact_gelu_tanh(vf x)
{
    vf inner = vf_mul(vf_set1(0.79788456080286535588f), vf_fmadd(vf_mul(vf_set1(0.044715f), vf_mul(x, x)), x, x));
    return vf_mul(vf_mul(vf_set1(0.5f), x), vf_add(vf_set1(1.0f), vmath_tanh(inner)));
}

/* erf(x / sqrt 2) = x Q(x^2) for |x| < sqrt 2: vmath_erf's small polynomial, c_k / sqrt 2^(2k+1). */
#define VACT_ERF_SMALL_SCALED(k, scale) ((float)((double)vmath_erf_small_c[k] * (scale)))
static inline vf vact_erf_scaled_small(vf x, vf x2)
{
    /* Not static: clang does not take another const array's element as a constant initialiser;
       gcc folds the six products at compile time either way. */
    const float c[6] = {
        VACT_ERF_SMALL_SCALED(0, 0.70710678118654752), VACT_ERF_SMALL_SCALED(1, 0.35355339059327376),
        VACT_ERF_SMALL_SCALED(2, 0.17677669529663688), VACT_ERF_SMALL_SCALED(3, 0.08838834764831844),
        VACT_ERF_SMALL_SCALED(4, 0.04419417382415922), VACT_ERF_SMALL_SCALED(5, 0.02209708691207961)};
    return vf_mul(x, vmath_horner(x2, c, 6));
}
#undef VACT_ERF_SMALL_SCALED

/* 0.5 x (1 + erf(x / sqrt 2)); a product, not 0.5 x + 0.5 x erf, so that GELU(-0) is -0 as the
   reference's. Lanes below sqrt 2 in magnitude take the small polynomial, the others erf by
   pieces (f32-vmath.h), whichever lanes share their vector: the bits of an element must not
   depend on how a driver cut the rows. A vector of small lanes only (most of a BERT layer's)
   skips the pieces: 12 operations, 35 otherwise (vmath_erf's exp branch took about 40). */
static inline vf vact_gelu_erf(vf x)
{
    vf x2 = vf_mul(x, x), e = vact_erf_scaled_small(x, x2);
    vm small = vm_lt(x2, vf_set1(2.0f)); /* NaN is not below */
    if (vm_bits(small) != (1u << VF_WIDTH) - 1u)
        e = vf_select(small, vf_copysign(vmath_erf_scaled_abs_pieces(vf_abs(x)), x), e);
    return vf_mul(vf_mul(vf_set1(0.5f), x), vf_add(vf_set1(1.0f), e));
}

static inline vf vact_softplus(vf x)
{
    return vf_add(vf_max(x, vf_zero()), vmath_log1p_pos(vmath_exp(vf_neg(vf_abs(x)))));
}

void KILN_CPU_ISA(f32_vact)(const kiln_cpu_act *act, const float *in, float *out, size_t n)
{
    KILN_CONTRACT(act != NULL && (n == 0 || (in != NULL && out != NULL)));
    KILN_CONTRACT(in == out || (uintptr_t)in + n * sizeof(float) <= (uintptr_t)out ||
                  (uintptr_t)out + n * sizeof(float) <= (uintptr_t)in); /* in place, or apart */
    const vf zero = vf_zero(), one = vf_set1(1.0f), alpha = vf_set1(act->alpha), beta = vf_set1(act->beta);
    switch (act->kind) {
    case KILN_CPU_ACT_RELU: VACT_LOOP(vf_max(x, zero)); break;
    case KILN_CPU_ACT_LEAKY_RELU: VACT_LOOP(vf_select(vm_lt(x, zero), x, vf_mul(alpha, x))); break;
    case KILN_CPU_ACT_CLIP: VACT_LOOP(vf_min(beta, vf_max(alpha, x))); break;
    case KILN_CPU_ACT_SIGMOID: VACT_LOOP(vmath_sigmoid(x)); break;
    case KILN_CPU_ACT_TANH: VACT_LOOP(vmath_tanh(x)); break;
    case KILN_CPU_ACT_HARD_SIGMOID: VACT_LOOP(vact_hard_sigmoid(x, alpha, beta)); break;
    case KILN_CPU_ACT_HARD_SWISH:
        VACT_LOOP(vf_mul(x, vact_hard_sigmoid(x, vf_set1(1.0f / 6.0f), vf_set1(0.5f))));
        break;
    case KILN_CPU_ACT_GELU_ERF:
        VACT_LOOP(vact_gelu_erf(x));
        break;
    case KILN_CPU_ACT_GELU_TANH: VACT_LOOP(vact_gelu_tanh(x)); break;
    case KILN_CPU_ACT_SILU: VACT_LOOP(vf_mul(x, vmath_sigmoid(x))); break;
    case KILN_CPU_ACT_ELU: VACT_LOOP(vf_select(vm_lt(x, zero), x, vf_mul(alpha, vmath_expm1(x)))); break;
    case KILN_CPU_ACT_EXP: VACT_LOOP(vmath_exp(x)); break;
    case KILN_CPU_ACT_LOG: VACT_LOOP(vmath_log(x)); break;
    case KILN_CPU_ACT_SQRT: VACT_LOOP(vf_sqrt(x)); break;
    case KILN_CPU_ACT_NEG: VACT_LOOP(vf_neg(x)); break;
    case KILN_CPU_ACT_ABS: VACT_LOOP(vf_abs(x)); break;
    case KILN_CPU_ACT_ERF: VACT_LOOP(vmath_erf(x)); break;
    case KILN_CPU_ACT_RECIPROCAL: VACT_LOOP(vf_div(one, x)); break;
    case KILN_CPU_ACT_SOFTPLUS: VACT_LOOP(vact_softplus(x)); break;
    default:
        if (in != out) memmove(out, in, n * sizeof(float));
        break;
    }
}

#undef VACT_LOOP
