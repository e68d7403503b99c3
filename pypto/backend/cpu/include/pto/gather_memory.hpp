// pto/gather_memory.hpp -- data-dependent DDR access from a kernel (pypto/ops/gather_memory.py).
//   TMGATHER(dst, g, idx, coalesce, oob): coalesce 0 (row): dst row k = g row idx.flat[k] (idx one row
//     or one column); 1 (elem): dst[i,j] = g.flat[idx[i,j]]. Indices are read as uint32; past the
//     table: oob 0 undefined / 3 zero -> 0, 1 clamp -> the last, 2 wrap -> modulo the extent.
//   TMSCATTER(g, src, idx): g.flat[idx[i,j]] = src[i,j] (row-major; indices past g skipped).
// g is the window over the whole tensor; every address is checked against it, so an index never
// reaches memory outside the tensor whatever its value.
#pragma once
#include <cstdint>

#include "tile.hpp"

namespace pto {
namespace detail {

// Element offset of flat (row-major over g's shape) position p.
template <class T> PTO_INLINE long gflat_offset(const GTensor<T>& g, long p) {
  long off = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const long n = g.shape[d];
    off += (p % n) * g.stride[d];
    p /= n;
  }
  return off;
}

template <class T> PTO_INLINE long gnumel(const GTensor<T>& g) {
  long n = 1;
  for (int d = 0; d < g.ndim; ++d) n *= g.shape[d];
  return n;
}

// Position of index u (uint32) in a table of n, or -1 for "no element" (the result is 0).
PTO_INLINE long oob_pos(uint64_t u, long n, int oob) {
  if (n <= 0) return -1;
  if (u < uint64_t(n)) return long(u);
  if (oob == 1) return n - 1;
  if (oob == 2) return long(u % uint64_t(n));
  return -1;
}

}  // namespace detail

template <class D, class T, class I> PTO_INLINE void TMGATHER(D& dst, const GTensor<T>& g, const I& idx, int coalesce,
                                                              int oob) {
  using V = typename D::value_type;
  if (coalesce == 0) {
    const long rows = g.ndim ? g.shape[0] : 1, cols = g.cols(), cs = g.col_stride();
    const long rs = g.ndim > 1 ? g.stride[0] : 0;
    for (int k = 0; k < dst.vr; ++k) {
      const auto raw = I::Rows == 1 ? idx.at(0, k) : idx.at(k, 0);
      const long r = detail::oob_pos(uint64_t(uint32_t(raw)), rows, oob);
      V* d = dst.row(k);
      for (int j = 0; j < dst.vc; ++j) d[j] = (r >= 0 && j < cols) ? V(g.data[r * rs + j * cs]) : V{};
    }
    return;
  }
  const long n = detail::gnumel(g);
  for (int i = 0; i < dst.vr; ++i) {
    V* d = dst.row(i);
    for (int j = 0; j < dst.vc; ++j) {
      const long p = detail::oob_pos(uint64_t(uint32_t(idx.at(i, j))), n, oob);
      d[j] = p >= 0 ? V(g.data[detail::gflat_offset(g, p)]) : V{};
    }
  }
}

template <class T, class S, class I> PTO_INLINE void TMSCATTER(const GTensor<T>& g, const S& src, const I& idx) {
  const long n = detail::gnumel(g);
  for (int i = 0; i < src.vr; ++i) {
    const auto* s = src.row(i);
    for (int j = 0; j < src.vc; ++j) {
      const uint64_t u = uint32_t(idx.at(i, j));
      if (u < uint64_t(n)) g.data[detail::gflat_offset(g, long(u))] = T(s[j]);
    }
  }
}

}  // namespace pto
