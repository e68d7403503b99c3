// pto/types.hpp -- element types (half, bf16), type traits, promotion and scalar conversions.
#pragma once
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "config.hpp"

namespace pto {

template <class To, class From>
PTO_INLINE To bit_cast(const From& f) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  std::memcpy(&t, &f, sizeof(To));
  return t;
}

// ---- software IEEE binary16 conversions (round to nearest even) -------------------------------
PTO_INLINE float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float v = float(m) * 5.9604644775390625e-8f;  // m * 2^-24
    return sign ? -v : v;
  }
  return bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}

PTO_INLINE uint16_t float_to_half_bits(float f) {
  uint32_t x = bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return uint16_t(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {                                   // below 2^-14: subnormal half or zero
    float t = bit_cast<float>(x) + 0.5f;                   // ulp(0.5) == 2^-24 == half subnormal step
    return uint16_t(sign | (bit_cast<uint32_t>(t) - 0x3f000000u));
  }
  x += 0xc8000fffu + ((x >> 13) & 1u);  // rebias exponent (-112) and round to nearest even
  return uint16_t(sign | (x >> 13));
}

// ---- fp16 -------------------------------------------------------------------------------------
// _Float16 in C++: GCC >= 12 on x86, GCC >= 13 elsewhere, Clang where __FLT16_MAX__ is defined.
#if defined(__FLT16_MAX__) && !defined(PTO_NO_FLOAT16) && \
    (defined(__clang__) || defined(__x86_64__) || defined(__i386__) || (defined(__GNUC__) && __GNUC__ >= 13))
using half = _Float16;
#define PTO_HAS_FLOAT16 1
PTO_INLINE uint16_t half_to_bits(half h) { return bit_cast<uint16_t>(h); }
PTO_INLINE half half_from_bits(uint16_t b) { return bit_cast<half>(b); }
PTO_INLINE float half_to_float(half h) {
#if defined(__F16C__) || defined(__AVX512FP16__) || defined(__aarch64__)
  return float(h);
#else
  return half_bits_to_float(half_to_bits(h));  // avoids a libgcc call per element
#endif
}
PTO_INLINE half float_to_half(float f) {
#if defined(__F16C__) || defined(__AVX512FP16__) || defined(__aarch64__)
  return half(f);
#else
  return half_from_bits(float_to_half_bits(f));
#endif
}
#else
struct half {
  uint16_t bits;
  half() = default;
  half(float f) : bits(float_to_half_bits(f)) {}
  operator float() const { return half_bits_to_float(bits); }
};
PTO_INLINE uint16_t half_to_bits(half h) { return h.bits; }
PTO_INLINE half half_from_bits(uint16_t b) { half h; h.bits = b; return h; }
PTO_INLINE float half_to_float(half h) { return half_bits_to_float(h.bits); }
PTO_INLINE half float_to_half(float f) { return half(f); }
#endif

// ---- bf16 (16-bit storage; fp32 with the low 16 mantissa bits dropped) ---------------------------
PTO_INLINE uint16_t float_to_bf16_bits(float f) {
  uint32_t u = bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                          // nearest even
  return uint16_t(u >> 16);
}
struct bf16 {
  uint16_t bits;
  bf16() = default;
  bf16(float f) : bits(float_to_bf16_bits(f)) {}
  operator float() const { return bit_cast<float>(uint32_t(bits) << 16); }
  static bf16 from_bits(uint16_t b) { bf16 r; r.bits = b; return r; }
};
static_assert(sizeof(bf16) == 2 && sizeof(half) == 2);

// ---- traits -------------------------------------------------------------------------------------
template <class T> inline constexpr bool is_half_v = std::is_same_v<T, half>;
template <class T> inline constexpr bool is_bf16_v = std::is_same_v<T, bf16>;
template <class T> inline constexpr bool is_low_float_v = is_half_v<T> || is_bf16_v<T>;
template <class T> inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_low_float_v<T>;
template <class T> inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
template <class T> inline constexpr bool is_int_v = std::is_integral_v<T> && !is_bool_v<T>;

// The type elementwise arithmetic is done in: fp32 for fp16/bf16, uint8 (0/1) for bool.
template <class T> struct compute_type { using type = T; };
template <> struct compute_type<half> { using type = float; };
template <> struct compute_type<bf16> { using type = float; };
template <> struct compute_type<bool> { using type = uint8_t; };
template <class T> using compute_t = typename compute_type<T>::type;

// Binary promotion (registry rules): float beats int, wider beats narrower, signed beats unsigned
// of equal width; fp16 with bf16 gives fp32; bool loses to everything.
template <class A, class B> struct promote2 {
  static constexpr int rank(bool fl, int size, bool sgn) { return (fl ? 1000 : 0) + size * 10 + (sgn ? 1 : 0); }
  static constexpr bool fa = is_float_v<A>, fb = is_float_v<B>;
  static constexpr int ra = is_bool_v<A> ? -1 : rank(fa, int(sizeof(A)), fa || std::is_signed_v<A>);
  static constexpr int rb = is_bool_v<B> ? -1 : rank(fb, int(sizeof(B)), fb || std::is_signed_v<B>);
  using type = std::conditional_t<(is_half_v<A> && is_bf16_v<B>) || (is_bf16_v<A> && is_half_v<B>), float,
                                  std::conditional_t<(ra >= rb), A, B>>;
};
template <class... Ts> struct promote;
template <class A> struct promote<A> { using type = A; };
template <class A, class B, class... R> struct promote<A, B, R...> {
  using type = typename promote<typename promote2<A, B>::type, R...>::type;
};
template <class... Ts> using promote_t = typename promote<Ts...>::type;

// Storage type used inside SIMD vectors (no vectors of bool / struct types).
template <class T> struct vstorage { using type = T; };
template <> struct vstorage<bool> { using type = uint8_t; };
template <> struct vstorage<bf16> { using type = uint16_t; };
#if !defined(PTO_HAS_FLOAT16)
template <> struct vstorage<half> { using type = uint16_t; };
#endif
template <class T> using vstorage_t = typename vstorage<T>::type;

// ---- scalar conversions --------------------------------------------------------------------------
template <class T> PTO_INLINE compute_t<T> to_compute(T v) {
  if constexpr (is_half_v<T>) return half_to_float(v);
  else if constexpr (is_bf16_v<T>) return float(v);
  else if constexpr (is_bool_v<T>) return uint8_t(v ? 1 : 0);
  else return v;
}

// Convert a compute-type value to storage type T (floats: round to nearest even; bool: != 0;
// integers: C++ conversion, modulo for int -> int).
template <class T, class C> PTO_INLINE T from_compute(C v) {
  if constexpr (is_half_v<T>) return float_to_half(float(v));
  else if constexpr (is_bf16_v<T>) return bf16(float(v));
  else if constexpr (is_bool_v<T>) return v != C(0);
  else if constexpr (is_int_v<T> && std::is_integral_v<C>) return T(std::make_unsigned_t<T>(v));
  else return T(v);
}

// Convert a host scalar (double / int64 from generated code) to compute type C.
template <class C, class S> PTO_INLINE C scalar_to(S s) {
  if constexpr (std::is_floating_point_v<C>) return C(s);
  else if constexpr (std::is_floating_point_v<S>) {
    if (!(s == s)) return C(0);
    return C(static_cast<long long>(s));
  } else return C(std::make_unsigned_t<C>(s));
}

template <class T> PTO_INLINE T pad_max() {
  if constexpr (is_float_v<T>) return from_compute<T>(std::numeric_limits<float>::infinity());
  else if constexpr (is_bool_v<T>) return true;
  else return std::numeric_limits<T>::max();
}
template <class T> PTO_INLINE T pad_min() {
  if constexpr (is_float_v<T>) return from_compute<T>(-std::numeric_limits<float>::infinity());
  else if constexpr (is_bool_v<T>) return false;
  else return std::numeric_limits<T>::min();
}

}  // namespace pto
