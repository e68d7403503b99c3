// pto/matmul.hpp -- TMATMUL / TMATMUL_ACC / TMATMUL_BIAS / TGEMV*: Acc = Left @ Right (+ acc / bias).
//
// Left is row-major (the kernels read A straight from it); Right is packed in column panels
// (tile.hpp RightLayout). fp32 / fp16 / bf16 inputs accumulate in fp32, int8 in int32.
//   fp32   register-blocked micro-kernel: AVX-512 14x32 hand-scheduled asm (gemm_avx512.hpp), AVX2
//          6x16, NEON 6x16, SSE/generic 4x8 (GCC vector extensions)
//   bf16   AMX tdpbf16ps on k-pair panels (amx.hpp) when the target has AMX-BF16 and the kernel grants
//          the tile state; else vdpbf16ps (-DPTO_USE_BF16_DOT) or widened to fp32
//   int8   AMX tdpbssd, else AVX512-VNNI vpdpbusd, on k-quad panels; else widened to int32
//   fp16   widened to fp32 (per call, into per-thread scratch), then the fp32 kernel
// Result region: rows [0, dst.vr), cols [0, dst.vc); inner dimension K = lhs.vc (= rhs.vr).
#pragma once
#include "memory.hpp"
#include "gemm_avx512.hpp"
#include "amx.hpp"

