/* f32-vact-generic.c — activations, binary ops and scale-shift rows in plain C with libm.
 *
 * Layer: backends/cpu/kernels/generic. Each formula is the one the portable kernels use (see
 * src/kernels/portable/activation.c, unary.c, binary.c, elementwise_variadic.c), including
 * their NaN behaviour (Relu maps NaN to 0, Clip passes it, Max/Min propagate it) and the
 * overflow-free forms of sigmoid and softplus; the SIMD tables are tested against these.
 */
#include <math.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

static float sigmoid(float x) { return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)); }

float kiln_cpu_f32_act_scalar(const kiln_cpu_act *act, float x)
{
    float a = act->alpha, b = act->beta;
    switch (act->kind) {
    case KILN_CPU_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case KILN_CPU_ACT_LEAKY_RELU: return x < 0.0f ? a * x : x;
    case KILN_CPU_ACT_CLIP: {
        float v = x < a ? a : x;
        return v > b ? b : v;
    }
    case KILN_CPU_ACT_SIGMOID: return sigmoid(x);
    case KILN_CPU_ACT_TANH: return tanhf(x);
    case KILN_CPU_ACT_HARD_SIGMOID: return fmaxf(0.0f, fminf(1.0f, a * x + b));
    case KILN_CPU_ACT_HARD_SWISH: return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
    case KILN_CPU_ACT_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
    case KILN_CPU_ACT_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
    case KILN_CPU_ACT_SILU: return x * sigmoid(x);
    case KILN_CPU_ACT_ELU: return x < 0.0f ? a * expm1f(x) : x;
    case KILN_CPU_ACT_EXP: return expf(x);
    case KILN_CPU_ACT_LOG: return logf(x);
    case KILN_CPU_ACT_SQRT: return sqrtf(x);
    case KILN_CPU_ACT_NEG: return -x;
    case KILN_CPU_ACT_ABS: return fabsf(x);
    case KILN_CPU_ACT_ERF: return erff(x);
    case KILN_CPU_ACT_RECIPROCAL: return 1.0f / x;
    case KILN_CPU_ACT_SOFTPLUS: return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    default: return x; /* NONE, IDENTITY (validation rejects unknown kinds) */
    }
}

void kiln_cpu_f32_vact__generic(const kiln_cpu_act *act, const float *x, float *y, size_t n)
{
    kiln_cpu_act a = *act; /* a local copy lets the compiler keep the switch out of the loop */
    for (size_t i = 0; i < n; i++) y[i] = kiln_cpu_f32_act_scalar(&a, x[i]);
}

float kiln_cpu_f32_binary_scalar(uint32_t kind, float a, float b)
{
    switch (kind) {
    case KILN_CPU_BIN_ADD: return a + b;
    case KILN_CPU_BIN_SUB: return a - b;
    case KILN_CPU_BIN_MUL: return a * b;
    case KILN_CPU_BIN_DIV: return a / b;
    case KILN_CPU_BIN_MAX: return a > b || isnan(a) ? a : b;
    case KILN_CPU_BIN_MIN: return a < b || isnan(a) ? a : b;
    default: return powf(a, b); /* POW */
    }
}

void kiln_cpu_f32_vbinary__generic(uint32_t kind, const float *a, int64_t sa, const float *b, int64_t sb, float *y,
                                   size_t n)
{
    /* One loop per kind so each is a plain strided loop the compiler can vectorise. */
#define BINARY_LOOP(EXPR)                                                                        \
    for (size_t i = 0; i < n; i++) {                                                             \
        float x0 = a[(int64_t)i * sa], x1 = b[(int64_t)i * sb];                                  \
        y[i] = (EXPR);                                                                           \
    }                                                                                            \
    return
    switch (kind) {
    case KILN_CPU_BIN_ADD: BINARY_LOOP(x0 + x1);
    case KILN_CPU_BIN_SUB: BINARY_LOOP(x0 - x1);
    case KILN_CPU_BIN_MUL: BINARY_LOOP(x0 * x1);
    case KILN_CPU_BIN_DIV: BINARY_LOOP(x0 / x1);
    default: BINARY_LOOP(kiln_cpu_f32_binary_scalar(kind, x0, x1));
    }
#undef BINARY_LOOP
}

void kiln_cpu_f32_vscaleshift__generic(const float *x, float scale, float shift, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = x[i] * scale + shift;
}
