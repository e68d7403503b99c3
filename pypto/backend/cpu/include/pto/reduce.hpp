// pto/reduce.hpp -- row / column reductions and the broadcasts that undo them.
//   TROWSUM/TROWMAX/TROWMIN(dst[R,1], src[, tmp]): dst[i,0] = reduce(src[i, 0:src.vc]) for i < dst.vr
//   TCOLSUM/TCOLMAX/TCOLMIN(dst[1,C], src[, tmp]): dst[0,j] = reduce(src[0:src.vr, j]) for j < dst.vc
// fp16/bf16 accumulate in fp32 (TCOLSUM: in fp16 / bf16, the hardware's order, below); integer sums wrap in the integer type (computed in >= 32 bits).
#pragma once
#include "elementwise.hpp"

namespace pto {
namespace detail {

template <class T> struct red_acc { using type = compute_t<T>; };
template <> struct red_acc<int8_t> { using type = int32_t; };
template <> struct red_acc<int16_t> { using type = int32_t; };
template <> struct red_acc<uint8_t> { using type = uint32_t; };
template <> struct red_acc<uint16_t> { using type = uint32_t; };
template <> struct red_acc<bool> { using type = uint32_t; };

enum class Red { Sum, Max, Min };

template <Red R, class V> PTO_INLINE V red2(V a, V b) {
  if constexpr (R == Red::Sum) return simd::wadd(a, b);
  else if constexpr (R == Red::Max) return simd::vmax(a, b);
  else return simd::vmin(a, b);
}

// Float max / min reductions keep the running value with a bare maxps / minps (hw_max(acc, x): one
// instruction on the dependency chain, a NaN x is dropped) and record NaNs apart, off the chain:
// NanSeen::add(x, y) notes the lanes where x or y is unordered (one compare for two vectors; on
// AVX-512 an ordered compare merged into a mask register). A row / column that saw a NaN gets the
// first NaN of its data (rare path: rescanned), so the result is the NumPy one.
template <Red R, class V> PTO_INLINE V red_step(V acc, V x) {
  if constexpr (R != Red::Sum && std::is_floating_point_v<simd::lane_t<V>>)
    return R == Red::Max ? simd::hw_max(acc, x) : simd::hw_min(acc, x);
  else return red2<R>(acc, x);
}

template <class V> struct NanSeen {
  using L = simd::lane_t<V>;
  static constexpr int N = simd::lane_of<V>::n;
#if defined(__AVX512F__)
  static constexpr bool kMask = simd::kHwMinMax<V> && sizeof(V) == 64;
#else
  static constexpr bool kMask = false;
#endif
  using M = std::conditional_t<kMask, std::conditional_t<(N > 8), uint16_t, uint8_t>, simd::mask_t<V>>;
  M m = init();
  static PTO_INLINE M init() {
    if constexpr (kMask) return M(~M(0));  // lanes that saw only ordered values
    else return M{};                         // lanes that saw a NaN
  }
  PTO_INLINE void add(V x, V y) {
#if defined(__AVX512F__)
    if constexpr (kMask) {
      if constexpr (std::is_same_v<L, float>) m = _mm512_mask_cmp_ps_mask(m, (__m512)x, (__m512)y, _CMP_ORD_Q);
      else m = _mm512_mask_cmp_pd_mask(m, (__m512d)x, (__m512d)y, _CMP_ORD_Q);
      return;
    }
#endif
#if defined(__AVX__)
    if constexpr (!kMask && simd::kHwMinMax<V> && sizeof(V) == 32) {
      if constexpr (std::is_same_v<L, float>) m |= (M)_mm256_cmp_ps((__m256)x, (__m256)y, _CMP_UNORD_Q);
      else m |= (M)_mm256_cmp_pd((__m256d)x, (__m256d)y, _CMP_UNORD_Q);
      return;
    }
#endif
#if defined(__SSE2__)
    if constexpr (!kMask && simd::kHwMinMax<V> && sizeof(V) == 16) {
      if constexpr (std::is_same_v<L, float>) m |= (M)_mm_cmpunord_ps((__m128)x, (__m128)y);
      else m |= (M)_mm_cmpunord_pd((__m128d)x, (__m128d)y);
      return;
    }
#endif
    if constexpr (!kMask) m |= (x != x) | (y != y);
  }
  PTO_INLINE void merge(const NanSeen& o) {
    if constexpr (kMask) m &= o.m;
    else m |= o.m;
  }
  PTO_INLINE bool lane(int i) const {
    if constexpr (kMask) return !((m >> i) & 1);
    else return m[i] != 0;
  }
  PTO_INLINE bool any() const {
    if constexpr (kMask) return m != M(~M(0));
    else {
      for (int i = 0; i < N; ++i)
        if (m[i]) return true;
      return false;
    }
  }
};

// Horizontal reduction of a vector (pairwise halves down to 4 lanes, then in order).
template <Red R, class V> PTO_INLINE simd::lane_t<V> hreduce(V v) {
  using L = simd::lane_t<V>;
  constexpr int n = simd::lane_of<V>::n;
  if constexpr (n > 4) {
    return hreduce<R>(red_step<R>(simd::lo_half(v), simd::hi_half(v)));
  } else {
    L r = v[0];
    for (int i = 1; i < n; ++i) r = red_step<R>(r, L(v[i]));
    return r;
  }
}

template <Red R, class D, class S> PTO_INLINE void row_reduce(D& dst, const S& src) {
  using T = typename S::value_type;
  using A = typename red_acc<T>::type;
  using CT = compute_t<T>;
  constexpr int N = simd::lanes_for<int(std::max(sizeof(A), sizeof(vstorage_t<T>)))>;
  using V = simd::vec<A, N>;
  constexpr bool kNan = R != Red::Sum && std::is_floating_point_v<A>;
  constexpr int U = kVecBytes >= 64 ? 8 : 4;  // independent accumulators (even)
  static_assert(S::kRowMajor && D::kRowMajor);
  const int n = src.vc;
  for (int r = 0; r < dst.vr; ++r) {
    const T* p = src.row(r);
    A res;
    if (n >= N) {
      NanSeen<V> sn[U / 2];  // one NaN record per pair of chains (independent compares)
      NanSeen<V>& seen = sn[0];
      V a[U];
      int c;
      if (n >= U * N) {
        for (int u = 0; u < U; ++u) a[u] = simd::load<A, N>(p + u * N);
        if constexpr (kNan)
          for (int u = 0; u < U; u += 2) sn[u / 2].add(a[u], a[u + 1]);
        for (c = U * N; c + U * N <= n; c += U * N) {
          V x[U];
          for (int u = 0; u < U; ++u) x[u] = simd::load<A, N>(p + c + u * N);
          if constexpr (kNan)
            for (int u = 0; u < U; u += 2) sn[u / 2].add(x[u], x[u + 1]);
          for (int u = 0; u < U; ++u) a[u] = red_step<R>(a[u], x[u]);
        }
        for (int w = U / 2; w >= 1; w /= 2)
          for (int u = 0; u < w; ++u) a[u] = red_step<R>(a[u], a[u + w]);
        if constexpr (kNan)
          for (int u = 1; u < U / 2; ++u) seen.merge(sn[u]);
      } else {
        a[0] = simd::load<A, N>(p);
        if constexpr (kNan) seen.add(a[0], a[0]);
        c = N;
      }
      for (; c + N <= n; c += N) {
        V x = simd::load<A, N>(p + c);
        if constexpr (kNan) seen.add(x, x);
        a[0] = red_step<R>(a[0], x);
      }
      if (c < n) {
        // tail: sums read the n - c remaining elements (other lanes zero); max / min re-read the
        // last N elements (overlap is harmless)
        V t = R == Red::Sum ? simd::load_n<A, N>(p + c, n - c) : simd::load<A, N>(p + n - N);
        if constexpr (kNan) seen.add(t, t);
        a[0] = red_step<R>(a[0], t);
      }
      if (kNan && seen.any()) {
        res = A(0);
        for (int i = 0; i < n; ++i) {
          const A v = A(to_compute(p[i]));
          if (v != v) { res = v; break; }
        }
      } else {
        res = hreduce<R>(a[0]);
      }
    } else {
      res = A(to_compute(p[0]));
      for (int c = 1; c < n; ++c) res = red2<R>(res, A(to_compute(p[c])));
    }
    dst.row(r)[0] = from_compute<typename D::value_type>(CT(res));
  }
}

template <Red R, class D, class S> PTO_INLINE void col_reduce(D& dst, const S& src) {
  using T = typename S::value_type;
  using A = typename red_acc<T>::type;
  using CT = compute_t<T>;
  using DT = typename D::value_type;
  constexpr int N = simd::lanes_for<int(std::max(sizeof(A), sizeof(vstorage_t<T>)))>;
  using V = simd::vec<A, N>;
  constexpr bool kNan = R != Red::Sum && std::is_floating_point_v<A>;
  static_assert(S::kRowMajor && D::kRowMajor);
  const int rows = src.vr, cols = dst.vc;
  // a column that saw a NaN gets its first NaN (rare path)
  auto first_nan = [&](int col) PTO_INLINE_LAMBDA {
    for (int r = 0; r < rows; ++r) {
      const A v = A(to_compute(src.row(r)[col]));
      if (v != v) return v;
    }
    return A(0);
  };
  constexpr int CU = 4;  // vectors of columns per pass: 4 independent chains down the rows
  int c = 0;
  for (; c + CU * N <= cols; c += CU * N) {
    V a[CU];
    NanSeen<V> seen[CU];
    for (int u = 0; u < CU; ++u) a[u] = simd::load<A, N>(src.data + c + u * N);
    if constexpr (kNan)
      for (int u = 0; u < CU; ++u) seen[u].add(a[u], a[u]);
    for (int r = 1; r < rows; ++r) {
      const T* p = src.row(r) + c;
      for (int u = 0; u < CU; ++u) {
        V x = simd::load<A, N>(p + u * N);
        if constexpr (kNan) seen[u].add(x, x);
        a[u] = red_step<R>(a[u], x);
      }
    }
    for (int u = 0; u < CU; ++u) {
      if constexpr (kNan) {
        if (seen[u].any())
          for (int i = 0; i < N; ++i)
            if (seen[u].lane(i)) a[u][i] = first_nan(c + u * N + i);
      }
      simd::store<DT>(dst.data + c + u * N, simd::cast<CT>(a[u]));
    }
  }
  for (; c < cols; c += N) {
    const int n = std::min(N, cols - c);
    V a0 = simd::load_n<A, N>(src.data + c, n);
    NanSeen<V> seen;
    if constexpr (kNan) seen.add(a0, a0);
    for (int r = 1; r < rows; ++r) {
      V x = simd::load_n<A, N>(src.row(r) + c, n);
      if constexpr (kNan) seen.add(x, x);
      a0 = red_step<R>(a0, x);
    }
    if constexpr (kNan) {
      if (seen.any())
        for (int i = 0; i < n; ++i)
          if (seen.lane(i)) a0[i] = first_nan(c + i);
    }
    if (n == N) simd::store<DT>(dst.data + c, simd::cast<CT>(a0));
    else simd::store_n<DT>(dst.data + c, simd::cast<CT>(a0), n);
  }
}
}  // namespace detail

namespace detail {
// TCOLSUM's order and precision are the hardware's (pl-head 3.4): a float column accumulates in its
// own dtype (fp16 / bf16 rounded after every add), row after row, or with a scratch tile as a
// binary tree (rows 2i and 2i + 1 pairwise; an odd last row joins row 0), level by level.
// (fp16 through the integer conversion: with AVX512-FP16, GCC -O3 vectorised the tree's
// float -> _Float16 -> float round trips to other values than the scalar code)
template <class T> PTO_INLINE compute_t<T> keep_in(compute_t<T> x) {
  if constexpr (is_half_v<T>) return half_bits_to_float(float_to_half_bits(x));
  else return to_compute(from_compute<T>(x));
}
template <bool kTree, class D, class S> PTO_INLINE void col_sum_ordered(D& dst, const S& src) {
  using T = typename S::value_type;
  using CT = compute_t<T>;
  static_assert(S::kRowMajor && D::kRowMajor);
  const int rows = src.vr;
  CT buf[kTree ? S::Rows : 1], buf2[kTree ? S::Rows : 1];
  for (int c = 0; c < dst.vc; ++c) {
    CT acc = rows > 0 ? CT(to_compute(src.row(0)[c])) : CT(0);
    if constexpr (kTree) {
      // each level from one buffer into the other (no in-place update for the optimiser to reorder)
      CT* in = buf;
      CT* out = buf2;
      for (int r = 0; r < rows; ++r) in[r] = to_compute(src.row(r)[c]);
      for (int cnt = rows; cnt > 1; cnt /= 2) {
        const int half = cnt / 2;
        for (int i = 0; i < half; ++i) out[i] = keep_in<T>(in[2 * i] + in[2 * i + 1]);
        if (cnt % 2 == 1) out[0] = keep_in<T>(out[0] + in[cnt - 1]);
        std::swap(in, out);
      }
      if (rows > 0) acc = in[0];
    } else {
      for (int r = 1; r < rows; ++r) acc = keep_in<T>(acc + CT(to_compute(src.row(r)[c])));
    }
    dst.row(0)[c] = from_compute<typename D::value_type>(acc);
  }
}
}  // namespace detail
template <class D, class S> PTO_INLINE void TCOLSUM(D& dst, const S& src) {
  using T = typename S::value_type;
  if constexpr (is_low_float_v<T>) detail::col_sum_ordered<false>(dst, src);
  else detail::col_reduce<detail::Red::Sum>(dst, src);  // fp32 row after row as well; integers wrap
}
template <class D, class S, class Tmp> PTO_INLINE void TCOLSUM(D& dst, const S& src, Tmp&) {
  using T = typename S::value_type;
  if constexpr (is_float_v<T>) detail::col_sum_ordered<true>(dst, src);
  else detail::col_reduce<detail::Red::Sum>(dst, src);  // (integer sums do not depend on the order)
}

#define PTO_REDUCE(NAME, KIND, IMPL)                                                                        \
  template <class D, class S> PTO_INLINE void NAME(D& dst, const S& src) { detail::IMPL<detail::Red::KIND>(dst, src); } \
  template <class D, class S, class Tmp> PTO_INLINE void NAME(D& dst, const S& src, Tmp&) { NAME(dst, src); }
PTO_REDUCE(TROWSUM, Sum, row_reduce)
PTO_REDUCE(TROWMAX, Max, row_reduce)
PTO_REDUCE(TROWMIN, Min, row_reduce)
PTO_REDUCE(TCOLMAX, Max, col_reduce)
PTO_REDUCE(TCOLMIN, Min, col_reduce)
#undef PTO_REDUCE

// ---- folds (reductions of extension ops) ------------------------------------------------------------
// dst[i,0] = combine(...combine(combine(init, map(src[i,0])), map(src[i,1]))..., map(src[i,vc-1])), in
// the compute type (fp32 for fp16 / bf16), element by element in order; the same along columns.
namespace detail {
template <class D, class S, class Map, class Combine>
PTO_INLINE void row_fold(D& dst, const S& src, double init, Map map, Combine combine) {
  using CT = compute_t<typename S::value_type>;
  for (int r = 0; r < dst.vr; ++r) {
    CT acc = scalar_to<CT>(init);
    for (int c = 0; c < src.vc; ++c) acc = combine(acc, map(to_compute(src.at(r, c))));
    dst.at(r, 0) = from_compute<typename D::value_type>(acc);
  }
}
template <class D, class S, class Map, class Combine>
PTO_INLINE void col_fold(D& dst, const S& src, double init, Map map, Combine combine) {
  using CT = compute_t<typename S::value_type>;
  for (int c = 0; c < dst.vc; ++c) {
    CT acc = scalar_to<CT>(init);
    for (int r = 0; r < src.vr; ++r) acc = combine(acc, map(to_compute(src.at(r, c))));
    dst.at(0, c) = from_compute<typename D::value_type>(acc);
  }
}
}  // namespace detail
#define PTO_FOLD(NAME, IMPL, MAP, COMBINE, INIT)                                                               \
  template <class D, class S> PTO_INLINE void NAME(D& dst, const S& src) {                                    \
    detail::IMPL(dst, src, INIT, op::MAP{}, op::COMBINE{});                                                    \
  }                                                                                                            \
  template <class D, class S, class Tmp> PTO_INLINE void NAME(D& dst, const S& src, Tmp&) { NAME(dst, src); }
#define PTO_ROW_FOLD(NAME, MAP, COMBINE, INIT) PTO_FOLD(NAME, row_fold, MAP, COMBINE, INIT)
#define PTO_COL_FOLD(NAME, MAP, COMBINE, INIT) PTO_FOLD(NAME, col_fold, MAP, COMBINE, INIT)

// ---- broadcasts ---------------------------------------------------------------------------------------
// TROWEXPAND(dst, src): dst[i,j] = src[i,0];  TCOLEXPAND(dst, src): dst[i,j] = src[0,j]
template <class D, class S> PTO_INLINE void TROWEXPAND(D& dst, const S& src) { vmap(dst, op::Identity{}, ColBcast(src)); }
template <class D, class S> PTO_INLINE void TCOLEXPAND(D& dst, const S& src) { vmap(dst, op::Identity{}, RowBcast(src)); }
// TROWEXPANDxx / TCOLEXPANDxx (a tile op a broadcast vector) are functor instructions: see
// PTO_ROW_EXPAND in elementwise.hpp and pypto/backend/cpu/lowering.py

}  // namespace pto