namespace pto {
namespace gemm {

template <class CT> using VV = simd::vec<CT, kLanes>;

// Load (n >= kLanes: full) or partial (0 < n < kLanes) or zero (n <= 0) vector.
template <class CT> PTO_INLINE VV<CT> ld_part(const CT* p, int n) {
  if (n >= kLanes) return simd::load<CT, kLanes>(p);
  if (n > 0) return simd::load_n<CT, kLanes>(p, n);
  return VV<CT>{};
}
template <class CT> PTO_INLINE void st_part(CT* p, VV<CT> v, int n) {
  if (n >= kLanes) simd::store<CT>(p, v);
  else if (n > 0) simd::store_n<CT>(p, v, n);
}

// C[m x n] = init + A[MR x K] (row-major, stride lda) * B (K rows of kNR packed columns).
// Rows >= m of A are clamped to row m-1 (CLAMP) so every read stays inside the tile.
template <class CT, int MR, bool CLAMP>
PTO_NOINLINE void ukr(int K, const CT* PTO_RESTRICT A, long lda, const CT* PTO_RESTRICT B, CT* C, long ldc,
                      const CT* C0, long ldc0, int m, int n) {
  constexpr int L = kLanes, NV = kNV, P = kNR;
  VV<CT> c[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v)
      c[i][v] = (C0 != nullptr && i < m) ? ld_part(C0 + i * ldc0 + v * L, n - v * L) : VV<CT>{};
  const CT* ap[MR];
  for (int i = 0; i < MR; ++i) ap[i] = A + (CLAMP ? (i < m ? i : m - 1) : i) * lda;
  for (int k = 0; k < K; ++k) {
    VV<CT> b[NV];
    for (int v = 0; v < NV; ++v) std::memcpy(&b[v], B + long(k) * P + v * L, sizeof(VV<CT>));
    for (int i = 0; i < MR; ++i) {
      const VV<CT> a = simd::splat<VV<CT>>(ap[i][k]);
      for (int v = 0; v < NV; ++v) c[i][v] += a * b[v];
    }
  }
  for (int i = 0; i < MR; ++i)
    if (i < m)
      for (int v = 0; v < NV; ++v) st_part(C + i * ldc + v * L, c[i][v], n - v * L);
}

template <class CT> struct Kern {
  using Fn = void (*)(int, const CT*, long, const CT*, CT*, long, const CT*, long, int, int);
  static Fn pick(int m) {  // kernel for a block of m rows (m <= kMR)
    if (m >= kMR) return &ukr<CT, kMR, false>;
    if (m == 1) return &ukr<CT, 1, false>;
    if (m == 2) return &ukr<CT, 2, false>;
    if (m <= 4) return &ukr<CT, 4, true>;
    if constexpr (kMR > 8) {
      if (m <= 8) return &ukr<CT, 8, true>;
    }
    return &ukr<CT, kMR, true>;
  }
};

// Blocked driver for G == 1 packed B (KR x NC static shape of the Right tile).
template <class CT>
PTO_NOINLINE void driver_vec(int M, int N, int K, const CT* A, long lda, const CT* Bpk, int KR, int NC, CT* C,
                             long ldc, const CT* C0, long ldc0) {
  constexpr int P = kNR;
  const int np = (N + P - 1) / P;
  const auto kfull = Kern<CT>::pick(kMR);
  const auto krem = Kern<CT>::pick(M % kMR);
  int k0 = 0;
  do {
    const int kc = std::min(kKC, K - k0);
    const CT* init = k0 == 0 ? C0 : C;
    const long ldi = k0 == 0 ? ldc0 : ldc;
    for (int p = 0; p < np; ++p) {
      const int w = std::min(P, NC - p * P), n = std::min(P, N - p * P);
      const CT* bp = Bpk + long(p) * P * KR + long(k0) * w;
      if (w < P) {  // narrow last panel: widen into scratch so the kernel always reads P columns
        CT* t = static_cast<CT*>(scratch(4, sizeof(CT) * size_t(std::max(kc, 1)) * P));
        for (int k = 0; k < kc; ++k) {
          std::memcpy(t + long(k) * P, bp + long(k) * w, sizeof(CT) * size_t(w));
          std::memset(static_cast<void*>(t + long(k) * P + w), 0, sizeof(CT) * size_t(P - w));
        }
        bp = t;
      }
      int i = 0;
      for (; i + kMR <= M; i += kMR)
        kfull(kc, A + i * lda + k0, lda, bp, C + i * ldc + p * P, ldc, init ? init + i * ldi + p * P : nullptr, ldi, kMR, n);
      if (i < M)
        krem(kc, A + i * lda + k0, lda, bp, C + i * ldc + p * P, ldc, init ? init + i * ldi + p * P : nullptr, ldi, M - i, n);
    }
    k0 += kKC;
  } while (k0 < K);
}

#if defined(PTO_GEMM_ASM)
// fp32 driver on the asm kernels: K blocks of kKC (a 32-column B panel of a block, 32 KiB, stays in
// L1 while every row block streams its A rows past it); M split into nearly equal blocks of <= 14
// rows (e.g. 128 = 9 x 13 + 11) so no block runs a latency-bound 1- or 2-row kernel.
PTO_NOINLINE inline void driver_asm(int M, int N, int K, const float* A, long lda, const float* Bpk, int KR, int NC,
                                    float* C, long ldc, const float* C0, long ldc0) {
  constexpr int P = 32;
  static_assert(kNR == P);
  const int np = (N + P - 1) / P;
  const int nb = (M + 13) / 14, base = M / nb, extra = M % nb;
  int k0 = 0;
  do {
    const int kc = std::min(kKC, K - k0);
    const float* init = k0 == 0 ? C0 : C;
    const long ldi = k0 == 0 ? ldc0 : ldc;
    for (int p = 0; p < np; ++p) {
      const int w = std::min(P, NC - p * P), n = std::min(P, N - p * P);
      const float* bp = Bpk + long(p) * P * KR + long(k0) * w;
      if (w < P) {  // narrow last panel: widen into scratch so the kernel always reads P columns
        float* t = static_cast<float*>(scratch(4, sizeof(float) * size_t(std::max(kc, 1)) * P));
        for (int k = 0; k < kc; ++k) {
          std::memcpy(t + long(k) * P, bp + long(k) * w, sizeof(float) * size_t(w));
          std::memset(static_cast<void*>(t + long(k) * P + w), 0, sizeof(float) * size_t(P - w));
        }
        bp = t;
      }
      int i = 0;
      for (int b = 0; b < nb; ++b) {
        const int m = base + (b < extra ? 1 : 0);
        asm_kernel(m)(kc, A + i * lda + k0, lda, bp, C + i * ldc + p * P, ldc,
                      init ? init + i * ldi + p * P : nullptr, ldi, n);
        i += m;
      }
    }
    k0 += kKC;
  } while (k0 < K);
}
#endif

template <class CT>
PTO_INLINE void driver(int M, int N, int K, const CT* A, long lda, const CT* Bpk, int KR, int NC, CT* C, long ldc,
                       const CT* C0, long ldc0) {
#if defined(PTO_GEMM_ASM)
  if constexpr (std::is_same_v<CT, float>) return driver_asm(M, N, K, A, lda, Bpk, KR, NC, C, ldc, C0, ldc0);
#endif
  driver_vec<CT>(M, N, K, A, lda, Bpk, KR, NC, C, ldc, C0, ldc0);
}

#if defined(__AVX512BF16__) && defined(PTO_USE_BF16_DOT)
// bf16 x bf16 -> fp32 with vdpbf16ps. B: k-pair panels of 32 columns (64 bf16 per pair row).
template <int MR, bool CLAMP>
PTO_NOINLINE void ukr_bf16(int K, const bf16* A, long lda, const bf16* B, float* C, long ldc, const float* C0, long ldc0,
                           int m, int n) {
  __m512 c[MR][2];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < 2; ++v)
      c[i][v] = (C0 != nullptr && i < m) ? (__m512)ld_part<float>(C0 + i * ldc0 + v * 16, n - v * 16) : _mm512_setzero_ps();
  const bf16* ap[MR];
  for (int i = 0; i < MR; ++i) ap[i] = A + (CLAMP ? (i < m ? i : m - 1) : i) * lda;
  const int K2 = K / 2;
  for (int kk = 0; kk < K2; ++kk) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(B + kk * 64), b1 = (__m512bh)_mm512_loadu_si512(B + kk * 64 + 32);
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      std::memcpy(&pair, ap[i] + 2 * kk, 4);
      const __m512bh a = (__m512bh)_mm512_set1_epi32(pair);
      c[i][0] = _mm512_dpbf16_ps(c[i][0], a, b0);
      c[i][1] = _mm512_dpbf16_ps(c[i][1], a, b1);
    }
  }
  if (K & 1) {  // last k alone: zero the partner halves on both sides
    const __m512i lo = _mm512_set1_epi32(0xffff);
    const __m512bh b0 = (__m512bh)_mm512_and_si512(_mm512_loadu_si512(B + K2 * 64), lo);
    const __m512bh b1 = (__m512bh)_mm512_and_si512(_mm512_loadu_si512(B + K2 * 64 + 32), lo);
    for (int i = 0; i < MR; ++i) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(int32_t(ap[i][K - 1].bits));
      c[i][0] = _mm512_dpbf16_ps(c[i][0], a, b0);
      c[i][1] = _mm512_dpbf16_ps(c[i][1], a, b1);
    }
  }
  for (int i = 0; i < MR; ++i)
    if (i < m)
      for (int v = 0; v < 2; ++v) st_part<float>(C + i * ldc + v * 16, (VV<float>)c[i][v], n - v * 16);
}
#endif

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// int8 x int8 -> int32 with vpdpbusd (unsigned x signed bytes): B is made unsigned, not A, so there
// are two xors per k quad instead of one per row: sum(a * (b ^ 0x80)) = sum(a * b) + 128 * sum(a),
// and rowsum (sum of each A row over this K range, from the driver) takes the 128 * sum(a) back out.
// B: k-quad panels of 32 columns (128 bytes per quad row; k past K is zero there, and A bytes past K
// are read as zero).
template <int MR, bool CLAMP>
PTO_NOINLINE void ukr_i8(int K, const int8_t* A, long lda, const int8_t* B, const int32_t* rowsum, int32_t* C,
                         long ldc, const int32_t* C0, long ldc0, int m, int n) {
  __m512i c[MR][2];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < 2; ++v)
      c[i][v] = (C0 != nullptr && i < m) ? (__m512i)ld_part<int32_t>(C0 + i * ldc0 + v * 16, n - v * 16) : _mm512_setzero_si512();
  const int8_t* ap[MR];
  for (int i = 0; i < MR; ++i) ap[i] = A + (CLAMP ? (i < m ? i : m - 1) : i) * lda;
  const int K4 = K / 4, kt = K & 3;
  const __m512i flip = _mm512_set1_epi32(int32_t(0x80808080u));
  for (int kq = 0; kq < K4; ++kq) {
    const __m512i b0 = _mm512_xor_si512(_mm512_loadu_si512(B + kq * 128), flip);
    const __m512i b1 = _mm512_xor_si512(_mm512_loadu_si512(B + kq * 128 + 64), flip);
    for (int i = 0; i < MR; ++i) {
      int32_t q;
      std::memcpy(&q, ap[i] + 4 * kq, 4);
      const __m512i a = _mm512_set1_epi32(q);
      c[i][0] = _mm512_dpbusd_epi32(c[i][0], b0, a);
      c[i][1] = _mm512_dpbusd_epi32(c[i][1], b1, a);
    }
  }
  if (kt) {  // last partial quad: A bytes past K read as 0
    const __m512i b0 = _mm512_xor_si512(_mm512_loadu_si512(B + K4 * 128), flip);
    const __m512i b1 = _mm512_xor_si512(_mm512_loadu_si512(B + K4 * 128 + 64), flip);
    for (int i = 0; i < MR; ++i) {
      int32_t q = 0;
      std::memcpy(&q, ap[i] + 4 * K4, size_t(kt));
      const __m512i a = _mm512_set1_epi32(q);
      c[i][0] = _mm512_dpbusd_epi32(c[i][0], b0, a);
      c[i][1] = _mm512_dpbusd_epi32(c[i][1], b1, a);
    }
  }
  for (int i = 0; i < MR; ++i)
    if (i < m) {
      const __m512i s = _mm512_set1_epi32(rowsum[i] * 128);
      st_part<int32_t>(C + i * ldc, (VV<int32_t>)_mm512_sub_epi32(c[i][0], s), n);
      st_part<int32_t>(C + i * ldc + 16, (VV<int32_t>)_mm512_sub_epi32(c[i][1], s), n - 16);
    }
}
// sums[i] = sum of A[i][0..kc) for i < M (int8 bytes, int32 sums)
PTO_NOINLINE inline void int8_row_sums(int M, int kc, const int8_t* A, long lda, int32_t* sums) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int i = 0; i < M; ++i) {
    const int8_t* a = A + i * lda;
    __m512i acc = _mm512_setzero_si512();
    int k = 0;
    for (; k + 64 <= kc; k += 64) acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512(a + k));
    if (k < kc) acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, unsigned(kc - k)), a + k));
    sums[i] = _mm512_reduce_add_epi32(acc);
  }
}
#endif

