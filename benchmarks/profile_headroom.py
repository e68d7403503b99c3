"""Where the memory-bound kernels lose time, and what the assembler / tile library could win back.

Single thread, thread CPU time (immune to lost time slices), best of N, on the row kernels of
bench_softmax / bench_rmsnorm / bench_layernorm / bench_elementwise. For each kernel, the same
per-row computation written four ways in C++ over the tile library (pypto/backend/cpu/include):

  tile         the instruction sequence the CPU assembler emits today for the `pl` kernel (one
               library call per PTO instruction, TLOAD / TSTORE through the [1, C] Vec tile)
  tile+nt      the same, but TSTORE writes with non-temporal (streaming) stores: no read-for-
               ownership of the output lines, no cache pollution
  fused+nt     what an assembler that fuses consecutive instructions over the same valid region
               (the library's vloop/vmap drivers exist for this) could emit: one pass per
               reduction, exp and the scaling folded into the passes, streaming stores
  torch        torch eager (1 intra-op thread, out= form), for reference

plus the cost of each instruction on an L1-resident [1, 4096] fp32 tile (ns and cycles/element),
and the DRAM copy paths (memcpy, TLOAD + TSTORE, TLOAD + streaming store).

Compute-bound kernels, through `pl` variants of the benchmark kernels (compiled and run like them,
serial runtime):
  matmul       the K loop of bench_matmul's kernel with its loads removed one by one: matmul only
               (Left / Right loaded once, reused every K block), + A loads, + B loads (packing),
               full kernel; torch.matmul 1 thread beside it
  flash        bench_flash_attention's kernel, without exp, and with the whole online-softmax
               bookkeeping removed (two matmuls, moves and the accumulator add only)

    python benchmarks/profile_headroom.py [--repeats N] [--only rows,ops,matmul,flash]
"""

from __future__ import annotations

import argparse
import ctypes
from pathlib import Path

import harness
import ml_dtypes
import numpy as np

import pypto
import pypto.language as pl
from pypto.backend.cpu.lowering import instruction_source
from pypto.support.native_build import build_and_load

INC = Path(pypto.__file__).parent / "backend" / "cpu" / "include"
ROWS, COLS = 4096, 4096

