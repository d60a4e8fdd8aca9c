/* elementwise_half.h — f16 and bf16 to and from f32, for elementwise ops that compute 16-bit
 * floats in f32 (as numpy does) and round the result back.
 *
 * Layer: kernels/portable (internal). Narrowing rounds to nearest even; overflow gives
 * infinity; NaN stays NaN (quiet).
 */
#ifndef KILN_KERNELS_PORTABLE_ELEMENTWISE_HALF_H
#define KILN_KERNELS_PORTABLE_ELEMENTWISE_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float kiln_ew_bits_to_f32(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint32_t kiln_ew_f32_to_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

static inline float kiln_ew_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return kiln_ew_bits_to_f32(sign | 0x7f800000u | (mantissa << 13));
    if (exponent != 0) return kiln_ew_bits_to_f32(sign | ((exponent + 112) << 23) | (mantissa << 13));
    /* Zero or subnormal: mantissa * 2^-24, exact in f32. */
    float magnitude = (float)mantissa * 0x1p-24f;
    return sign ? -magnitude : magnitude;
}

static inline uint16_t kiln_ew_f32_to_f16(float f)
{
    uint32_t bits = kiln_ew_f32_to_bits(f);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude >= 0x7f800000u) return sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u);
    if (magnitude >= 0x477ff000u) return sign | 0x7c00u; /* >= 65520 rounds to infinity */
    if (magnitude < 0x38800000u) {
        /* Below 2^-14 the result is subnormal: the value in units of 2^-24, rounded to nearest
           even by rint; 1024 lands exactly on the smallest normal's encoding. */
        return sign | (uint16_t)rintf(kiln_ew_bits_to_f32(magnitude) * 0x1p24f);
    }
    uint32_t h = (((magnitude >> 23) - 112) << 10) | ((magnitude >> 13) & 0x3ffu);
    uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* a carry moves into the exponent */
    return sign | (uint16_t)h;
}

static inline float kiln_ew_bf16_to_f32(uint16_t h) { return kiln_ew_bits_to_f32((uint32_t)h << 16); }

static inline uint16_t kiln_ew_f32_to_bf16(float f)
{
    uint32_t bits = kiln_ew_f32_to_bits(f);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40u);
    return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

#endif /* KILN_KERNELS_PORTABLE_ELEMENTWISE_HALF_H */