// Grouped-panel driver (G = 2 bf16 pairs or G = 4 int8 quads; panel width 32).
template <class T, class CT, int G, class KF>
PTO_INLINE void driver_grouped(int M, int N, int K, const T* A, long lda, const T* Bpk, int KR, int NC, CT* C, long ldc,
                               const CT* C0, long ldc0, KF&& kern_for) {
  constexpr int P = 32, MRx = 12;  // 12 x 32 kernels: GCC spills the 14-row intrinsic versions
  const int np = (N + P - 1) / P;
  const int KC = 256;  // multiple of G
  int k0 = 0;
  do {
    const int kc = std::min(KC, K - k0);
    const CT* init = k0 == 0 ? C0 : C;
    const long ldi = k0 == 0 ? ldc0 : ldc;
    const int kg = (kc + G - 1) / G;
    int32_t* rowsum = nullptr;  // int8: sums of the A rows over this K block (see ukr_i8)
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
    if constexpr (G == 4) {
      rowsum = static_cast<int32_t*>(scratch(9, sizeof(int32_t) * size_t(M + MRx)));
      int8_row_sums(M, kc, reinterpret_cast<const int8_t*>(A) + k0, lda, rowsum);
    }
#endif
    for (int p = 0; p < np; ++p) {
      const int w = std::min(P, NC - p * P), n = std::min(P, N - p * P);
      const T* bp = Bpk + long(p) * P * KR + long(k0 / G) * w * G;
      if (w < P) {
        T* t = static_cast<T*>(scratch(4, sizeof(T) * size_t(std::max(kg, 1)) * P * G));
        for (int q = 0; q < kg; ++q) {
          std::memcpy(t + long(q) * P * G, bp + long(q) * w * G, sizeof(T) * size_t(w * G));
          std::memset(static_cast<void*>(t + long(q) * P * G + w * G), 0, sizeof(T) * size_t((P - w) * G));
        }
        bp = t;
      }
      int i = 0;
      for (; i < M; i += MRx) {
        const int m = std::min(MRx, M - i);
        kern_for(m)(kc, A + i * lda + k0, lda, bp, rowsum + i, C + i * ldc + p * P, ldc,
                    init ? init + i * ldi + p * P : nullptr, ldi, m, n);
      }
    }
    k0 += KC;
  } while (k0 < K);
}

