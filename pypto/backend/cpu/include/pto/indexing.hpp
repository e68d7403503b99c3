// pto/indexing.hpp -- gathers and scatters inside a row (pypto/ops/indexing.py).
// (an idx / src tile of one row serves every row)
//   TGATHER(dst[R,K], src[R,C], idx[R,K]): dst[i,k] = src[i, idx[i,k]], 0 where idx is outside [0, src.vc)
//   TSCATTER(dst[R,C], x[R,C], idx[R,K], src[R,K], mode): dst = x; dst[i, idx[i,k]] = / += / *= src[i,k]
//     in k order (mode 0 / 1 / 2); indices outside [0, dst.vc) are skipped
//   TGATHERMASK(dst[R,C/s], src[R,C], pattern): the columns j % s == phase of each row
//   TREINTERPRET(dst, src): the same bytes per row as another dtype
// Every index is checked against the valid row before memory is touched.
#pragma once
#include <cstring>
#include <type_traits>

#include "tile.hpp"

namespace pto {
namespace detail {

template <class T> PTO_INLINE T idx_add(T a, T b) {
  if constexpr (is_int_v<T>) return T(std::make_unsigned_t<T>(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b)));
  else return from_compute<T>(to_compute(a) + to_compute(b));
}
template <class T> PTO_INLINE T idx_mul(T a, T b) {
  if constexpr (is_int_v<T>) return T(std::make_unsigned_t<T>(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(b)));
  else return from_compute<T>(to_compute(a) * to_compute(b));
}

}  // namespace detail

template <class D, class S, class I> PTO_INLINE void TGATHER(D& dst, const S& src, const I& idx) {
  static_assert(D::kRowMajor && S::kRowMajor && I::kRowMajor);
  using T = typename D::value_type;
  const long n = src.vc;
  for (int i = 0; i < dst.vr; ++i) {
    const auto* s = src.row(i);
    const auto* x = idx.row(I::Rows == 1 ? 0 : i);  // (one index row serves every row)
    T* d = dst.row(i);
    for (int k = 0; k < dst.vc; ++k) {
      const long j = long(x[k]);
      d[k] = (j >= 0 && j < n) ? T(s[j]) : T{};
    }
  }
}

template <class D, class X, class I, class S, class M>
PTO_INLINE void TSCATTER(D& dst, const X& x, const I& idx, const S& src, M mode) {
  static_assert(D::kRowMajor && X::kRowMajor && I::kRowMajor && S::kRowMajor);
  using T = typename D::value_type;
  const long n = dst.vc;
  for (int i = 0; i < dst.vr; ++i) {
    T* d = dst.row(i);
    const auto* xr = x.row(i);
    if (static_cast<const void*>(d) != static_cast<const void*>(xr))
      for (int j = 0; j < dst.vc; ++j) d[j] = T(xr[j]);
    const auto* ir = idx.row(I::Rows == 1 ? 0 : i);  // (one index / src row serves every row)
    const auto* sr = src.row(S::Rows == 1 ? 0 : i);
    for (int k = 0; k < idx.vc; ++k) {
      const long j = long(ir[k]);
      if (j < 0 || j >= n) continue;
      const T v = T(sr[k]);
      if (int(mode) == 1) d[j] = detail::idx_add(d[j], v);
      else if (int(mode) == 2) d[j] = detail::idx_mul(d[j], v);
      else d[j] = v;
    }
  }
}

template <class D, class S, class P> PTO_INLINE void TGATHERMASK(D& dst, const S& src, P pattern) {
  static_assert(D::kRowMajor && S::kRowMajor);
  const int p = int(pattern);
  const int stride = p == 7 ? 1 : (p <= 2 ? 2 : 4);
  const int phase = p == 7 ? 0 : (p <= 2 ? p - 1 : p - 3);
  for (int i = 0; i < dst.vr; ++i) {
    const auto* s = src.row(i);
    auto* d = dst.row(i);
    for (int k = 0; k < dst.vc; ++k) {
      if constexpr (std::is_same_v<typename D::value_type, typename S::value_type>) d[k] = s[long(k) * stride + phase];
      else std::memcpy(&d[k], &s[long(k) * stride + phase], sizeof(d[k]));  // output_dtype: a same-width bitcast
    }
  }
}

// TREINTERPRET(dst, src): each valid row's bytes, seen as dst's dtype (dst.vc * sizeof = src.vc * sizeof).
template <class D, class S> PTO_INLINE void TREINTERPRET(D& dst, const S& src) {
  static_assert(D::kRowMajor && S::kRowMajor);
  const size_t n = size_t(src.vc) * sizeof(typename S::value_type);
  for (int i = 0; i < dst.vr; ++i)
    if (static_cast<const void*>(dst.row(i)) != static_cast<const void*>(src.row(i))) std::memmove(dst.row(i), src.row(i), n);
}

}  // namespace pto
