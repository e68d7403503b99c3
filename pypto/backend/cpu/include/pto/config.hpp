// pto/config.hpp -- feature detection and common macros for the PTO CPU tile library.
// Everything is decided by the compiler's predefined macros (-march=...), never assumed.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__AVX512F__) || defined(__AVX2__) || defined(__AVX__) || defined(__SSE2__) || defined(__F16C__)
#include <immintrin.h>
#define PTO_X86 1
#endif
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>
#define PTO_NEON 1
#endif

// AMX tile paths (bf16 -> fp32 and int8 -> int32 matmul). Compiled in when the target has AMX
// (and, for int8, the AVX512-VNNI quad layout); at run time they are used only after the kernel has
// granted this process the tile state (see amx.hpp), else the AVX-512 paths run. -DPTO_NO_AMX
// compiles them out (and with them the bf16 pair layout of Right tiles).
#if defined(__x86_64__) && defined(__linux__) && defined(__AMX_TILE__) && defined(__AVX512F__) && \
    defined(__AVX512BW__) && (defined(__GNUC__) || defined(__clang__)) && !defined(PTO_NO_AMX)
#if defined(__AMX_BF16__)
#define PTO_AMX_BF16 1
#endif
#if defined(__AMX_INT8__) && defined(__AVX512VNNI__)
#define PTO_AMX_INT8 1
#endif
#endif

#define PTO_INLINE inline __attribute__((always_inline))
#define PTO_NOINLINE __attribute__((noinline))
#define PTO_RESTRICT __restrict__
#define PTO_INLINE_LAMBDA __attribute__((always_inline))

namespace pto {

// Bytes of the widest native vector register the library uses for elementwise code.
#if defined(__AVX512F__)
inline constexpr int kVecBytes = 64;
inline constexpr const char* kIsa = "avx512";
#elif defined(__AVX__)
inline constexpr int kVecBytes = 32;
#if defined(__AVX2__) && defined(__FMA__)
inline constexpr const char* kIsa = "avx2";
#else
inline constexpr const char* kIsa = "avx";
#endif
#elif defined(PTO_NEON)
inline constexpr int kVecBytes = 16;
inline constexpr const char* kIsa = "neon";
#elif defined(__SSE2__)
inline constexpr int kVecBytes = 16;
inline constexpr const char* kIsa = "sse2";
#else
inline constexpr int kVecBytes = 16;  // GCC vector extensions lower to scalar code
inline constexpr const char* kIsa = "generic";
#endif

}  // namespace pto
