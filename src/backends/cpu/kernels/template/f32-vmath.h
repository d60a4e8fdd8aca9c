/* f32-vmath.h — TEMPLATE: vector exp, expm1, log, log1p, tanh, sigmoid and erf over the vector
 * layer of the including ISA (avx2/vec-avx2.h or avx512/vec-avx512.h, included first).
 *
 * Layer: backends/cpu/kernels (template; instantiated per ISA, never compiled alone). The
 * polynomials were fitted for this file (weighted least squares on Chebyshev nodes, iterated
 * towards minimax) and keep the relative error near 1e-7 over the whole float range:
 *   exp    n = round(x / ln 2), r = x - n ln 2 in two parts; exp(r) = 1 + r + r^2 P4(r)
 *   expm1  2^n (expm1(r) + 1) - 1, exact for n = 0 where it matters (no cancellation)
 *   log    x = m 2^e, m in [sqrt(1/2), sqrt(2)); log(1 + f) = f - f^2/2 + f^3 P7(f)
 *   erf    |x| < 1: x P5(x^2);  1 <= |x| < 4: 1 - exp(-x^2) Q8((|x| - 2.5) / 1.5);  then 1
 *   erf for GELU: |x| < 4 in 8 pieces of width 1/2, P7 of the offset from the piece's middle
 *          (coefficients picked per lane from 8-entry tables); absolute error under 7e-8
 *          (fitted in double, measured evaluated in float), then 1
 * NaN propagates through every function; the clamps put the constant first in vf_min/vf_max
 * because those return their second operand when one is NaN.
 */

/* c[0] + c[1] x + ... + c[n-1] x^(n-1); n is a constant at every call, so this unrolls. */
static inline vf vmath_horner(vf x, const float *c, int n)
{
    vf p = vf_set1(c[n - 1]);
    for (int k = n - 2; k >= 0; k--) p = vf_fmadd(p, x, vf_set1(c[k]));
    return p;
}

static const float vmath_expm1_c[5] = {4.999998871e-01f, 1.666651850e-01f, 4.166950492e-02f, 8.368912701e-03f,
                                    1.375296942e-03f};
static const float vmath_log_c[8] = {3.333335358e-01f,  -2.500085086e-01f, 1.999985773e-01f, -1.662142570e-01f,
                                  1.422653759e-01f,  -1.320105501e-01f, 1.262355774e-01f, -7.369331649e-02f};
static const float vmath_erf_small_c[6] = {1.128379121e+00f, -3.761231984e-01f, 1.128013107e-01f,
                                        -2.670997169e-02f, 4.916048228e-03f,  -5.625493907e-04f};
static const float vmath_erfc_q_c[9] = {2.108075501e-01f, -1.115112857e-01f, 5.607659847e-02f,
                                     -2.740592914e-02f, 1.160314046e-02f,  -5.361713894e-03f,
                                     5.647492472e-03f,  3.469179349e-03f,  2.639037500e-03f};

/* vmath_erf_pieces_c[j][p]: coefficient of u^j in piece p, erf((p + 1/2 + u) / 2) for |u| <= 1/2. */
static const float vmath_erf_pieces_c[8][8] = {
    {2.763263881e-01f, 7.111556530e-01f, 9.229001403e-01f, 9.866716862e-01f, 9.985373020e-01f, 9.998993874e-01f,
     9.999957085e-01f, 9.999998808e-01f},
    {5.300070643e-01f, 3.214655519e-01f, 1.182605550e-01f, 2.638749592e-02f, 3.571160836e-03f, 2.931387571e-04f,
     1.459440591e-05f, 4.406999494e-07f},
    {-6.625076383e-02f, -1.205495447e-01f, -7.391292602e-02f, -2.308905311e-02f, -4.017541651e-03f,
     -4.030666314e-04f, -2.371714618e-05f, -8.264909752e-07f},
    {-3.864590824e-02f, 3.348422702e-03f, 2.094222046e-02f, 1.126970630e-02f, 2.715521026e-03f, 3.450437798e-04f,
     2.448009036e-05f, 9.967988035e-07f},
    {7.933680899e-03f, 9.417310357e-03f, -3.834108065e-04f, -3.006572137e-03f, -1.192987431e-03f,
     -2.036094957e-04f, -1.788792542e-05f, -8.619197729e-07f},
    {2.497670706e-03f, -1.661998336e-03f, -1.476600999e-03f, 2.065444278e-04f, 3.334968933e-04f, 8.616642299e-05f,
     9.770677934e-06f, 5.684500479e-07f},
    {-6.155139999e-04f, -4.156007199e-04f, 3.223171807e-04f, 1.413302525e-04f, -4.351665484e-05f,
     -2.605247937e-05f, -4.270450063e-06f, -3.223240128e-07f},
    {-1.150592288e-04f, 1.372339320e-04f, 3.416800246e-05f, -4.566906864e-05f, -6.534648946e-06f,
     4.889077900e-06f, 1.429567078e-06f, 1.445199302e-07f},
};

/* ln 2 split so that n * LN2_HI is exact for |n| < 2^15. */
#define VMATH_LOG2E 1.44269504088896341f
#define VMATH_LN2_HI 0.693359375f
#define VMATH_LN2_LO -2.12194440e-4f

/* expm1(r) for |r| <= ln(2) / 2. */
static inline vf vmath_expm1_reduced(vf r) { return vf_fmadd(vmath_horner(r, vmath_expm1_c, 5), vf_mul(r, r), r); }

/* x = n ln 2 + r; returns r, n in *n. */
static inline vf vmath_reduce_ln2(vf x, vf *n)
{
    *n = vf_round(vf_mul(x, vf_set1(VMATH_LOG2E)));
    vf r = vf_fnmadd(*n, vf_set1(VMATH_LN2_HI), x);
    return vf_fnmadd(*n, vf_set1(VMATH_LN2_LO), r);
}

