// pto/memory.hpp -- data movement: TLOAD / TSTORE (global <-> tile), TMOV (tile <-> tile, any
// locations, packing into Right), TEXTRACT, TINSERT, TCONCAT, TRESHAPE, TTRANS, TFILLPAD,
// TGETVAL / TSETVAL, and per-thread scratch memory.
#pragma once
#include <atomic>
#include <cstdlib>
#include <vector>

#include "vmap.hpp"

namespace pto {

// Per-thread scratch buffers (matmul conversions, edge panels). Slot i (< kScratchSlots) is reused
// call to call. Slots: 0/1 widened matmul operands, 2 converted bias, 4 narrow B panel, 5 TMOV /
// TLOAD staging, 6-8 AMX edge copies, 9 int8 row sums (VNNI).
inline constexpr int kScratchSlots = 10;
PTO_INLINE void* scratch(int slot, size_t bytes) {
  struct Buf { void* p = nullptr; size_t n = 0; ~Buf() { std::free(p); } };
  static thread_local Buf bufs[kScratchSlots];
  Buf& b = bufs[slot];
  if (b.n < bytes) {
    std::free(b.p);
    size_t n = (bytes + 4095) & ~size_t(4095);
    b.p = std::aligned_alloc(64, n);
    b.n = n;
  }
  return b.p;
}

namespace detail {
template <class DT, class ST> PTO_INLINE DT cvt(ST v) {
  if constexpr (std::is_same_v<DT, ST>) return v;
  else return from_compute<DT>(to_compute(v));
}

// ---- packing into Right tiles (same dtype, unit column stride) -------------------------------------
// kr valid rows, cv valid columns of the source; everything else of the packed footprint is zeroed.

// G = 1: each source row is cut into panel rows. Row-outer, so the source streams sequentially.
template <class T, int Rows, int Cols, int P>
PTO_NOINLINE void pack_g1(T* out, const T* src, long rs, int kr, int cv) {
  constexpr int np = (Cols + P - 1) / P;
  for (int k = 0; k < kr; ++k) {
    const T* s = src + k * rs;
    for (int p = 0; p < np; ++p) {
      const int j0 = p * P, w = std::min(P, Cols - j0), jv = std::max(0, std::min(w, cv - j0));
      T* o = out + long(p) * P * Rows + long(k) * w;
      if (jv == P) {
        std::memcpy(o, s + j0, sizeof(T) * P);  // fixed size: a few vector moves
      } else {
        std::memcpy(o, s + j0, sizeof(T) * size_t(jv));
        std::memset(static_cast<void*>(o + jv), 0, sizeof(T) * size_t(w - jv));
      }
    }
  }
  if (kr < Rows)
    for (int p = 0; p < np; ++p) {
      const int w = std::min(P, Cols - p * P);
      std::memset(static_cast<void*>(out + long(p) * P * Rows + long(kr) * w), 0, sizeof(T) * size_t(Rows - kr) * w);
    }
}

#if defined(__AVX512BW__) && defined(__AVX512VL__)
// G = 2 (bf16 pairs, P = 32): rows 2q and 2q+1 interleave into one group row of 2w elements.
template <int Rows, int Cols>
PTO_NOINLINE void pack_g2(uint16_t* out, const uint16_t* src, long rs, int kr, int cv) {
  constexpr int P = 32, np = (Cols + P - 1) / P;
  alignas(64) static constexpr uint16_t kIdx[64] = {
      0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
      11, 43, 12, 44, 13, 45, 14, 46, 15, 47, 16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53,
      22, 54, 23, 55, 24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
  const __m512i ilo = _mm512_load_si512(kIdx), ihi = _mm512_load_si512(kIdx + 32);
  for (int q = 0; q < Rows / 2; ++q) {
    const int k = 2 * q;
    const uint16_t* s0 = src + k * rs;
    const uint16_t* s1 = s0 + rs;
    for (int p = 0; p < np; ++p) {
      const int j0 = p * P, w = std::min(P, Cols - j0), jv = std::max(0, std::min(w, cv - j0));
      const __mmask32 lm = jv >= 32 ? ~__mmask32(0) : __mmask32((1u << jv) - 1u);
      const __m512i r0 = k < kr ? _mm512_maskz_loadu_epi16(lm, s0 + j0) : _mm512_setzero_si512();
      const __m512i r1 = k + 1 < kr ? _mm512_maskz_loadu_epi16(lm, s1 + j0) : _mm512_setzero_si512();
      const __m512i lo = _mm512_permutex2var_epi16(r0, ilo, r1), hi = _mm512_permutex2var_epi16(r0, ihi, r1);
      uint16_t* o = out + long(p) * P * Rows + long(q) * 2 * w;
      if (w == P) {
        _mm512_storeu_si512(o, lo);
        _mm512_storeu_si512(o + 32, hi);
      } else {  // narrow last panel: 2w < 64 elements
        const int e = 2 * w;
        _mm512_mask_storeu_epi16(o, e >= 32 ? ~__mmask32(0) : __mmask32((1u << e) - 1u), lo);
        if (e > 32) _mm512_mask_storeu_epi16(o + 32, __mmask32((1u << (e - 32)) - 1u), hi);
      }
    }
  }
}
// G = 4 (int8 quads, P = 32): rows 4q..4q+3 interleave byte-wise into one group row of 4w bytes.
template <int Rows, int Cols>
PTO_NOINLINE void pack_g4(int8_t* out, const int8_t* src, long rs, int kr, int cv) {
  constexpr int P = 32, np = (Cols + P - 1) / P;
  for (int q = 0; q < Rows / 4; ++q) {
    const int k = 4 * q;
    for (int p = 0; p < np; ++p) {
      const int j0 = p * P, w = std::min(P, Cols - j0), jv = std::max(0, std::min(w, cv - j0));
      const __mmask32 lm = jv >= 32 ? ~__mmask32(0) : __mmask32((1u << jv) - 1u);
      __m256i r[4];
      for (int g = 0; g < 4; ++g)
        r[g] = k + g < kr ? _mm256_maskz_loadu_epi8(lm, src + (k + g) * rs + j0) : _mm256_setzero_si256();
      const __m256i t0 = _mm256_unpacklo_epi8(r[0], r[1]), t1 = _mm256_unpackhi_epi8(r[0], r[1]);
      const __m256i t2 = _mm256_unpacklo_epi8(r[2], r[3]), t3 = _mm256_unpackhi_epi8(r[2], r[3]);
      const __m256i q0 = _mm256_unpacklo_epi16(t0, t2), q1 = _mm256_unpackhi_epi16(t0, t2);  // cols 0-7 | 16-23
      const __m256i q2 = _mm256_unpacklo_epi16(t1, t3), q3 = _mm256_unpackhi_epi16(t1, t3);  // cols 8-15 | 24-31
      const __m256i o4[4] = {_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q2, q3, 0x20),
                             _mm256_permute2x128_si256(q0, q1, 0x31), _mm256_permute2x128_si256(q2, q3, 0x31)};
      int8_t* o = out + long(p) * P * Rows + long(q) * 4 * w;
      if (w == P) {
        for (int c = 0; c < 4; ++c) _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 32 * c), o4[c]);
      } else {
        for (int c = 0; c < 4; ++c) {
          const int e = std::max(0, std::min(32, 4 * w - 32 * c));
          if (e > 0) _mm256_mask_storeu_epi8(o + 32 * c, e >= 32 ? ~__mmask32(0) : __mmask32((1u << e) - 1u), o4[c]);
        }
      }
    }
  }
}
#endif

