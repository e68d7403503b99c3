// pto/simd.hpp -- a small portable SIMD layer on GCC/Clang vector extensions.
//
// vec<T, N> is an N-lane vector of T (operators + - * / & | ^ << >> == < ?: work lane-wise).
// Code written with these operators and the helpers below works for vectors *and* for plain scalars,
// which is how the element functors in functors.hpp provide both call operators with one body.
// Loads/stores convert between a tile's storage type and the compute type (fp16/bf16 <-> fp32).
#pragma once
#include <algorithm>
#include <cstring>
#include <utility>

#include "types.hpp"

namespace pto::simd {

template <class T, int N> struct vt { typedef T type __attribute__((vector_size(N * sizeof(T)))); };
template <class T, int N> using vec = typename vt<T, N>::type;

// lane_of<V>: element type / lane count of a vector, or V itself / 1 for a scalar.
template <class V, class = void> struct lane_of { using type = V; static constexpr int n = 1; };
template <class V> struct lane_of<V, std::void_t<decltype(std::declval<V&>()[0])>> {
  using type = std::decay_t<decltype(std::declval<V&>()[0])>;
  static constexpr int n = int(sizeof(V) / sizeof(type));
};
template <class V> using lane_t = typename lane_of<V>::type;
template <class V> inline constexpr bool is_vec_v = (lane_of<V>::n > 1) || !std::is_arithmetic_v<V>;

// Lanes per chunk for an operation whose widest involved type has `Bytes` bytes.
template <int Bytes> inline constexpr int lanes_for = (kVecBytes / Bytes) < 1 ? 1 : (kVecBytes / Bytes);
template <class... Ts> inline constexpr int lanes_v = lanes_for<int(std::max({sizeof(Ts)...}))>;

// rebind<U, V>: vector of U with V's lane count (or U for a scalar V).
template <class U, class V> struct rebind { using type = vec<U, lane_of<V>::n>; };
template <class U, class V> using rebind_t =
    std::conditional_t<std::is_arithmetic_v<V>, U, typename rebind<U, V>::type>;

template <class V> PTO_INLINE V splat(lane_t<V> s) {
  if constexpr (std::is_arithmetic_v<V>) return s;
  else {
    // "s - V{}" folds to a single broadcast (x - 0.0 == x in every IEEE case); "V{} + s" does not
    // (-0.0 + 0.0 is +0.0), and would cost an extra add per splat inside kernels.
    return s - V{};
  }
}

// Lane-wise conversion (value conversion, like static_cast per lane).
template <class U, class V> PTO_INLINE rebind_t<U, V> cast(V v) {
  if constexpr (std::is_arithmetic_v<V>) return static_cast<U>(v);
  else if constexpr (std::is_same_v<lane_t<V>, U>) return v;
  else return __builtin_convertvector(v, rebind_t<U, V>);
}
// Bit reinterpretation to a same-width lane type.
template <class U, class V> PTO_INLINE rebind_t<U, V> as(V v) {
  static_assert(sizeof(U) == sizeof(lane_t<V>));
  if constexpr (std::is_arithmetic_v<V>) return bit_cast<U>(v);
  else return (rebind_t<U, V>)v;
}
template <class V> using mask_t = rebind_t<std::make_signed_t<
    std::conditional_t<sizeof(lane_t<V>) == 1, int8_t, std::conditional_t<sizeof(lane_t<V>) == 2, int16_t,
    std::conditional_t<sizeof(lane_t<V>) == 4, int32_t, int64_t>>>>, V>;

// select(m, a, b): m is the result of a comparison of same-width lanes (or a bool for scalars).
template <class M, class V> PTO_INLINE V select(M m, V a, V b) {
  if constexpr (std::is_arithmetic_v<V>) return m ? a : b;
  else return m ? a : b;
}
// Comparisons as masks that work for scalars too.
template <class V> PTO_INLINE auto is_nan(V a) { return a != a; }

// ---- halves (for horizontal reductions) --------------------------------------------------------------
// lo_half(v) / hi_half(v): the lower / upper n/2 lanes as a vector of n/2 (register shuffles with
// __builtin_shufflevector; a memcpy through the stack elsewhere, which can stall store forwarding).
template <class V> using half_t = vec<lane_t<V>, lane_of<V>::n / 2>;
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
template <class V, std::size_t... I> PTO_INLINE half_t<V> lo_half_(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, I...);
}
template <class V, std::size_t... I> PTO_INLINE half_t<V> hi_half_(V v, std::index_sequence<I...>) {
  return __builtin_shufflevector(v, v, (I + sizeof...(I))...);
}
template <class V> PTO_INLINE half_t<V> lo_half(V v) { return lo_half_(v, std::make_index_sequence<lane_of<V>::n / 2>{}); }
template <class V> PTO_INLINE half_t<V> hi_half(V v) { return hi_half_(v, std::make_index_sequence<lane_of<V>::n / 2>{}); }
#else
template <class V> PTO_INLINE half_t<V> lo_half(V v) {
  half_t<V> h;
  std::memcpy(&h, &v, sizeof h);
  return h;
}
template <class V> PTO_INLINE half_t<V> hi_half(V v) {
  half_t<V> h;
  std::memcpy(&h, reinterpret_cast<const char*>(&v) + sizeof h, sizeof h);
  return h;
}
#endif