_SRC = r'''
#include "pto/pto.hpp"
@INSTRUCTIONS@
#include <cstring>
#include <immintrin.h>
#define EXPORT extern "C" __attribute__((visibility("default")))
using namespace pto;
constexpr int C = 4096;
alignas(64) static float T0[C], T1[C], T2[C], T3[C], G[C], B[C], S[64];
using Row = Tile<float, 1, C, Loc::Vec>;
using Col = Tile<float, 1, 1, Loc::Vec>;

static inline GTensor<float> win(const float* p, long r) { return GTensor<float>(const_cast<float*>(p) + r * C, {1, C}, {C, 1}); }
// TSTORE with streaming stores (64-byte aligned full rows)
static inline void store_nt(float* dst, const float* src) {
  for (int c = 0; c < C; c += 16) _mm512_stream_ps(dst + c, _mm512_load_ps(src + c));
}
static inline float hmax(__m512 v) { return _mm512_reduce_max_ps(v); }
static inline float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }
static inline __m512 vexp(__m512 x) { return (__m512)simd::vexp((simd::vec<float, 16>)x); }

template <bool NT> static void softmax_tile(const float* x, float* y, long rows) {
  Row t(T0), e(T1); Col m(S), s(S + 16);
  for (long r = 0; r < rows; ++r) {
    TLOAD(t, win(x, r)); TROWMAX(m, t); TROWEXPANDSUB(e, t, m); TEXP(e, e); TROWSUM(s, e);
    TRECIP(s, s); TROWEXPANDMUL(e, e, s);
    if (NT) store_nt(y + r * C, T1); else TSTORE(win(y, r), e);
  }
  _mm_sfence();
}
static void softmax_fused(const float* x, float* y, long rows) {
  for (long r = 0; r < rows; ++r) {
    const float* xr = x + r * C; float* yr = y + r * C;
    __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;             // pass 1: load (into the tile) + max
    for (int c = 0; c < C; c += 32) {
      __m512 a = _mm512_loadu_ps(xr + c), b = _mm512_loadu_ps(xr + c + 16);
      _mm512_store_ps(T0 + c, a); _mm512_store_ps(T0 + c + 16, b);
      m0 = _mm512_max_ps(m0, a); m1 = _mm512_max_ps(m1, b);
    }
    __m512 m = _mm512_set1_ps(hmax(_mm512_max_ps(m0, m1))), s0 = _mm512_setzero_ps(), s1 = s0;
    for (int c = 0; c < C; c += 32) {                            // pass 2: e = exp(t - m), sum
      __m512 a = vexp(_mm512_sub_ps(_mm512_load_ps(T0 + c), m)), b = vexp(_mm512_sub_ps(_mm512_load_ps(T0 + c + 16), m));
      _mm512_store_ps(T0 + c, a); _mm512_store_ps(T0 + c + 16, b); s0 = _mm512_add_ps(s0, a); s1 = _mm512_add_ps(s1, b);
    }
    __m512 inv = _mm512_set1_ps(1.0f / hsum(_mm512_add_ps(s0, s1)));
    for (int c = 0; c < C; c += 16) _mm512_stream_ps(yr + c, _mm512_mul_ps(_mm512_load_ps(T0 + c), inv));  // pass 3
  }
  _mm_sfence();
}

template <bool NT> static void rmsnorm_tile(const float* x, const float* g, float* y, long rows) {
  Row t(T0), sq(T1), gt(G); Col ss(S);
  TLOAD(gt, GTensor<float>(const_cast<float*>(g), {1, C}, {C, 1}));
  for (long r = 0; r < rows; ++r) {
    TLOAD(t, win(x, r)); TMUL(sq, t, t); TROWSUM(ss, sq); TMULS(ss, ss, 1.0 / C); TADDS(ss, ss, 1e-6); TRSQRT(ss, ss);
    TROWEXPANDMUL(sq, t, ss); TCOLEXPANDMUL(sq, sq, gt);
    if (NT) store_nt(y + r * C, T1); else TSTORE(win(y, r), sq);
  }
  _mm_sfence();
}
static void rmsnorm_fused(const float* x, const float* g, float* y, long rows) {
  for (long r = 0; r < rows; ++r) {
    const float* xr = x + r * C; float* yr = y + r * C;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    for (int c = 0; c < C; c += 32) {
      __m512 a = _mm512_loadu_ps(xr + c), b = _mm512_loadu_ps(xr + c + 16);
      _mm512_store_ps(T0 + c, a); _mm512_store_ps(T0 + c + 16, b);
      s0 = _mm512_fmadd_ps(a, a, s0); s1 = _mm512_fmadd_ps(b, b, s1);
    }
    __m512 k = _mm512_set1_ps(1.0f / std::sqrt(hsum(_mm512_add_ps(s0, s1)) / C + 1e-6f));
    for (int c = 0; c < C; c += 16)
      _mm512_stream_ps(yr + c, _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(T0 + c), k), _mm512_load_ps(g + c)));
  }
  _mm_sfence();
}

template <bool NT> static void layernorm_tile(const float* x, const float* g, const float* b, float* y, long rows) {
  Row t(T0), xc(T1), sq(T2), gt(G), bt(B); Col mu(S), var(S + 16);
  TLOAD(gt, GTensor<float>(const_cast<float*>(g), {1, C}, {C, 1}));
  TLOAD(bt, GTensor<float>(const_cast<float*>(b), {1, C}, {C, 1}));
  for (long r = 0; r < rows; ++r) {
    TLOAD(t, win(x, r)); TROWSUM(mu, t); TMULS(mu, mu, 1.0 / C); TROWEXPANDSUB(xc, t, mu); TMUL(sq, xc, xc);
    TROWSUM(var, sq); TMULS(var, var, 1.0 / C); TADDS(var, var, 1e-5); TRSQRT(var, var);
    TROWEXPANDMUL(sq, xc, var); TCOLEXPANDMUL(sq, sq, gt); TCOLEXPANDADD(sq, sq, bt);
    if (NT) store_nt(y + r * C, T2); else TSTORE(win(y, r), sq);
  }
  _mm_sfence();
}
static void layernorm_fused(const float* x, const float* g, const float* b, float* y, long rows) {
  for (long r = 0; r < rows; ++r) {
    const float* xr = x + r * C; float* yr = y + r * C;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    for (int c = 0; c < C; c += 32) {
      __m512 a = _mm512_loadu_ps(xr + c), bb = _mm512_loadu_ps(xr + c + 16);
      _mm512_store_ps(T0 + c, a); _mm512_store_ps(T0 + c + 16, bb); s0 = _mm512_add_ps(s0, a); s1 = _mm512_add_ps(s1, bb);
    }
    __m512 mu = _mm512_set1_ps(hsum(_mm512_add_ps(s0, s1)) / C), v0 = _mm512_setzero_ps(), v1 = v0;
    for (int c = 0; c < C; c += 32) {
      __m512 a = _mm512_sub_ps(_mm512_load_ps(T0 + c), mu), bb = _mm512_sub_ps(_mm512_load_ps(T0 + c + 16), mu);
      v0 = _mm512_fmadd_ps(a, a, v0); v1 = _mm512_fmadd_ps(bb, bb, v1);
    }
    __m512 k = _mm512_set1_ps(1.0f / std::sqrt(hsum(_mm512_add_ps(v0, v1)) / C + 1e-5f));
    for (int c = 0; c < C; c += 16) {
      __m512 n = _mm512_mul_ps(_mm512_sub_ps(_mm512_load_ps(T0 + c), mu), k);
      _mm512_stream_ps(yr + c, _mm512_fmadd_ps(n, _mm512_load_ps(g + c), _mm512_load_ps(b + c)));
    }
  }
  _mm_sfence();
}

template <bool NT> static void ew_tile(const float* a, const float* b, const float* c, float* y, long rows) {
  using H = Tile<float, 1, C / 2, Loc::Vec>;
  for (long r = 0; r < rows; ++r)
    for (int j = 0; j < C; j += C / 2) {
      H ta(T0), tb(T1), tc(T2), t(T3);
      auto w = [&](const float* p) { return GTensor<float>(const_cast<float*>(p) + r * C + j, {1, C / 2}, {C, 1}); };
      TLOAD(ta, w(a)); TLOAD(tb, w(b)); TLOAD(tc, w(c)); TMUL(t, ta, tb); TADD(t, t, tc); TRELU(t, t);
      if (NT) { for (int k = 0; k < C / 2; k += 16) _mm512_stream_ps(y + r * C + j + k, _mm512_load_ps(T3 + k)); }
      else TSTORE(w(y), t);
    }
  _mm_sfence();
}
static void ew_fused(const float* a, const float* b, const float* c, float* y, long rows) {
  const __m512 z = _mm512_setzero_ps();
  for (long i = 0, n = rows * long(C); i < n; i += 16)
    _mm512_stream_ps(y + i, _mm512_max_ps(z, _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), _mm512_loadu_ps(c + i))));
  _mm_sfence();
}

template <bool NT> static void copy_tile(const float* x, float* y, long rows) {
  Row t(T0);
  for (long r = 0; r < rows; ++r) { TLOAD(t, win(x, r)); if (NT) store_nt(y + r * C, T0); else TSTORE(win(y, r), t); }
  _mm_sfence();
}

EXPORT void softmax_0(const float* x, const float*, const float*, float* y, long r) { softmax_tile<false>(x, y, r); }
EXPORT void softmax_1(const float* x, const float*, const float*, float* y, long r) { softmax_tile<true>(x, y, r); }
EXPORT void softmax_2(const float* x, const float*, const float*, float* y, long r) { softmax_fused(x, y, r); }
EXPORT void rmsnorm_0(const float* x, const float* g, const float*, float* y, long r) { rmsnorm_tile<false>(x, g, y, r); }
EXPORT void rmsnorm_1(const float* x, const float* g, const float*, float* y, long r) { rmsnorm_tile<true>(x, g, y, r); }
EXPORT void rmsnorm_2(const float* x, const float* g, const float*, float* y, long r) { rmsnorm_fused(x, g, y, r); }
EXPORT void layernorm_0(const float* x, const float* g, const float* b, float* y, long r) { layernorm_tile<false>(x, g, b, y, r); }
EXPORT void layernorm_1(const float* x, const float* g, const float* b, float* y, long r) { layernorm_tile<true>(x, g, b, y, r); }
EXPORT void layernorm_2(const float* x, const float* g, const float* b, float* y, long r) { layernorm_fused(x, g, b, y, r); }
EXPORT void elementwise_0(const float* a, const float* b, const float* c, float* y, long r) { ew_tile<false>(a, b, c, y, r); }
EXPORT void elementwise_1(const float* a, const float* b, const float* c, float* y, long r) { ew_tile<true>(a, b, c, y, r); }
EXPORT void elementwise_2(const float* a, const float* b, const float* c, float* y, long r) { ew_fused(a, b, c, y, r); }
EXPORT void copy_0(const float* x, const float*, const float*, float* y, long r) { std::memcpy(y, x, size_t(r) * C * 4); }
EXPORT void copy_1(const float* x, const float*, const float*, float* y, long r) { copy_tile<false>(x, y, r); }
EXPORT void copy_2(const float* x, const float*, const float*, float* y, long r) { copy_tile<true>(x, y, r); }
'''