// Write the rows x cols block whose element (i, j) is src[i*rs + j*cs] into tile d at (r0, c0).
// Row-major tiles: only the block is written. Right tiles: the whole packed footprint is written
// (the block at (0,0), zeros elsewhere).
template <class D, class ST> PTO_INLINE void put_block(D& d, const ST* src, long rs, long cs, int rows, int cols,
                                                       int r0 = 0, int c0 = 0) {
  using DT = typename D::value_type;
  if constexpr (D::kRowMajor) {
    if (cs == 1) {
      if constexpr (std::is_same_v<DT, ST>) {
        if (c0 == 0 && cols == D::Cols && rs == D::Cols && rows > 0) {  // whole rows on both sides: one copy
          DT* o = d.data + long(r0) * D::Cols;
          // a tile moved onto itself (e.g. Mat and Left planned at one address) costs nothing
          if (static_cast<const void*>(o) != static_cast<const void*>(src))
            std::memmove(o, src, sizeof(DT) * size_t(rows) * D::Cols);
          return;
        }
      }
      for (int i = 0; i < rows; ++i) {
        DT* o = d.data + long(r0 + i) * D::Cols + c0;
        const ST* s = src + i * rs;
        if constexpr (std::is_same_v<DT, ST>) std::memcpy(o, s, sizeof(DT) * size_t(cols));
        else for (int j = 0; j < cols; ++j) o[j] = cvt<DT>(s[j]);
      }
    } else {  // strided / transposing: 16 x 16 blocks keep both sides in cache
      for (int i0 = 0; i0 < rows; i0 += 16)
        for (int j0 = 0; j0 < cols; j0 += 16) {
          const int ie = std::min(rows, i0 + 16), je = std::min(cols, j0 + 16);
          for (int i = i0; i < ie; ++i) {
            DT* o = d.data + long(r0 + i) * D::Cols + c0;
            for (int j = j0; j < je; ++j) o[j] = cvt<DT>(src[i * rs + j * cs]);
          }
        }
    }
  } else {
    static_assert(D::loc == Loc::Right);
    using Lay = RightLayout<DT, D::Rows, D::Cols>;
    constexpr int G = Lay::G;
    if constexpr (std::is_same_v<DT, ST>) {
      if (cs == 1) {  // hot paths: same dtype, unit column stride
        const int kr = std::max(0, std::min(rows, D::Rows)), cv = std::max(0, std::min(cols, D::Cols));
        if constexpr (G == 1) return pack_g1<DT, D::Rows, D::Cols, Lay::P>(d.data, src, rs, kr, cv);
#if defined(__AVX512BW__) && defined(__AVX512VL__)
        if constexpr (G == 2)
          return pack_g2<D::Rows, D::Cols>(reinterpret_cast<uint16_t*>(d.data), reinterpret_cast<const uint16_t*>(src),
                                           rs, kr, cv);
        if constexpr (G == 4) return pack_g4<D::Rows, D::Cols>(d.data, src, rs, kr, cv);
#endif
      }
    }
    for (int p = 0; p < Lay::kPanels; ++p) {
      const int w = Lay::width(p), j0 = p * Lay::P;
      DT* panel = d.data + long(p) * Lay::P * D::Rows;
      const int jv = std::max(0, std::min(w, cols - j0));  // valid columns in this panel
      if constexpr (G == 1) {
        for (int k = 0; k < D::Rows; ++k) {
          DT* o = panel + long(k) * w;
          if (k < rows) {
            const ST* s = src + k * rs + j0 * cs;
            if (cs == 1 && std::is_same_v<DT, ST>) std::memcpy(o, s, sizeof(DT) * size_t(jv));
            else for (int j = 0; j < jv; ++j) o[j] = cvt<DT>(s[j * cs]);
            for (int j = jv; j < w; ++j) o[j] = DT(0);
          } else {
            std::memset(static_cast<void*>(o), 0, sizeof(DT) * size_t(w));
          }
        }
      } else {
        for (int kg = 0; kg < D::Rows / G; ++kg) {
          DT* o = panel + long(kg) * w * G;
          for (int g = 0; g < G; ++g) {
            const int k = kg * G + g;
            if (k < rows) {
              const ST* s = src + k * rs + j0 * cs;
              for (int j = 0; j < jv; ++j) o[j * G + g] = cvt<DT>(s[j * cs]);
              for (int j = jv; j < w; ++j) o[j * G + g] = DT(0);
            } else {
              for (int j = 0; j < w; ++j) o[j * G + g] = DT(0);
            }
          }
        }
      }
    }
  }
}