// ---- max / min ------------------------------------------------------------------------------------
// x86 has maxps / minps (`a > b ? a : b`, `a < b ? a : b`: the second operand when either is NaN or
// both are zero); kHwMinMax<V> says whether V's lanes map onto one of them.
template <class V> inline constexpr bool kHwMinMax =
    !std::is_arithmetic_v<V> && (std::is_same_v<lane_t<V>, float> || std::is_same_v<lane_t<V>, double>) &&
    (false
#if defined(__AVX512F__)
     || sizeof(V) == 64
#endif
#if defined(__AVX__)
     || sizeof(V) == 32
#endif
#if defined(__SSE2__)
     || sizeof(V) == 16
#endif
    );
// hw_max(a, b) = a > b ? a : b, hw_min(a, b) = a < b ? a : b, lane-wise, one instruction where
// kHwMinMax<V> (a NaN in a is dropped, a NaN in b kept; ties give b).
template <class V> PTO_INLINE V hw_max(V a, V b) {
  using L = lane_t<V>;
  (void)sizeof(L);
#if defined(__AVX512F__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 64) {
    if constexpr (std::is_same_v<L, float>) return (V)_mm512_max_ps((__m512)a, (__m512)b);
    else return (V)_mm512_max_pd((__m512d)a, (__m512d)b);
  } else
#endif
#if defined(__AVX__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 32) {
    if constexpr (std::is_same_v<L, float>) return (V)_mm256_max_ps((__m256)a, (__m256)b);
    else return (V)_mm256_max_pd((__m256d)a, (__m256d)b);
  } else
#endif
#if defined(__SSE2__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 16) {
    if constexpr (std::is_same_v<L, float>) return (V)_mm_max_ps((__m128)a, (__m128)b);
    else return (V)_mm_max_pd((__m128d)a, (__m128d)b);
  } else
#endif
  return select(a > b, a, b);
}
template <class V> PTO_INLINE V hw_min(V a, V b) {
  using L = lane_t<V>;
  (void)sizeof(L);
#if defined(__AVX512F__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 64) {
    if constexpr (std::is_same_v<L, float>) return (V)_mm512_min_ps((__m512)a, (__m512)b);
    else return (V)_mm512_min_pd((__m512d)a, (__m512d)b);
  } else
#endif
#if defined(__AVX__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 32) {
    if constexpr (std::is_same_v<L, float>) return (V)_mm256_min_ps((__m256)a, (__m256)b);
    else return (V)_mm256_min_pd((__m256d)a, (__m256d)b);
  } else
#endif
#if defined(__SSE2__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 16) {
    if constexpr (std::is_same_v<L, float>) return (V)_mm_min_ps((__m128)a, (__m128)b);
    else return (V)_mm_min_pd((__m128d)a, (__m128d)b);
  } else
#endif
  return select(a < b, a, b);
}

// vmax / vmin: NumPy maximum / minimum: a NaN in either operand is the result (a's when both are),
// otherwise a > b ? a : b (ties, e.g. +0 / -0, give b). Integers: plain max / min.
// AVX-512: maxps with a's lanes kept where a is NaN (an ordered-compare mask and one masked max,
// two instructions); AVX / SSE: maxps blended with a where a is NaN.
template <bool IsMax, class V> PTO_INLINE V nan_minmax(V a, V b) {
  using L = lane_t<V>;
  (void)sizeof(L);
#if defined(__AVX512F__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 64) {
    if constexpr (std::is_same_v<L, float>) {
      const __m512 x = (__m512)a, y = (__m512)b;
      const __mmask16 ord = _mm512_cmp_ps_mask(x, x, _CMP_ORD_Q);
      return (V)(IsMax ? _mm512_mask_max_ps(x, ord, x, y) : _mm512_mask_min_ps(x, ord, x, y));
    } else {
      const __m512d x = (__m512d)a, y = (__m512d)b;
      const __mmask8 ord = _mm512_cmp_pd_mask(x, x, _CMP_ORD_Q);
      return (V)(IsMax ? _mm512_mask_max_pd(x, ord, x, y) : _mm512_mask_min_pd(x, ord, x, y));
    }
  } else
