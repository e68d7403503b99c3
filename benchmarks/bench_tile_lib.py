"""Single-thread throughput of the C++ tile-instruction library (pypto/backend/cpu/include).

- TMATMUL GFLOP/s for fp32 and bf16 tiles, without and with the TMOV Mat->Left/Right packing,
  against single-thread torch.matmul measured in the same run (ratio printed);
- the K-loop pattern of real kernels: per K block `TLOAD a->Mat; TLOAD b->Mat; TMOV->Left;
  TMOV->Right; TMATMUL(_ACC)`, against one torch.matmul of the whole (M x Ktot) @ (Ktot x N);
- GB/s of a few elementwise / reduction / broadcast instructions on L1/L2-resident fp32 tiles.

The machine may be shared and noisy: both sides are timed with the calling thread's CPU time
(CLOCK_THREAD_CPUTIME_ID: time slices lost to other processes do not count), every measurement is the
best of `--repeats` short runs, and the library and torch runs are interleaved.

Run: .venv/bin/python benchmarks/bench_tile_lib.py [--repeats N] [--quick] [--include DIR]
"""

from __future__ import annotations

import argparse
import ctypes
import time
from pathlib import Path

import ml_dtypes
import numpy as np

import pypto
from pypto.support.native_build import build_and_load

INCLUDE = Path(pypto.__file__).parent / "backend" / "cpu" / "include"
# (M, K, N): a few small tiles, then the grid M, N in {128, 256} x K in {128, 256, 512}
MM_SIZES = [(64, 64, 64), (64, 128, 64)] + [(m, k, n) for m in (128, 256) for n in (128, 256) for k in (128, 256, 512)]
# (M, N, Ktot, Kblock)
LOOP_SIZES = [(128, 128, 1024, 128), (128, 128, 1024, 256), (256, 256, 1024, 128), (256, 256, 1024, 256),
              (128, 256, 2048, 256)]
EW = [("TADD", 8, 4096), ("TADD", 64, 128), ("TMULS", 64, 128), ("TEXP", 64, 128), ("TEXP", 8, 4096),
      ("TROWSUM", 8, 4096), ("TROWSUM", 64, 128), ("TROWEXPANDSUB", 64, 128), ("TCVT_bf16", 64, 128)]
CT = {"f32": "float", "bf16": "pto::bf16"}


def _source() -> str:
    out = ['#include "pto/pto.hpp"', "#include <time.h>",
           '#define EXPORT extern "C" __attribute__((visibility("default")))',
           "static double now() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }",
           "EXPORT const char* isa() { return pto::kIsa; }",
           "EXPORT int amx() {",
           "#if defined(PTO_AMX_BF16)",
           "  return pto::amx::available() ? 1 : 0;",
           "#else",
           "  return 0;",
           "#endif",
           "}"]
    for dt, t in CT.items():
        for m, k, n in MM_SIZES:
            out.append(f"""EXPORT double mm_{dt}_{m}_{k}_{n}(void* a, void* b, void* l, void* r, void* c, long iters, int pack) {{
  pto::Tile<{t}, {m}, {k}, pto::Loc::Mat> ta(a); pto::Tile<{t}, {k}, {n}, pto::Loc::Mat> tb(b);
  pto::Tile<{t}, {m}, {k}, pto::Loc::Left> tl(l); pto::Tile<{t}, {k}, {n}, pto::Loc::Right> tr(r);
  pto::Tile<float, {m}, {n}, pto::Loc::Acc> tc(c);
  pto::TMOV(tl, ta); pto::TMOV(tr, tb);
  const double t0 = now();
  for (long i = 0; i < iters; ++i) {{ if (pack) {{ pto::TMOV(tl, ta); pto::TMOV(tr, tb); }} pto::TMATMUL(tc, tl, tr); }}
  return now() - t0;
}}""")
        for m, n, kt, kb in LOOP_SIZES:
            out.append(f"""EXPORT double loop_{dt}_{m}_{n}_{kt}_{kb}(void* ga, void* gb, void* a, void* b, void* l, void* r, void* c, long iters) {{
  pto::Tile<{t}, {m}, {kb}, pto::Loc::Mat> ta(a); pto::Tile<{t}, {kb}, {n}, pto::Loc::Mat> tb(b);
  pto::Tile<{t}, {m}, {kb}, pto::Loc::Left> tl(l); pto::Tile<{t}, {kb}, {n}, pto::Loc::Right> tr(r);
  pto::Tile<float, {m}, {n}, pto::Loc::Acc> tc(c);
  const {t}* A = static_cast<const {t}*>(ga); const {t}* B = static_cast<const {t}*>(gb);
  const double t0 = now();
  for (long i = 0; i < iters; ++i) {{
    for (int k0 = 0; k0 < {kt}; k0 += {kb}) {{
      pto::GTensor<{t}> a_win(const_cast<{t}*>(A) + k0, {{{m}, {kb}}}, {{{kt}, 1}});
      pto::GTensor<{t}> b_win(const_cast<{t}*>(B) + long(k0) * {n}, {{{kb}, {n}}}, {{{n}, 1}});
      pto::TLOAD(ta, a_win); pto::TLOAD(tb, b_win);
      pto::TMOV(tl, ta); pto::TMOV(tr, tb);
      if (k0 == 0) pto::TMATMUL(tc, tl, tr); else pto::TMATMUL_ACC(tc, tl, tr);
    }}
  }}
  return now() - t0;
}}""")
    for op, r, c in EW:
        body = {"TADD": "pto::TADD(d, a, b)", "TMULS": "pto::TMULS(d, a, 1.0001)", "TEXP": "pto::TEXP(d, a)",
                "TROWSUM": "pto::TROWSUM(v, a)", "TROWEXPANDSUB": "pto::TROWEXPANDSUB(d, a, v)",
                "TCVT_bf16": "pto::TCVT(h, a)"}[op]
        out.append(f"""EXPORT double ew_{op}_{r}_{c}(void* pa, void* pb, void* pd, void* pv, long iters) {{
  pto::Tile<float, {r}, {c}> a(pa), b(pb), d(pd); pto::Tile<float, {r}, 1> v(pv); pto::Tile<pto::bf16, {r}, {c}> h(pd);
  const double t0 = now();
  for (long i = 0; i < iters; ++i) {{ {body}; __asm__ volatile("" ::: "memory"); }}
  return now() - t0;
}}""")
    return "\n".join(out) + "\n"