// Copy tile s (any layout) into tile d (any layout) over d's valid region; transpose: d = s^T.
template <bool Transpose, class D, class S> PTO_INLINE void move(D& d, const S& s) {
  if constexpr (S::kRowMajor) {
    if constexpr (Transpose) put_block(d, s.data, 1, S::Cols, d.vr, d.vc);
    else put_block(d, s.data, S::Cols, 1, d.vr, d.vc);
  } else {  // unpack a Right tile through a row-major scratch copy
    using ST = typename S::value_type;
    ST* tmp = static_cast<ST*>(scratch(5, sizeof(ST) * S::Rows * S::Cols));
    for (int i = 0; i < s.vr; ++i)
      for (int j = 0; j < s.vc; ++j) tmp[long(i) * S::Cols + j] = s.at(i, j);
    if constexpr (Transpose) put_block(d, tmp, 1, S::Cols, d.vr, d.vc);
    else put_block(d, tmp, S::Cols, 1, d.vr, d.vc);
  }
}
}  // namespace detail

// ---- streaming (non-temporal) stores -----------------------------------------------------------------
// TSTORE into a large contiguous window writes its whole 64-byte lines with non-temporal stores:
// the lines go to memory without being read first (no read-for-ownership: an out-of-place kernel
// moves 2 bytes of DRAM traffic per 2 useful ones instead of 3) and without evicting the working set.
// The partial lines at the ends of a run are written normally. An sfence at the end of the TSTORE
// orders the streamed data before everything the thread stores afterwards (the task-completion
// flag a consumer on another thread waits for); the thread's own later loads always see it.
//   StoreMode::Auto (TSTORE(g, src)): stream when the window's contiguous runs are >= 1 KiB (each
//     row, or the whole window when its rows are back to back), it totals >= stream_store_min_bytes()
//     (default PTO_STREAM_MIN_BYTES) and this thread has not TLOADed or TSTOREd an overlapping
//     window among its last 4 of >= 1 KiB (a read-modify-write of data that is in the cache anyway,
//     e.g. an accumulator kept in a global tensor across loop iterations, or a scratch window
//     written over and over, stays cached).
//   StoreMode::Stream: stream whatever the size (unit column stride); StoreMode::Cached: never.
// Streamed data is not in the cache afterwards: a consumer that reads a small output right away
// reads it from DRAM. The fence waits for the streamed lines to reach memory (~0.2-0.3 us, which is
// why Auto wants >= 8 KiB). -DPTO_STREAM_DEFER_FENCE leaves the fence to the caller: the TSTORE
// does not wait, and pto::stream_fence() (or any locked instruction, which drains the write-combining
// buffers too -- the runtime's task completion starts with an atomic exchange) must run before
// another thread is told the data is there; Auto's default threshold is then 4 KiB.
// Compiled in on x86 with AVX (-DPTO_NO_STREAM_STORES: off); elsewhere every mode is a plain store.
enum class StoreMode { Auto = 0, Cached = 1, Stream = 2 };
#define PTO_HAS_STORE_MODE 1

