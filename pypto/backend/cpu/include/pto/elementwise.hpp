// pto/elementwise.hpp -- elementwise instructions (binary, scalar, ternary, unary, compare, select,
// convert, fill). All compute over dst's valid region; see vmap.hpp for broadcasting.
#pragma once
#include "functors.hpp"
#include "vmap.hpp"

namespace pto {

// The functor instructions (TADD, TADDS, TEXP, TROWEXPANDADD, ...) are instantiated from these
// macros by the program source, generated from pypto/backend/cpu/lowering.py (one row each).
// ---- tile x tile ----------------------------------------------------------------------------------
#define PTO_BINARY(NAME, OP)                                                                      \
  template <class D, class A, class B> PTO_INLINE void NAME(D& dst, const A& a, const B& b) {      \
    vmap(dst, op::OP{}, a, b);                                                                     \
  }
// forms with the hardware's scratch tile (ignored on the CPU)
#define PTO_BINARY_SCRATCH(NAME, OP)                                                              \
  PTO_BINARY(NAME, OP)                                                                            \
  template <class D, class A, class B, class Tmp> PTO_INLINE void NAME(D& dst, const A& a, const B& b, Tmp&) { \
    NAME(dst, a, b);                                                                              \
  }

template <class D, class A, class B> PTO_INLINE void TCMP(D& dst, const A& a, const B& b, CmpMode mode) {
  vmap(dst, op::Cmp{mode}, a, b);
}
template <class D, class X, class S> PTO_INLINE void TPRELU(D& dst, const X& x, const S& slope) {
  vmap(dst, op::PRelu{}, x, slope);
}
template <class D, class X, class S, class Tmp> PTO_INLINE void TPRELU(D& dst, const X& x, const S& slope, Tmp&) {
  TPRELU(dst, x, slope);
}

// ---- tile x scalar (scalars arrive as double or int64; converted to the tile's compute type) ---------
#define PTO_SCALAR(NAME, OP)                                                                     \
  template <class D, class A, class S> PTO_INLINE void NAME(D& dst, const A& a, S s) {          \
    using CT = compute_t<typename A::value_type>;                                                \
    vmap_ct<CT>(dst, op::OP<CT>{scalar_to<CT>(s)}, a);                                           \
  }
#define PTO_SCALAR_SCRATCH(NAME, OP)                                                             \
  PTO_SCALAR(NAME, OP)                                                                           \
  template <class D, class A, class S, class Tmp> PTO_INLINE void NAME(D& dst, const A& a, S s, Tmp&) { NAME(dst, a, s); }
template <class D, class A, class S> PTO_INLINE void TCMPS(D& dst, const A& a, S s, CmpMode mode) {
  using CT = compute_t<typename A::value_type>;
  vmap_ct<CT>(dst, op::CmpS<CT>{mode, scalar_to<CT>(s)}, a);
}

// ---- ternary -------------------------------------------------------------------------------------
template <class D, class A, class B, class C> PTO_INLINE void TADDC(D& dst, const A& a, const B& b, const C& c) {
  vmap(dst, op::AddC{}, a, b, c);
}
template <class D, class A, class B, class C> PTO_INLINE void TSUBC(D& dst, const A& a, const B& b, const C& c) {
  vmap(dst, op::SubC{}, a, b, c);
}
template <class D, class A, class S, class C> PTO_INLINE void TADDSC(D& dst, const A& a, S s, const C& c) {
  using CT = default_ct<A, C>;
  vmap_ct<CT>(dst, op::AddSC<CT>{scalar_to<CT>(s)}, a, c);
}
template <class D, class A, class S, class C> PTO_INLINE void TSUBSC(D& dst, const A& a, S s, const C& c) {
  using CT = default_ct<A, C>;
  vmap_ct<CT>(dst, op::SubSC<CT>{scalar_to<CT>(s)}, a, c);
}

// TSEL: dst = mask != 0 ? a : b (mask of any dtype).
template <class D, class M, class A, class B> PTO_INLINE void TSEL(D& dst, const M& mask, const A& a, const B& b) {
  using CT = default_ct<A, B>;
  using MT = compute_t<detail::vt_of<M>>;
  constexpr int N = simd::lanes_for<detail::max_size<CT, MT, typename D::value_type, detail::vt_of<M>,
                                                      detail::vt_of<A>, detail::vt_of<B>>::v>;
  using V = simd::vec<CT, N>;
  using MV = simd::vec<MT, N>;
  using MaskCT = simd::mask_t<V>;
  constexpr Bc bm = detail::bc_of<D, M>(), ba = detail::bc_of<D, A>(), bb = detail::bc_of<D, B>();
  vloop<CT, N>(dst.vr, dst.vc, can_flatten(dst, mask, a, b), [&](const Cursor<CT, N>& cur) PTO_INLINE_LAMBDA {
    Cursor<MT, N> mc{cur.r, cur.c, cur.n};
    MV m = mc.template load_bc<bm>(detail::tile_of(mask));
    MaskCT sel = __builtin_convertvector(m != MT(0), MaskCT);
    V va = cur.template load_bc<ba>(detail::tile_of(a)), vb = cur.template load_bc<bb>(detail::tile_of(b));
    cur.store(dst, sel ? va : vb);
  });
}
// TSELS: the whole tile from a (mode != 0) or from b.
template <class D, class A, class B, class S> PTO_INLINE void TSELS(D& dst, const A& a, const B& b, S mode) {
  if (mode != 0) vmap(dst, op::Identity{}, a);
  else vmap(dst, op::Identity{}, b);
}

// ---- unary ---------------------------------------------------------------------------------------
#define PTO_UNARY(NAME, OP) \
  template <class D, class A> PTO_INLINE void NAME(D& dst, const A& a) { vmap(dst, op::OP{}, a); }
// ---- a tile op a broadcast vector: dst[i,j] = a[i,j] op v[i,0] (row) / v[0,j] (col) ----------------
#define PTO_EXPAND(NAME, OP, WRAP)                                                                \
  template <class D, class A, class S> PTO_INLINE void NAME(D& dst, const A& a, const S& v) {     \
    vmap(dst, op::OP{}, a, WRAP(v));                                                              \
  }
// A row vector with more than one column is the packed 32-byte carrier of tile row_expand_add
// (pl-head 3.4): dst[i, j] = a[i, j] op v[i, j % K], element by element (the fuser leaves it alone).
template <class F, class D, class A, class S> PTO_INLINE void trowexpand_packed(D& dst, const A& a, const S& v) {
  using T = typename D::value_type;
  static_assert(D::kRowMajor && A::kRowMajor && S::kRowMajor);
  for (int r = 0; r < dst.vr; ++r) {
    const auto* pa = a.row(r);
    const auto* pv = v.row(r);
    T* o = dst.row(r);
    for (int c = 0; c < dst.vc; ++c) o[c] = from_compute<T>(F{}(to_compute(pa[c]), to_compute(pv[c % S::Cols])));
  }
}
#define PTO_ROW_EXPAND(NAME, OP)                                                                  \
  template <class D, class A, class S> PTO_INLINE void NAME(D& dst, const A& a, const S& v) {     \
    if constexpr (S::Cols > 1) trowexpand_packed<op::OP>(dst, a, v);                              \
    else vmap(dst, op::OP{}, a, ColBcast(v));                                                     \
  }
#define PTO_COL_EXPAND(NAME, OP) PTO_EXPAND(NAME, OP, RowBcast)
// bitwise not for integers, logical not for bool
template <class D, class A> PTO_INLINE void TNOT(D& dst, const A& a) {
  if constexpr (is_bool_v<typename A::value_type>) vmap(dst, op::LNot{}, a);
  else vmap(dst, op::Not{}, a);
}

// ---- fill ----------------------------------------------------------------------------------------
// TTRI(dst, diagonal, upper): 1 where c <= r + diagonal (upper: c >= r + diagonal), else 0, over
// the valid region.
template <class D, class S> PTO_INLINE void TTRI(D& dst, S diagonal, int upper) {
  using T = typename D::value_type;
  static_assert(D::kRowMajor);
  const long long d = static_cast<long long>(diagonal);
  const T one = from_compute<T>(compute_t<T>(1)), zero = from_compute<T>(compute_t<T>(0));
  for (int r = 0; r < dst.vr; ++r) {
    T* p = dst.row(r);
    for (int c = 0; c < dst.vc; ++c) p[c] = (upper ? c >= r + d : c <= r + d) ? one : zero;
  }
}
template <class D, class S> PTO_INLINE void TEXPANDS(D& dst, S s) {
  using T = typename D::value_type;
  static_assert(D::kRowMajor);
  const T v = from_compute<T>(scalar_to<compute_t<T>>(s));
  if (dst.vc == D::Cols) {
    T* p = dst.data;
    for (long i = 0, n = long(dst.vr) * D::Cols; i < n; ++i) p[i] = v;
  } else {
    for (int r = 0; r < dst.vr; ++r) {
      T* p = dst.row(r);
      for (int c = 0; c < dst.vc; ++c) p[c] = v;
    }
  }
}

// TRANDOM(dst, key0, key1, c0, c1, c2, c3, rounds): Philox-4x32 (ops/rng.py's convention): element j
// of the row-major tile is word j % 4 of Philox(key, counter + j / 4), the counter a 128-bit add.
template <class D, class K0, class K1, class S0, class S1, class S2, class S3>
PTO_INLINE void TRANDOM(D& dst, K0 key0, K1 key1, S0 c0, S1 c1, S2 c2, S3 c3, int rounds) {
  using T = typename D::value_type;
  static_assert(D::kRowMajor && sizeof(T) == 4);
  auto u32 = [](auto v) { return uint32_t(uint64_t(scalar_to<int64_t>(v))); };
  const uint32_t k00 = u32(key0), k10 = u32(key1), base[4] = {u32(c0), u32(c1), u32(c2), u32(c3)};
  const long n = long(D::Rows) * D::Cols;
  for (long b = 0; b * 4 < n; ++b) {
    uint32_t x[4];
    uint64_t carry = uint64_t(b);
    for (int i = 0; i < 4; ++i) {
      const uint64_t s = uint64_t(base[i]) + (carry & 0xFFFFFFFFu);
      x[i] = uint32_t(s);
      carry = (carry >> 32) + (s >> 32);
    }
    uint32_t k0 = k00, k1 = k10;
    for (int r = 0; r < rounds; ++r) {
      if (r) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
      const uint64_t p0 = uint64_t(0xD2511F53u) * x[0], p1 = uint64_t(0xCD9E8D57u) * x[2];
      const uint32_t y0 = uint32_t(p1 >> 32) ^ x[1] ^ k0, y2 = uint32_t(p0 >> 32) ^ x[3] ^ k1;
      x[0] = y0; x[1] = uint32_t(p1); x[2] = y2; x[3] = uint32_t(p0);
    }
    for (int i = 0; i < 4 && b * 4 + i < n; ++i) {
      const long j = b * 4 + i;
      std::memcpy(&dst.data[j], &x[i], 4);
    }
  }
}
// TCI(dst, start, step, descending): column j of every valid row is start + j * step (minus when
// descending). Integers in 64-bit, wrapping into T; floats in double from the fp32 scalars, rounded once.
template <class D, class S, class P> PTO_INLINE void TCI(D& dst, S start, P step, int descending) {
  using T = typename D::value_type;
  static_assert(D::kRowMajor);
  for (int r = 0; r < dst.vr; ++r) {
    T* p = dst.row(r);
    if constexpr (is_int_v<T>) {
      const uint64_t s0 = uint64_t(scalar_to<int64_t>(start)), st = uint64_t(scalar_to<int64_t>(step));
      for (int c = 0; c < dst.vc; ++c) {
        const uint64_t d = uint64_t(c) * st;
        p[c] = from_compute<T>(int64_t(descending ? s0 - d : s0 + d));
      }
    } else {
      const double s0 = double(scalar_to<float>(start)), st = double(scalar_to<float>(step));
      for (int c = 0; c < dst.vc; ++c) p[c] = from_compute<T>(descending ? s0 - double(c) * st : s0 + double(c) * st);
    }
  }
}

// ---- convert -------------------------------------------------------------------------------------
namespace detail {
template <class V> PTO_INLINE V round_by(V x, RoundMode m) {
  switch (m) {
    case RoundMode::FLOOR: return simd::vfloor(x);
    case RoundMode::CEIL: return simd::vceil(x);
    case RoundMode::NONE:
    case RoundMode::TRUNC: return simd::vtrunc(x);
    case RoundMode::ROUND: {  // half away from zero, exactly (the reference's floor(x+.5) / ceil(x-.5) in
      // float64): x - trunc(x) is exact, so no rounding of x + 0.5 can push 0.49999997 up to 1
      using L = simd::lane_t<V>;
      const V t = simd::vtrunc(x), d = x - t;
      return simd::select(d >= L(0.5), t + L(1), simd::select(d <= L(-0.5), t - L(1), t));
    }
    default: return simd::vrint(x);  // RINT, ODD, CAST_RINT: half to even
  }
}
// float lanes (already integral) -> integer type I, saturating; NaN -> 0.
template <class I, class V> PTO_INLINE simd::rebind_t<I, V> sat_to_int(V x) {
  using L = simd::lane_t<V>;
  using MI = simd::mask_t<V>;
  const L lo = L(std::numeric_limits<I>::min());
  const L top = std::is_signed_v<I> ? -lo : L(2) * (L(std::numeric_limits<I>::max() / 2) + L(1));  // 2^bits
  MI hi = x >= top;
  V y = simd::select(x != x, V{} + L(0), x);
  y = simd::vmax(y, V{} + lo);
  y = simd::select(hi, V{} + L(0), y);
  // convert through a type that holds every value of I (avoids UB of float->narrow int)
  using W = std::conditional_t<(sizeof(I) < 4), int32_t, I>;
  auto w = __builtin_convertvector(y, simd::rebind_t<W, V>);
  auto r = __builtin_convertvector(w, simd::rebind_t<I, V>);
  return simd::select(__builtin_convertvector(hi, simd::mask_t<decltype(r)>),
                      simd::rebind_t<I, V>{} + std::numeric_limits<I>::max(), r);
}
}  // namespace detail

// TCVT: float -> int rounds by mode and saturates (NaN -> 0); int -> int wraps; to float rounds to
// nearest even; to bool is != 0.
template <class D, class S> PTO_INLINE void TCVT(D& dst, const S& src, RoundMode mode = RoundMode::CAST_RINT) {
  using DT = typename D::value_type;
  using ST = typename S::value_type;
  using CT = compute_t<ST>;
  constexpr int N = simd::lanes_for<detail::max_size<CT, DT, ST, compute_t<DT>>::v>;
  using V = simd::vec<CT, N>;
  const bool flat = can_flatten(dst, Full(src));
#if defined(PTO_BF16_CVT_RUN)
  if constexpr (is_bf16_v<DT> && std::is_same_v<ST, float>) {  // vcvtne2ps2bf16 over whole rows
    static_assert(D::kRowMajor && S::kRowMajor);
    auto* d = reinterpret_cast<uint16_t*>(dst.data);
    if (flat) {
      simd::cvt_run_f32_bf16(d, src.data, long(dst.vr) * dst.vc);
    } else {
      for (int r = 0; r < dst.vr; ++r) simd::cvt_run_f32_bf16(d + long(r) * D::Cols, src.row(r), dst.vc);
    }
    (void)sizeof(V);
    return;
  }
#endif
  if constexpr (std::is_floating_point_v<CT> && is_int_v<DT>) {
    vloop<CT, N>(dst.vr, dst.vc, flat, [&](const Cursor<CT, N>& cur) PTO_INLINE_LAMBDA {
      V x = detail::round_by(cur.load(Full(src)), mode);
      cur.store(dst, detail::sat_to_int<DT>(x));
    });
  } else {
    vloop<CT, N>(dst.vr, dst.vc, flat, [&](const Cursor<CT, N>& cur) PTO_INLINE_LAMBDA {
      cur.store(dst, cur.load(Full(src)));
    });
  }
}

// ---- partial binary ops (TPARTADD / TPARTMUL / TPARTMAX / TPARTMIN) ------------------------------------
// Over a's valid region: F(a, b) where b is valid too, a where it is not; dst takes a's valid region.
// Element by element in the compute type (a ragged tail is the point: no vector loop over it).
template <class F, class D, class A, class B> PTO_INLINE void tpart(D& dst, const A& a, const B& b) {
  using T = typename D::value_type;
  static_assert(D::kRowMajor && A::kRowMajor && B::kRowMajor);
  const int vr = a.vr, vc = a.vc;
  for (int r = 0; r < vr; ++r) {
    const auto* pa = a.row(r);
    const auto* pb = b.row(r < B::Rows ? r : 0);
    T* o = dst.row(r);
    const int bc = r < b.vr ? (b.vc < vc ? b.vc : vc) : 0;
    for (int c = 0; c < vc; ++c) {
      const auto x = to_compute(pa[c]);
      o[c] = c < bc ? from_compute<T>(F{}(x, to_compute(pb[c]))) : from_compute<T>(x);
    }
  }
  dst.vr = vr;
  dst.vc = vc;
}
#define PTO_PART(NAME, OP) \
  template <class D, class A, class B> PTO_INLINE void NAME(D& dst, const A& a, const B& b) { tpart<op::OP>(dst, a, b); }
PTO_PART(TPARTADD, Add)
PTO_PART(TPARTMUL, Mul)
PTO_PART(TPARTMAX, Max)
PTO_PART(TPARTMIN, Min)

}  // namespace pto
