/* vec-avx512.h — the vector layer the kernel templates (../template) are written against, for
 * AVX-512 (16 lanes of f32, __mmask16 masks).
 *
 * Layer: backends/cpu/kernels/avx512; include only from files of this directory (compiled with
 * the avx512 flags). vf_max(a, b) / vf_min(a, b) keep the x86 meaning — a > b ? a : b, so b when
 * either is NaN — and the templates rely on it to choose where NaN goes. Partial loads fill the
 * lanes past n with zero; partial stores leave the memory past n untouched.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_AVX512_VEC_AVX512_H
#define KILN_BACKENDS_CPU_KERNELS_AVX512_VEC_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define KILN_CPU_ISA(name) kiln_cpu_##name##__avx512
#define VF_WIDTH 16

typedef __m512 vf;
typedef __mmask16 vm;

static inline vm vm_first(size_t n) { return (vm)((1u << n) - 1u); } /* n <= 16 */
static inline vf vf_set1(float x) { return _mm512_set1_ps(x); }
static inline vf vf_zero(void) { return _mm512_setzero_ps(); }
static inline vf vf_loadu(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_storeu(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline vf vf_load_part(const float *p, size_t n) { return _mm512_maskz_loadu_ps(vm_first(n), p); }
/* Lanes past n hold `fill`. */
static inline vf vf_load_part_or(const float *p, size_t n, vf fill) { return _mm512_mask_loadu_ps(fill, vm_first(n), p); }
static inline void vf_store_part(float *p, vf v, size_t n) { _mm512_mask_storeu_ps(p, vm_first(n), v); }
/* n (<= 16) elements at p[0], p[s], p[2s] ...; lanes past n are zero. */
static inline vf vf_gather_part(const float *p, int32_t s, size_t n)
{
    __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                      _mm512_set1_epi32(s));
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), vm_first(n), idx, p, 4);
}
/* p[0], p[2], ... p[2(t-1)] (t <= 16): two loads and a lane shuffle, cheaper than a gather;
   nothing past p[2t-2] is read. */
static inline vf vf_load_even(const float *p, size_t t)
{
    size_t span = 2 * t - 1;
    vf lo = vf_load_part(p, span < 16 ? span : 16), hi = vf_load_part(p + 16, span > 16 ? span - 16 : 0);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(lo, even, hi);
}

