// pto/sort.hpp -- order-dependent instructions (conventions of pypto/ops/ordering.py: ties to the
// lower index, NaN larger than every number, -0.0 == 0.0).
//   TROWARGMAX/TROWARGMIN(dst[R,1] int32, src[, tmp]), TCOLARGMAX/TCOLARGMIN(dst[1,C] int32, src[, tmp])
//   TROWCUMSUM/TROWCUMPROD(dst, src): inclusive scans along each row (fp16/bf16 in fp32, integers wrap)
//   TROWTOPK/TROWTOPKIDX(dst[R,k], src, k, largest): the first dst.vc elements (or their int32
//     indices) of each row's stable order, descending for largest != 0
//   TSORT32(dst[R,2C], src, start): each 32-block of a row sorted descending into (value, start + index)
//   TMRGSORT(dst, src, mergesize): a row of (value, index) pairs, runs merged into one descending run
#pragma once
#include <algorithm>
#include <vector>

#include "elementwise.hpp"

namespace pto {
namespace detail {

template <class C> PTO_INLINE bool is_nan_v(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}
// v replaces best as the row's extreme (strictly better: the first extreme stays; the first NaN wins)
template <bool Max, class C> PTO_INLINE bool better(C v, C best) {
  if (is_nan_v(best)) return false;
  if (is_nan_v(v)) return true;
  return Max ? v > best : v < best;
}
// a comes strictly before b in descending (NaN first) / ascending (NaN last) order
template <class C> PTO_INLINE bool before(C a, C b, bool descending) {
  const bool na = is_nan_v(a), nb = is_nan_v(b);
  if (na || nb) return descending ? (na && !nb) : (!na && nb);
  return descending ? a > b : a < b;
}

template <class S> PTO_INLINE compute_t<typename S::value_type> cv(const S& s, int r, int c) {
  return to_compute(s.at(r, c));
}

template <bool Max, class D, class S> PTO_INLINE void row_arg(D& dst, const S& src) {
  for (int r = 0; r < dst.vr; ++r) {
    auto best = cv(src, r, 0);
    int bi = 0;
    for (int c = 1; c < src.vc; ++c) {
      auto v = cv(src, r, c);
      if (better<Max>(v, best)) { best = v; bi = c; }
    }
    dst.at(r, 0) = typename D::value_type(bi);
  }
}
template <bool Max, class D, class S> PTO_INLINE void col_arg(D& dst, const S& src) {
  for (int c = 0; c < dst.vc; ++c) {
    auto best = cv(src, 0, c);
    int bi = 0;
    for (int r = 1; r < src.vr; ++r) {
      auto v = cv(src, r, c);
      if (better<Max>(v, best)) { best = v; bi = r; }
    }
    dst.at(0, c) = typename D::value_type(bi);
  }
}

template <bool Prod, class D, class S> PTO_INLINE void row_scan(D& dst, const S& src) {
  using CT = compute_t<typename S::value_type>;
  for (int r = 0; r < dst.vr; ++r) {
    CT acc = CT(Prod ? 1 : 0);
    for (int c = 0; c < dst.vc; ++c) {
      const CT x = cv(src, r, c);
      acc = Prod ? simd::wmul(acc, x) : simd::wadd(acc, x);
      dst.at(r, c) = from_compute<typename D::value_type>(acc);
    }
  }
}

// the stable order of positions [0, n) of row r (keys read by `key(c)`), in a per-thread buffer
template <class Key> PTO_INLINE std::vector<int>& stable_order(int n, bool descending, Key key) {
  static thread_local std::vector<int> idx;
  idx.resize(size_t(n));
  for (int i = 0; i < n; ++i) idx[size_t(i)] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return before(key(a), key(b), descending); });
  return idx;
}

template <bool Indices, class D, class S> PTO_INLINE void row_topk(D& dst, const S& src, bool largest) {
  for (int r = 0; r < dst.vr; ++r) {
    auto& idx = stable_order(src.vc, largest, [&](int c) { return cv(src, r, c); });
    const int k = std::min(dst.vc, src.vc);
    for (int j = 0; j < k; ++j) {
      if constexpr (Indices) dst.at(r, j) = typename D::value_type(idx[size_t(j)]);
      else dst.at(r, j) = src.at(r, idx[size_t(j)]);
    }
  }
}
}  // namespace detail

#define PTO_ORDER_REDUCE(NAME, IMPL, MAX)                                                                     \
  template <class D, class S> PTO_INLINE void NAME(D& dst, const S& src) { detail::IMPL<MAX>(dst, src); }   \
  template <class D, class S, class Tmp> PTO_INLINE void NAME(D& dst, const S& src, Tmp&) { NAME(dst, src); }
PTO_ORDER_REDUCE(TROWARGMAX, row_arg, true)
PTO_ORDER_REDUCE(TROWARGMIN, row_arg, false)
PTO_ORDER_REDUCE(TCOLARGMAX, col_arg, true)
PTO_ORDER_REDUCE(TCOLARGMIN, col_arg, false)
#undef PTO_ORDER_REDUCE

template <class D, class S> PTO_INLINE void TROWCUMSUM(D& dst, const S& src) { detail::row_scan<false>(dst, src); }
template <class D, class S> PTO_INLINE void TROWCUMPROD(D& dst, const S& src) { detail::row_scan<true>(dst, src); }

template <class D, class S, class K, class L> PTO_INLINE void TROWTOPK(D& dst, const S& src, K, L largest) {
  detail::row_topk<false>(dst, src, largest != L(0));
}
template <class D, class S, class K, class L> PTO_INLINE void TROWTOPKIDX(D& dst, const S& src, K, L largest) {
  detail::row_topk<true>(dst, src, largest != L(0));
}

template <class D, class S, class I> PTO_INLINE void TSORT32(D& dst, const S& src, I start) {
  using T = typename D::value_type;
  using CT = compute_t<T>;
  for (int r = 0; r < dst.vr; ++r) {
    for (int b = 0; b < src.vc; b += 32) {
      const int n = std::min(32, src.vc - b);
      auto& idx = detail::stable_order(n, true, [&](int c) { return detail::cv(src, r, b + c); });
      for (int j = 0; j < n; ++j) {
        const int c = b + idx[size_t(j)];
        dst.at(r, 2 * (b + j)) = src.at(r, c);
        dst.at(r, 2 * (b + j) + 1) = from_compute<T>(CT(long(start) + c));
      }
    }
  }
}

template <class D, class S, class M> PTO_INLINE void TMRGSORT(D& dst, const S& src, M) {
  // a stable merge of descending runs is the stable sort of the row's pairs by value (ordering.py)
  static thread_local std::vector<typename S::value_type> row;
  for (int r = 0; r < dst.vr; ++r) {
    const int n = src.vc / 2;
    row.assign(src.data + long(r) * S::Cols, src.data + long(r) * S::Cols + 2 * n);
    auto& idx = detail::stable_order(n, true, [&](int c) { return to_compute(row[size_t(2 * c)]); });
    for (int j = 0; j < n; ++j) {
      dst.at(r, 2 * j) = row[size_t(2 * idx[size_t(j)])];
      dst.at(r, 2 * j + 1) = row[size_t(2 * idx[size_t(j)] + 1)];
    }
  }
}

}  // namespace pto