#if defined(PTO_X86) && defined(__AVX__) && !defined(PTO_NO_STREAM_STORES)
#define PTO_STREAM_STORES 1
#endif
#if !defined(PTO_STREAM_MIN_BYTES)
#if defined(PTO_STREAM_DEFER_FENCE)
#define PTO_STREAM_MIN_BYTES 4096
#else
#define PTO_STREAM_MIN_BYTES 8192
#endif
#endif
inline constexpr long kStreamMinRun = 1024;  // bytes of one contiguous run (Auto)

// Orders this thread's streamed stores before its later stores (an sfence; no-op without streaming).
PTO_INLINE void stream_fence() {
#if defined(PTO_STREAM_STORES)
  _mm_sfence();
#endif
}

namespace detail {
inline std::atomic<long>& stream_min_bytes_ref() {
  static std::atomic<long> v{long(PTO_STREAM_MIN_BYTES)};
  return v;
}
}  // namespace detail
// Auto's size threshold (bytes of the whole window), per loaded kernel library; < 0: Auto never streams.
inline void set_stream_store_min_bytes(long bytes) { detail::stream_min_bytes_ref().store(bytes, std::memory_order_relaxed); }
inline long stream_store_min_bytes() { return detail::stream_min_bytes_ref().load(std::memory_order_relaxed); }

