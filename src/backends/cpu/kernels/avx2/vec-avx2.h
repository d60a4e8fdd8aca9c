/* vec-avx2.h — the vector layer the kernel templates (../template) are written against, for
 * AVX2 + FMA (8 lanes of f32; masks are all-ones lanes of a __m256).
 *
 * Layer: backends/cpu/kernels/avx2; include only from files of this directory (compiled with
 * the avx2 flags). Same contract as avx512/vec-avx512.h: vf_max/vf_min keep the x86 NaN rule,
 * partial loads zero the lanes past n, partial stores touch nothing past n. Partial stores go
 * through a stack vector rather than vmaskmovps, whose store form is microcoded on AMD cores.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_AVX2_VEC_AVX2_H
#define KILN_BACKENDS_CPU_KERNELS_AVX2_VEC_AVX2_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KILN_CPU_ISA(name) kiln_cpu_##name##__avx2
#define VF_WIDTH 8

typedef __m256 vf;
typedef __m256 vm;

static inline __m256i vm_first_i(size_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vf vf_set1(float x) { return _mm256_set1_ps(x); }
static inline vf vf_zero(void) { return _mm256_setzero_ps(); }
static inline vf vf_loadu(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_storeu(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf vf_load_part(const float *p, size_t n) { return _mm256_maskload_ps(p, vm_first_i(n)); }
static inline vf vf_load_part_or(const float *p, size_t n, vf fill)
{
    __m256i m = vm_first_i(n);
    return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
static inline void vf_store_part(float *p, vf v, size_t n)
{
    float lanes[VF_WIDTH];
    _mm256_storeu_ps(lanes, v);
    memcpy(p, lanes, n * sizeof(float));
}
static inline vf vf_gather_part(const float *p, int32_t s, size_t n)
{
    __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(s));
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx, _mm256_castsi256_ps(vm_first_i(n)), 4);
}
/* p[0], p[2], ... p[2(t-1)] (t <= 8): two loads and a lane shuffle, cheaper than a gather;
   nothing past p[2t-2] is read. */
static inline vf vf_load_even(const float *p, size_t t)
{
    size_t span = 2 * t - 1;
    vf lo = vf_load_part(p, span < 8 ? span : 8), hi = vf_load_part(p + 8, span > 8 ? span - 8 : 0);
    __m256 pairs = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)); /* lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}

static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vf_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vf vf_fmsub(vf a, vf b, vf c) { return _mm256_fmsub_ps(a, b, c); }   /* a * b - c */
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static inline vf vf_abs(vf a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))); }
static inline vf vf_neg(vf a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
static inline vf vf_copysign(vf a, vf s)
{
    return _mm256_or_ps(vf_abs(a), _mm256_and_ps(s, _mm256_set1_ps(-0.0f)));
}
static inline vf vf_round(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vf vf_floor(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
/* Lane indices for vf_table8, from integral floats in [0, 8) (others pick some entry). */
typedef __m256i vx;
static inline vx vx_from_vf(vf a) { return _mm256_cvtps_epi32(a); }
/* table[index] per lane, index in [0, 8). */
static inline vf vf_table8(const float *table, vx index) { return _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), index); }

static inline vm vm_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vm vm_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline vm vm_eq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline vm vm_isnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline vm vm_or(vm a, vm b) { return _mm256_or_ps(a, b); }
static inline vm vm_first_mask(size_t n) { return _mm256_castsi256_ps(vm_first_i(n)); }
/* Lane i of m as bit i. */
static inline unsigned vm_bits(vm m) { return (unsigned)_mm256_movemask_ps(m); }
static inline vf vf_select(vm m, vf f, vf t) { return _mm256_blendv_ps(f, t, m); }
/* a0 b0 a1 b1 ... : the first 8 into *lo, the rest into *hi. */
static inline void vf_interleave(vf a, vf b, vf *lo, vf *hi)
{
    __m256 u = _mm256_unpacklo_ps(a, b), v = _mm256_unpackhi_ps(a, b); /* a0 b0 a1 b1 | a4 b4 a5 b5 ... */
    *lo = _mm256_permute2f128_ps(u, v, 0x20);
    *hi = _mm256_permute2f128_ps(u, v, 0x31);
}
/* Lanes [a, b) (a < b <= 8). */
static inline vm vm_lanes(size_t a, size_t b)
{
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)a), lane),
                                     _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)b), lane));
    return _mm256_castsi256_ps(in);
}
/* The even and the odd elements of the 16 in lo then hi: a stride-2 window's two neighbouring
   taps from the same two loads (f32-dwconv2d.h). */
