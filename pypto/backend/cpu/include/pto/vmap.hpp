// pto/vmap.hpp -- the loop engine of all elementwise instructions (and of fused loops).
//
// vmap(dst, f, srcs...)   dst[i, j] = f(srcs[i, j]...) over dst's valid region, one SIMD chunk at a
//                         time; f receives simd::vec<CT, N> values (CT = promoted compute type).
//                         A source whose static shape is [1, C], [R, 1] or [1, 1] (while dst's is
//                         not) is broadcast NumPy-style; wrap a source in RowBcast / ColBcast /
//                         Splat to force a broadcast whatever its shape.
// vloop<CT>(vr, vc, flat, body)  the general form: body(Cursor&) loads from / stores to any number
//                         of tiles at the cursor (several outputs, intermediate stores).
#pragma once
#include "tile.hpp"

namespace pto {

enum class Bc { None, Row, Col, Scalar };
template <class TileT, Bc B> struct Bcast { const TileT& t; };
template <class TileT> PTO_INLINE Bcast<TileT, Bc::Row> RowBcast(const TileT& t) { return {t}; }   // row 0 for all rows
template <class TileT> PTO_INLINE Bcast<TileT, Bc::Col> ColBcast(const TileT& t) { return {t}; }   // col 0 for all cols
template <class TileT> PTO_INLINE Bcast<TileT, Bc::Scalar> Splat(const TileT& t) { return {t}; }   // element (0, 0)
template <class TileT> PTO_INLINE Bcast<TileT, Bc::None> Full(const TileT& t) { return {t}; }      // no broadcast

namespace detail {
template <class X> struct opnd { using tile = X; static constexpr bool forced = false; static constexpr Bc bc = Bc::None; };
template <class T, Bc B> struct opnd<Bcast<T, B>> { using tile = T; static constexpr bool forced = true; static constexpr Bc bc = B; };
template <class X> PTO_INLINE const typename opnd<X>::tile& tile_of(const X& x) {
  if constexpr (opnd<X>::forced) return x.t;
  else return x;
}
// Broadcast kind of operand X against destination D (static shapes decide, as in NumPy).
template <class D, class X> constexpr Bc bc_of() {
  using S = typename opnd<X>::tile;
  if constexpr (opnd<X>::forced) return opnd<X>::bc;
  else if constexpr (S::Rows == 1 && S::Cols == 1 && !(D::Rows == 1 && D::Cols == 1)) return Bc::Scalar;
  else if constexpr (S::Cols == 1 && D::Cols != 1) return Bc::Col;
  else if constexpr (S::Rows == 1 && D::Rows != 1) return Bc::Row;
  else return Bc::None;
}
template <class X> using vt_of = typename opnd<X>::tile::value_type;
}  // namespace detail

// Position of one SIMD chunk: row r, columns [c, c + n), n <= N (n < N only for the row tail).
template <class CT, int N> struct Cursor {
  using V = simd::vec<CT, N>;
  int r, c, n;
  template <Bc B = Bc::None, class S> PTO_INLINE V load_bc(const S& s) const {
    static_assert(S::kRowMajor, "elementwise operands must be row-major tiles (Vec/Mat/Acc/Bias/Left)");
    using T = typename S::value_type;
    if constexpr (B == Bc::Scalar) return simd::splat<V>(CT(to_compute(s.data[0])));
    else if constexpr (B == Bc::Col) return simd::splat<V>(CT(to_compute(s.data[long(r) * S::Cols])));
    else {
      const T* p = s.data + (B == Bc::Row ? 0L : long(r) * S::Cols) + c;
      return n == N ? simd::load<CT, N>(p) : simd::load_n<CT, N>(p, n);
    }
  }
  template <class X> PTO_INLINE V load(const X& x) const {
    return load_bc<detail::opnd<X>::bc>(detail::tile_of(x));
  }
  template <class D, class W> PTO_INLINE void store(const D& d, W v) const {
    static_assert(D::kRowMajor, "elementwise destinations must be row-major tiles");
    using T = typename D::value_type;
    T* p = d.data + long(r) * D::Cols + c;
    if (n == N) simd::store<T>(p, v);
    else simd::store_n<T>(p, v, n);
  }
};

// Run body over a vr x vc region in chunks of N. flat: rows are contiguous in every operand
// (all have Cols == vc, no row/col broadcast), so the region is walked as one long row.
template <class CT, int N = simd::lanes_v<CT>, class Body>
PTO_INLINE void vloop(int vr, int vc, bool flat, Body&& body) {
  const int rows = flat ? 1 : vr;
  const int cols = flat ? vr * vc : vc;
  for (int r = 0; r < rows; ++r) {
    int c = 0;
    for (; c + N <= cols; c += N) body(Cursor<CT, N>{r, c, N});
    if (c < cols) body(Cursor<CT, N>{r, c, cols - c});
  }
}

namespace detail {
template <class D, class X> constexpr bool flat_ok() {
  using S = typename opnd<X>::tile;
  constexpr Bc b = bc_of<D, X>();
  return b == Bc::Scalar || (b == Bc::None && S::Cols == D::Cols);
}
template <class... Ts> struct max_size { static constexpr int v = int(std::max({sizeof(vstorage_t<Ts>)...})); };
}  // namespace detail

template <class D, class... Xs> PTO_INLINE bool can_flatten(const D& d, const Xs&...) {
  return d.vc == D::Cols && (detail::flat_ok<D, Xs>() && ... && true);
}

template <class... Xs> using default_ct = compute_t<promote_t<detail::vt_of<Xs>...>>;

template <class CT, class D, class F, class... Xs> PTO_INLINE void vmap_ct(D& d, F&& f, const Xs&... xs) {
  constexpr int N = simd::lanes_for<detail::max_size<CT, typename D::value_type, detail::vt_of<Xs>...>::v>;
  using V = simd::vec<CT, N>;
  vloop<CT, N>(d.vr, d.vc, can_flatten(d, xs...), [&](const Cursor<CT, N>& cur) PTO_INLINE_LAMBDA {
    cur.store(d, f(cur.template load_bc<detail::bc_of<D, Xs>()>(detail::tile_of(xs))...));
  });
  (void)sizeof(V);
}
template <class D, class F, class X, class... Xs> PTO_INLINE void vmap(D& d, F&& f, const X& x, const Xs&... xs) {
  vmap_ct<default_ct<X, Xs...>>(d, f, x, xs...);
}

}  // namespace pto