#endif
#if defined(__AVX512VL__)
  if constexpr (kHwMinMax<V> && sizeof(V) == 32) {
    if constexpr (std::is_same_v<L, float>) {
      const __m256 x = (__m256)a, y = (__m256)b;
      const __mmask8 ord = _mm256_cmp_ps_mask(x, x, _CMP_ORD_Q);
      return (V)(IsMax ? _mm256_mask_max_ps(x, ord, x, y) : _mm256_mask_min_ps(x, ord, x, y));
    } else {
      const __m256d x = (__m256d)a, y = (__m256d)b;
      const __mmask8 ord = _mm256_cmp_pd_mask(x, x, _CMP_ORD_Q);
      return (V)(IsMax ? _mm256_mask_max_pd(x, ord, x, y) : _mm256_mask_min_pd(x, ord, x, y));
    }
  } else if constexpr (kHwMinMax<V> && sizeof(V) == 16) {
    if constexpr (std::is_same_v<L, float>) {
      const __m128 x = (__m128)a, y = (__m128)b;
      const __mmask8 ord = _mm_cmp_ps_mask(x, x, _CMP_ORD_Q);
      return (V)(IsMax ? _mm_mask_max_ps(x, ord, x, y) : _mm_mask_min_ps(x, ord, x, y));
    } else {
      const __m128d x = (__m128d)a, y = (__m128d)b;
      const __mmask8 ord = _mm_cmp_pd_mask(x, x, _CMP_ORD_Q);
      return (V)(IsMax ? _mm_mask_max_pd(x, ord, x, y) : _mm_mask_min_pd(x, ord, x, y));
    }
  } else
