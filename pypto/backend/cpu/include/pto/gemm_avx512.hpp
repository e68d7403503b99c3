// pto/gemm_avx512.hpp -- hand-scheduled AVX-512 fp32 micro-kernels (x86-64, GCC/Clang inline asm).
//
// ukr_asm<MR>: C[MR x n] = C0 (or 0) + A[MR x K] * B[K x 32], n <= 32.
//   A  row-major (the Left tile itself), row stride lda elements; rows are addressed from three
//      base registers (rows 0-4, 5-9, 10-13) with lda / 3*lda index registers, so no spills.
//   B  one packed Right panel: K rows of 32 floats (tile.hpp RightLayout, G = 1, P = 32).
//   C0 init rows (stride ldc0; ldc0 == 0 broadcasts one bias row), C output rows (stride ldc).
//   Columns >= n are neither read from C0 nor written to C (opmask loads / stores).
// Registers: zmm0..27 accumulators (row i: zmm2i, zmm2i+1), zmm28/29 the B row, zmm30/31 the A
// broadcasts. K is unrolled by 4. GCC's register allocator spills a 28-accumulator intrinsic
// version (~10% slower), hence the asm.
#pragma once
#include "config.hpp"

#if defined(__AVX512F__) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(PTO_NO_ASM)
#define PTO_GEMM_ASM 1