template <class To, class From> PTO_NOINLINE void convert_n(To* o, const From* s, long n) {
  constexpr int N = simd::lanes_for<int(std::max(sizeof(To), sizeof(vstorage_t<From>)))>;
  using CT = std::conditional_t<std::is_floating_point_v<To>, float, To>;
  long i = 0;
  for (; i + N <= n; i += N) simd::store<To>(o + i, simd::load<CT, N>(s + i));
  for (; i < n; ++i) o[i] = To(to_compute(s[i]));
}

// Everything below works on raw pointers: A row-major (lda = Left Cols), B packed Right (KR x NC).
template <class T, class CT>
PTO_INLINE void matmul(int M, int N, int K, const T* A, long lda, int AR, const T* B, int KR, int NC, CT* C, long ldc,
                       const CT* C0, long ldc0) {
  if (M <= 0 || N <= 0) return;
  using Lay = RightLayout<T, 1, 1>;
  (void)sizeof(Lay);
  if constexpr (std::is_same_v<T, CT>) {
    driver<CT>(M, N, K, A, lda, B, KR, NC, C, ldc, C0, ldc0);
  } else {
    // convert the operands (A: its M valid rows; B: the whole packed footprint) and run CT kernels
    CT* a = static_cast<CT*>(scratch(0, sizeof(CT) * size_t(M) * lda));
    CT* b = static_cast<CT*>(scratch(1, sizeof(CT) * size_t(KR) * NC));
    convert_n(a, A, long(M) * lda);
    convert_n(b, B, long(KR) * NC);
    driver<CT>(M, N, K, a, lda, b, KR, NC, C, ldc, C0, ldc0);
    (void)AR;
  }
}