namespace detail {
// Byte spans of this thread's last few TLOAD / TSTORE windows of >= kStreamMinRun bytes.
struct LoadHistory {
  static constexpr int kN = 4;
  uintptr_t lo[kN] = {}, hi[kN] = {};
  unsigned next = 0;
};
PTO_INLINE LoadHistory& load_history() {
  static thread_local LoadHistory h;
  return h;
}
// [lo, hi) bytes spanned by the first vr rows of vc elements of window g (any stride signs).
template <class T> PTO_INLINE void window_span(const GTensor<T>& g, long vr, long vc, uintptr_t* lo, uintptr_t* hi) {
  long rs, mn = 0, mx = 0;
  const long cs = g.col_stride();
  auto widen = [&](long off) PTO_INLINE_LAMBDA {
    const long e = off + (vc - 1) * cs;
    mn = std::min(mn, std::min(off, e));
    mx = std::max(mx, std::max(off, e));
  };
  if (g.uniform_rows(&rs)) {
    widen(0);
    widen((vr - 1) * rs);
  } else {
    for (long r = 0; r < vr; ++r) widen(g.row_offset(r));
  }
  *lo = reinterpret_cast<uintptr_t>(g.data + mn);
  *hi = reinterpret_cast<uintptr_t>(g.data + mx + 1);
}
PTO_INLINE void note_span(uintptr_t lo, uintptr_t hi) {
  LoadHistory& h = load_history();
  const unsigned i = h.next++ % LoadHistory::kN;
  h.lo[i] = lo;
  h.hi[i] = hi;
}
template <class T> PTO_INLINE void note_load(const GTensor<T>& g, int vr, int vc) {
#if defined(PTO_STREAM_STORES)
  if (vr <= 0 || vc <= 0 || long(sizeof(T)) * vr * vc < kStreamMinRun) return;
  uintptr_t lo, hi;
  window_span(g, vr, vc, &lo, &hi);
  note_span(lo, hi);
#else
  (void)g; (void)vr; (void)vc;
#endif
}
PTO_INLINE bool recently_used(uintptr_t lo, uintptr_t hi) {
  const LoadHistory& h = load_history();
  for (int i = 0; i < LoadHistory::kN; ++i)
    if (h.lo[i] < hi && lo < h.hi[i]) return true;
  return false;
}

#if defined(PTO_STREAM_STORES)
// Copy `bytes` from s to d: the whole 64-byte lines of d with non-temporal stores, the partial
// lines at either end with ordinary (masked) stores. No fence.
PTO_INLINE void stream_copy(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  auto plain = [](char* o, const char* i, size_t n) PTO_INLINE_LAMBDA {  // n < 64
#if defined(__AVX512BW__)
    const __mmask64 m = _bzhi_u64(~0ull, unsigned(n));
    _mm512_mask_storeu_epi8(o, m, _mm512_maskz_loadu_epi8(m, i));
#else
    std::memcpy(o, i, n);
#endif
  };
  size_t head = size_t(-reinterpret_cast<uintptr_t>(d)) & 63;
  if (head > bytes) head = bytes;
  if (head) {
    plain(d, s, head);
    d += head;
    s += head;
    bytes -= head;
  }
#if defined(__AVX512F__)
  for (; bytes >= 256; bytes -= 256, d += 256, s += 256) {
    const __m512i a = _mm512_loadu_si512(s), b = _mm512_loadu_si512(s + 64);
    const __m512i c = _mm512_loadu_si512(s + 128), e = _mm512_loadu_si512(s + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + 192), e);
  }
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d), _mm512_loadu_si512(s));
#else
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), b);
  }
#endif
  if (bytes) plain(d, s, bytes);
}
#endif
}  // namespace detail