static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }   /* a * b + c */
static inline vf vf_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); } /* c - a * b */
static inline vf vf_fmsub(vf a, vf b, vf c) { return _mm512_fmsub_ps(a, b, c); }   /* a * b - c */
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm512_sqrt_ps(a); }
static inline vf vf_abs(vf a)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7FFFFFFF)));
}
static inline vf vf_neg(vf a)
{
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int32_t)0x80000000u)));
}
/* |a| with the sign of s. */
static inline vf vf_copysign(vf a, vf s)
{
    /* one vpternlogd: bits of a where the mask is set, of s elsewhere (0xE4: C ? A : B) */
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(a), _mm512_castps_si512(s),
                                                         _mm512_set1_epi32(0x7FFFFFFF), 0xE4));
}
static inline vf vf_round(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vf vf_floor(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
/* Lane indices for vf_table8, from integral floats in [0, 8) (others pick some entry). */
typedef __m512i vx;
static inline vx vx_from_vf(vf a) { return _mm512_cvtps_epi32(a); }
/* table[index] per lane, index in [0, 8). */
static inline vf vf_table8(const float *table, vx index)
{
    return _mm512_permutexvar_ps(index, _mm512_castps256_ps512(_mm256_loadu_ps(table)));
}

static inline vm vm_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline vm vm_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline vm vm_eq(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
static inline vm vm_isnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
static inline vm vm_or(vm a, vm b) { return (vm)(a | b); }
static inline vm vm_first_mask(size_t n) { return vm_first(n); }
/* Lane i of m as bit i. */
static inline unsigned vm_bits(vm m) { return (unsigned)m; }
/* t where m is set, else f. */
static inline vf vf_select(vm m, vf f, vf t) { return _mm512_mask_blend_ps(m, f, t); }
/* a0 b0 a1 b1 ... : the first 16 into *lo, the rest into *hi. */
static inline void vf_interleave(vf a, vf b, vf *lo, vf *hi)
{
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    *lo = _mm512_permutex2var_ps(a, first, b);
    *hi = _mm512_permutex2var_ps(a, second, b);
}
/* Lanes [a, b) (a < b <= 16). */
static inline vm vm_lanes(size_t a, size_t b) { return (vm)(vm_first(b) & ~vm_first(a)); }
/* The even and the odd elements of the 32 in lo then hi: a stride-2 window's two neighbouring
   taps from the same two loads (f32-dwconv2d.h). */
static inline void vf_deinterleave(vf lo, vf hi, vf *even, vf *odd)
{
    *even = _mm512_permutex2var_ps(lo, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), hi);
    *odd = _mm512_permutex2var_ps(lo, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), hi);
}
/* Lanes in m of a * b + c; the other lanes are c unchanged (not c + a * 0). */
static inline vf vf_fmadd_lanes(vm m, vf a, vf b, vf c) { return _mm512_mask3_fmadd_ps(a, b, c, m); }
/* The source columns of a stride-2 load whose lanes are m: lane i reads column 2i of 32, the odd
   columns are not read. Made once, used for every row of a window (the Winograd transform). */
typedef struct vm_cols {
    __mmask16 lo, hi;
} vm_cols;
static inline vm_cols vm_even_cols(vm m)
{
    uint32_t cols = _pdep_u32((uint32_t)m, 0x55555555u);
    return (vm_cols){(__mmask16)cols, (__mmask16)(cols >> 16)};
}
/* Lane i = column 2i from the address base (lane 0's column, which may lie outside the array:
   it is formed outside C's pointer arithmetic), zero where c has no column; two masked loads
   and the even shuffle of vf_load_even; a gather costs several times as much on Zen 4. */
static inline vf vf_load_even_cols(uintptr_t base, vm_cols c)
{
    vf lo = _mm512_maskz_loadu_ps(c.lo, (const void *)base);
    vf hi = _mm512_maskz_loadu_ps(c.hi, (const void *)(base + 16 * sizeof(float)));
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(lo, even, hi);
}
/* Lanes [a, b) (mask m = vm_lanes(a, b)) from first[0], first[s], ...: lane i reads
   first[(i - a) * s]; nothing outside those elements is read. */
static inline vf vf_load_lanes(const float *first, int64_t s, vm m, size_t a)
{
    /* Unit stride: a masked load from where lane 0 would read (an address formed outside C's
       pointer arithmetic, as it may precede the array); masked lanes are not accessed.
       vexpandps would avoid the shift but is microcoded on Zen 4. */
    if (s == 1) return _mm512_maskz_loadu_ps(m, (const void *)((uintptr_t)first - a * sizeof(float)));
    if (s == 2) return vf_load_even_cols((uintptr_t)first - 2 * a * sizeof(float), vm_even_cols(m));
    __m512i idx = _mm512_mullo_epi32(_mm512_sub_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                                         14, 15),
                                                      _mm512_set1_epi32((int32_t)a)),
                                     _mm512_set1_epi32((int32_t)s));
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, first, 4);
}

/* p * 2^n for integral n of any size (scalef saturates to 0 / inf as exp needs). */
static inline vf vf_ldexp(vf p, vf n) { return _mm512_scalef_ps(p, n); }
/* 2^n for integral n in [-127, 127]. */
static inline vf vf_exp2i(vf n) { return _mm512_scalef_ps(_mm512_set1_ps(1.0f), n); }
/* x = m * 2^e with m in [sqrt(1/2), sqrt(2)), for finite x > 0 (denormals included). */
static inline vf vf_frexp_sqrt2(vf x, vf *e)
{
    vf m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
    vf ex = _mm512_getexp_ps(x);
    vm big = vm_gt(m, _mm512_set1_ps(1.41421356f));
    *e = _mm512_mask_add_ps(ex, big, ex, _mm512_set1_ps(1.0f));
    return _mm512_mask_mul_ps(m, big, m, _mm512_set1_ps(0.5f));
}

static inline float vf_reduce_add(vf a) { return _mm512_reduce_add_ps(a); }
static inline float vf_reduce_max(vf a) { return _mm512_reduce_max_ps(a); }

#endif
