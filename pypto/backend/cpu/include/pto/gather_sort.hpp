// pto/gather_sort.hpp -- today's gather / scatter / sort forms (pypto/ops/gather_scatter.py).
//   TGATHERFLAT(dst[R,K], src[SR,SC], idx[R,K][, tmp]): dst[i,k] = src.flat[idx[i,k]] (row-major over
//     src's static shape; 0 outside it)
//   TSCATTERMASK(dst, d0, src, pattern): dst = d0 with the pattern's columns of each row = src's row
//   TSCATTERUPDATE(dst, x, idx, src): dst = x; row idx.flat[k] = src row k (rows outside skipped)
//   TSORT32IDX(dst[R,2C], src[R,C], idx[R,C]): each 32-block sorted descending into (value, idx bits)
//   TMRGSORT1(dst, src, block_len): each group of 4 runs of block_len columns merged (stable)
//   TMRGSORT2(dst, a, b[, c[, d]]): the lists' pairs merged into one descending list (stable)
//   TGATHERCMP(dst[R,N], src[R,C], k, mode, offset, N): per row the first N columns j where
//     cmp(src[r,j], k) holds, as j + offset; 0 past the matches (mode: eq ne lt le gt ge = 0..5)
//   TGATHERCNT(dst[1,R], src[R,C], k, mode): per row the number of matching columns
//   TGATHERB(dst[R,K*E], src, off[R,K]): the 32 bytes of src (row-major over its static shape) at
//     byte off[i,k] as dst[i, k*E .. k*E+E); a block not inside src reads 0
//   TSCATTERFLAT(dst, d0, src, idx): dst = d0; dst.flat[idx[i,j]] = src[i,j] (outside skipped)
#pragma once
#include <algorithm>
#include <cstring>
#include <vector>

#include "sort.hpp"

namespace pto {
namespace detail {

// the stable descending order of n pairs starting at p (value lanes compared, NaN first), written to out
template <class T> PTO_INLINE void merge_pairs(const T* p, int n, T* out) {
  static thread_local std::vector<T> row;
  row.assign(p, p + 2 * long(n));
  auto& idx = stable_order(n, true, [&](int c) { return to_compute(row[size_t(2 * c)]); });
  for (int j = 0; j < n; ++j) {
    std::memcpy(out + 2 * long(j), row.data() + 2 * long(idx[size_t(j)]), 2 * sizeof(T));  // (index lanes: bits)
  }
}

}  // namespace detail

template <class D, class S, class I, class... Tmp>
PTO_INLINE void TGATHERFLAT(D& dst, const S& src, const I& idx, const Tmp&...) {
  using T = typename D::value_type;
  const long n = long(S::Rows) * S::Cols;
  for (int i = 0; i < dst.vr; ++i) {
    const auto* x = idx.row(i);
    T* d = dst.row(i);
    for (int k = 0; k < dst.vc; ++k) {
      const long j = long(x[k]);
      d[k] = (j >= 0 && j < n) ? T(src.at(int(j / S::Cols), int(j % S::Cols))) : T{};
    }
  }
}

template <class D, class X, class S, class P> PTO_INLINE void TSCATTERMASK(D& dst, const X& x, const S& src, P pattern) {
  const int p = int(pattern);
  const int stride = p == 7 ? 1 : (p <= 2 ? 2 : 4);
  const int phase = p == 7 ? 0 : (p <= 2 ? p - 1 : p - 3);
  for (int i = 0; i < dst.vr; ++i) {
    auto* d = dst.row(i);
    const auto* xr = x.row(i);
    if (static_cast<const void*>(d) != static_cast<const void*>(xr))
      for (int j = 0; j < dst.vc; ++j) d[j] = xr[j];
    const auto* s = src.row(i);
    for (int k = 0; k < src.vc && long(k) * stride + phase < dst.vc; ++k) d[long(k) * stride + phase] = s[k];
  }
}

template <class D, class X, class I, class S>
PTO_INLINE void TSCATTERUPDATE(D& dst, const X& x, const I& idx, const S& src) {
  for (int i = 0; i < dst.vr; ++i)
    if (static_cast<const void*>(dst.row(i)) != static_cast<const void*>(x.row(i)))
      for (int j = 0; j < dst.vc; ++j) dst.at(i, j) = x.at(i, j);
  long k = 0;
  for (int r = 0; r < idx.vr; ++r)
    for (int c = 0; c < idx.vc; ++c, ++k) {  // in k order: the last write wins
      if (k >= src.vr) return;
      const long row = long(idx.at(r, c));
      if (row < 0 || row >= dst.vr) continue;
      for (int j = 0; j < std::min(dst.vc, src.vc); ++j) dst.at(int(row), j) = src.at(int(k), j);
    }
}

template <class D, class S, class I> PTO_INLINE void TSORT32IDX(D& dst, const S& src, const I& idx) {
  using T = typename D::value_type;
  static_assert(sizeof(typename I::value_type) == sizeof(T), "sort32: the index has the value's width");
  for (int r = 0; r < dst.vr; ++r) {
    for (int b = 0; b < src.vc; b += 32) {
      const int n = std::min(32, src.vc - b);
      auto& o = detail::stable_order(n, true, [&](int c) { return detail::cv(src, r, b + c); });
      for (int j = 0; j < n; ++j) {
        const int c = b + o[size_t(j)];
        dst.at(r, 2 * (b + j)) = src.at(r, c);
        const auto bits = idx.at(r, c);
        std::memcpy(&dst.at(r, 2 * (b + j) + 1), &bits, sizeof(T));
      }
    }
  }
}

template <class D, class S, class L> PTO_INLINE void TMRGSORT1(D& dst, const S& src, L block_len) {
  using T = typename D::value_type;
  const long group = 4 * long(block_len);
  for (int r = 0; r < dst.vr; ++r) {
    const T* s = &src.at(r, 0);
    T* d = &dst.at(r, 0);
    if (group <= 0) {
      std::memmove(d, s, sizeof(T) * size_t(src.vc));
      continue;
    }
    for (long b = 0; b < src.vc; b += group) {
      const int n = int(std::min<long>(group, src.vc - b) / 2);
      detail::merge_pairs(s + b, n, d + b);
    }
  }
}

template <class D, class... L> PTO_INLINE void TMRGSORT2(D& dst, const L&... lists) {
  using T = typename D::value_type;
  static thread_local std::vector<T> row;
  for (int r = 0; r < dst.vr; ++r) {
    row.clear();
    (row.insert(row.end(), &lists.at(r, 0), &lists.at(r, 0) + lists.vc), ...);
    detail::merge_pairs(row.data(), int(row.size() / 2), &dst.at(r, 0));
  }
}

namespace detail {
template <class CT> PTO_INLINE bool gather_cmp(int mode, CT x, CT y) {
  switch (mode) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    default: return x >= y;
  }
}
}  // namespace detail

