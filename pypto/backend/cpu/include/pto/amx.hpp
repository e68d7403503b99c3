// pto/amx.hpp -- AMX matmul drivers: bf16 x bf16 -> fp32 (tdpbf16ps) and int8 x int8 -> int32
// (tdpbssd), used by matmul.hpp when the target has AMX (config.hpp PTO_AMX_BF16 / PTO_AMX_INT8)
// and the kernel grants the tile state at run time (amx::available()); otherwise matmul.hpp runs the
// AVX-512 paths on the same Right layout.
//
// Operands: A is the row-major Left tile, read by tileloadd with its row stride; B is a packed Right
// tile in the grouped layout (tile.hpp: G = 2 for bf16, 4 for int8, panels of P = 32 columns), so one
// K step (64 bytes of A per row = 32 bf16 / 64 int8) of a 16-column half panel is a 16 x 64-byte
// tile at stride 128 bytes. Each call computes 32 x 32 blocks of C in four accumulator tiles
// (tmm0-3; A: tmm4-5, B: tmm6-7), the whole K range in registers, then stores C once.
// Edges: rows past M read garbage rows of Left (they only reach C rows that are never stored) unless
// the 16-row tile would leave Left's footprint (then a zero-padded copy is used); the K tail step
// reads zero-padded copies of A and B (bf16 garbage can be NaN, and NaN * 0 = NaN); a narrow last
// panel is widened into scratch; partial C tiles go through a 16 x 16 scratch tile.
#pragma once
#include "memory.hpp"

#if defined(PTO_AMX_BF16) || defined(PTO_AMX_INT8)
#include <sys/syscall.h>
#include <unistd.h>

