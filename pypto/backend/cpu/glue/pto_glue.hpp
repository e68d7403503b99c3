// pto_glue.hpp -- scalar helpers and task-program helpers used by generated CPU code.
//
// Scalar semantics follow the IR: integer arithmetic wraps (generated code is built with -fwrapv),
// division/remainder by zero give 0, shifts by out-of-range counts give 0 (or -1 for a negative
// arithmetic right shift), float -> int conversions saturate and map NaN to 0, f16/bf16 scalars
// compute in float.
#ifndef PTO_GLUE_HPP
#define PTO_GLUE_HPP

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

#include "pto_runtime.h"
#include "pto/pto.hpp"

#define PTO_EXPORT extern "C" __attribute__((visibility("default")))

namespace glue {

template <class T> using CT = std::conditional_t<std::is_floating_point_v<T> || std::is_integral_v<T>, T, float>;

template <class T> inline T divsi(T a, T b) {
  if (b == 0) return T(0);
  if (std::is_signed_v<T> && b == T(-1)) return T(T(0) - a);  // MIN / -1 wraps
  return T(a / b);
}
template <class T> inline T remsi(T a, T b) {
  if (b == 0 || (std::is_signed_v<T> && b == T(-1))) return T(0);
  return T(a % b);
}
template <class T> inline T floordivsi(T a, T b) {
  if (b == 0) return T(0);
  T q = divsi(a, b);
  if (std::is_signed_v<T> && (a % b != 0) && ((a < 0) != (b < 0))) q = T(q - 1);
  return q;
}
template <class T> inline T shl(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (b < 0 || b >= T(sizeof(T) * 8)) return T(0);
  return T(U(a) << b);
}
template <class T> inline T shr(T a, T b) {
  if (b < 0 || b >= T(sizeof(T) * 8)) return std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
  return T(a >> b);
}
template <class T> inline T shru(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (b < 0 || b >= T(sizeof(T) * 8)) return T(0);
  return T(U(a) >> b);
}
template <class T> inline T fmin_nan(T a, T b) { return (a != a || b != b) ? T(NAN) : (a < b ? a : b); }
template <class T> inline T fmax_nan(T a, T b) { return (a != a || b != b) ? T(NAN) : (a > b ? a : b); }

// float -> integer: truncate, saturate, NaN -> 0
template <class I, class F> inline I fptoi(F x) {
  double d = double(x);
  if (d != d) return I(0);
  if (d <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (d >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return I(d);
}
template <class T> inline T ipow(T base, T e) {
  if (e < 0) return T(base == 1 ? 1 : (base == -1 ? ((e & 1) ? -1 : 1) : 0));
  T r = 1;
  while (e) {
    if (e & 1) r = T(r * base);
    base = T(base * base);
    e >>= 1;
  }
  return r;
}
template <class T> inline T iabs(T a) { return a < 0 ? T(T(0) - a) : a; }

// ---- scf.for: Python's range(lb, ub, step), step != 0 ---------------------------------------
// The trip count is up to 2^64 - 1 (range(INT64_MIN, INT64_MAX)), so it is unsigned; the
// differences are taken in unsigned arithmetic, where they cannot overflow. A loop counts k over
// [0, n) and takes i = lb + k * step modulo 2^64, which is exact because every i lies in [lb, ub).
// (`for (i = lb; i < ub; i += step)` wraps past ub near INT64_MAX and never ends.)
constexpr uint64_t trip_count(int64_t lb, int64_t ub, int64_t step) {
  if (step > 0) return lb < ub ? (uint64_t(ub) - uint64_t(lb) - 1) / uint64_t(step) + 1 : 0;
  if (step < 0) return lb > ub ? (uint64_t(lb) - uint64_t(ub) - 1) / (uint64_t(0) - uint64_t(step)) + 1 : 0;
  return 0;  // step 0: the generated code fails the run before it asks
}
constexpr int64_t iv_at(int64_t lb, uint64_t k, int64_t step) {
  return int64_t(uint64_t(lb) + k * uint64_t(step));
}

// ---- fused loops: global windows read and written at the loop cursor --------------------------
// A window of at most 2 dimensions with unit column stride (the assembler only fuses those).
template <class CT, int N, class T>
PTO_INLINE pto::simd::vec<CT, N> gload(const pto::GTensor<T>& g, const pto::Cursor<CT, N>& cur) {
  const T* p = g.data + (g.ndim > 1 ? long(cur.r) * g.stride[0] : 0L) + cur.c;
  return cur.n == N ? pto::simd::load<CT, N>(p) : pto::simd::load_n<CT, N>(p, cur.n);
}
template <class CT, int N, class T, class V>
PTO_INLINE void gstore(const pto::GTensor<T>& g, const pto::Cursor<CT, N>& cur, V v) {
  T* p = g.data + (g.ndim > 1 ? long(cur.r) * g.stride[0] : 0L) + cur.c;
  if (cur.n == N) pto::simd::store<T>(p, v);
  else pto::simd::store_n<T>(p, v, cur.n);
}
// Can a loop that loads window `a` and stores window `b` element by element (row-major, same
// extents) run fused? Yes if they share no bytes, or are the very same window.
template <class A, class B>
PTO_INLINE bool fusable_windows(const pto::GTensor<A>& a, const pto::GTensor<B>& b, long vr, long vc) {
  if (vr <= 0 || vc <= 0) return true;
  const long ra = a.ndim > 1 ? a.stride[0] : 0, rb = b.ndim > 1 ? b.stride[0] : 0;
  const char* alo = reinterpret_cast<const char*>(a.data);
  const char* ahi = reinterpret_cast<const char*>(a.data + (vr - 1) * ra + vc);
  const char* blo = reinterpret_cast<const char*>(b.data);
  const char* bhi = reinterpret_cast<const char*>(b.data + (vr - 1) * rb + vc);
  if (ahi <= blo || bhi <= alo) return true;
  return sizeof(A) == sizeof(B) && alo == blo && ra == rb;
}

// ---- kernel memory safety ---------------------------------------------------------------------
// Does a TLOAD/TSTORE of `vr` x `vc` elements (rows flattened over the window's leading dims, as
// GTensor::row_offset walks them) at window offsets `off` / extents `sz` stay inside a tensor of
// extents `ext`? Offsets and sizes are run-time values, so kernels check before touching memory.
// All comparisons are written so that no sum can overflow (offsets are user values, up to 2^63).
inline bool window_in_bounds(int nd, const long* ext, const long* off, const long* sz, long vr, long vc) {
  if (vr < 0 || vc < 0) return false;  // a negative valid extent is a malformed tile
  if (vr == 0 || vc == 0) return true;
  if (nd <= 0) return vr == 1 && vc == 1;
  for (int k = 0; k < nd; ++k)
    if (off[k] < 0 || ext[k] < 0 || off[k] > ext[k]) return false;
  if (vc > ext[nd - 1] - off[nd - 1]) return false;
  if (nd == 1) return vr == 1;
  long inner = 1;  // rows of the window below dimension d
  for (int d = nd - 2; d >= 0; --d) {
    long top = (vr - 1) / inner;  // the largest index the access reaches in dimension d
    if (d > 0 && top > sz[d] - 1) top = sz[d] - 1;
    if (top >= ext[d] - off[d]) return false;
    if (sz[d] > 0 && inner > (1L << 62) / sz[d]) break;  // the rows cannot reach the dims above
    inner *= sz[d] > 0 ? sz[d] : 1;
  }
  return true;
}

// "[a, b, ...]" of `n` longs into `buf` (for error messages).
inline const char* fmt_dims(char* buf, int cap, int n, const long* v) {
  int k = std::snprintf(buf, cap, "[");
  for (int i = 0; i < n && k < cap; ++i) k += std::snprintf(buf + k, cap - k, i ? ", %ld" : "%ld", v[i]);
  if (k < cap) std::snprintf(buf + k, cap - k, "]");
  return buf;
}

// ---- task-program helpers ------------------------------------------------------------------

inline bool slice(const pto_tensor* base, int nd, const int64_t* off, const int64_t* sz, pto_tensor* out) {
  // a window running past the tensor's end is cut back to it (the public runtime's views are addresses:
  // a task reading only the part that exists works); a window starting outside the tensor is an error
  int64_t cut[PTO_MAX_DIMS];
  for (int k = 0; k < nd; ++k) {
    if (off[k] < 0 || sz[k] < 0 || off[k] > base->shape[k]) return false;
    cut[k] = off[k] + sz[k] > base->shape[k] ? base->shape[k] - off[k] : sz[k];
  }
  *out = pto_tensor_slice(base, off, cut);
  return true;
}

inline bool is_dense(const pto_tensor* t) {
  int64_t n = 1;
  for (int k = t->ndim - 1; k >= 0; --k) {
    if (t->shape[k] != 1 && t->strides[k] != n) return false;
    n *= t->shape[k];
  }
  return true;
}

inline bool reshape(const pto_tensor* base, int nd, const int64_t* shape, pto_tensor* out) {
  if (!is_dense(base)) return false;
  int64_t n0 = 1, n1 = 1;
  for (int k = 0; k < base->ndim; ++k) n0 *= base->shape[k];
  for (int k = 0; k < nd; ++k) n1 *= shape[k];
  if (n0 != n1) return false;
  pto_tensor r = pto_tensor_dense(base->data, base->dtype_bytes, nd, shape);
  r.root = base->root;
  r.root_nbytes = base->root_nbytes;
  *out = r;
  return true;
}

inline pto_tensor element(const pto_tensor* t, const int64_t* idx) {
  pto_tensor e = *t;
  int64_t off = 0;
  for (int k = 0; k < t->ndim; ++k) {
    off += idx[k] * t->strides[k];
    e.shape[k] = 1;
  }
  e.data = (char*)t->data + off * t->dtype_bytes;
  return e;
}

inline bool in_bounds(const pto_tensor* t, const int64_t* idx) {
  for (int k = 0; k < t->ndim; ++k)
    if (idx[k] < 0 || idx[k] >= t->shape[k]) return false;
  return true;
}

// copy src into dst (same shape), element by element (any strides)
inline bool copy(pto_tensor* dst, const pto_tensor* src) {
  if (dst->ndim != src->ndim || dst->dtype_bytes != src->dtype_bytes) return false;
  int64_t n = 1;
  for (int k = 0; k < src->ndim; ++k) {
    if (dst->shape[k] != src->shape[k]) return false;
    n *= src->shape[k];
  }
  int64_t idx[PTO_MAX_DIMS] = {0};
  const int eb = src->dtype_bytes;
  for (int64_t i = 0; i < n; ++i) {
    int64_t so = 0, d_o = 0;
    for (int k = 0; k < src->ndim; ++k) {
      so += idx[k] * src->strides[k];
      d_o += idx[k] * dst->strides[k];
    }
    std::memcpy((char*)dst->data + d_o * eb, (const char*)src->data + so * eb, eb);
    for (int k = src->ndim - 1; k >= 0; --k) {
      if (++idx[k] < src->shape[k]) break;
      idx[k] = 0;
    }
  }
  return true;
}

inline int fail(const pto_rt_api* api, void* rt, const char* fmt, const char* a = "", int64_t x = 0,
                int64_t y = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, a, (long long)x, (long long)y);
  api->fail(rt, buf);
  return 1;
}

}  // namespace glue

#endif  // PTO_GLUE_HPP