static inline vf vmath_exp(vf x)
{
    /* Past these bounds exp is inf or 0 anyway; the clamp keeps n small for the scaling. */
    x = vf_min(vf_set1(89.0f), vf_max(vf_set1(-104.0f), x));
    vf n, r = vmath_reduce_ln2(x, &n);
    return vf_ldexp(vf_add(vmath_expm1_reduced(r), vf_set1(1.0f)), n);
}

/* For x <= 88 (larger inputs are clamped there; callers never pass them). */
static inline vf vmath_expm1(vf x)
{
    x = vf_min(vf_set1(88.0f), vf_max(vf_set1(-88.0f), x));
    vf n, r = vmath_reduce_ln2(x, &n);
    vf s = vf_exp2i(vf_max(vf_set1(-126.0f), n));
    return vf_fmadd(s, vmath_expm1_reduced(r), vf_sub(s, vf_set1(1.0f)));
}

static inline vf vmath_log(vf x)
{
    vf e, m = vf_frexp_sqrt2(x, &e);
    vf f = vf_sub(m, vf_set1(1.0f)), f2 = vf_mul(f, f);
    vf y = vf_fmadd(vf_mul(f, f2), vmath_horner(f, vmath_log_c, 8), vf_fnmadd(vf_set1(0.5f), f2, f));
    y = vf_fmadd(e, vf_set1(VMATH_LN2_LO), y);
    y = vf_fmadd(e, vf_set1(VMATH_LN2_HI), y);
    /* Outside (0, inf): log 0 = -inf, log x<0 = NaN, log inf = inf, NaN stays. */
    y = vf_select(vm_eq(x, vf_zero()), y, vf_set1(-__builtin_inff()));
    y = vf_select(vm_lt(x, vf_zero()), y, vf_set1(__builtin_nanf("")));
    y = vf_select(vm_eq(x, vf_set1(__builtin_inff())), y, x);
    return vf_select(vm_isnan(x), y, x);
}

/* log(1 + u) for u >= 0 without losing small u: log(w) * u / (w - 1) with w = 1 + u rounded. */
static inline vf vmath_log1p_pos(vf u)
{
    vf w = vf_add(vf_set1(1.0f), u), d = vf_sub(w, vf_set1(1.0f));
    vf r = vf_mul(vmath_log(w), vf_div(u, d));
    return vf_select(vm_eq(d, vf_zero()), r, u);
}

static inline vf vmath_tanh(vf x)
{
    /* tanh(9) rounds to 1 in float; expm1 keeps small |x| exact: tanh = e / (e + 2), e = expm1(2|x|). */
    vf t = vf_min(vf_set1(9.0f), vf_abs(x));
    vf e = vmath_expm1(vf_add(t, t));
    return vf_copysign(vf_div(e, vf_add(e, vf_set1(2.0f))), x);
}

static inline vf vmath_sigmoid(vf x)
{
    /* e = exp(-|x|) <= 1: 1 / (1 + e) for x >= 0 and e / (1 + e) below, neither overflows. */
    vf e = vmath_exp(vf_neg(vf_abs(x)));
    vf num = vf_select(vm_lt(x, vf_zero()), vf_set1(1.0f), e);
    return vf_div(num, vf_add(vf_set1(1.0f), e));
}

static inline vf vmath_erf(vf x)
{
    vf a = vf_abs(x);
    vf small = vf_mul(a, vmath_horner(vf_mul(a, a), vmath_erf_small_c, 6));
    vm is_small = vm_lt(a, vf_set1(1.0f));
    /* GELU's inputs (x / sqrt 2) are mostly below 1: when every lane is (NaN is not), the exp
       branch would be discarded anyway — a BERT layer's GELU took a third less time. */
    if (vm_bits(is_small) == (1u << VF_WIDTH) - 1u) return vf_copysign(small, x);
    vf ac = vf_min(vf_set1(4.0f), a); /* erf(4) is 1 in float */
    vf t = vf_mul(vf_sub(ac, vf_set1(2.5f)), vf_set1(0.6666666667f));
    vf big = vf_fnmadd(vmath_exp(vf_neg(vf_mul(ac, ac))), vmath_horner(t, vmath_erfc_q_c, 9), vf_set1(1.0f));
    return vf_copysign(vf_select(is_small, big, small), x);
}

/* erf(x / sqrt 2) for |x| (the argument GELU gives erf) to an absolute error under 7e-8, with no
   branch and no exp: GELU (0.5 x (1 + erf(x / sqrt 2))) needs erf to within its own rounding, not
   relative accuracy near 0. An exported BERT layer's GELU inputs take vmath_erf's exp branch in
   nearly every vector (about 40 operations); this is 8 table picks, 7 FMAs and 6 operations to
   find the piece. NaN propagates (its piece is some entry, its offset NaN). */
static inline vf vmath_erf_scaled_abs_pieces(vf a)
{
    /* t = 2 z - 1/2 = piece + u: z = |x| / sqrt 2 clamped below 4 (erf is 1 in float there) */
    vf t = vf_min(vf_set1(7.4999995f), vf_fmsub(a, vf_set1(1.41421356237309504880f), vf_set1(0.5f)));
    vf piece = vf_round(t);
    vf u = vf_sub(t, piece);
    vx idx = vx_from_vf(piece);
    vf p = vf_table8(vmath_erf_pieces_c[7], idx);
    for (int j = 6; j >= 0; j--) p = vf_fmadd(p, u, vf_table8(vmath_erf_pieces_c[j], idx));
    return p;
}