#endif
  if constexpr (kHwMinMax<V>) {
    return select(a != a, a, IsMax ? hw_max(a, b) : hw_min(a, b));  // maxps + cmpunordps + blendvps
  } else {
    if constexpr (IsMax) return select((a > b) | (a != a), a, b);
    else return select((a < b) | (a != a), a, b);
  }
}
template <class V> PTO_INLINE V vmax(V a, V b) {
  if constexpr (std::is_floating_point_v<lane_t<V>>) {
    if constexpr (std::is_arithmetic_v<V>) return (a > b || a != a) ? a : b;
    else return nan_minmax<true>(a, b);
  } else return select(a > b, a, b);
}
template <class V> PTO_INLINE V vmin(V a, V b) {
  if constexpr (std::is_floating_point_v<lane_t<V>>) {
    if constexpr (std::is_arithmetic_v<V>) return (a < b || a != a) ? a : b;
    else return nan_minmax<false>(a, b);
  } else return select(a < b, a, b);
}
// vrelu(x) = NumPy maximum(x, 0): NaN stays (with its payload), -0 gives +0. AVX-512: one
// vfixupimmps (per input class: NaN -> itself, zero / negative / -inf -> +0, positive / +inf ->
// itself); x86 otherwise: maxps(0, x) + 0 (the add turns -0 into +0).
template <class V> PTO_INLINE V vrelu(V x) {
  using L = lane_t<V>;
  if constexpr (!std::is_floating_point_v<L>) return select(x > L(0), x, V{});
  else if constexpr (std::is_arithmetic_v<V>) return (x > L(0) || x != x) ? x : L(0);
  else {
    // response nibbles by class (low to high): QNaN -> src, SNaN -> QNaN(src), zero -> +0, +1 -> src,
    // -inf -> +0, +inf -> src, negative -> +0, positive -> src
#if defined(__AVX512F__)
    if constexpr (kHwMinMax<V> && sizeof(V) == 64) {
      if constexpr (std::is_same_v<L, float>)
        return (V)_mm512_fixupimm_ps((__m512)x, (__m512)x, _mm512_set1_epi32(0x18181821), 0);
      else
        return (V)_mm512_fixupimm_pd((__m512d)x, (__m512d)x, _mm512_set1_epi64(0x18181821), 0);
    } else
#endif
#if defined(__AVX512VL__)
    if constexpr (kHwMinMax<V> && sizeof(V) == 32) {
      if constexpr (std::is_same_v<L, float>)
        return (V)_mm256_fixupimm_ps((__m256)x, (__m256)x, _mm256_set1_epi32(0x18181821), 0);
      else
        return (V)_mm256_fixupimm_pd((__m256d)x, (__m256d)x, _mm256_set1_epi64x(0x18181821), 0);
    } else if constexpr (kHwMinMax<V> && sizeof(V) == 16) {
      if constexpr (std::is_same_v<L, float>)
        return (V)_mm_fixupimm_ps((__m128)x, (__m128)x, _mm_set1_epi32(0x18181821), 0);
      else
        return (V)_mm_fixupimm_pd((__m128d)x, (__m128d)x, _mm_set1_epi64x(0x18181821), 0);
    } else
#endif
    if constexpr (kHwMinMax<V>) {
      return hw_max(V{}, x) + L(0);
    } else {
      return select((x > L(0)) | (x != x), x, V{});
    }
  }
}
template <class V> PTO_INLINE V vabs(V a) {
  using L = lane_t<V>;
  if constexpr (std::is_floating_point_v<L>) {
    using I = std::conditional_t<sizeof(L) == 4, uint32_t, uint64_t>;
    return as<L>(as<I>(a) & (~I(0) >> 1));
  } else if constexpr (std::is_signed_v<L>) {
    using U = std::make_unsigned_t<L>;
    auto u = as<U>(a);
    return as<L>(select(a < 0, rebind_t<U, V>(U(0) - u), u));
  } else return a;
}
// Wrapping integer arithmetic (done in the unsigned type so overflow is defined).
template <class V> PTO_INLINE V wadd(V a, V b) {
  using L = lane_t<V>;
  if constexpr (std::is_integral_v<L> && std::is_signed_v<L>) {
    using U = std::make_unsigned_t<L>;
    return as<L>(rebind_t<U, V>(as<U>(a) + as<U>(b)));
  } else return a + b;
}
template <class V> PTO_INLINE V wsub(V a, V b) {
  using L = lane_t<V>;
  if constexpr (std::is_integral_v<L> && std::is_signed_v<L>) {
    using U = std::make_unsigned_t<L>;
    return as<L>(rebind_t<U, V>(as<U>(a) - as<U>(b)));
  } else return a - b;
}
template <class V> PTO_INLINE V wmul(V a, V b) {
  using L = lane_t<V>;
  if constexpr (std::is_integral_v<L> && std::is_signed_v<L>) {
    using U = std::make_unsigned_t<L>;
    return as<L>(rebind_t<U, V>(as<U>(a) * as<U>(b)));
  } else if constexpr (std::is_integral_v<L> && sizeof(L) < sizeof(int)) {
    using U = std::make_unsigned_t<L>;
    return as<L>(rebind_t<U, V>(as<U>(a) * as<U>(b)));
  } else return a * b;
}

// Apply a scalar function lane by lane (for the few operations without a vector form).
template <class V, class F> PTO_INLINE V lanewise(V a, F f) {
  if constexpr (std::is_arithmetic_v<V>) return f(a);
  else {
    V r;
    for (int i = 0; i < lane_of<V>::n; ++i) r[i] = f(a[i]);
    return r;
  }
}
template <class V, class F> PTO_INLINE V lanewise2(V a, V b, F f) {
  if constexpr (std::is_arithmetic_v<V>) return f(a, b);
  else {
    V r;
    for (int i = 0; i < lane_of<V>::n; ++i) r[i] = f(a[i], b[i]);
    return r;
  }
}

