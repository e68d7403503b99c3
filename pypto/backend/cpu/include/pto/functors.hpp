// pto/functors.hpp -- element functors. Each has one templated call operator that works on plain
// scalars (the compute type) and on simd::vec<CT, N> vectors, so the assembler can chain several
// of them inside one pto::vmap / pto::vloop pass (see README "Fused loops").
#pragma once
#include "math.hpp"

namespace pto {

enum class CmpMode { EQ = 0, NE = 1, LT = 2, LE = 3, GT = 4, GE = 5 };
enum class RoundMode { NONE = 0, RINT = 1, ROUND = 2, FLOOR = 3, CEIL = 4, TRUNC = 5, ODD = 6, CAST_RINT = 7 };
enum class PadValue { Null = 0, Zero = 1, Max = 2, Min = 3 };

namespace op {
using simd::lane_t;
using simd::select;
using simd::splat;

template <class V> PTO_INLINE constexpr bool is_fp() { return std::is_floating_point_v<lane_t<V>>; }
template <class V> PTO_INLINE V one() { return splat<V>(lane_t<V>(1)); }
template <class V> PTO_INLINE V zero() { return splat<V>(lane_t<V>(0)); }

// ---- binary ------------------------------------------------------------------------------------
struct Add { template <class V> PTO_INLINE V operator()(V a, V b) const { return simd::wadd(a, b); } };
struct Sub { template <class V> PTO_INLINE V operator()(V a, V b) const { return simd::wsub(a, b); } };
struct Mul { template <class V> PTO_INLINE V operator()(V a, V b) const { return simd::wmul(a, b); } };
struct Max { template <class V> PTO_INLINE V operator()(V a, V b) const { return simd::vmax(a, b); } };
struct Min { template <class V> PTO_INLINE V operator()(V a, V b) const { return simd::vmin(a, b); } };
// Floats: IEEE division. Integers: truncating, x / 0 = 0, MIN / -1 wraps.
struct Div {
  template <class V> PTO_INLINE V operator()(V a, V b) const {
    using L = lane_t<V>;
    if constexpr (std::is_floating_point_v<L>) return a / b;
    else {
      V z = zero<V>();
      auto bz = b == z;
      if constexpr (std::is_signed_v<L>) {
        auto bm = b == splat<V>(L(-1));
        V safe = select(bz | bm, one<V>(), b);
        V q = a / safe;
        return select(bz, z, select(bm, simd::wsub(z, a), q));
      } else {
        V q = a / select(bz, one<V>(), b);
        return select(bz, z, q);
      }
    }
  }
};
// Remainder with the sign of the dividend (C fmod / %); integer x % 0 = 0.
struct Rem {
  template <class V> PTO_INLINE V operator()(V a, V b) const {
    using L = lane_t<V>;
    if constexpr (std::is_floating_point_v<L>) return simd::lanewise2(a, b, [](L x, L y) { return std::fmod(x, y); });
    else {
      V z = zero<V>();
      auto bad = b == z;
      if constexpr (std::is_signed_v<L>) bad = bad | (b == splat<V>(L(-1)));
      V r = a % select(bad, one<V>(), b);
      return select(bad, z, r);
    }
  }
};
struct And { template <class V> PTO_INLINE V operator()(V a, V b) const { return a & b; } };
struct Or { template <class V> PTO_INLINE V operator()(V a, V b) const { return a | b; } };
struct Xor { template <class V> PTO_INLINE V operator()(V a, V b) const { return a ^ b; } };
// Shifts: counts outside [0, bits) give 0 (shl, shr of non-negative) or -1 (shr of negative).
struct Shl {
  template <class V> PTO_INLINE V operator()(V a, V b) const {
    using L = lane_t<V>;
    using U = std::make_unsigned_t<L>;
    auto ub = simd::as<U>(b);
    auto ok = ub < U(sizeof(L) * 8);
    auto sh = select(ok, ub, simd::splat<decltype(ub)>(U(0)));
    using VU = simd::rebind_t<U, V>;
    return select(ok, simd::as<L>(VU(simd::as<U>(a) << sh)), zero<V>());
  }
};
struct Shr {
  template <class V> PTO_INLINE V operator()(V a, V b) const {
    using L = lane_t<V>;
    using U = std::make_unsigned_t<L>;
    auto ub = simd::as<U>(b);
    auto ok = ub < U(sizeof(L) * 8);
    auto sh = simd::as<L>(select(ok, ub, simd::splat<decltype(ub)>(U(sizeof(L) * 8 - 1))));
    V r = a >> sh;  // arithmetic for signed lanes
    if constexpr (std::is_signed_v<L>) return r;
    else return select(ok, r, zero<V>());
  }
};
// Comparison: 1 where it holds, else 0 (in the operand type).
struct Cmp {
  CmpMode mode = CmpMode::EQ;
  template <class V> PTO_INLINE V operator()(V a, V b) const {
    V o = one<V>(), z = zero<V>();
    switch (mode) {
      case CmpMode::EQ: return select(a == b, o, z);
      case CmpMode::NE: return select(a != b, o, z);
      case CmpMode::LT: return select(a < b, o, z);
      case CmpMode::LE: return select(a <= b, o, z);
      case CmpMode::GT: return select(a > b, o, z);
      default: return select(a >= b, o, z);
    }
  }
};
struct PRelu {  // (x, slope)
  template <class V> PTO_INLINE V operator()(V x, V s) const { return select(x > zero<V>(), x, simd::wmul(x, s)); }
};

// ---- binary with a bound scalar (the TxxS instructions) ------------------------------------------------
template <class Op, class C> struct BindS {
  C s;
  Op op{};
  template <class V> PTO_INLINE V operator()(V a) const { return op(a, splat<V>(lane_t<V>(s))); }
};
template <class C> using AddS = BindS<Add, C>;
template <class C> using SubS = BindS<Sub, C>;
template <class C> using MulS = BindS<Mul, C>;
template <class C> using DivS = BindS<Div, C>;
template <class C> using MaxS = BindS<Max, C>;
template <class C> using MinS = BindS<Min, C>;
template <class C> using RemS = BindS<Rem, C>;
template <class C> using AndS = BindS<And, C>;
template <class C> using OrS = BindS<Or, C>;
template <class C> using XorS = BindS<Xor, C>;
template <class C> using ShlS = BindS<Shl, C>;
template <class C> using ShrS = BindS<Shr, C>;
template <class C> struct LRelu {
  C s;
  template <class V> PTO_INLINE V operator()(V x) const {
    return select(x > zero<V>(), x, simd::wmul(x, splat<V>(lane_t<V>(s))));
  }
};
template <class C> struct CmpS {
  CmpMode mode;
  C s;
  template <class V> PTO_INLINE V operator()(V a) const { return Cmp{mode}(a, splat<V>(lane_t<V>(s))); }
};
template <class C> struct Fill {
  C s;
  template <class V> PTO_INLINE V operator()() const { return splat<V>(lane_t<V>(s)); }
};

// ---- ternary --------------------------------------------------------------------------------------
struct AddC { template <class V> PTO_INLINE V operator()(V a, V b, V c) const { return simd::wadd(simd::wadd(a, b), c); } };
struct SubC { template <class V> PTO_INLINE V operator()(V a, V b, V c) const { return simd::wsub(simd::wsub(a, b), c); } };
template <class C> struct AddSC {
  C s;
  template <class V> PTO_INLINE V operator()(V a, V c) const { return simd::wadd(simd::wadd(a, splat<V>(lane_t<V>(s))), c); }
};
template <class C> struct SubSC {
  C s;
  template <class V> PTO_INLINE V operator()(V a, V c) const { return simd::wsub(simd::wsub(a, splat<V>(lane_t<V>(s))), c); }
};
struct Sel {  // (mask, a, b)
  template <class V> PTO_INLINE V operator()(V m, V a, V b) const { return select(m != zero<V>(), a, b); }
};

// ---- unary ----------------------------------------------------------------------------------------
struct Exp { template <class V> PTO_INLINE V operator()(V x) const { return simd::vexp(x); } };
// exp(a - b): row/col_expand_expdif (a - b rounded in the compute type first, as two instructions)
struct ExpDif { template <class V> PTO_INLINE V operator()(V a, V b) const { return simd::vexp(a - b); } };
struct Log { template <class V> PTO_INLINE V operator()(V x) const { return simd::vlog(x); } };
struct Sqrt { template <class V> PTO_INLINE V operator()(V x) const { return simd::vsqrt(x); } };
struct Rsqrt { template <class V> PTO_INLINE V operator()(V x) const { return one<V>() / simd::vsqrt(x); } };
struct Recip { template <class V> PTO_INLINE V operator()(V x) const { return one<V>() / x; } };
struct Neg {
  template <class V> PTO_INLINE V operator()(V x) const {
    if constexpr (is_fp<V>()) return -x;
    else return simd::wsub(zero<V>(), x);
  }
};
struct Abs { template <class V> PTO_INLINE V operator()(V x) const { return simd::vabs(x); } };
struct Relu { template <class V> PTO_INLINE V operator()(V x) const { return simd::vrelu(x); } };
struct Not { template <class V> PTO_INLINE V operator()(V x) const { return V(~x); } };                    // integers
struct LNot { template <class V> PTO_INLINE V operator()(V x) const { return select(x == zero<V>(), one<V>(), zero<V>()); } };  // bool
struct Identity { template <class V> PTO_INLINE V operator()(V x) const { return x; } };

// Round a compute value through storage type T and back (keeps a fused chain bit-identical to the
// unfused sequence when an intermediate tile has a narrower dtype, e.g. bf16).
template <class T> struct Round {
  template <class V> PTO_INLINE V operator()(V x) const {
    if constexpr (std::is_arithmetic_v<V>) return to_compute(from_compute<T>(x));
    else {
      constexpr int N = simd::lane_of<V>::n;
      vstorage_t<T> buf[N];
      simd::store<T>(reinterpret_cast<T*>(buf), x);
      return simd::load<lane_t<V>, N>(reinterpret_cast<const T*>(buf));
    }
  }
};

}  // namespace op
}  // namespace pto