namespace pto::amx {

// Linux hands out the 8 KiB AMX tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM,
// XFEATURE_XTILEDATA). The grant is process-wide; it is asked for once per thread (cheap) and the
// answer cached. It fails on CPUs / kernels without AMX (then the AVX-512 paths run).
// -DPTO_AMX_FORCE_FALLBACK pretends it failed (tests of the fallback on AMX hardware).
inline bool available() {
  static thread_local signed char state = 0;
  if (state == 0) {
#if defined(PTO_AMX_FORCE_FALLBACK)
    state = -1;
#else
    state = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0 ? 1 : -1;
#endif
  }
  return state > 0;
}

// Own asm wrappers: the compiler's _tile_* macros carry no memory clobbers, so stores into a scratch
// buffer could be moved past the tileloadd that reads it.
#define PTO_TLOAD(T, base, stride) \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #T ::"r"(base), "r"(long(stride)) : "memory")
#define PTO_TSTORE(T, base, stride) \
  __asm__ volatile("tilestored %%tmm" #T ", (%0,%1,1)" ::"r"(base), "r"(long(stride)) : "memory")
#define PTO_TZERO(T) __asm__ volatile("tilezero %%tmm" #T ::)

struct alignas(64) TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
// all eight tiles 16 rows x 64 bytes
PTO_INLINE void configure() {
  TileConfig c{};
  c.palette = 1;
  for (int i = 0; i < 8; ++i) {
    c.colsb[i] = 64;
    c.rows[i] = 16;
  }
  __asm__ volatile("ldtilecfg %0" ::"m"(c));
}
PTO_INLINE void release() { __asm__ volatile("tilerelease" ::); }

// C += A . B on tiles (C, A, B literal tile numbers)
template <class T> struct Dp;
template <> struct Dp<bf16> {
  using CT = float;
#define PTO_TDP(C, A, B) __asm__ volatile("tdpbf16ps %%tmm" #B ", %%tmm" #A ", %%tmm" #C ::)
  template <bool R2, bool C2> static PTO_INLINE void run() {
    PTO_TDP(0, 4, 6);
    if constexpr (C2) PTO_TDP(1, 4, 7);
    if constexpr (R2) PTO_TDP(2, 5, 6);
    if constexpr (R2 && C2) PTO_TDP(3, 5, 7);
  }
#undef PTO_TDP
};
template <> struct Dp<int8_t> {
  using CT = int32_t;
#define PTO_TDP(C, A, B) __asm__ volatile("tdpbssd %%tmm" #B ", %%tmm" #A ", %%tmm" #C ::)
  template <bool R2, bool C2> static PTO_INLINE void run() {
    PTO_TDP(0, 4, 6);
    if constexpr (C2) PTO_TDP(1, 4, 7);
    if constexpr (R2) PTO_TDP(2, 5, 6);
    if constexpr (R2 && C2) PTO_TDP(3, 5, 7);
  }
#undef PTO_TDP
};

// Where a 16 x 16 C tile comes from / goes to.
template <class CT> struct CTile {
  CT* c;          // output (row stride ldc)
  const CT* c0;   // init (row stride ldc0; 0 = one broadcast row), nullptr = zero
  long ldc, ldc0;
  int mr, nc;     // valid rows / cols of this tile (<= 16)
  CT* tmp;        // 16 x 16 scratch for partial tiles
  bool full() const { return mr == 16 && nc == 16; }
  // source pointer / stride for tileloadd, nullptr = tilezero
  const CT* init_src(long* stride) const {
    if (c0 == nullptr) return nullptr;
    if (full() && ldc0 != 0) {
      *stride = ldc0 * long(sizeof(CT));
      return c0;
    }
    std::memset(static_cast<void*>(tmp), 0, 16 * 16 * sizeof(CT));
    for (int i = 0; i < mr; ++i) std::memcpy(tmp + i * 16, c0 + i * ldc0, sizeof(CT) * size_t(nc));
    *stride = 16 * long(sizeof(CT));
    return tmp;
  }
  void finish() const {  // after a tilestored into tmp (partial tiles)
    for (int i = 0; i < mr; ++i) std::memcpy(c + i * ldc, tmp + i * 16, sizeof(CT) * size_t(nc));
  }
};
#define PTO_CINIT(T, ct)                                   \
  do {                                                     \
    long st_ = 0;                                          \
    const auto* src_ = (ct).init_src(&st_);                \
    if (src_) PTO_TLOAD(T, src_, st_);                     \
    else PTO_TZERO(T);                                     \
  } while (0)
#define PTO_CSTORE(T, ct)                                                          \
  do {                                                                             \
    if ((ct).full()) PTO_TSTORE(T, (ct).c, (ct).ldc * long(sizeof(*(ct).c)));     \
    else {                                                                         \
      PTO_TSTORE(T, (ct).tmp, 16 * long(sizeof(*(ct).c)));                         \
      (ct).finish();                                                               \
    }                                                                              \
  } while (0)

// One 16/32-row x 16/32-column block of C over the whole K range.
//   a0/a1: the two A row tiles (byte strides sa0/sa1), nsteps full K steps of 64 bytes;
//   at0/at1: their zero-padded tail step (stride 64 bytes) or nullptr;
//   bp: B panel (group rows of 128 bytes), bt: its zero-padded tail step or nullptr.
template <class T, bool R2, bool C2>
PTO_NOINLINE void block(int nsteps, const char* a0, long sa0, const char* a1, long sa1, const char* at0,
                        const char* at1, const char* bp, const char* bt, const CTile<typename Dp<T>::CT>* ct) {
  PTO_CINIT(0, ct[0]);
  if constexpr (C2) PTO_CINIT(1, ct[1]);
  if constexpr (R2) PTO_CINIT(2, ct[2]);
  if constexpr (R2 && C2) PTO_CINIT(3, ct[3]);
  for (int s = 0; s < nsteps; ++s) {
    PTO_TLOAD(4, a0 + s * 64, sa0);
    PTO_TLOAD(6, bp + long(s) * 2048, 128);
    if constexpr (C2) PTO_TLOAD(7, bp + long(s) * 2048 + 64, 128);
    if constexpr (R2) PTO_TLOAD(5, a1 + s * 64, sa1);
    Dp<T>::template run<R2, C2>();
  }
  if (bt != nullptr) {
    PTO_TLOAD(4, at0, 64);
    PTO_TLOAD(6, bt, 128);
    if constexpr (C2) PTO_TLOAD(7, bt + 64, 128);
    if constexpr (R2) PTO_TLOAD(5, at1, 64);
    Dp<T>::template run<R2, C2>();
  }
  PTO_CSTORE(0, ct[0]);
  if constexpr (C2) PTO_CSTORE(1, ct[1]);
  if constexpr (R2) PTO_CSTORE(2, ct[2]);
  if constexpr (R2 && C2) PTO_CSTORE(3, ct[3]);
}
#undef PTO_CINIT
#undef PTO_CSTORE

// C[M x N] = C0 (or 0) + A[M x K] . B. A: row-major, lda elements, AR rows in its footprint.
// B: packed grouped Right tile of KR x NC (static shape). Scratch slots 6-8.
template <class T>
PTO_NOINLINE void matmul(int M, int N, int K, const T* A, long lda, int AR, const T* B, int KR, int NC,
                         typename Dp<T>::CT* C, long ldc, const typename Dp<T>::CT* C0, long ldc0) {
  using CT = typename Dp<T>::CT;
  constexpr int G = int(4 / sizeof(T)), KS = int(64 / sizeof(T)), P = 32, GR = KS / G;  // GR group rows / step
  static_assert(GR == 16);
  const int nsteps = K / KS, krem = K - nsteps * KS, K0 = nsteps * KS;
  const int Kp = (nsteps + (krem ? 1 : 0)) * KS;
  const int mt = (M + 15) / 16, np = (N + P - 1) / P;
  const long sa = lda * long(sizeof(T));
  // A: the K tail of every row (zero padded), and a zero-padded copy of a last row tile that
  // would read past Left's footprint
  const bool last_out = mt * 16 > AR;
  T* at = nullptr;
  T* al = nullptr;
  {
    const size_t tail_b = krem ? size_t(mt) * 16 * KS * sizeof(T) : 0;
    const size_t last_b = last_out ? size_t(16) * Kp * sizeof(T) : 0;
    char* s = static_cast<char*>(scratch(6, tail_b + last_b + 64));
    if (krem) {
      at = reinterpret_cast<T*>(s);
      std::memset(static_cast<void*>(at), 0, tail_b);
      for (int i = 0; i < M; ++i) std::memcpy(at + long(i) * KS, A + i * lda + K0, sizeof(T) * size_t(krem));
    }
    if (last_out) {
      al = reinterpret_cast<T*>(s + tail_b);
      std::memset(static_cast<void*>(al), 0, last_b);
      const int r0 = (mt - 1) * 16;
      for (int i = r0; i < M; ++i) std::memcpy(al + long(i - r0) * Kp, A + i * lda, sizeof(T) * size_t(K));
    }
  }
  // B: per panel, a padded copy when the panel is narrow (w < P) and the K tail step
  const int Kg = (K + G - 1) / G;  // group rows holding valid k
  T* bw = static_cast<T*>(scratch(7, size_t(Kp / G) * P * G * sizeof(T) + 64));
  T* bt = static_cast<T*>(scratch(8, size_t(GR) * P * G * sizeof(T) + 16 * 16 * sizeof(CT) + 64));
  CT* ctmp = reinterpret_cast<CT*>(bt + GR * P * G);

  configure();
  for (int p = 0; p < np; ++p) {
    const int w = std::min(P, NC - p * P), j0 = p * P;
    const T* panel = B + long(p) * P * KR;
    const T* bp = panel;
    if (w < P) {
      for (int q = 0; q < Kp / G; ++q) {
        T* o = bw + long(q) * P * G;
        if (q < Kg) {
          std::memcpy(o, panel + long(q) * w * G, sizeof(T) * size_t(w * G));
          std::memset(static_cast<void*>(o + w * G), 0, sizeof(T) * size_t((P - w) * G));
        } else {
          std::memset(static_cast<void*>(o), 0, sizeof(T) * P * G);
        }
      }
      bp = bw;
    }
    if (krem) {  // the tail step: group rows [K0 / G, K0 / G + GR), elements with k >= K zeroed
      const T* src = bp + long(K0 / G) * P * G;
      for (int q = 0; q < GR; ++q) {
        T* o = bt + q * P * G;
        for (int g = 0; g < G; ++g) {
          const int k = K0 + q * G + g;
          if (k < K)
            for (int j = 0; j < P; ++j) o[j * G + g] = src[long(q) * P * G + j * G + g];
          else
            for (int j = 0; j < P; ++j) o[j * G + g] = T(0);
        }
      }
    }
    const int n = std::min(P, N - j0);
    const bool c2 = n > 16;
    for (int r = 0; r < mt; r += 2) {
      const bool r2 = r + 1 < mt;
      CTile<CT> ct[4];
      for (int t = 0; t < 4; ++t) {
        const int i0 = (r + t / 2) * 16, jj = j0 + (t % 2) * 16;
        ct[t].c = C + i0 * ldc + jj;
        ct[t].c0 = C0 ? C0 + i0 * ldc0 + jj : nullptr;
        ct[t].ldc = ldc;
        ct[t].ldc0 = ldc0;
        ct[t].mr = std::max(0, std::min(16, M - i0));
        ct[t].nc = std::max(0, std::min(16, N - jj));
        ct[t].tmp = ctmp;
      }
      auto arow = [&](int rt, long* st) -> const char* {
        if (last_out && rt == mt - 1) {
          *st = long(Kp) * long(sizeof(T));
          return reinterpret_cast<const char*>(al);
        }
        *st = sa;
        return reinterpret_cast<const char*>(A + long(rt) * 16 * lda);
      };
      long s0 = 0, s1 = 0;
      const char* a0 = arow(r, &s0);
      const char* a1 = r2 ? arow(r + 1, &s1) : nullptr;
      const char* t0 = krem ? reinterpret_cast<const char*>(at + long(r) * 16 * KS) : nullptr;
      const char* t1 = krem && r2 ? reinterpret_cast<const char*>(at + long(r + 1) * 16 * KS) : nullptr;
      const char* bpc = reinterpret_cast<const char*>(bp);
      const char* btc = krem ? reinterpret_cast<const char*>(bt) : nullptr;
      if (r2 && c2) block<T, true, true>(nsteps, a0, s0, a1, s1, t0, t1, bpc, btc, ct);
      else if (r2) block<T, true, false>(nsteps, a0, s0, a1, s1, t0, t1, bpc, btc, ct);
      else if (c2) block<T, false, true>(nsteps, a0, s0, a1, s1, t0, t1, bpc, btc, ct);
      else block<T, false, false>(nsteps, a0, s0, a1, s1, t0, t1, bpc, btc, ct);
    }
  }
  release();
}
#undef PTO_TLOAD
#undef PTO_TSTORE
#undef PTO_TZERO

}  // namespace pto::amx
#endif