// ---- sqrt ----------------------------------------------------------------------------------------
template <class V> PTO_INLINE V vsqrt(V x) {
  using L = lane_t<V>;
  if constexpr (std::is_arithmetic_v<V>) return std::sqrt(x);
#if defined(__AVX512F__)
  else if constexpr (std::is_same_v<L, float> && sizeof(V) == 64) return (V)_mm512_sqrt_ps((__m512)x);
  else if constexpr (std::is_same_v<L, double> && sizeof(V) == 64) return (V)_mm512_sqrt_pd((__m512d)x);
#endif
#if defined(__AVX__)
  else if constexpr (std::is_same_v<L, float> && sizeof(V) == 32) return (V)_mm256_sqrt_ps((__m256)x);
  else if constexpr (std::is_same_v<L, double> && sizeof(V) == 32) return (V)_mm256_sqrt_pd((__m256d)x);
#endif
#if defined(__SSE2__)
  else if constexpr (std::is_same_v<L, float> && sizeof(V) == 16) return (V)_mm_sqrt_ps((__m128)x);
  else if constexpr (std::is_same_v<L, double> && sizeof(V) == 16) return (V)_mm_sqrt_pd((__m128d)x);
#endif
#if defined(PTO_NEON) && defined(__aarch64__)
  else if constexpr (std::is_same_v<L, float> && sizeof(V) == 16) return (V)vsqrtq_f32((float32x4_t)x);
  else if constexpr (std::is_same_v<L, double> && sizeof(V) == 16) return (V)vsqrtq_f64((float64x2_t)x);
#endif
  else return lanewise(x, [](L v) { return std::sqrt(v); });
}

// ---- rounding ----------------------------------------------------------------------------------
// x86 vectors with a rounding instruction (SSE4.1 roundps, AVX vroundps, AVX-512 vrndscaleps) use
// it; everything else the exact magic-number round-to-nearest-even below.
template <class V> inline constexpr bool kHwRound =
    !std::is_arithmetic_v<V> && (std::is_same_v<lane_t<V>, float> || std::is_same_v<lane_t<V>, double>) &&
    (false
#if defined(__AVX512F__)
     || sizeof(V) == 64
#endif
#if defined(__AVX__)
     || sizeof(V) == 32
#endif
#if defined(__SSE4_1__)
     || sizeof(V) == 16
#endif
    );
// Mode: 0 nearest even, 1 floor, 2 ceil, 3 trunc (the _MM_FROUND_* directions; exceptions suppressed)
template <int Mode, class V> PTO_INLINE V hw_round(V x) {
  constexpr int M = Mode | 0x08;
  using L = lane_t<V>;
  (void)M;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<L, float> && sizeof(V) == 64) return (V)_mm512_roundscale_ps((__m512)x, M);
  if constexpr (std::is_same_v<L, double> && sizeof(V) == 64) return (V)_mm512_roundscale_pd((__m512d)x, M);
#endif
#if defined(__AVX__)
  if constexpr (std::is_same_v<L, float> && sizeof(V) == 32) return (V)_mm256_round_ps((__m256)x, M);
  if constexpr (std::is_same_v<L, double> && sizeof(V) == 32) return (V)_mm256_round_pd((__m256d)x, M);
#endif
#if defined(__SSE4_1__)
  if constexpr (std::is_same_v<L, float> && sizeof(V) == 16) return (V)_mm_round_ps((__m128)x, M);
  if constexpr (std::is_same_v<L, double> && sizeof(V) == 16) return (V)_mm_round_pd((__m128d)x, M);
#endif
  return x;  // unreachable (kHwRound<V> is false)
}
template <class V> PTO_INLINE V vrint(V x) {
  using L = lane_t<V>;
  static_assert(std::is_floating_point_v<L>);
  if constexpr (kHwRound<V>) {
    return hw_round<0>(x);
  } else {
    const L big = std::is_same_v<L, float> ? L(8388608.0f) : L(4503599627370496.0);
    V ax = vabs(x);
    V t = (ax + big) - big;  // no -ffast-math: not folded
    using I = std::conditional_t<sizeof(L) == 4, uint32_t, uint64_t>;
    const I sgn = I(1) << (sizeof(L) * 8 - 1);
    V r = as<L>(as<I>(t) | (as<I>(x) & sgn));  // restore the sign (keeps -0.0)
    return select(ax < big, r, x);              // large values and NaN/inf pass through
  }
}
template <class V> PTO_INLINE V vfloor(V x) {
  if constexpr (kHwRound<V>) return hw_round<1>(x);
  else {
    V r = vrint(x);
    return select(r > x, r - lane_t<V>(1), r);
  }
}
template <class V> PTO_INLINE V vceil(V x) {
  if constexpr (kHwRound<V>) return hw_round<2>(x);
  else {
    V r = vrint(x);
    return select(r < x, r + lane_t<V>(1), r);
  }
}
template <class V> PTO_INLINE V vtrunc(V x) {
  if constexpr (kHwRound<V>) return hw_round<3>(x);
  else return select(x < lane_t<V>(0), vceil(x), vfloor(x));
}