template <class Ta, class Tb, class Tc> PTO_INLINE void check_types() {
  static_assert(std::is_same_v<typename Ta::value_type, typename Tb::value_type>, "matmul operands need one dtype");
  using T = typename Ta::value_type;
  using CT = typename Tc::value_type;
  static_assert((is_float_v<T> && std::is_same_v<CT, float>) || (is_int_v<T> && std::is_same_v<CT, int32_t>),
                "Acc is f32 for float inputs, i32 for integer inputs");
  static_assert(Tb::loc == Loc::Right, "rhs must be a Right tile (packed layout)");
  static_assert(Ta::kRowMajor && Tc::kRowMajor);
}

#if defined(PTO_AMX_BF16) || (defined(__AVX512BF16__) && defined(PTO_USE_BF16_DOT))
// bf16 k-pair panels (KR x NC, KR even) -> fp32 G = 1 panels of the same width (P = 32 = kNR)
PTO_NOINLINE inline void unpack_pairs(const bf16* B, int KR, int NC, float* out) {
  static_assert(kNR == 32);
  constexpr int P = 32;
  for (int p = 0; p * P < NC; ++p) {
    const int w = std::min(P, NC - p * P);
    const uint16_t* in = reinterpret_cast<const uint16_t*>(B) + long(p) * P * KR;
    float* o = out + long(p) * P * KR;
    for (int q = 0; q < KR / 2; ++q)
      for (int g = 0; g < 2; ++g)
        for (int j = 0; j < w; ++j)
          o[long(2 * q + g) * w + j] = bit_cast<float>(uint32_t(in[long(q) * 2 * w + 2 * j + g]) << 16);
  }
}
#endif

