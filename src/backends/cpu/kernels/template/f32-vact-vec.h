/* f32-vact-vec.h — TEMPLATE: one vector through an activation (vact_kind), for the activation
 * rows (f32-vact.h) and for kernels that apply their activation while the values are still in
 * registers (f32-dwconv2d.h). Include after the ISA's vector layer and f32-vmath.h.
 *
 * Layer: backends/cpu/kernels (template). Each expression follows the scalar definition in
 * generic/f32-vact-generic.c, NaN handling included: vf_max(x, 0) maps NaN to 0 like Relu,
 * vf_max(lo, x) / vf_min(hi, x) pass it like Clip, and fmax/fminf-style clamps (hard sigmoid)
 * put x first so that NaN becomes the bound, as fmaxf/fminf do. The expressions are written
 * once, here: the rows call vact_kind with a constant kind inside one loop per kind, where the
 * switch folds away.
 */

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

/* x through the activation kind (kiln_cpu_act_kind) with the act's alpha and beta broadcast;
   unknown kinds and NONE pass x through. */
static inline __attribute__((always_inline)) vf vact_kind(uint32_t kind, vf x, vf alpha, vf beta)
{
    const vf zero = vf_zero(), one = vf_set1(1.0f);
    switch (kind) {
    case KILN_CPU_ACT_RELU: return vf_max(x, zero);
    case KILN_CPU_ACT_LEAKY_RELU: return vf_select(vm_lt(x, zero), x, vf_mul(alpha, x));
    case KILN_CPU_ACT_CLIP: return vf_min(beta, vf_max(alpha, x));
    case KILN_CPU_ACT_SIGMOID: return vmath_sigmoid(x);
    case KILN_CPU_ACT_TANH: return vmath_tanh(x);
    case KILN_CPU_ACT_HARD_SIGMOID: return vact_hard_sigmoid(x, alpha, beta);
    case KILN_CPU_ACT_HARD_SWISH: return vf_mul(x, vact_hard_sigmoid(x, vf_set1(1.0f / 6.0f), vf_set1(0.5f)));
    case KILN_CPU_ACT_GELU_ERF: return vact_gelu_erf(x);
    case KILN_CPU_ACT_GELU_TANH: return vact_gelu_tanh(x);
    case KILN_CPU_ACT_SILU: return vf_mul(x, vmath_sigmoid(x));
    case KILN_CPU_ACT_ELU: return vf_select(vm_lt(x, zero), x, vf_mul(alpha, vmath_expm1(x)));
    case KILN_CPU_ACT_EXP: return vmath_exp(x);
    case KILN_CPU_ACT_LOG: return vmath_log(x);
    case KILN_CPU_ACT_SQRT: return vf_sqrt(x);
    case KILN_CPU_ACT_NEG: return vf_neg(x);
    case KILN_CPU_ACT_ABS: return vf_abs(x);
    case KILN_CPU_ACT_ERF: return vmath_erf(x);
    case KILN_CPU_ACT_RECIPROCAL: return vf_div(one, x);
    case KILN_CPU_ACT_SOFTPLUS: return vact_softplus(x);
    default: return x;
    }
}