OPS = {"TLOAD (L1 -> L1 copy)": "TLOAD(e, GTensor<float>(T0, {1, C}, {C, 1}))", "TADD": "TADD(e, t, t)",
       "TMUL": "TMUL(e, t, t)", "TMULS": "TMULS(e, t, 0.5)", "TDIV": "TDIV(e, t, t)", "TEXP": "TEXP(e, t)",
       "TRELU": "TRELU(e, t)", "TMAX": "TMAX(e, t, g)", "TROWSUM": "TROWSUM(m, t)", "TROWMAX": "TROWMAX(m, t)",
       "TROWEXPANDSUB": "TROWEXPANDSUB(e, t, m)", "TROWEXPANDMUL": "TROWEXPANDMUL(e, t, m)",
       "TROWEXPANDDIV": "TROWEXPANDDIV(e, t, m)", "TCOLEXPANDMUL": "TCOLEXPANDMUL(e, t, g)",
       "TCVT f32->bf16": "TCVT(h, t, RoundMode::CAST_RINT)"}


def _op_source() -> str:
    out = []
    for i, body in enumerate(OPS.values()):
        out.append(f"""EXPORT void op_{i}(long iters) {{
  Row t(T0), e(T1), g(G); Col m(S); Tile<bf16, 1, C, Loc::Vec> h(reinterpret_cast<bf16*>(T2));
  for (long k = 0; k < iters; ++k) {{ {body}; __asm__ volatile("" ::: "memory"); }}
}}""")
    return "\n".join(out)