template <class C, class A, class B>
PTO_INLINE void run(C& c, const A& a, const B& b, const typename C::value_type* c0, long ldc0) {
  check_types<A, B, C>();
  using T = typename A::value_type;
  using CT = typename C::value_type;
  using Lay = RightLayout<T, B::Rows, B::Cols>;
  const int M = c.vr, N = c.vc, K = a.vc;
  if (M <= 0 || N <= 0) return;
  if constexpr (Lay::G == 2) {
#if defined(PTO_AMX_BF16)
    if (amx::available())
      return amx::matmul<bf16>(M, N, K, a.data, A::Cols, A::Rows, b.data, B::Rows, B::Cols, c.data, C::Cols, c0, ldc0);
#endif
#if defined(__AVX512BF16__) && defined(PTO_USE_BF16_DOT)
    using Fn = void (*)(int, const bf16*, long, const bf16*, float*, long, const float*, long, int, int);
    auto pick = [](int m) -> Fn {
      if (m >= 12) return &ukr_bf16<12, false>;
      if (m == 1) return &ukr_bf16<1, false>;
      if (m <= 2) return &ukr_bf16<2, true>;
      if (m <= 4) return &ukr_bf16<4, true>;
      if (m <= 8) return &ukr_bf16<8, true>;
      return &ukr_bf16<12, true>;
    };
    driver_grouped<T, CT, 2>(M, N, K, a.data, A::Cols, b.data, B::Rows, B::Cols, c.data, C::Cols, c0, ldc0,
                             [&](int m) {
                               Fn f = pick(m);
                               return [f](int kc, const bf16* A_, long lda, const bf16* B_, const int32_t*, float* C_,
                                          long ldc, const float* C0_, long ldc0_, int m_, int n_) {
                                 f(kc, A_, lda, B_, C_, ldc, C0_, ldc0_, m_, n_);
                               };
                             });
#elif defined(PTO_AMX_BF16)
    // no AMX at run time: widen both operands (B out of the pair layout) and run the fp32 kernel
    float* af = static_cast<float*>(scratch(0, sizeof(float) * size_t(M) * A::Cols));
    float* bf = static_cast<float*>(scratch(1, sizeof(float) * size_t(B::Rows) * B::Cols));
    convert_n(af, a.data, long(M) * A::Cols);
    unpack_pairs(b.data, B::Rows, B::Cols, bf);
    driver<float>(M, N, K, af, A::Cols, bf, B::Rows, B::Cols, c.data, C::Cols, c0, ldc0);
#endif
  } else if constexpr (Lay::G == 4) {
#if defined(PTO_AMX_INT8)
    if (amx::available())
      return amx::matmul<int8_t>(M, N, K, a.data, A::Cols, A::Rows, b.data, B::Rows, B::Cols, c.data, C::Cols, c0,
                                 ldc0);
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
    using Fn = void (*)(int, const int8_t*, long, const int8_t*, const int32_t*, int32_t*, long, const int32_t*, long, int, int);
    auto pick = [](int m) -> Fn {
      if (m >= 12) return &ukr_i8<12, false>;
      if (m == 1) return &ukr_i8<1, false>;
      if (m <= 2) return &ukr_i8<2, true>;
      if (m <= 4) return &ukr_i8<4, true>;
      if (m <= 8) return &ukr_i8<8, true>;
      return &ukr_i8<12, true>;
    };
    driver_grouped<T, CT, 4>(M, N, K, a.data, A::Cols, b.data, B::Rows, B::Cols, c.data, C::Cols, c0, ldc0,
                             [&](int m) { return pick(m); });
#endif
  } else {
    matmul<T, CT>(M, N, K, a.data, A::Cols, A::Rows, b.data, B::Rows, B::Cols, c.data, C::Cols, c0, ldc0);
  }
}
}  // namespace gemm

