// pto/gather_memory.hpp -- data-dependent DDR access from a kernel (pypto/ops/gather_memory.py).
//   TMGATHER(dst, g, idx, coalesce, oob): coalesce 0 (row): dst row k = g row idx.flat[k] (idx one row
//     or one column); 1 (elem): dst[i,j] = g.flat[idx[i,j]]. Indices are read as uint32; past the
//     table: oob 0 undefined / 3 zero -> 0, 1 clamp -> the last, 2 wrap -> modulo the extent.
//   TMSCATTER(g, src, idx): g.flat[idx[i,j]] = src[i,j] (row-major; indices past g skipped).
//   TPAGEDGATHER(dst, pool, idx, table, block_size, col_off, trans): row k of the gather =
//     pool row table.flat[i / block_size] * block_size + i % block_size (i = idx[0, k]), columns
//     col_off.., 0 for a lookup outside the table / pool and for the rows past the index; trans:
//     written as column k (pypto/ops/gather_paged.py).
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

template <class D, class T, class I, class B, class BS, class CO, class TR>
PTO_INLINE void TPAGEDGATHER(D& dst, const GTensor<T>& pool, const I& idx, const GTensor<B>& table, BS block_size,
                             CO col_off, TR trans) {
  using V = typename D::value_type;
  const bool tr = long(trans) != 0;
  const long bs = long(block_size), off = long(col_off), rows = pool.ndim ? pool.shape[0] : 1;
  const long cols = pool.cols(), cs = pool.col_stride(), rs = pool.ndim > 1 ? pool.stride[0] : 0;
  const long nt = detail::gnumel(table);
  const int n = tr ? dst.vc : dst.vr, width = tr ? dst.vr : dst.vc;
  for (int k = 0; k < n; ++k) {
    long r = -1;
    if (k < idx.vc && bs > 0) {
      const uint64_t i = uint32_t(idx.at(0, k));
      const uint64_t b = i / uint64_t(bs);
      if (b < uint64_t(nt)) {
        const uint64_t phys = uint64_t(uint32_t(table.data[detail::gflat_offset(table, long(b))])) * uint64_t(bs) +
                              i % uint64_t(bs);
        if (phys < uint64_t(rows)) r = long(phys);
      }
    }
    for (int j = 0; j < width; ++j) {
      const V v = (r >= 0 && off + j < cols) ? V(pool.data[r * rs + (off + j) * cs]) : V{};
      if (tr) dst.at(j, k) = v; else dst.at(k, j) = v;
    }
  }
}

}  // namespace pto