def _aligned(shape) -> np.ndarray:
    n = int(np.prod(shape))
    raw = np.empty(n * 4 + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + n * 4].view(np.float32).reshape(shape)


def make_matmul_variant(dtype: str, s: int, tm: int, tn: int, tk: int, variant: str):
    """bench_matmul's kernel; variant: noload (operands loaded once), loadA, loadB, full."""
    dt = pl.FP32 if dtype == "fp32" else pl.BF16
    Left, Right = pl.Mem.Left, pl.Mem.Right

    @pl.program
    class MatmulVariant:
        @pl.function(type=pl.FunctionType.InCore)
        def matmul_tile(self, a: pl.Tensor[[tm, s], dt], b: pl.Tensor[[s, tn], dt],
                        c: pl.Out[pl.Tensor[[tm, tn], pl.FP32]]) -> pl.Tensor[[tm, tn], pl.FP32]:
            al0 = pl.load(a, [0, 0], [tm, tk], target_memory=Left)
            br0 = pl.load(b, [0, 0], [tk, tn], target_memory=Right)
            acc0 = pl.matmul(al0, br0)
            for kk, (acc,) in pl.range(tk, s, tk, init_values=(acc0,)):
                if variant == "noload":
                    nxt = pl.matmul_acc(acc, al0, br0)
                elif variant == "loadA":
                    nxt = pl.matmul_acc(acc, pl.load(a, [0, kk], [tm, tk], target_memory=Left), br0)
                elif variant == "loadB":
                    nxt = pl.matmul_acc(acc, al0, pl.load(b, [kk, 0], [tk, tn], target_memory=Right))
                else:
                    nxt = pl.matmul_acc(acc, pl.load(a, [0, kk], [tm, tk], target_memory=Left),
                                        pl.load(b, [kk, 0], [tk, tn], target_memory=Right))
                acc_out = pl.yield_(nxt)
            return pl.store(acc_out, [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[s, s], dt], b: pl.Tensor[[s, s], dt],
                 c: pl.Out[pl.Tensor[[s, s], pl.FP32]]) -> pl.Tensor[[s, s], pl.FP32]:
            for i in pl.range(0, s, tm):
                for j in pl.range(0, s, tn):
                    self.matmul_tile(pl.view(a, [tm, s], [i, 0]), pl.view(b, [s, tn], [0, j]),
                                     pl.view(c, [tm, tn], [i, j]))
            return c

    return MatmulVariant