template <class D, class S, class K, class M, class O, class N>
PTO_INLINE void TGATHERCMP(D& dst, const S& src, K k, M mode, O offset, N /*out_cols: dst's width*/) {
  using CT = compute_t<typename S::value_type>;
  const CT v = scalar_to<CT>(k);
  for (int i = 0; i < dst.vr; ++i) {
    auto* d = dst.row(i);
    int n = 0;
    const auto* x = src.row(i);
    for (int j = 0; j < src.vc && n < dst.vc; ++j)
      if (detail::gather_cmp<CT>(int(mode), to_compute(x[j]), v)) d[n++] = typename D::value_type(j + long(offset));
    for (; n < dst.vc; ++n) d[n] = typename D::value_type(0);
  }
}

template <class D, class S, class K, class M> PTO_INLINE void TGATHERCNT(D& dst, const S& src, K k, M mode) {
  using CT = compute_t<typename S::value_type>;
  const CT v = scalar_to<CT>(k);
  auto* d = dst.row(0);
  for (int i = 0; i < src.vr && i < dst.vc; ++i) {
    const auto* x = src.row(i);
    long n = 0;
    for (int j = 0; j < src.vc; ++j) n += detail::gather_cmp<CT>(int(mode), to_compute(x[j]), v) ? 1 : 0;
    d[i] = typename D::value_type(n);
  }
}

template <class D, class S, class O> PTO_INLINE void TGATHERB(D& dst, const S& src, const O& off) {
  using V = typename D::value_type;
  using T = typename S::value_type;
  constexpr long kPer = 32 / long(sizeof(V));
  const long nbytes = long(S::Rows) * S::Cols * long(sizeof(T));
  for (int i = 0; i < dst.vr; ++i) {
    V* d = dst.row(i);
    for (int k = 0; k < off.vc && long(k) * kPer < dst.vc; ++k) {
      const long b = long(uint32_t(off.at(i, k)));
      for (long e = 0; e < kPer && long(k) * kPer + e < dst.vc; ++e) {
        unsigned char bytes[sizeof(V)] = {};
        if (b + 32 <= nbytes)
          for (long q = 0; q < long(sizeof(V)); ++q) {  // byte p of src: element p / sizeof(T), row-major
            const long p = b + e * long(sizeof(V)) + q, el = p / long(sizeof(T));
            bytes[q] = reinterpret_cast<const unsigned char*>(&src.at(int(el / S::Cols), int(el % S::Cols)))[p % long(sizeof(T))];
          }
        std::memcpy(&d[long(k) * kPer + e], bytes, sizeof(V));
      }
    }
  }
}

template <class D, class X, class S, class I> PTO_INLINE void TSCATTERFLAT(D& dst, const X& x, const S& src, const I& idx) {
  for (int i = 0; i < dst.vr; ++i)
    if (static_cast<const void*>(dst.row(i)) != static_cast<const void*>(x.row(i)))
      for (int j = 0; j < dst.vc; ++j) dst.at(i, j) = x.at(i, j);
  const long n = long(D::Rows) * D::Cols;
  for (int i = 0; i < src.vr; ++i)
    for (int j = 0; j < src.vc; ++j) {  // row-major: the last duplicate wins
      const long p = long(idx.at(i, j));
      if (p >= 0 && p < n) dst.at(int(p / D::Cols), int(p % D::Cols)) = src.at(i, j);
    }
}

}  // namespace pto