// ---- fp16 / bf16 vector conversions ----------------------------------------------------------------
template <int N> PTO_INLINE vec<float, N> half_bits_to_float_v(vec<uint16_t, N> h16) {
  using VU = vec<uint32_t, N>;
  VU h = __builtin_convertvector(h16, VU);
  VU sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  VU normal = sign | ((e + 112u) << 23) | (m << 13);
  VU special = sign | 0x7f800000u | (m << 13);
  vec<float, N> sub = __builtin_convertvector(m, vec<float, N>) * 5.9604644775390625e-8f;
  VU subb = ((vec<uint32_t, N>)sub) | sign;
  VU r = select(e == 0x1fu, special, select(e == 0u, subb, normal));
  return (vec<float, N>)r;
}
template <int N> PTO_INLINE vec<uint16_t, N> float_to_half_bits_v(vec<float, N> f) {
  using VU = vec<uint32_t, N>;
  VU x = (VU)f;
  VU sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  VU naninf = select(x > 0x7f800000u, VU{} + 0x7e00u, VU{} + 0x7c00u);
  vec<float, N> t = ((vec<float, N>)x) + 0.5f;
  VU sub = ((VU)t) - 0x3f000000u;
  VU norm = (x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13;
  VU r = select(x >= 0x477ff000u, naninf, select(x < 0x38800000u, sub, norm));
  return __builtin_convertvector(r | sign, vec<uint16_t, N>);
}
template <int N> PTO_INLINE vec<uint16_t, N> float_to_bf16_bits_v(vec<float, N> f) {
  using VU = vec<uint32_t, N>;
  VU u = (VU)f;
  VU rn = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  VU qn = (u >> 16) | 0x40u;
  return __builtin_convertvector(select((u & 0x7fffffffu) > 0x7f800000u, qn, rn), vec<uint16_t, N>);
}

template <int N, class S> PTO_INLINE vec<float, N> h2f(const S* p) {  // p: N stored halves
#if defined(__AVX512F__)
  if constexpr (N == 16) return (vec<float, 16>)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
#endif
#if defined(__F16C__)
  if constexpr (N == 8) return (vec<float, 8>)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
  if constexpr (N == 4) return (vec<float, 4>)_mm_cvtph_ps(_mm_loadl_epi64((const __m128i*)p));
#endif
#if defined(__aarch64__) && defined(PTO_HAS_FLOAT16)
  if constexpr (true) {
    vec<_Float16, N> h;
    std::memcpy(&h, p, sizeof h);
    return __builtin_convertvector(h, vec<float, N>);
  }
#endif
  if constexpr (N >= 32 && (N / 2) * 2 == N) {
    vec<float, N / 2> lo = h2f<N / 2>(p), hi = h2f<N / 2>(p + N / 2);
    vec<float, N> r;
    std::memcpy(&r, &lo, sizeof lo);
    std::memcpy(reinterpret_cast<char*>(&r) + sizeof lo, &hi, sizeof hi);
    return r;
  } else {
    vec<uint16_t, N> b;
    std::memcpy(&b, p, sizeof b);
    return half_bits_to_float_v<N>(b);
  }
}
template <int N, class S, class V> PTO_INLINE void f2h(S* p, V v) {
#if defined(__AVX512F__)
  if constexpr (N == 16) {
    _mm256_storeu_si256((__m256i*)p, _mm512_cvtps_ph((__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return;
  }
#endif
#if defined(__F16C__)
  if constexpr (N == 8) {
    _mm_storeu_si128((__m128i*)p, _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return;
  }
  if constexpr (N == 4) {
    _mm_storel_epi64((__m128i*)p, _mm_cvtps_ph((__m128)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return;
  }
#endif
#if defined(__aarch64__) && defined(PTO_HAS_FLOAT16)
  if constexpr (true) {
    auto h = __builtin_convertvector(v, vec<_Float16, N>);
    std::memcpy(p, &h, sizeof h);
    return;
  }
#endif
  if constexpr (N >= 32 && (N / 2) * 2 == N) {
    vec<float, N / 2> lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    f2h<N / 2>(p, lo);
    f2h<N / 2>(p + N / 2, hi);
  } else {
    auto b = float_to_half_bits_v<N>(v);
    std::memcpy(p, &b, sizeof b);
  }
}

// bf16 <-> fp32 for N lanes. bf16 -> fp32 is a 16-bit shift: zero-extend + shift on AVX-512 / AVX2,
// one unpack (bf16 into the high halves) on SSE2. fp32 -> bf16 with AVX512-BF16 is vcvtneps2bf16
// (round to nearest even, NaN -> (bits >> 16) | 0x40 like float_to_bf16_bits), except that it reads
// subnormal inputs as zero: lanes that are subnormal (vfpclassps, rare) are redone with the integer
// rounding, so subnormals survive like everywhere else.
template <int N> PTO_INLINE vec<float, N> bf2f(const void* p) {
#if defined(__AVX512F__)
  if constexpr (N == 16)
    return (vec<float, 16>)_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16);
#endif
#if defined(__AVX2__)
  if constexpr (N == 8)
    return (vec<float, 8>)_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16);
#endif
#if defined(__SSE2__)
  if constexpr (N == 4) return (vec<float, 4>)_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64((const __m128i*)p));
#endif
  if constexpr (N >= 32 && N % 2 == 0 && kVecBytes >= 32) {
    vec<float, N / 2> lo = bf2f<N / 2>(p), hi = bf2f<N / 2>(static_cast<const uint16_t*>(p) + N / 2);
    vec<float, N> r;
    std::memcpy(&r, &lo, sizeof lo);
    std::memcpy(reinterpret_cast<char*>(&r) + sizeof lo, &hi, sizeof hi);
    return r;
  } else {
    vec<uint16_t, N> b;
    std::memcpy(&b, p, sizeof b);
    return (vec<float, N>)(__builtin_convertvector(b, vec<uint32_t, N>) << 16);
  }
}
template <int N> PTO_INLINE void f2bf(void* p, vec<float, N> v) {
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
  if constexpr (N == 16) {
    const __m512 x = (__m512)v;
    __m256i r = (__m256i)_mm512_cvtneps_pbh(x);
    const __mmask16 sub = _mm512_fpclass_ps_mask(x, 0x20);
    if (__builtin_expect(sub != 0, 0)) r = _mm256_mask_mov_epi16(r, sub, (__m256i)float_to_bf16_bits_v<16>(v));
    _mm256_storeu_si256((__m256i*)p, r);
    return;
  }
#if defined(__AVX512VL__)
  if constexpr (N == 8) {
    const __m256 x = (__m256)v;
    __m128i r = (__m128i)_mm256_cvtneps_pbh(x);
    const __mmask8 sub = _mm256_fpclass_ps_mask(x, 0x20);
    if (__builtin_expect(sub != 0, 0)) r = _mm_mask_mov_epi16(r, sub, (__m128i)float_to_bf16_bits_v<8>(v));
    _mm_storeu_si128((__m128i*)p, r);
    return;
  }
#endif
#endif
  if constexpr (N >= 32 && N % 2 == 0 && kVecBytes >= 64) {
    vec<float, N / 2> lo, hi;  // (memcpy halves: GCC 12 can ICE on shuffles of 128-byte vectors)
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    f2bf<N / 2>(p, lo);
    f2bf<N / 2>(static_cast<uint16_t*>(p) + N / 2, hi);
  } else {
    auto b = float_to_bf16_bits_v<N>(v);
    std::memcpy(p, &b, sizeof b);
  }
}

// cvt_run_f32_bf16(d, s, n): n contiguous floats to bf16 (TCVT's row loop). With AVX512-BF16 two
// vectors per vcvtne2ps2bf16 and one subnormal test for both; elsewhere the chunked f2bf.
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define PTO_BF16_CVT_RUN 1
PTO_INLINE void cvt_run_f32_bf16(uint16_t* d, const float* s, long n) {
  long c = 0;
  for (; c + 32 <= n; c += 32) {
    const __m512 lo = _mm512_loadu_ps(s + c), hi = _mm512_loadu_ps(s + c + 16);
    const __mmask16 s0 = _mm512_fpclass_ps_mask(lo, 0x20), s1 = _mm512_fpclass_ps_mask(hi, 0x20);
    if (__builtin_expect(_kortestz_mask16_u8(s0, s1), 1)) {
      _mm512_storeu_si512(d + c, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    } else {
      f2bf<16>(d + c, (vec<float, 16>)lo);
      f2bf<16>(d + c + 16, (vec<float, 16>)hi);
    }
  }
  for (; c < n; c += 16) {
    const int k = int(std::min(16L, n - c));
    const __mmask16 m = __mmask16(_bzhi_u32(~0u, unsigned(k)));
    const __m512 x = _mm512_maskz_loadu_ps(m, s + c);
    __m256i r = (__m256i)_mm512_cvtneps_pbh(x);
    const __mmask16 sub = _mm512_fpclass_ps_mask(x, 0x20);
    if (__builtin_expect(sub != 0, 0)) r = _mm256_mask_mov_epi16(r, sub, (__m256i)float_to_bf16_bits_v<16>((vec<float, 16>)x));
    _mm256_mask_storeu_epi16(d + c, m, r);
  }
}
#endif

// ---- loads and stores with conversion -----------------------------------------------------------------
// load<C, N>(p): N elements of storage type T at p, converted to compute type C.
template <class C, int N, class T> PTO_INLINE vec<C, N> load(const T* p) {
  if constexpr (is_half_v<T>) {
    return cast<C>(h2f<N>(p));
  } else if constexpr (is_bf16_v<T>) {
    return cast<C>(bf2f<N>(p));
  } else {
    vec<vstorage_t<T>, N> raw;
    std::memcpy(&raw, p, sizeof raw);
    return cast<C>(raw);
  }
}
// store<T>(p, v): convert compute vector v to storage type T and write N elements.
template <class T, class V> PTO_INLINE void store(T* p, V v) {
  using C = lane_t<V>;
  constexpr int N = lane_of<V>::n;
  if constexpr (is_half_v<T>) {
    f2h<N>(p, cast<float>(v));
  } else if constexpr (is_bf16_v<T>) {
    f2bf<N>(p, cast<float>(v));
  } else if constexpr (is_bool_v<T>) {
    auto m = (v != C(0)) & 1;
    auto b = __builtin_convertvector(m, vec<uint8_t, N>);
    std::memcpy(p, &b, sizeof b);
  } else if constexpr (std::is_integral_v<T> && std::is_integral_v<C> && sizeof(T) < sizeof(C)) {
    auto u = __builtin_convertvector(as<std::make_unsigned_t<C>>(v), vec<std::make_unsigned_t<T>, N>);
    std::memcpy(p, &u, sizeof u);
  } else {
    auto raw = cast<T>(v);
    std::memcpy(p, &raw, sizeof raw);
  }
}

// Partial forms: n (< N) elements; the other lanes are zero on load and untouched on store.
template <class C, int N, class T> PTO_INLINE vec<C, N> load_n(const T* p, int n) {
  constexpr int B = N * int(sizeof(T));
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (B == 64) {
    __m512i r = _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, unsigned(n * sizeof(T))), p);
    return load<C, N>(reinterpret_cast<const T*>(&r));
  } else if constexpr (B == 32) {
    __m256i r = _mm256_maskz_loadu_epi8(_bzhi_u32(~0u, unsigned(n * sizeof(T))), p);
    return load<C, N>(reinterpret_cast<const T*>(&r));
  } else if constexpr (B == 16) {
    __m128i r = _mm_maskz_loadu_epi8(__mmask16(_bzhi_u32(~0u, unsigned(n * sizeof(T)))), p);
    return load<C, N>(reinterpret_cast<const T*>(&r));
  }
#endif
  alignas(64) unsigned char buf[B] = {};
  std::memcpy(buf, p, size_t(n) * sizeof(T));
  return load<C, N>(reinterpret_cast<const T*>(buf));
}
template <class T, class V> PTO_INLINE void store_n(T* p, V v, int n) {
  constexpr int N = lane_of<V>::n;
  constexpr int B = N * int(sizeof(T));
  alignas(64) unsigned char buf[B];
  store<T>(reinterpret_cast<T*>(buf), v);
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (B == 64) {
    _mm512_mask_storeu_epi8(p, _bzhi_u64(~0ull, unsigned(n * sizeof(T))), _mm512_load_si512(buf));
    return;
  } else if constexpr (B == 32) {
    _mm256_mask_storeu_epi8(p, _bzhi_u32(~0u, unsigned(n * sizeof(T))), _mm256_load_si256((const __m256i*)buf));
    return;
  } else if constexpr (B == 16) {
    _mm_mask_storeu_epi8(p, __mmask16(_bzhi_u32(~0u, unsigned(n * sizeof(T)))), _mm_load_si128((const __m128i*)buf));
    return;
  }
#endif
  std::memcpy(p, buf, size_t(n) * sizeof(T));
}

}  // namespace pto::simd
