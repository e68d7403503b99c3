// pto/masks.hpp -- packed predicate masks (pypto/ops/masks.py).
//   TCMP_MASK(dst[R,W], a[R,N], b[R,N], mode) / TCMPS_MASK(dst, a, s, mode): bit j % 8 of byte j // 8 of
//     row i is a[i,j] <mode> b[i,j] (or s); W = roundup(ceil(N / 8), 32); bytes past the valid columns' are 0
//   TSEL_MASK(dst, mask, a, b[, tmp]): dst[i,j] = bit j of mask row i ? a[i,j] : b[i,j] (tmp: unused here)
#pragma once
#include <cstdint>
#include <cstring>

#include "functors.hpp"
#include "tile.hpp"

namespace pto {
namespace detail {

template <class T> PTO_INLINE bool cmp_holds(CmpMode mode, T x, T y) {
  switch (mode) {
    case CmpMode::EQ: return x == y;
    case CmpMode::NE: return x != y;
    case CmpMode::LT: return x < y;
    case CmpMode::LE: return x <= y;
    case CmpMode::GT: return x > y;
    default: return x >= y;
  }
}

// one row of a mask from a predicate of the column
template <class D, class P> PTO_INLINE void pack_row(D& dst, int i, int n, P pred) {
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.row(i));
  std::memset(d, 0, size_t(D::Cols));
  for (int j = 0; j < n; ++j)
    if (pred(j)) d[j >> 3] = uint8_t(d[j >> 3] | (1u << (j & 7)));
}

}  // namespace detail

template <class D, class A, class B> PTO_INLINE void TCMP_MASK(D& dst, const A& a, const B& b, CmpMode mode) {
  static_assert(D::kRowMajor && A::kRowMajor && B::kRowMajor && sizeof(typename D::value_type) == 1);
  using CT = compute_t<typename A::value_type>;
  for (int i = 0; i < dst.vr; ++i) {
    const auto* x = a.row(i);
    const auto* y = b.row(i);
    detail::pack_row(dst, i, a.vc, [&](int j) { return detail::cmp_holds<CT>(mode, to_compute(x[j]), CT(to_compute(y[j]))); });
  }
}

template <class D, class A, class S> PTO_INLINE void TCMPS_MASK(D& dst, const A& a, S s, CmpMode mode) {
  static_assert(D::kRowMajor && A::kRowMajor && sizeof(typename D::value_type) == 1);
  using CT = compute_t<typename A::value_type>;
  const CT v = scalar_to<CT>(s);
  for (int i = 0; i < dst.vr; ++i) {
    const auto* x = a.row(i);
    detail::pack_row(dst, i, a.vc, [&](int j) { return detail::cmp_holds<CT>(mode, to_compute(x[j]), v); });
  }
}

template <class D, class M, class A, class B> PTO_INLINE void TSEL_MASK(D& dst, const M& mask, const A& a, const B& b) {
  static_assert(D::kRowMajor && M::kRowMajor && A::kRowMajor && B::kRowMajor);
  using T = typename D::value_type;
  using CT = compute_t<T>;
  for (int i = 0; i < dst.vr; ++i) {
    const uint8_t* m = reinterpret_cast<const uint8_t*>(mask.row(i));
    const auto* x = a.row(i);
    const auto* y = b.row(i);
    T* d = dst.row(i);
    for (int j = 0; j < dst.vc; ++j)
      d[j] = from_compute<T>(((m[j >> 3] >> (j & 7)) & 1u) ? CT(to_compute(x[j])) : CT(to_compute(y[j])));
  }
}
template <class D, class M, class A, class B, class Tmp>
PTO_INLINE void TSEL_MASK(D& dst, const M& mask, const A& a, const B& b, Tmp&) {
  TSEL_MASK(dst, mask, a, b);
}

}  // namespace pto