def make_flash_variant(h: int, s: int, d: int, bq: int, bk: int, variant: str):
    """bench_flash_attention's kernel; variant: full, noexp (p = s - m), matmul_only."""
    Vec, Left, Right = pl.Mem.Vec, pl.Mem.Left, pl.Mem.Right
    scale = 1.0 / d ** 0.5

    @pl.program
    class FlashVariant:
        @pl.function(type=pl.FunctionType.InCore)
        def attention_block(self, q: pl.Tensor[[bq, d], pl.FP32], k: pl.Tensor[[s, d], pl.FP32],
                            v: pl.Tensor[[s, d], pl.FP32],
                            o: pl.Out[pl.Tensor[[bq, d], pl.FP32]]) -> pl.Tensor[[bq, d], pl.FP32]:
            ql = pl.move(pl.mul(pl.load(q, [0, 0], [bq, d]), scale), target_memory=Left)
            s0 = pl.move(pl.matmul(ql, pl.load(k, [0, 0], [bk, d], target_memory=Right, transpose=True)),
                         target_memory=Vec)
            m0 = pl.row_max(s0)
            p0 = pl.exp(pl.row_expand_sub(s0, m0))
            l0 = pl.row_sum(p0)
            a0 = pl.move(pl.matmul(pl.move(p0, target_memory=Left), pl.load(v, [0, 0], [bk, d], target_memory=Right)),
                         target_memory=Vec)
            for j, (m, lsum, acc) in pl.range(bk, s, bk, init_values=(m0, l0, a0)):
                sj = pl.move(pl.matmul(ql, pl.load(k, [j, 0], [bk, d], target_memory=Right, transpose=True)),
                             target_memory=Vec)
                vj = pl.load(v, [j, 0], [bk, d], target_memory=Right)
                if variant == "matmul_only":
                    acc_new = pl.add(acc, pl.move(pl.matmul(pl.move(sj, target_memory=Left), vj), target_memory=Vec))
                    m_new = m
                    l_new = lsum
                else:
                    m_new = pl.maximum(m, pl.row_max(sj))
                    if variant == "noexp":
                        pj = pl.row_expand_sub(sj, m_new)
                    else:
                        pj = pl.exp(pl.row_expand_sub(sj, m_new))
                    corr = pl.exp(pl.sub(m, m_new))
                    l_new = pl.add(pl.mul(lsum, corr), pl.row_sum(pj))
                    pv = pl.move(pl.matmul(pl.move(pj, target_memory=Left), vj), target_memory=Vec)
                    acc_new = pl.add(pl.row_expand_mul(acc, corr), pv)
                m_out, l_out, acc_out = pl.yield_(m_new, l_new, acc_new)
            return pl.store(pl.row_expand_mul(acc_out, pl.recip(l_out)), [0, 0], o)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, q: pl.Tensor[[h * s, d], pl.FP32], k: pl.Tensor[[h * s, d], pl.FP32],
                 v: pl.Tensor[[h * s, d], pl.FP32],
                 o: pl.Out[pl.Tensor[[h * s, d], pl.FP32]]) -> pl.Tensor[[h * s, d], pl.FP32]:
            for hh in pl.range(h):
                for i in pl.range(0, s, bq):
                    self.attention_block(pl.view(q, [bq, d], [hh * s + i, 0]), pl.view(k, [s, d], [hh * s, 0]),
                                         pl.view(v, [s, d], [hh * s, 0]), pl.view(o, [bq, d], [hh * s + i, 0]))
            return o

    return FlashVariant