// dst = lhs @ rhs
template <class C, class A, class B> PTO_INLINE void TMATMUL(C& dst, const A& lhs, const B& rhs) {
  gemm::run(dst, lhs, rhs, nullptr, 0);
}
// dst += lhs @ rhs (in place on the Acc tile)
template <class C, class A, class B> PTO_INLINE void TMATMUL_ACC(C& dst, const A& lhs, const B& rhs) {
  gemm::run(dst, lhs, rhs, dst.data, C::Cols);
}
// dst = acc + lhs @ rhs (dst may be acc)
template <class C, class C0, class A, class B>
PTO_INLINE void TMATMUL_ACC(C& dst, const C0& acc, const A& lhs, const B& rhs) {
  static_assert(std::is_same_v<typename C::value_type, typename C0::value_type> && C0::kRowMajor);
  gemm::run(dst, lhs, rhs, acc.data, C0::Cols);
}
// dst = lhs @ rhs + bias, bias [1, N] (broadcast over rows) or [M, N]; any float/int dtype
template <class C, class A, class B, class Bias>
PTO_INLINE void TMATMUL_BIAS(C& dst, const A& lhs, const B& rhs, const Bias& bias) {
  using CT = typename C::value_type;
  static_assert(Bias::kRowMajor);
  const long ld = Bias::Rows == 1 ? 0 : Bias::Cols;
  if constexpr (std::is_same_v<typename Bias::value_type, CT>) {
    gemm::run(dst, lhs, rhs, bias.data, ld);
  } else {
    const int rows = Bias::Rows == 1 ? 1 : dst.vr;
    CT* t = static_cast<CT*>(scratch(2, sizeof(CT) * size_t(rows) * Bias::Cols));
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < dst.vc; ++j) t[long(r) * Bias::Cols + j] = CT(to_compute(bias.data[long(r) * Bias::Cols + j]));
    gemm::run(dst, lhs, rhs, t, ld);
  }
}
// GEMV forms: M = 1 (same kernels)
template <class C, class A, class B> PTO_INLINE void TGEMV(C& dst, const A& lhs, const B& rhs) { TMATMUL(dst, lhs, rhs); }
template <class C, class A, class B> PTO_INLINE void TGEMV_ACC(C& dst, const A& lhs, const B& rhs) { TMATMUL_ACC(dst, lhs, rhs); }
template <class C, class C0, class A, class B>
PTO_INLINE void TGEMV_ACC(C& dst, const C0& acc, const A& lhs, const B& rhs) { TMATMUL_ACC(dst, acc, lhs, rhs); }
template <class C, class A, class B, class Bias>
PTO_INLINE void TGEMV_BIAS(C& dst, const A& lhs, const B& rhs, const Bias& bias) { TMATMUL_BIAS(dst, lhs, rhs, bias); }


// Batched forms. A tile is 2-D here (rows = the product of the leading dims), so the batch split is
// recovered from the static shapes: K = lhs cols, rhs batches = rhs rows / K, M = dst rows / that;
// a side with one matrix is broadcast (rhs: the flattened lhs times one matrix). Plain loops (any
// layout through at()), fp32 / int32 accumulation in double / int64 like the reference.
namespace gemm {
template <class C, class A, class B>
PTO_NOINLINE void batched(C& dst, const A& lhs, const B& rhs, const C* acc) {
  using T = typename C::value_type;
  using W = std::conditional_t<is_int_v<T>, long long, double>;
  constexpr int K = A::Cols, N = C::Cols, nb = B::Rows / K;
  static_assert(B::Rows % K == 0 && C::Rows % nb == 0, "batch_matmul: inconsistent tile shapes");
  constexpr int M = nb == 1 ? C::Rows : C::Rows / nb, na = A::Rows / M;
  static_assert(na == 1 || nb == 1 || na == nb, "batch_matmul: the batches do not broadcast");
  for (int r = 0; r < C::Rows; ++r) {
    const int bi = r / M, ar = na == 1 ? r % M : r, br = nb == 1 ? 0 : bi * K;
    for (int j = 0; j < N; ++j) {
      W s = acc ? W(to_compute(acc->at(r, j))) : W(0);
      for (int k = 0; k < K; ++k) s += W(to_compute(lhs.at(ar, k))) * W(to_compute(rhs.at(br + k, j)));
      dst.at(r, j) = from_compute<T>(compute_t<T>(s));
    }
  }
}
}  // namespace gemm
template <class C, class A, class B> PTO_INLINE void TBATCHMATMUL(C& dst, const A& lhs, const B& rhs) {
  gemm::batched(dst, lhs, rhs, static_cast<const C*>(nullptr));
}
template <class C, class A, class B> PTO_INLINE void TBATCHMATMUL_ACC(C& dst, const A& lhs, const B& rhs) {
  gemm::batched(dst, lhs, rhs, &dst);
}
template <class C, class C0, class A, class B>
PTO_INLINE void TBATCHMATMUL_ACC(C& dst, const C0& acc, const A& lhs, const B& rhs) {
  static_assert(std::is_same_v<C, C0>);
  gemm::batched(dst, lhs, rhs, &acc);
}
}  // namespace pto