namespace pto::gemm {

// one A row: broadcast + two FMAs into accumulators C0 / C1
#define PTO_AF(AD, ADDR, R, C0, C1)                                                                 \
  "vbroadcastss " AD ADDR ", %%zmm" R "\n\t"                                                        \
  "vfmadd231ps %%zmm28, %%zmm" R ", %%zmm" C0 "\n\t"                                                \
  "vfmadd231ps %%zmm29, %%zmm" R ", %%zmm" C1 "\n\t"
#define PTO_A0 "(%[a0])"
#define PTO_A1 "(%[a0],%[l],1)"
#define PTO_A2 "(%[a0],%[l],2)"
#define PTO_A3 "(%[a0],%[l3],1)"
#define PTO_A4 "(%[a0],%[l],4)"
#define PTO_A5 "(%[a5])"
#define PTO_A6 "(%[a5],%[l],1)"
#define PTO_A7 "(%[a5],%[l],2)"
#define PTO_A8 "(%[a5],%[l3],1)"
#define PTO_A9 "(%[a5],%[l],4)"
#define PTO_A10 "(%[a10])"
#define PTO_A11 "(%[a10],%[l],1)"
#define PTO_A12 "(%[a10],%[l],2)"
#define PTO_A13 "(%[a10],%[l3],1)"
// rows [0, n) of one k step (A displacement AD)
#define PTO_S1(AD) PTO_AF(AD, PTO_A0, "30", "0", "1")
#define PTO_S2(AD) PTO_S1(AD) PTO_AF(AD, PTO_A1, "31", "2", "3")
#define PTO_S3(AD) PTO_S2(AD) PTO_AF(AD, PTO_A2, "30", "4", "5")
#define PTO_S4(AD) PTO_S3(AD) PTO_AF(AD, PTO_A3, "31", "6", "7")
#define PTO_S5(AD) PTO_S4(AD) PTO_AF(AD, PTO_A4, "30", "8", "9")
#define PTO_S6(AD) PTO_S5(AD) PTO_AF(AD, PTO_A5, "31", "10", "11")
#define PTO_S7(AD) PTO_S6(AD) PTO_AF(AD, PTO_A6, "30", "12", "13")
#define PTO_S8(AD) PTO_S7(AD) PTO_AF(AD, PTO_A7, "31", "14", "15")
#define PTO_S9(AD) PTO_S8(AD) PTO_AF(AD, PTO_A8, "30", "16", "17")
#define PTO_S10(AD) PTO_S9(AD) PTO_AF(AD, PTO_A9, "31", "18", "19")
#define PTO_S11(AD) PTO_S10(AD) PTO_AF(AD, PTO_A10, "30", "20", "21")
#define PTO_S12(AD) PTO_S11(AD) PTO_AF(AD, PTO_A11, "31", "22", "23")
#define PTO_S13(AD) PTO_S12(AD) PTO_AF(AD, PTO_A12, "30", "24", "25")
#define PTO_S14(AD) PTO_S13(AD) PTO_AF(AD, PTO_A13, "31", "26", "27")
#define PTO_KSTEP(S, AD, BD) "vmovups " BD "(%[b]), %%zmm28\n\t" "vmovups " BD "+64(%[b]), %%zmm29\n\t" S(AD)

// per-row init / store (t walks the rows)
#define PTO_Z(C0, C1) "vpxord %%zmm" C0 ", %%zmm" C0 ", %%zmm" C0 "\n\t" "vpxord %%zmm" C1 ", %%zmm" C1 ", %%zmm" C1 "\n\t"
#define PTO_L(C0, C1) "vmovups (%[t]), %%zmm" C0 "%{%%k1%}%{z%}\n\t" "vmovups 64(%[t]), %%zmm" C1 "%{%%k2%}%{z%}\n\t" "add %[ldi], %[t]\n\t"
#define PTO_W(C0, C1) "vmovups %%zmm" C0 ", (%[t])%{%%k1%}\n\t" "vmovups %%zmm" C1 ", 64(%[t])%{%%k2%}\n\t" "add %[ldc], %[t]\n\t"
#define PTO_ROWS1(M) M("0", "1")
#define PTO_ROWS2(M) PTO_ROWS1(M) M("2", "3")
#define PTO_ROWS3(M) PTO_ROWS2(M) M("4", "5")
#define PTO_ROWS4(M) PTO_ROWS3(M) M("6", "7")
#define PTO_ROWS5(M) PTO_ROWS4(M) M("8", "9")
#define PTO_ROWS6(M) PTO_ROWS5(M) M("10", "11")
#define PTO_ROWS7(M) PTO_ROWS6(M) M("12", "13")
#define PTO_ROWS8(M) PTO_ROWS7(M) M("14", "15")
#define PTO_ROWS9(M) PTO_ROWS8(M) M("16", "17")
#define PTO_ROWS10(M) PTO_ROWS9(M) M("18", "19")
#define PTO_ROWS11(M) PTO_ROWS10(M) M("20", "21")
#define PTO_ROWS12(M) PTO_ROWS11(M) M("22", "23")
#define PTO_ROWS13(M) PTO_ROWS12(M) M("24", "25")
#define PTO_ROWS14(M) PTO_ROWS13(M) M("26", "27")

#define PTO_UKR_ASM(MR)                                                                                          \
  template <> PTO_NOINLINE inline void ukr_asm<MR>(long K, const float* A, long lda, const float* B, float* C,   \
                                                   long ldc, const float* C0, long ldc0, int n) {                 \
    const char* a0 = reinterpret_cast<const char*>(A);                                                           \
    const long l = lda * 4, l3 = 3 * l;                                                                          \
    const char* a5 = a0 + 5 * l;                                                                                 \
    const char* a10 = a0 + 10 * l;                                                                               \
    const char* b = reinterpret_cast<const char*>(B);                                                            \
    long n4 = K >> 2, n1 = K & 3;                                                                                \
    const char* t = reinterpret_cast<const char*>(C0);                                                           \
    const long ldi = ldc0 * 4, ldcb = ldc * 4;                                                                   \
    const unsigned m1 = n >= 16 ? 0xffffu : ((1u << (n > 0 ? n : 0)) - 1u);                                       \
    const unsigned m2 = n >= 32 ? 0xffffu : (n > 16 ? ((1u << (n - 16)) - 1u) : 0u);                             \
    __asm__ volatile(                                                                                            \
        "kmovw %k[m1], %%k1\n\t"                                                                                 \
        "kmovw %k[m2], %%k2\n\t"                                                                                 \
        "test %[t], %[t]\n\t"                                                                                    \
        "jnz 5f\n\t" PTO_ROWS##MR(PTO_Z) "jmp 6f\n"                                                              \
        "5:\n\t" PTO_ROWS##MR(PTO_L)                                                                             \
        "6:\n\t"                                                                                                 \
        "test %[n4], %[n4]\n\t"                                                                                  \
        "jz 2f\n"                                                                                                \
        ".p2align 5\n"                                                                                           \
        "1:\n\t" PTO_KSTEP(PTO_S##MR, "", "0") PTO_KSTEP(PTO_S##MR, "4", "128")                                   \
        PTO_KSTEP(PTO_S##MR, "8", "256") PTO_KSTEP(PTO_S##MR, "12", "384")                                        \
        "add $16, %[a0]\n\t"                                                                                     \
        "add $16, %[a5]\n\t"                                                                                     \
        "add $16, %[a10]\n\t"                                                                                    \
        "add $512, %[b]\n\t"                                                                                     \
        "dec %[n4]\n\t"                                                                                          \
        "jnz 1b\n"                                                                                               \
        "2:\n\t"                                                                                                 \
        "test %[n1], %[n1]\n\t"                                                                                  \
        "jz 4f\n"                                                                                                \
        "3:\n\t" PTO_KSTEP(PTO_S##MR, "", "0")                                                                   \
        "add $4, %[a0]\n\t"                                                                                      \
        "add $4, %[a5]\n\t"                                                                                      \
        "add $4, %[a10]\n\t"                                                                                     \
        "add $128, %[b]\n\t"                                                                                     \
        "dec %[n1]\n\t"                                                                                          \
        "jnz 3b\n"                                                                                               \
        "4:\n\t"                                                                                                 \
        "mov %[c], %[t]\n\t" PTO_ROWS##MR(PTO_W)                                                                 \
        : [a0] "+r"(a0), [a5] "+r"(a5), [a10] "+r"(a10), [b] "+r"(b), [n4] "+r"(n4), [n1] "+r"(n1), [t] "+r"(t) \
        : [l] "r"(l), [l3] "r"(l3), [ldi] "r"(ldi), [ldc] "r"(ldcb), [c] "r"(C), [m1] "r"(m1), [m2] "r"(m2)      \
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",      \
          "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22",     \
          "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "memory", \
          "cc");                                                                                                 \
  }

template <int MR>
void ukr_asm(long K, const float* A, long lda, const float* B, float* C, long ldc, const float* C0, long ldc0, int n);
PTO_UKR_ASM(1)
PTO_UKR_ASM(2)
PTO_UKR_ASM(3)
PTO_UKR_ASM(4)
PTO_UKR_ASM(5)
PTO_UKR_ASM(6)
PTO_UKR_ASM(7)
PTO_UKR_ASM(8)
PTO_UKR_ASM(9)
PTO_UKR_ASM(10)
PTO_UKR_ASM(11)
PTO_UKR_ASM(12)
PTO_UKR_ASM(13)
PTO_UKR_ASM(14)

using AsmFn = void (*)(long, const float*, long, const float*, float*, long, const float*, long, int);
// kernel for a block of m rows, 1 <= m <= 14
PTO_INLINE AsmFn asm_kernel(int m) {
  static constexpr AsmFn tab[15] = {nullptr,         &ukr_asm<1>,  &ukr_asm<2>,  &ukr_asm<3>,  &ukr_asm<4>,
                                    &ukr_asm<5>,     &ukr_asm<6>,  &ukr_asm<7>,  &ukr_asm<8>,  &ukr_asm<9>,
                                    &ukr_asm<10>,    &ukr_asm<11>, &ukr_asm<12>, &ukr_asm<13>, &ukr_asm<14>};
  return tab[m];
}

#undef PTO_UKR_ASM
#undef PTO_AF
#undef PTO_A0
#undef PTO_A1
#undef PTO_A2
#undef PTO_A3
#undef PTO_A4
#undef PTO_A5
#undef PTO_A6
#undef PTO_A7
#undef PTO_A8
#undef PTO_A9
#undef PTO_A10
#undef PTO_A11
#undef PTO_A12
#undef PTO_A13
#undef PTO_S1
#undef PTO_S2
#undef PTO_S3
#undef PTO_S4
#undef PTO_S5
#undef PTO_S6
#undef PTO_S7
#undef PTO_S8
#undef PTO_S9
#undef PTO_S10
#undef PTO_S11
#undef PTO_S12
#undef PTO_S13
#undef PTO_S14
#undef PTO_ROWS1
#undef PTO_ROWS2
#undef PTO_ROWS3
#undef PTO_ROWS4
#undef PTO_ROWS5
#undef PTO_ROWS6
#undef PTO_ROWS7
#undef PTO_ROWS8
#undef PTO_ROWS9
#undef PTO_ROWS10
#undef PTO_ROWS11
#undef PTO_ROWS12
#undef PTO_ROWS13
#undef PTO_ROWS14
#undef PTO_KSTEP
#undef PTO_Z
#undef PTO_L
#undef PTO_W
}  // namespace pto::gemm
#endif