def _aligned(shape, dtype) -> np.ndarray:
    """64-byte aligned array (tiles live in a 64-byte aligned arena in real kernels)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = np.empty(n * dtype.itemsize + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + n * dtype.itemsize].view(dtype).reshape(shape)


def _interleaved_best(fns, repeats):
    """Run each timing function `repeats` times, round-robin; best (smallest) time of each."""
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, f in enumerate(fns):
            best[i] = min(best[i], f())
    return best


def _torch_timer(torch, ta, tb, tc, iters):
    def run():
        t0 = time.thread_time()
        for _ in range(iters):
            torch.matmul(ta, tb, out=tc)
        return time.thread_time() - t0
    return run


def _to_torch(torch, x, dt):
    f = _aligned(x.shape, np.float32)  # 64-byte aligned like ours (torch's own allocations are too)
    f[...] = x.astype(np.float32)
    return torch.from_numpy(f).to(torch.float32 if dt == "f32" else torch.bfloat16)


def bench_matmul(lib, torch, repeats) -> list[tuple]:
    rows = []
    for dt in CT:
        npdt = np.float32 if dt == "f32" else ml_dtypes.bfloat16
        for m, k, n in MM_SIZES:
            rng = np.random.default_rng(0)
            a, b = _aligned((m, k), npdt), _aligned((k, n), npdt)
            a[...] = rng.standard_normal((m, k)).astype(npdt)
            b[...] = rng.standard_normal((k, n)).astype(npdt)
            left, right, c = _aligned((m, k), npdt), _aligned((k, n), npdt), _aligned((m, n), np.float32)
            flops = 2.0 * m * n * k
            iters = max(10, int(1.5e8 / flops))
            fn = getattr(lib, f"mm_{dt}_{m}_{k}_{n}")
            fn.restype = ctypes.c_double
            fn.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_long, ctypes.c_int]
            ptrs = [x.ctypes.data for x in (a, b, left, right, c)]
            ta, tb = _to_torch(torch, a, dt), _to_torch(torch, b, dt)
            tc = torch.empty((m, n), dtype=ta.dtype)
            run_torch = _torch_timer(torch, ta, tb, tc, iters)
            fn(*ptrs, iters, 1)  # warm up (clock, caches, AMX permission)
            run_torch()
            t = _interleaved_best([lambda fn=fn, p=ptrs, i=iters: fn(*p, i, 0),
                                   lambda fn=fn, p=ptrs, i=iters: fn(*p, i, 1), run_torch], repeats)
            ours, ours_p, theirs = (flops * iters / x / 1e9 for x in t)
            rows.append((dt, f"{m}x{k}x{n}", ours, ours_p, theirs, ours / theirs, ours_p / theirs))
    return rows


def bench_loop(lib, torch, repeats) -> list[tuple]:
    rows = []
    for dt in CT:
        npdt = np.float32 if dt == "f32" else ml_dtypes.bfloat16
        for m, n, kt, kb in LOOP_SIZES:
            rng = np.random.default_rng(1)
            ga, gb = _aligned((m, kt), npdt), _aligned((kt, n), npdt)
            ga[...] = rng.standard_normal((m, kt)).astype(npdt)
            gb[...] = rng.standard_normal((kt, n)).astype(npdt)
            bufs = [_aligned((m, kb), npdt), _aligned((kb, n), npdt), _aligned((m, kb), npdt), _aligned((kb, n), npdt),
                    _aligned((m, n), np.float32)]
            flops = 2.0 * m * n * kt
            iters = max(5, int(1.5e8 / flops))
            fn = getattr(lib, f"loop_{dt}_{m}_{n}_{kt}_{kb}")
            fn.restype = ctypes.c_double
            fn.argtypes = [ctypes.c_void_p] * 7 + [ctypes.c_long]
            ptrs = [x.ctypes.data for x in (ga, gb, *bufs)]
            ta, tb = _to_torch(torch, ga, dt), _to_torch(torch, gb, dt)
            tc = torch.empty((m, n), dtype=ta.dtype)
            run_torch = _torch_timer(torch, ta, tb, tc, iters)
            fn(*ptrs, iters)
            run_torch()
            t = _interleaved_best([lambda fn=fn, p=ptrs, i=iters: fn(*p, i), run_torch], repeats)
            ours, theirs = (flops * iters / x / 1e9 for x in t)
            rows.append((dt, f"{m}x{n} K={kt}/{kb}", ours, theirs, ours / theirs))
    return rows


def bench_elementwise(lib, repeats) -> list[tuple]:
    rows = []
    for op, r, c in EW:
        a = _aligned((r, c), np.float32)
        a[...] = np.random.default_rng(1).uniform(0.5, 1.5, (r, c)).astype(np.float32)
        b, d, v = a.copy(), _aligned((r, c), np.float32), np.ones((r, 1), np.float32)
        nbytes = {"TADD": 3, "TMULS": 2, "TEXP": 2, "TROWSUM": 1, "TROWEXPANDSUB": 2, "TCVT_bf16": 1.5}[op] * a.nbytes
        iters = max(100, int(5e8 / nbytes))
        fn = getattr(lib, f"ew_{op}_{r}_{c}")
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long]
        ptrs = [x.ctypes.data for x in (a, b, d, v)]
        fn(*ptrs, iters // 10)
        (t,) = _interleaved_best([lambda fn=fn, ptrs=ptrs, iters=iters: fn(*ptrs, iters)], repeats)
        rows.append((op, f"{r}x{c}", nbytes * iters / t / 1e9))
    return rows


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15, help="best of this many runs per measurement")
    ap.add_argument("--quick", action="store_true", help="matmul grid only (no K loop, no elementwise)")
    ap.add_argument("--include", type=Path, default=INCLUDE,
                    help="library include dir (e.g. an older checkout's, for before/after numbers)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cdll, res = build_and_load(_source(), "bench_tile_lib", include_dirs=(args.include,))
    isa = cdll.isa
    isa.restype = ctypes.c_char_p
    amx = cdll.amx
    amx.restype = ctypes.c_int
    print(f"tile library ISA: {isa().decode()}, AMX bf16: {'on' if amx() else 'off'}   "
          f"(build {'cached' if res.cached else f'{res.seconds:.1f}s'}; best of {args.repeats})")
    print("\nTMATMUL, single thread (GFLOP/s; ratio = ours / torch.matmul single thread)")
    print(f"{'dtype':5} {'MxKxN':13} {'ours':>8} {'ours+pack':>10} {'torch':>8} {'ratio':>7} {'ratio+pack':>11}")
    for dt, size, o, op, t, r, rp in bench_matmul(cdll, torch, args.repeats):
        print(f"{dt:5} {size:13} {o:8.1f} {op:10.1f} {t:8.1f} {r:7.2f} {rp:11.2f}")
    if args.quick:
        return
    print("\nK loop: TLOAD a,b -> Mat; TMOV -> Left, Right; TMATMUL_ACC per K block (GFLOP/s; torch: one matmul)")
    print(f"{'dtype':5} {'MxN K=tot/blk':20} {'ours':>8} {'torch':>8} {'ratio':>7}")
    for dt, size, o, t, r in bench_loop(cdll, torch, args.repeats):
        print(f"{dt:5} {size:20} {o:8.1f} {t:8.1f} {r:7.2f}")
    print("\nelementwise / reductions on resident fp32 tiles (GB/s of operand traffic)")
    for op, size, g in bench_elementwise(cdll, args.repeats):
        print(f"{op:14} {size:9} {g:8.1f}")


if __name__ == "__main__":
    main()
