// pto/reduce.hpp -- row / column reductions and the broadcasts that undo them.
//   TROWSUM/TROWMAX/TROWMIN(dst[R,1], src[, tmp]): dst[i,0] = reduce(src[i, 0:src.vc]) for i < dst.vr
//   TCOLSUM/TCOLMAX/TCOLMIN(dst[1,C], src[, tmp]): dst[0,j] = reduce(src[0:src.vr, j]) for j < dst.vc
// fp16/bf16 accumulate in fp32; integer sums wrap in the integer type (computed in >= 32 bits).
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

template <Red R, class D, class S> PTO_INLINE void row_reduce(D& dst, const S& src) {
  using T = typename S::value_type;
  using A = typename red_acc<T>::type;
  using CT = compute_t<T>;
  constexpr int N = simd::lanes_for<int(std::max(sizeof(A), sizeof(vstorage_t<T>)))>;
  using V = simd::vec<A, N>;
  static_assert(S::kRowMajor && D::kRowMajor);
  const int n = src.vc;
  for (int r = 0; r < dst.vr; ++r) {
    const T* p = src.row(r);
    A res;
    if (n >= N) {
      V a0 = simd::load<A, N>(p), a1 = a0, a2 = a0, a3 = a0;
      int c = N;
      if (n >= 4 * N) {
        a1 = simd::load<A, N>(p + N);
        a2 = simd::load<A, N>(p + 2 * N);
        a3 = simd::load<A, N>(p + 3 * N);
        c = 4 * N;
        for (; c + 4 * N <= n; c += 4 * N) {
          a0 = red2<R>(a0, simd::load<A, N>(p + c));
          a1 = red2<R>(a1, simd::load<A, N>(p + c + N));
          a2 = red2<R>(a2, simd::load<A, N>(p + c + 2 * N));
          a3 = red2<R>(a3, simd::load<A, N>(p + c + 3 * N));
        }
        a0 = red2<R>(red2<R>(a0, a1), red2<R>(a2, a3));
      }
      for (; c + N <= n; c += N) a0 = red2<R>(a0, simd::load<A, N>(p + c));
      if (c < n) {  // tail: the last N elements overlap already-counted ones; mask those for sums
        V t = simd::load<A, N>(p + n - N);
        if constexpr (R == Red::Sum) {
          V keep{};
          for (int i = 0; i < N; ++i) keep[i] = (i >= N - (n - c)) ? A(1) : A(0);
          t = simd::select(keep != A(0), t, V{});
        }
        a0 = red2<R>(a0, t);
      }
      res = a0[0];
      for (int i = 1; i < N; ++i) res = red2<R>(res, A(a0[i]));
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
  static_assert(S::kRowMajor && D::kRowMajor);
  const int rows = src.vr, cols = dst.vc;
  int c = 0;
  for (; c + 2 * N <= cols; c += 2 * N) {
    V a0 = simd::load<A, N>(src.data + c), a1 = simd::load<A, N>(src.data + c + N);
    for (int r = 1; r < rows; ++r) {
      const T* p = src.row(r) + c;
      a0 = red2<R>(a0, simd::load<A, N>(p));
      a1 = red2<R>(a1, simd::load<A, N>(p + N));
    }
    simd::store<DT>(dst.data + c, simd::cast<CT>(a0));
    simd::store<DT>(dst.data + c + N, simd::cast<CT>(a1));
  }
  for (; c < cols; c += N) {
    const int n = std::min(N, cols - c);
    V a0 = simd::load_n<A, N>(src.data + c, n);
    for (int r = 1; r < rows; ++r) a0 = red2<R>(a0, simd::load_n<A, N>(src.row(r) + c, n));
    simd::store_n<DT>(dst.data + c, simd::cast<CT>(a0), n);
  }
}
}  // namespace detail

#define PTO_REDUCE(NAME, KIND, IMPL)                                                                        \
  template <class D, class S> PTO_INLINE void NAME(D& dst, const S& src) { detail::IMPL<detail::Red::KIND>(dst, src); } \
  template <class D, class S, class Tmp> PTO_INLINE void NAME(D& dst, const S& src, Tmp&) { NAME(dst, src); }
PTO_REDUCE(TROWSUM, Sum, row_reduce)
PTO_REDUCE(TROWMAX, Max, row_reduce)
PTO_REDUCE(TROWMIN, Min, row_reduce)
PTO_REDUCE(TCOLSUM, Sum, col_reduce)
PTO_REDUCE(TCOLMAX, Max, col_reduce)
PTO_REDUCE(TCOLMIN, Min, col_reduce)
#undef PTO_REDUCE

// ---- broadcasts ---------------------------------------------------------------------------------------
// TROWEXPAND(dst, src): dst[i,j] = src[i,0];  TCOLEXPAND(dst, src): dst[i,j] = src[0,j]
template <class D, class S> PTO_INLINE void TROWEXPAND(D& dst, const S& src) { vmap(dst, op::Identity{}, ColBcast(src)); }
template <class D, class S> PTO_INLINE void TCOLEXPAND(D& dst, const S& src) { vmap(dst, op::Identity{}, RowBcast(src)); }
// TROWEXPANDxx(dst, a, v): dst[i,j] = a[i,j] op v[i,0];  TCOLEXPANDxx(dst, a, v): a[i,j] op v[0,j]
#define PTO_EXPAND(NAME, OP, WRAP)                                                                \
  template <class D, class A, class S> PTO_INLINE void NAME(D& dst, const A& a, const S& v) {     \
    vmap(dst, op::OP{}, a, WRAP(v));                                                              \
  }
PTO_EXPAND(TROWEXPANDADD, Add, ColBcast)
PTO_EXPAND(TROWEXPANDSUB, Sub, ColBcast)
PTO_EXPAND(TROWEXPANDMUL, Mul, ColBcast)
PTO_EXPAND(TROWEXPANDDIV, Div, ColBcast)
PTO_EXPAND(TROWEXPANDMAX, Max, ColBcast)
PTO_EXPAND(TROWEXPANDMIN, Min, ColBcast)
PTO_EXPAND(TCOLEXPANDADD, Add, RowBcast)
PTO_EXPAND(TCOLEXPANDSUB, Sub, RowBcast)
PTO_EXPAND(TCOLEXPANDMUL, Mul, RowBcast)
PTO_EXPAND(TCOLEXPANDDIV, Div, RowBcast)
PTO_EXPAND(TCOLEXPANDMAX, Max, RowBcast)
PTO_EXPAND(TCOLEXPANDMIN, Min, RowBcast)
#undef PTO_EXPAND

}  // namespace pto
