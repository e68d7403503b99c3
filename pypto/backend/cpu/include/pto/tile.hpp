// pto/tile.hpp -- tiles (static shape + location + runtime valid region), global windows, and the
// packed layout of Right tiles.
#pragma once
#include <initializer_list>

#include "simd.hpp"

namespace pto {

enum class Loc { Vec, Mat, Left, Right, Acc, Bias };

// ---- matmul blocking (ISA dependent; also fixes the Right packed layout) ---------------------------
namespace gemm {
#if defined(__AVX512F__)
inline constexpr int kLanes = 16, kMR = 14, kNV = 2;
#elif defined(__AVX__)
inline constexpr int kLanes = 8, kMR = 6, kNV = 2;
#elif defined(PTO_NEON)
inline constexpr int kLanes = 4, kMR = 6, kNV = 4;
#else
inline constexpr int kLanes = 4, kMR = 4, kNV = 2;
#endif
inline constexpr int kNR = kLanes * kNV;  // fp32 kernel panel width (columns)
inline constexpr int kKC = 256;           // K block so a B panel stays in L1
}  // namespace gemm

// Right (K x N) packed layout: column panels of P columns (the last one may be narrower, w = N % P);
// panels are stored one after another; panel p starts at element p * P * Rows. Inside a panel of
// width w, K is grouped by G (1, 2 or 4): element (k, j) sits at (k / G) * (w * G) + j * G + k % G.
// G = 1 (plain k-major rows of w) unless a dot-product ISA wants pairs (bf16: AMX-BF16, or
// AVX512-BF16 with -DPTO_USE_BF16_DOT) or quads (int8: AVX512-VNNI, also AMX-INT8's layout); then
// P = 32 and Rows % G must be 0 (else G falls back to 1).
template <class T, int Rows, int Cols> struct RightLayout {
#if defined(PTO_AMX_BF16) || (defined(__AVX512BF16__) && defined(PTO_USE_BF16_DOT))
  // the VNNI pair layout of AMX tdpbf16ps / vdpbf16ps. Without AMX the default is G = 1: bf16 is
  // widened to fp32 for the FMA kernel (on Sapphire Rapids vdpbf16ps measured ~0.6x of it)
  static constexpr bool kPair = is_bf16_v<T> && Rows % 2 == 0;
#else
  static constexpr bool kPair = false;
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  static constexpr bool kQuad = std::is_same_v<T, int8_t> && Rows % 4 == 0;
#else
  static constexpr bool kQuad = false;
#endif
  static constexpr int G = kPair ? 2 : (kQuad ? 4 : 1);
  static constexpr int P = G > 1 ? 32 : gemm::kNR;
  static constexpr int kPanels = (Cols + P - 1) / P;
  static PTO_INLINE constexpr int width(int p) { return (p + 1) * P <= Cols ? P : Cols - p * P; }
  static PTO_INLINE constexpr long offset(int k, int j) {
    const int p = j / P, jj = j - p * P, w = width(p);
    return long(p) * P * Rows + long(k / G) * (w * G) + long(jj) * G + (k % G);
  }
};

template <class T, int R, int C, Loc L = Loc::Vec> struct Tile {
  static_assert(R > 0 && C > 0, "tile shapes are static and positive");
  using value_type = T;
  static constexpr int Rows = R, Cols = C;
  static constexpr Loc loc = L;
  static constexpr bool kRowMajor = L != Loc::Right;  // Left is row-major too (see README)
  static constexpr size_t kBytes = size_t(R) * C * sizeof(T);

  T* data = nullptr;
  int vr = R, vc = C;  // valid rows / cols (runtime, <= static shape)

  Tile() = default;
  explicit Tile(void* p, int valid_rows = R, int valid_cols = C)
      : data(static_cast<T*>(p)), vr(valid_rows), vc(valid_cols) {}
  void set_valid(int r, int c) { vr = r; vc = c; }
  void assign(void* p) { data = static_cast<T*>(p); }

  // element offset of (r, c) in this tile's layout
  static PTO_INLINE constexpr long offset(int r, int c) {
    if constexpr (L == Loc::Right) return RightLayout<T, R, C>::offset(r, c);
    else return long(r) * C + c;
  }
  PTO_INLINE T& at(int r, int c) const { return data[offset(r, c)]; }
  PTO_INLINE T* row(int r) const {
    static_assert(kRowMajor);
    return data + long(r) * C;
  }
};

template <class T, int R, int C> using VecTile = Tile<T, R, C, Loc::Vec>;
template <class T, int R, int C> using MatTile = Tile<T, R, C, Loc::Mat>;
template <class T, int R, int C> using LeftTile = Tile<T, R, C, Loc::Left>;
template <class T, int R, int C> using RightTile = Tile<T, R, C, Loc::Right>;
template <class T, int R, int C> using AccTile = Tile<T, R, C, Loc::Acc>;
template <class T, int R, int C> using BiasTile = Tile<T, R, C, Loc::Bias>;

template <class X> struct is_tile : std::false_type {};
template <class T, int R, int C, Loc L> struct is_tile<Tile<T, R, C, L>> : std::true_type {};
template <class X> inline constexpr bool is_tile_v = is_tile<std::decay_t<X>>::value;

PTO_INLINE void* arena_at(void* arena, size_t addr) { return static_cast<char*>(arena) + addr; }

// ---- global (DDR) windows ------------------------------------------------------------------------
// An N-d window (N <= 8) of a global tensor: data points at the window origin, shape holds the
// extents of the window, strides are in elements. As a 2-D matrix it has rows = prod(shape[:-1]),
// cols = shape[-1]; row r is the r-th leading multi-index in row-major order.
template <class T> struct GTensor {
  static constexpr int kMaxDims = 8;
  T* data = nullptr;
  int ndim = 0;
  long shape[kMaxDims] = {};
  long stride[kMaxDims] = {};

  GTensor() = default;
  GTensor(T* p, std::initializer_list<long> shp, std::initializer_list<long> str) : data(p) {
    ndim = int(shp.size());
    int i = 0;
    for (long s : shp) shape[i++] = s;
    i = 0;
    for (long s : str) stride[i++] = s;
  }
  GTensor(T* p, int nd, const long* shp, const long* str) : data(p), ndim(nd) {
    for (int i = 0; i < nd; ++i) { shape[i] = shp[i]; stride[i] = str[i]; }
  }
  long rows() const {
    long r = 1;
    for (int i = 0; i + 1 < ndim; ++i) r *= shape[i];
    return r;
  }
  long cols() const { return ndim ? shape[ndim - 1] : 1; }
  long col_stride() const { return ndim ? stride[ndim - 1] : 1; }
  // True when the leading dims collapse to one uniform row stride (always for 2-D windows).
  bool uniform_rows(long* rs) const {
    if (ndim <= 1) { *rs = 0; return true; }
    long s = stride[ndim - 2], count = shape[ndim - 2];
    for (int d = ndim - 3; d >= 0; --d) {
      if (shape[d] == 1) continue;
      if (count == 1) { s = stride[d]; count = shape[d]; continue; }
      if (stride[d] != s * count) return false;
      count *= shape[d];
    }
    *rs = s;
    return true;
  }
  // Offset (elements) of flattened row r.
  long row_offset(long r) const {
    long off = 0;
    for (int d = ndim - 2; d >= 0; --d) {
      long i = r % shape[d];
      r /= shape[d];
      off += i * stride[d];
    }
    return off;
  }
};

}  // namespace pto
