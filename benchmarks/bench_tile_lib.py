"""Single-thread throughput of the C++ tile-instruction library (pypto/backend/cpu/include).

- TMATMUL GFLOP/s for fp32 and bf16 tiles, without and with the TMOV Mat->Left/Right packing,
  against single-thread torch.matmul measured in the same run (ratio printed);
- GB/s of a few elementwise / reduction / broadcast instructions on L1/L2-resident fp32 tiles.

Run: .venv/bin/python benchmarks/bench_tile_lib.py  (about half a minute)
"""

from __future__ import annotations

import ctypes
import time
from pathlib import Path

import ml_dtypes
import numpy as np

import pypto
from pypto.support.native_build import build_and_load

INCLUDE = Path(pypto.__file__).parent / "backend" / "cpu" / "include"
MM_SIZES = [(64, 64, 64), (64, 128, 64), (128, 128, 128), (128, 256, 128), (128, 512, 128), (256, 256, 256),
            (256, 512, 256)]
EW = [("TADD", 8, 4096), ("TADD", 64, 128), ("TMULS", 64, 128), ("TEXP", 64, 128), ("TROWSUM", 8, 4096),
      ("TROWSUM", 64, 128), ("TROWEXPANDSUB", 64, 128), ("TCVT_bf16", 64, 128)]
CT = {"f32": "float", "bf16": "pto::bf16"}


def _source() -> str:
    out = ['#include "pto/pto.hpp"', "#include <chrono>",
           '#define EXPORT extern "C" __attribute__((visibility("default")))',
           "EXPORT const char* isa() { return pto::kIsa; }"]
    for dt, t in CT.items():
        for m, k, n in MM_SIZES:
            out.append(f"""EXPORT double mm_{dt}_{m}_{k}_{n}(void* a, void* b, void* l, void* r, void* c, long iters, int pack) {{
  pto::Tile<{t}, {m}, {k}, pto::Loc::Mat> ta(a); pto::Tile<{t}, {k}, {n}, pto::Loc::Mat> tb(b);
  pto::Tile<{t}, {m}, {k}, pto::Loc::Left> tl(l); pto::Tile<{t}, {k}, {n}, pto::Loc::Right> tr(r);
  pto::Tile<float, {m}, {n}, pto::Loc::Acc> tc(c);
  pto::TMOV(tl, ta); pto::TMOV(tr, tb);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) {{ if (pack) {{ pto::TMOV(tl, ta); pto::TMOV(tr, tb); }} pto::TMATMUL(tc, tl, tr); }}
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}}""")
    for op, r, c in EW:
        body = {"TADD": "pto::TADD(d, a, b)", "TMULS": "pto::TMULS(d, a, 1.0001)", "TEXP": "pto::TEXP(d, a)",
                "TROWSUM": "pto::TROWSUM(v, a)", "TROWEXPANDSUB": "pto::TROWEXPANDSUB(d, a, v)",
                "TCVT_bf16": "pto::TCVT(h, a)"}[op]
        out.append(f"""EXPORT double ew_{op}_{r}_{c}(void* pa, void* pb, void* pd, void* pv, long iters) {{
  pto::Tile<float, {r}, {c}> a(pa), b(pb), d(pd); pto::Tile<float, {r}, 1> v(pv); pto::Tile<pto::bf16, {r}, {c}> h(pd);
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) {{ {body}; __asm__ volatile("" ::: "memory"); }}
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}}""")
    return "\n".join(out) + "\n"


def _best(fn, repeats=5):
    return min(fn() for _ in range(repeats))


def bench_matmul(lib, torch) -> list[tuple]:
    rows = []
    for dt in CT:
        npdt = np.float32 if dt == "f32" else ml_dtypes.bfloat16
        for m, k, n in MM_SIZES:
            rng = np.random.default_rng(0)
            a = rng.standard_normal((m, k)).astype(npdt)
            b = rng.standard_normal((k, n)).astype(npdt)
            left, right, c = np.empty_like(a), np.empty_like(b), np.empty((m, n), np.float32)
            flops = 2.0 * m * n * k
            iters = max(20, int(3e8 / flops))
            fn = getattr(lib, f"mm_{dt}_{m}_{k}_{n}")
            fn.restype = ctypes.c_double
            fn.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_long, ctypes.c_int]
            ptrs = [x.ctypes.data for x in (a, b, left, right, c)]
            fn(*ptrs, iters, 1)  # warm up (clock, caches)
            ours = [flops * iters / _best(lambda p=p, fn=fn, ptrs=ptrs, iters=iters: fn(*ptrs, iters, p)) / 1e9
                    for p in (0, 1)]
            ta = torch.from_numpy(a.astype(np.float32)).to(torch.float32 if dt == "f32" else torch.bfloat16)
            tb = torch.from_numpy(b.astype(np.float32)).to(ta.dtype)
            tc = torch.empty((m, n), dtype=ta.dtype)

            def run_torch(ta=ta, tb=tb, tc=tc, iters=iters):
                t0 = time.perf_counter()
                for _ in range(iters):
                    torch.matmul(ta, tb, out=tc)
                return time.perf_counter() - t0

            run_torch()
            theirs = flops * iters / _best(run_torch) / 1e9
            rows.append((dt, f"{m}x{k}x{n}", ours[0], ours[1], theirs, ours[0] / theirs, ours[1] / theirs))
    return rows


def bench_elementwise(lib) -> list[tuple]:
    rows = []
    for op, r, c in EW:
        a = np.random.default_rng(1).uniform(0.5, 1.5, (r, c)).astype(np.float32)
        b, d, v = a.copy(), np.empty_like(a), np.ones((r, 1), np.float32)
        nbytes = {"TADD": 3, "TMULS": 2, "TEXP": 2, "TROWSUM": 1, "TROWEXPANDSUB": 2, "TCVT_bf16": 1.5}[op] * a.nbytes
        iters = max(100, int(2e9 / nbytes))
        fn = getattr(lib, f"ew_{op}_{r}_{c}")
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long]
        ptrs = [x.ctypes.data for x in (a, b, d, v)]
        fn(*ptrs, iters // 10)
        gbs = nbytes * iters / _best(lambda fn=fn, ptrs=ptrs, iters=iters: fn(*ptrs, iters), 3) / 1e9
        rows.append((op, f"{r}x{c}", gbs))
    return rows


def main() -> None:
    import torch

    torch.set_num_threads(1)
    cdll, res = build_and_load(_source(), "bench_tile_lib", include_dirs=(INCLUDE,))
    isa = cdll.isa
    isa.restype = ctypes.c_char_p
    print(f"tile library ISA: {isa().decode()}   (build {'cached' if res.cached else f'{res.seconds:.1f}s'})")
    print("\nTMATMUL, single thread (GFLOP/s; ratio = ours / torch.matmul single thread)")
    print(f"{'dtype':5} {'MxKxN':13} {'ours':>8} {'ours+pack':>10} {'torch':>8} {'ratio':>7} {'ratio+pack':>11}")
    for dt, size, o, op, t, r, rp in bench_matmul(cdll, torch):
        print(f"{dt:5} {size:13} {o:8.1f} {op:10.1f} {t:8.1f} {r:7.2f} {rp:11.2f}")
    print("\nelementwise / reductions on resident fp32 tiles (GB/s of operand traffic)")
    for op, size, g in bench_elementwise(cdll):
        print(f"{op:14} {size:9} {g:8.1f}")


if __name__ == "__main__":
    main()