static inline void vf_deinterleave(vf lo, vf hi, vf *even, vf *odd)
{
    __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
    *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
    *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* Lanes in m of a * b + c; the other lanes are c unchanged (not c + a * 0). */
static inline vf vf_fmadd_lanes(vm m, vf a, vf b, vf c) { return _mm256_blendv_ps(c, _mm256_fmadd_ps(a, b, c), m); }
/* The source columns of a stride-2 load whose lanes are m: lane i reads column 2i of 16, the odd
   columns are not read. Made once, used for every row of a window (the Winograd transform). */
typedef struct vm_cols {
    __m256i lo, hi;
} vm_cols;
static inline vm_cols vm_even_cols(vm m)
{
    /* Lane i's mask to columns 2i and 2i + 1 by unpacking m with itself (m0 m0 m1 m1 | m4 m4
       m5 m5 and m2 m2 m3 m3 | m6 m6 m7 m7), then the odd columns cleared. */
    __m256 pairs_lo = _mm256_unpacklo_ps(m, m), pairs_hi = _mm256_unpackhi_ps(m, m);
    __m256i even = _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0);
    return (vm_cols){_mm256_and_si256(_mm256_castps_si256(_mm256_permute2f128_ps(pairs_lo, pairs_hi, 0x20)), even),
                     _mm256_and_si256(_mm256_castps_si256(_mm256_permute2f128_ps(pairs_lo, pairs_hi, 0x31)), even)};
}
/* Lane i = column 2i from the address base (lane 0's column, which may lie outside the array:
   it is formed outside C's pointer arithmetic), zero where c has no column; two masked loads
   and the even shuffle of vf_load_even; a gather costs several times as much on Zen 4. */
static inline vf vf_load_even_cols(uintptr_t base, vm_cols c)
{
    __m256 lo = _mm256_maskload_ps((const float *)base, c.lo);
    __m256 hi = _mm256_maskload_ps((const float *)(base + 8 * sizeof(float)), c.hi);
    __m256 pairs = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)); /* lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* Lanes [a, b) (mask m = vm_lanes(a, b)) from first[0], first[s], ...: lane i reads
   first[(i - a) * s]; the gather reads no element outside those. */
static inline vf vf_load_lanes(const float *first, int64_t s, vm m, size_t a)
{
    /* Unit stride: a masked load from where lane 0 would read (an address formed outside C's
       pointer arithmetic, as it may precede the array); masked lanes are not accessed. */
    if (s == 1)
        return _mm256_maskload_ps((const float *)((uintptr_t)first - a * sizeof(float)), _mm256_castps_si256(m));
    if (s == 2) return vf_load_even_cols((uintptr_t)first - 2 * a * sizeof(float), vm_even_cols(m));
    __m256i idx = _mm256_mullo_epi32(_mm256_sub_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                                      _mm256_set1_epi32((int32_t)a)),
                                     _mm256_set1_epi32((int32_t)s));
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), first, idx, m, 4);
}

/* 2^n for integral n in [-126, 127], built in the exponent field. */
static inline vf vf_exp2i(vf n)
{
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
/* p * 2^n for integral n in [-150, 129]: two factors that are each a normal power of two, so
   results that overflow become inf and those that underflow round into the denormals. */
static inline vf vf_ldexp(vf p, vf n)
{
    __m256i ni = _mm256_cvtps_epi32(n), half = _mm256_srai_epi32(ni, 1), rest = _mm256_sub_epi32(ni, half);
    vf s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, _mm256_set1_epi32(127)), 23));
    vf s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(rest, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}
/* x = m * 2^e with m in [sqrt(1/2), sqrt(2)), for finite x > 0; denormals are scaled up first. */
static inline vf vf_frexp_sqrt2(vf x, vf *e)
{
    vm tiny = vm_lt(x, _mm256_set1_ps(1.17549435e-38f));
    x = vf_select(tiny, x, _mm256_mul_ps(x, _mm256_set1_ps(8388608.0f))); /* 2^23 */
    __m256i bits = _mm256_castps_si256(x);
    __m256i ex = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
    vf m = _mm256_castsi256_ps(
        _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x3F800000)));
    vf ef = _mm256_cvtepi32_ps(ex);
    ef = vf_select(tiny, ef, _mm256_sub_ps(ef, _mm256_set1_ps(23.0f)));
    vm big = vm_gt(m, _mm256_set1_ps(1.41421356f));
    *e = vf_select(big, ef, _mm256_add_ps(ef, _mm256_set1_ps(1.0f)));
    return vf_select(big, m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)));
}

static inline float vf_reduce_add(vf a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float vf_reduce_max(vf a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#endif