// ---- global <-> tile -------------------------------------------------------------------------------
// TLOAD(dst, g): dst[i, j] = window row i, column j for (i, j) in dst's valid region.
template <class D, class T> PTO_INLINE void TLOAD(D& dst, const GTensor<T>& g) {
  detail::note_load(g, dst.vr, dst.vc);
  long rs;
  if (g.uniform_rows(&rs)) {
    detail::put_block(dst, g.data, rs, g.col_stride(), dst.vr, dst.vc);
  } else if constexpr (D::kRowMajor) {
    for (int r = 0; r < dst.vr; ++r)
      detail::put_block(dst, g.data + g.row_offset(r), 0, g.col_stride(), 1, dst.vc, r, 0);
  } else {
    using DT = typename D::value_type;
    T* tmp = static_cast<T*>(scratch(5, sizeof(T) * D::Rows * D::Cols));
    for (int r = 0; r < dst.vr; ++r)
      for (int c = 0; c < dst.vc; ++c) tmp[long(r) * D::Cols + c] = g.data[g.row_offset(r) + c * g.col_stride()];
    detail::put_block(dst, tmp, D::Cols, 1, dst.vr, dst.vc);
    (void)sizeof(DT);
  }
}
// TLOAD_T(dst, g): transposed load of a 2-D window: dst[i, j] = window[j, i].
template <class D, class T> PTO_INLINE void TLOAD_T(D& dst, const GTensor<T>& g) {
  long rs = 0;
  g.uniform_rows(&rs);
  detail::put_block(dst, g.data, g.col_stride(), rs, dst.vr, dst.vc);
}
// TSTORE(g, src[, mode]): writes exactly src's valid region into the window; nothing else is touched.
// Large contiguous windows are written with streaming stores (see StoreMode above).
template <class T, class S> PTO_INLINE void TSTORE(const GTensor<T>& g, const S& src, StoreMode mode) {
  static_assert(std::is_same_v<T, typename S::value_type>, "TSTORE needs equal dtypes (insert a TCVT)");
  static_assert(S::kRowMajor, "TSTORE from a packed Right tile is not supported");
  long rs;
  const long cs = g.col_stride();
  const bool uni = g.uniform_rows(&rs);
#if defined(PTO_STREAM_STORES)
  if (cs == 1 && mode != StoreMode::Cached && src.vr > 0 && src.vc > 0) {
    const long row_bytes = long(sizeof(T)) * src.vc, total = row_bytes * src.vr;
    // rows back to back on both sides: one run
    const bool flat = src.vr == 1 || (uni && rs == src.vc && src.vc == S::Cols);
    bool stream = mode == StoreMode::Stream;
    if (!stream && total >= kStreamMinRun) {
      uintptr_t lo, hi;
      detail::window_span(g, src.vr, src.vc, &lo, &hi);
      const long min_total = stream_store_min_bytes();
      stream = (flat ? total : row_bytes) >= kStreamMinRun && min_total >= 0 && total >= min_total &&
               !detail::recently_used(lo, hi);
      detail::note_span(lo, hi);
    }
    if (stream) {
      if (flat) {
        detail::stream_copy(g.data, src.data, size_t(total));
      } else {
        for (int r = 0; r < src.vr; ++r)
          detail::stream_copy(g.data + (uni ? r * rs : g.row_offset(r)), src.row(r), size_t(row_bytes));
      }
#if !defined(PTO_STREAM_DEFER_FENCE)
      _mm_sfence();
#endif
      return;
    }
  }
#else
  (void)mode;
#endif
  for (int r = 0; r < src.vr; ++r) {
    T* o = g.data + (uni ? r * rs : g.row_offset(r));
    const T* s = src.row(r);
    if (cs == 1) std::memcpy(o, s, sizeof(T) * size_t(src.vc));
    else for (int c = 0; c < src.vc; ++c) o[c * cs] = s[c];
  }
}
template <class T, class S> PTO_INLINE void TSTORE(const GTensor<T>& g, const S& src) { TSTORE(g, src, StoreMode::Auto); }