def profile_matmul(repeats: int, size: int) -> None:
    import bench_matmul
    import torch

    from pypto.runtime import RunConfig

    ser = RunConfig(num_workers=0)
    print(f"\nmatmul {size}^3 K loop, single thread, thread CPU time (tiles TM x TN x TK as bench_matmul)")
    for dtype in ("fp32", "bf16"):
        tm, tn, tk = bench_matmul.TILES[dtype]
        npdt = np.float32 if dtype == "fp32" else ml_dtypes.bfloat16
        rng = np.random.default_rng(0)
        a = rng.standard_normal((size, size), dtype=np.float32).astype(npdt)
        b = rng.standard_normal((size, size), dtype=np.float32).astype(npdt)
        c = np.zeros((size, size), np.float32)
        fns = {}
        for v in ("noload", "loadA", "loadB", "full"):
            comp = harness.compile_program(make_matmul_variant(dtype, size, tm, tn, tk, v),
                                           f"profile_matmul_{dtype}_{size}_{v}")
            fns[v] = lambda comp=comp, a=a, b=b, c=c: comp(a, b, c, config=ser)
        tdt = torch.float32 if dtype == "fp32" else torch.bfloat16
        ta, tb = (torch.from_numpy(x.astype(np.float32)).to(tdt) for x in (a, b))
        tc = torch.zeros(size, size, dtype=tdt)
        fns["torch.matmul"] = lambda ta=ta, tb=tb, tc=tc: torch.matmul(ta, tb, out=tc)
        t = harness.cpu_time_interleaved(fns, repeats)
        labels = {"noload": "matmul only (operands reused)", "loadA": "+ A loads (TLOAD -> Left)",
                  "loadB": "+ B loads (TLOAD -> Right, packs)", "full": "full kernel (A + B loads)",
                  "torch.matmul": "torch.matmul, 1 thread"}
        for k, tm_ in t.items():
            print(f"  {dtype} {tm}x{tn}x{tk}  {labels[k]:36s}{tm_.best * 1e3:9.1f} ms"
                  f"{2.0 * size ** 3 / tm_.best / 1e9:8.0f} GFLOP/s")


def profile_flash(repeats: int) -> None:
    import bench_flash_attention as fa

    from pypto.runtime import RunConfig

    h, s, d = fa.H, fa.S, fa.D
    ser = RunConfig(num_workers=0)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((h * s, d), dtype=np.float32) for _ in range(3))
    o = np.zeros_like(q)
    fns = {}
    for var in ("full", "noexp", "matmul_only"):
        comp = harness.compile_program(make_flash_variant(h, s, d, fa.BQ, fa.BK, var), f"profile_flash_{var}")
        fns[var] = lambda comp=comp: comp(q, k, v, o, config=ser)
    t = harness.cpu_time_interleaved(fns, repeats)
    print(f"\nflash attention H={h} S={s} D={d} (BQ={fa.BQ}, BK={fa.BK}), single thread, thread CPU time")
    labels = {"full": "full kernel", "noexp": "without exp (p = s - m)",
              "matmul_only": "matmuls + moves + acc add only"}
    for name, tm in t.items():
        print(f"  {labels[name]:36s}{tm.best * 1e3:9.1f} ms{4.0 * h * s * s * d / tm.best / 1e9:8.0f} GFLOP/s")


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", default="rows,ops,matmul,flash")
    ap.add_argument("--matmul-size", type=int, default=2048)
    opts = ap.parse_args()
    only = set(opts.only.split(","))
    torch.set_num_threads(1)
    if "rows" in only or "ops" in only:
        profile_rows(opts.repeats, only)
    if "matmul" in only:
        profile_matmul(max(2, opts.repeats // 2), opts.matmul_size)
    if "flash" in only:
        profile_flash(max(2, opts.repeats // 2))


def profile_rows(repeats: int, only: set[str]) -> None:
    import torch
    import torch.nn.functional as F

    src = _SRC.replace("@INSTRUCTIONS@", instruction_source()) + _op_source()
    lib, _ = build_and_load(src, "profile_headroom", include_dirs=(INC,))
    rng = np.random.default_rng(0)
    x, a, b, c, y = (_aligned((ROWS, COLS)) for _ in range(5))
    for arr in (x, a, b, c):
        arr[...] = rng.standard_normal((ROWS, COLS), dtype=np.float32)
    y[...] = 0
    g, be = _aligned((1, COLS)), _aligned((1, COLS))
    g[...], be[...] = 1.0, 0.0
    tx, ta, tb, tc, ty = (torch.from_numpy(v) for v in (x, a, b, c, y))
    tg, tbe = torch.from_numpy(g[0]), torch.from_numpy(be[0])
    tn, tmean, trstd = torch.zeros(ROWS, 1), torch.zeros(ROWS, 1), torch.zeros(ROWS, 1)

    def torch_rms() -> None:
        torch.linalg.vector_norm(tx, 2, -1, keepdim=True, out=tn)
        tn.square_().mul_(1.0 / COLS).add_(1e-6).rsqrt_()
        torch.mul(tx, tn, out=ty)
        ty.mul_(tg)

    def torch_ew() -> None:
        torch.addcmul(tc, ta, tb, out=ty)
        ty.relu_()

    torch_fns = {"softmax": lambda: torch.ops.aten._softmax.out(tx, -1, False, out=ty), "rmsnorm": torch_rms,
                 "layernorm": lambda: torch.ops.aten.native_layer_norm.out(tx, [COLS], tg, tbe, 1e-5, out0=ty,
                                                                           out1=tmean, out2=trstd),
                 "elementwise": torch_ew, "copy": lambda: ty.copy_(tx)}
    refs = {"softmax": lambda: torch.softmax(tx, -1), "rmsnorm": lambda: F.rms_norm(tx, (COLS,), tg, 1e-6),
            "layernorm": lambda: F.layer_norm(tx, (COLS,), tg, tbe, 1e-5),
            "elementwise": lambda: torch.relu(ta * tb + tc), "copy": lambda: tx}
    nbytes = {"elementwise": 4 * x.nbytes}
    variants = ("tile", "tile+nt", "fused+nt")
    copy_names = ("memcpy (DRAM -> DRAM)", "TLOAD + TSTORE", "TLOAD + streaming store")
    print(f"single thread, thread CPU time, best of {repeats}; rows of {COLS} fp32, {ROWS} rows; "
          "GB/s = compulsory bytes (reads + writes) / time")
    print(f"{'kernel':12s}{'variant':26s}{'ms':>9s}{'GB/s':>8s}{'vs tile':>9s}")
    for kern in ("copy", "elementwise", "softmax", "rmsnorm", "layernorm") if "rows" in only else ():
        fns = {}
        for i, v in enumerate(variants):
            f = getattr(lib, f"{kern}_{i}")
            f.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long]
            args = (a, b, c, y) if kern == "elementwise" else (x, g, be, y)
            name = copy_names[i] if kern == "copy" else v
            fns[name] = (lambda f=f, args=args: f(*(v.ctypes.data for v in args), ROWS))
        fns["torch (1 thread, out=)"] = torch_fns[kern]
        # numerics of every C++ variant against torch
        for name, fn in fns.items():
            y[...] = 0
            fn()
            harness.check_close(f"profile {kern} {name}", y, refs[kern](), atol=1e-4, rtol=1e-4)
        t = harness.cpu_time_interleaved(fns, repeats)
        base = t[copy_names[1] if kern == "copy" else "tile"].best
        for name, tm in t.items():
            gbs = nbytes.get(kern, 2 * x.nbytes) / tm.best / 1e9
            print(f"{kern:12s}{name:26s}{tm.best * 1e3:9.2f}{gbs:8.1f}{base / tm.best:8.2f}x")
    if "ops" not in only:
        return
    print(f"\ninstruction cost on an L1-resident [1, {COLS}] fp32 tile (single thread; cycles at the nominal 2.7 GHz)")
    for i, name in enumerate(OPS):
        f = getattr(lib, f"op_{i}")
        f.argtypes = [ctypes.c_long]
        it = 20000
        (tm,) = harness.cpu_time_interleaved({name: lambda f=f, it=it: f(it)}, repeats).values()
        ns = tm.best / it * 1e9
        print(f"  {name:24s}{ns:8.0f} ns{ns / COLS * 2.7:8.2f} cycles/element")


if __name__ == "__main__":
    main()