// Would TSTORE(g, tile of vr x vc) with StoreMode::Auto use streaming stores (as things stand now)?
// A pure query (notes nothing): code that writes a window element by element uses it to hand
// large stores to TSTORE instead (ordinary stores read every line first: a third more traffic).
template <class T> PTO_INLINE bool would_stream(const GTensor<T>& g, long vr, long vc) {
#if defined(PTO_STREAM_STORES)
  if (g.col_stride() != 1 || vr <= 0 || vc <= 0) return false;
  long rs;
  const bool uni = g.uniform_rows(&rs);
  const long row_bytes = long(sizeof(T)) * vc, total = row_bytes * vr;
  const bool flat = vr == 1 || (uni && rs == vc);
  const long min_total = stream_store_min_bytes();
  if ((flat ? total : row_bytes) < kStreamMinRun || min_total < 0 || total < min_total) return false;
  uintptr_t lo, hi;
  detail::window_span(g, vr, vc, &lo, &hi);
  return !detail::recently_used(lo, hi);
#else
  (void)g; (void)vr; (void)vc;
  return false;
#endif
}

// ---- tile <-> tile -----------------------------------------------------------------------------------
template <class D, class S> PTO_INLINE void TMOV(D& dst, const S& src) { detail::move<false>(dst, src); }
template <class D, class S> PTO_INLINE void TMOV_T(D& dst, const S& src) { detail::move<true>(dst, src); }
// A batched transpose (a 3-D tile_view's last two dims; tiles are 2-D: rows = batches x rows) has
// src rows != dst cols: nb = src rows / dst cols matrices of [K, M] -> [M, K], whole tiles.
template <class D, class S> PTO_INLINE void TTRANS(D& dst, const S& src) {
  if constexpr (S::Rows != D::Cols) {
    constexpr int K = D::Cols, M = S::Cols, nb = S::Rows / K;
    static_assert(S::Rows % K == 0 && D::Rows == nb * M, "TTRANS: tiles do not split into batches");
    for (int b = 0; b < nb; ++b)
      for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) dst.at(b * M + i, k) = src.at(b * K + k, i);
    dst.set_valid(D::Rows, D::Cols);
  } else {
    detail::move<true>(dst, src);
  }
}
template <class D, class S, class Tmp> PTO_INLINE void TTRANS(D& dst, const S& src, Tmp&) { TTRANS(dst, src); }
// TEXPANDCLONE(dst, src, d1, d2, bmask): src broadcast to the target dims [d0, d1, d2, d3] (d3 = dst
// cols, d0 = dst rows / (d1 * d2)); bit i of bmask: dim i of src is 1 (repeated). Whole tiles.
template <class D, class S> PTO_INLINE void TEXPANDCLONE(D& dst, const S& src, int d1, int d2, int bmask) {
  const int s1 = (bmask & 2) ? 1 : d1, s2 = (bmask & 4) ? 1 : d2;
  for (int r = 0; r < D::Rows; ++r) {
    const int i0 = r / (d1 * d2), i1 = (r / d2) % d1, i2 = r % d2;
    const int sr = (((bmask & 1) ? 0 : i0) * s1 + ((bmask & 2) ? 0 : i1)) * s2 + ((bmask & 4) ? 0 : i2);
    for (int c = 0; c < D::Cols; ++c) dst.at(r, c) = src.at(sr, (bmask & 8) ? 0 : c);
  }
  dst.set_valid(D::Rows, D::Cols);
}
// TEXTRACT(dst, src, r0, c0): dst[i, j] = src[r0 + i, c0 + j] (dst may be Left/Right: packs).
template <class D, class S> PTO_INLINE void TEXTRACT(D& dst, const S& src, int r0, int c0) {
  static_assert(S::kRowMajor);
  detail::put_block(dst, src.data + long(r0) * S::Cols + c0, S::Cols, 1, dst.vr, dst.vc);
}
// TEXTRACT_TILE: pl.tile.extract's instruction (the same copy; the destination's space may differ)
template <class D, class S, class R, class C> PTO_INLINE void TEXTRACT_TILE(D& dst, const S& src, R r0, C c0) {
  TEXTRACT(dst, src, int(r0), int(c0));
}
// TSETVALID(dst, src, rows, cols): the whole tile copied (nothing when dst is src), the valid extents set
template <class D, class S, class R, class C> PTO_INLINE void TSETVALID(D& dst, const S& src, R rows, C cols) {
  static_assert(D::Rows == S::Rows && D::Cols == S::Cols);
  if (static_cast<const void*>(dst.data) != static_cast<const void*>(src.data))
    for (int r = 0; r < D::Rows; ++r)
      for (int c = 0; c < D::Cols; ++c) dst.at(r, c) = src.at(r, c);
  dst.set_valid(int(rows), int(cols));
}
// TINSERT(dst, src, r0, c0): dst[r0 + i, c0 + j] = src[i, j] over src's valid region.
template <class D, class S> PTO_INLINE void TINSERT(D& dst, const S& src, int r0, int c0) {
  static_assert(S::kRowMajor && D::kRowMajor);
  detail::put_block(dst, src.data, S::Cols, 1, src.vr, src.vc, r0, c0);
}
// TCONCAT(dst, a, b): columns [0, a.vc) from a, [a.vc, a.vc + b.vc) from b, rows [0, dst.vr).
template <class D, class A, class B> PTO_INLINE void TCONCAT(D& dst, const A& a, const B& b) {
  static_assert(A::kRowMajor && B::kRowMajor && D::kRowMajor);
  detail::put_block(dst, a.data, A::Cols, 1, dst.vr, a.vc, 0, 0);
  detail::put_block(dst, b.data, B::Cols, 1, dst.vr, b.vc, 0, a.vc);
}
// TRESHAPE(dst, src): same elements in row-major order, new static shape (whole tiles).
template <class D, class S> PTO_INLINE void TRESHAPE(D& dst, const S& src) {
  static_assert(D::kBytes == S::kBytes && D::kRowMajor && S::kRowMajor, "TRESHAPE keeps the byte size");
  if (static_cast<const void*>(dst.data) != static_cast<const void*>(src.data)) std::memmove(dst.data, src.data, D::kBytes);
  dst.vr = D::Rows;
  dst.vc = D::Cols;
}
// TFILLPAD(dst, src, pad): dst = src's valid region, everything else of dst (up to its full
// Rows x Cols) = 0 / dtype max (+inf) / dtype min (-inf). dst may be src. dst becomes fully valid.
template <class D, class S> PTO_INLINE void TFILLPAD(D& dst, const S& src, PadValue pad = PadValue::Zero) {
  using T = typename D::value_type;
  static_assert(D::kRowMajor && S::kRowMajor);
  const int vr = src.vr, vc = src.vc;
  if (static_cast<const void*>(dst.data) != static_cast<const void*>(src.data) || long(D::Cols) != long(S::Cols))
    detail::put_block(dst, src.data, S::Cols, 1, vr, vc);
  const T v = pad == PadValue::Max ? pad_max<T>() : (pad == PadValue::Min ? pad_min<T>() : from_compute<T>(compute_t<T>(0)));
  for (int r = 0; r < D::Rows; ++r) {
    T* o = dst.row(r);
    for (int c = (r < vr ? vc : 0); c < D::Cols; ++c) o[c] = v;
  }
  dst.vr = D::Rows;
  dst.vc = D::Cols;
}
template <class D> PTO_INLINE void TFILLPAD(D& dst, PadValue pad = PadValue::Zero) { TFILLPAD(dst, dst, pad); }

// ---- scalar access -----------------------------------------------------------------------------------
template <class X> PTO_INLINE typename X::value_type TGETVAL(const X& t, int r, int c) { return t.at(r, c); }
template <class X, class S> PTO_INLINE void TSETVAL(X& t, int r, int c, S v) {
  using T = typename X::value_type;
  t.at(r, c) = from_compute<T>(scalar_to<compute_t<T>>(v));
}

}  // namespace pto
