"""Single-thread throughput of the C++ tile-instruction library (pypto/backend/cpu/include).

- TMATMUL GFLOP/s for fp32 and bf16 tiles, without and with the TMOV Mat->Left/Right packing,
  against single-thread torch.matmul measured in the same run (ratio printed);
- the K-loop pattern of real kernels: per K block `TLOAD a->Mat; TLOAD b->Mat; TMOV->Left;
  TMOV->Right; TMATMUL(_ACC)`, against one torch.matmul of the whole (M x Ktot) @ (Ktot x N);
- GB/s of a few elementwise / reduction / broadcast / convert instructions on L1/L2-resident fp32
  tiles (and ns per call);
- TSTORE with each StoreMode (plain stores, streaming stores, the size-based Auto choice) into
  destinations that stay in L2 / L3 or go to DRAM, and row kernels over 64 MiB in DRAM (TLOAD ->
  ... -> TSTORE per [1, 4096] row: copy, softmax) against single-thread torch.

The machine may be shared and noisy: both sides are timed with the calling thread's CPU time
(CLOCK_THREAD_CPUTIME_ID: time slices lost to other processes do not count), every measurement is the
best of `--repeats` short runs, and the library and torch runs are interleaved.

Run: .venv/bin/python benchmarks/bench_tile_lib.py [--repeats N] [--quick] [--only SECTIONS] [--include DIR]
     (sections: matmul, loop, ew, store, rows; --include an older checkout's include dir for before/after)
"""

from __future__ import annotations

import argparse
import ctypes
import time
from pathlib import Path

import ml_dtypes
import numpy as np

import pypto
from pypto.backend.cpu.lowering import instruction_source
from pypto.support.native_build import build_and_load

INCLUDE = Path(pypto.__file__).parent / "backend" / "cpu" / "include"
# (M, K, N): a few small tiles, then the grid M, N in {128, 256} x K in {128, 256, 512}
MM_SIZES = [(64, 64, 64), (64, 128, 64)] + [(m, k, n) for m in (128, 256) for n in (128, 256) for k in (128, 256, 512)]
# (M, N, Ktot, Kblock)
LOOP_SIZES = [(128, 128, 1024, 128), (128, 128, 1024, 256), (256, 256, 1024, 128), (256, 256, 1024, 256),
              (128, 256, 2048, 256)]
EW = [("TADD", 8, 4096), ("TADD", 64, 128), ("TMULS", 64, 128), ("TEXP", 64, 128), ("TEXP", 8, 4096),
      ("TROWSUM", 8, 4096), ("TROWSUM", 64, 128), ("TROWEXPANDSUB", 64, 128), ("TCVT_bf16", 64, 128),
      # the row kernels' instructions on an L1-resident [1, 4096] row
      ("TADD", 1, 4096), ("TMAX", 1, 4096), ("TRELU", 1, 4096), ("TEXP", 1, 4096), ("TROWSUM", 1, 4096),
      ("TROWMAX", 1, 4096), ("TROWMIN", 1, 4096), ("TROWEXPANDMUL", 1, 4096), ("TCOLEXPANDMUL", 1, 4096),
      ("TCVT_bf16", 1, 4096), ("TCVT_f32", 1, 4096), ("TROWMAX", 8, 4096), ("TCOLMAX", 64, 128),
      ("TCOLSUM", 64, 128)]
EW_BODY = {"TADD": "pto::TADD(d, a, b)", "TMULS": "pto::TMULS(d, a, 1.0001)", "TEXP": "pto::TEXP(d, a)",
           "TROWSUM": "pto::TROWSUM(v, a)", "TROWEXPANDSUB": "pto::TROWEXPANDSUB(d, a, v)",
           "TCVT_bf16": "pto::TCVT(h, a)", "TMAX": "pto::TMAX(d, a, b)", "TRELU": "pto::TRELU(d, a)",
           "TROWMAX": "pto::TROWMAX(v, a)", "TROWMIN": "pto::TROWMIN(v, a)", "TROWEXPANDMUL": "pto::TROWEXPANDMUL(d, a, v)",
           "TCOLEXPANDMUL": "pto::TCOLEXPANDMUL(d, a, w)", "TCVT_f32": "pto::TCVT(d, hb)", "TCOLMAX": "pto::TCOLMAX(w, a)",
           "TCOLSUM": "pto::TCOLSUM(w, a)"}
# bytes moved per call, in units of the fp32 tile's size
EW_BYTES = {"TADD": 3, "TMULS": 2, "TEXP": 2, "TROWSUM": 1, "TROWEXPANDSUB": 2, "TCVT_bf16": 1.5, "TMAX": 3, "TRELU": 2,
            "TROWMAX": 1, "TROWMIN": 1, "TROWEXPANDMUL": 2, "TCOLEXPANDMUL": 2, "TCVT_f32": 1.5, "TCOLMAX": 1,
            "TCOLSUM": 1}
STORE_WINDOWS = (1024, 2048, 4096)            # floats per TSTORE: 4, 8, 16 KiB
STORE_DESTS = (1 << 20, 16 << 20, 256 << 20)  # destination bytes, written cyclically: L2, L3, DRAM
COLS = 4096                                   # row kernels: [1, 4096] fp32 rows, --rows of them
MODES = {"plain (Cached)": 1, "streaming (Stream)": 2, "TSTORE(g, t) (Auto)": -1}
CT = {"f32": "float", "bf16": "pto::bf16"}


def _source() -> str:
    out = ['#include "pto/pto.hpp"', instruction_source(), "#include <time.h>",
           '#define EXPORT extern "C" __attribute__((visibility("default")))',
           "static double now() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }",
           "#if !defined(PTO_HAS_STORE_MODE)  // an older library (--include): every mode is its TSTORE",
           "namespace pto { enum class StoreMode { Auto, Cached, Stream };",
           "template <class T, class S> void TSTORE(const GTensor<T>& g, const S& s, StoreMode) { TSTORE(g, s); } }",
           "#endif",
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
        out.append(f"""EXPORT double ew_{op}_{r}_{c}(void* pa, void* pb, void* pd, void* pv, long iters) {{
  pto::Tile<float, {r}, {c}> a(pa), b(pb), d(pd); pto::Tile<float, {r}, 1> v(pv); pto::Tile<float, 1, {c}> w(pv);
  pto::Tile<pto::bf16, {r}, {c}> h(pd), hb(pb);
  const double t0 = now();
  for (long i = 0; i < iters; ++i) {{ {EW_BODY[op]}; __asm__ volatile("" ::: "memory"); }}
  return now() - t0;
}}""")
    out.append("""template <int W> static double store_sweep(float* dst, long dst_floats, long total, const float* src, int mode) {
  pto::Tile<float, 1, W> t(const_cast<float*>(src));
  const long n = dst_floats / W;
  const double t0 = now();
  long k = 0;
  for (long done = 0; done < total; done += W, k = (k + 1 == n ? 0 : k + 1)) {
    pto::GTensor<float> g(dst + k * W, {1, W}, {W, 1});
    if (mode < 0) pto::TSTORE(g, t); else pto::TSTORE(g, t, pto::StoreMode(mode));
  }
  return now() - t0;
}
EXPORT double store_sweep_c(float* dst, long dst_floats, long total, const float* src, int w, int mode) {
  return w == 1024 ? store_sweep<1024>(dst, dst_floats, total, src, mode)
       : w == 2048 ? store_sweep<2048>(dst, dst_floats, total, src, mode) : store_sweep<4096>(dst, dst_floats, total, src, mode);
}
static inline void row_store(float* y, long r, const pto::Tile<float, 1, 4096>& t, int mode) {
  pto::GTensor<float> g(y + r * 4096, {1, 4096}, {4096, 1});
  if (mode < 0) pto::TSTORE(g, t); else pto::TSTORE(g, t, pto::StoreMode(mode));
}
alignas(64) static float RT0[4096], RT1[4096], RS[32];
EXPORT double rows_copy(const float* x, float* y, long rows, int mode) {
  pto::Tile<float, 1, 4096> t(RT0);
  const double t0 = now();
  for (long r = 0; r < rows; ++r) {
    pto::TLOAD(t, pto::GTensor<float>(const_cast<float*>(x) + r * 4096, {1, 4096}, {4096, 1}));
    row_store(y, r, t, mode);
  }
  return now() - t0;
}
// the instruction sequence the assembler emits for bench_softmax's kernel (one [1, C] row at a time)
EXPORT double rows_softmax(const float* x, float* y, long rows, int mode) {
  pto::Tile<float, 1, 4096> t(RT0), e(RT1); pto::Tile<float, 1, 1> m(RS), s(RS + 16);
  const double t0 = now();
  for (long r = 0; r < rows; ++r) {
    pto::TLOAD(t, pto::GTensor<float>(const_cast<float*>(x) + r * 4096, {1, 4096}, {4096, 1}));
    pto::TROWMAX(m, t); pto::TROWEXPANDSUB(e, t, m); pto::TEXP(e, e); pto::TROWSUM(s, e); pto::TRECIP(s, s);
    pto::TROWEXPANDMUL(e, e, s);
    row_store(y, r, e, mode);
  }
  return now() - t0;
}
""")
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
        b, d, v = a.copy(), _aligned((r, c), np.float32), np.ones(max(r, c), np.float32)
        if op == "TCVT_f32":
            b.reshape(-1).view(np.uint16)[: r * c] = a.ravel().astype(ml_dtypes.bfloat16).view(np.uint16)
        nbytes = EW_BYTES[op] * a.nbytes
        iters = max(100, int(5e8 / nbytes))
        fn = getattr(lib, f"ew_{op}_{r}_{c}")
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long]
        ptrs = [x.ctypes.data for x in (a, b, d, v)]
        fn(*ptrs, iters // 10)
        (t,) = _interleaved_best([lambda fn=fn, ptrs=ptrs, iters=iters: fn(*ptrs, iters)], repeats)
        rows.append((op, f"{r}x{c}", nbytes * iters / t / 1e9, t / iters * 1e9))
    return rows


def _steady(run):
    """Time `run` right after another call of itself: the destination's cache state is then the one
    this mode leaves (a plain store leaves dirty lines that a streaming store would have to flush)."""
    def twice():
        run()
        return run()
    return twice


def bench_store(lib, repeats) -> list[tuple]:
    """GB/s of TSTORE sweeping [1, W] windows cyclically over a destination of D bytes, per StoreMode."""
    fn = lib.store_sweep_c
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    dst = _aligned((max(STORE_DESTS) // 4,), np.float32)
    dst[...] = 1.0
    src = _aligned((4096,), np.float32)
    src[...] = 2.0
    rows = []
    for dbytes in STORE_DESTS:
        total = max(dbytes, 64 << 20) // 4
        for w in STORE_WINDOWS:
            runs = [_steady(lambda m=m, w=w, dbytes=dbytes, total=total:
                            fn(dst.ctypes.data, dbytes // 4, total, src.ctypes.data, w, m)) for m in MODES.values()]
            best = _interleaved_best(runs, max(3, repeats // 3))
            rows.append((dbytes, w * 4, *(total * 4 / t / 1e9 for t in best)))
    return rows


def bench_rows(lib, torch, repeats, ROWS) -> list[tuple]:
    """Row kernels over ROWS x COLS fp32 in DRAM: TLOAD -> ... -> TSTORE per [1, COLS] row, per StoreMode."""
    x = _aligned((ROWS, COLS), np.float32)
    x[...] = np.random.default_rng(2).standard_normal((ROWS, COLS), dtype=np.float32)
    y = _aligned((ROWS, COLS), np.float32)
    y[...] = 0
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    out = []
    for kern, torch_fn, ref in (("copy", lambda: ty.copy_(tx), lambda: x),
                                ("softmax", lambda: torch.ops.aten._softmax.out(tx, -1, False, out=ty),
                                 lambda: torch.softmax(tx, -1).numpy())):
        fn = getattr(lib, f"rows_{kern}")
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_int]
        runs = [lambda fn=fn, m=m: fn(x.ctypes.data, y.ctypes.data, ROWS, m) for m in MODES.values()]
        for run in runs:  # numerics of every mode
            y[...] = 0
            run()
            if not np.allclose(y, ref(), rtol=1e-5, atol=1e-6):
                raise AssertionError(f"rows_{kern}: wrong result")

        def run_torch(torch_fn=torch_fn):
            t0 = time.thread_time()
            torch_fn()
            return time.thread_time() - t0
        best = _interleaved_best([_steady(r) for r in runs + [run_torch]], repeats)
        out.append((kern, *(t * 1e3 for t in best)))
    return out


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15, help="best of this many runs per measurement")
    ap.add_argument("--quick", action="store_true", help="matmul grid only (no K loop, no elementwise)")
    ap.add_argument("--only", default="matmul,loop,ew,store,rows", help="comma-separated sections")
    ap.add_argument("--rows", type=int, default=16384,
                    help="rows of 4096 fp32 for the row kernels (16384: 256 MiB in and out, beyond any L3 share)")
    ap.add_argument("--include", type=Path, default=INCLUDE,
                    help="library include dir (e.g. an older checkout's, for before/after numbers)")
    ap.add_argument("--cxxflags", default="", help="extra compiler flags, e.g. -DPTO_STREAM_DEFER_FENCE")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if args.quick:
        only = {"matmul"}
    torch.set_num_threads(1)
    cdll, res = build_and_load(_source(), "bench_tile_lib", include_dirs=(args.include,),
                               extra_flags=tuple(args.cxxflags.split()))
    isa = cdll.isa
    isa.restype = ctypes.c_char_p
    amx = cdll.amx
    amx.restype = ctypes.c_int
    print(f"tile library ISA: {isa().decode()}, AMX bf16: {'on' if amx() else 'off'}   "
          f"(build {'cached' if res.cached else f'{res.seconds:.1f}s'}; best of {args.repeats})")
    if "matmul" in only:
        print("\nTMATMUL, single thread (GFLOP/s; ratio = ours / torch.matmul single thread)")
        print(f"{'dtype':5} {'MxKxN':13} {'ours':>8} {'ours+pack':>10} {'torch':>8} {'ratio':>7} {'ratio+pack':>11}")
        for dt, size, o, op, t, r, rp in bench_matmul(cdll, torch, args.repeats):
            print(f"{dt:5} {size:13} {o:8.1f} {op:10.1f} {t:8.1f} {r:7.2f} {rp:11.2f}")
    if "loop" in only:
        print("\nK loop: TLOAD a,b -> Mat; TMOV -> Left, Right; TMATMUL_ACC per K block (GFLOP/s; torch: one matmul)")
        print(f"{'dtype':5} {'MxN K=tot/blk':20} {'ours':>8} {'torch':>8} {'ratio':>7}")
        for dt, size, o, t, r in bench_loop(cdll, torch, args.repeats):
            print(f"{dt:5} {size:20} {o:8.1f} {t:8.1f} {r:7.2f}")
    if "ew" in only:
        print("\nelementwise / reductions / converts on resident fp32 tiles (GB/s of operand traffic; ns per call)")
        for op, size, g, ns in bench_elementwise(cdll, args.repeats):
            print(f"{op:14} {size:9} {g:8.1f} {ns:9.0f} ns")
    if "store" in only:
        names = list(MODES)
        print("\nTSTORE of [1, W] fp32 windows swept over a destination (GB/s; thread CPU time)")
        print(f"{'dest':>9} {'window':>7} " + " ".join(f"{n:>20}" for n in names))
        for dbytes, wbytes, *gbs in bench_store(cdll, args.repeats):
            print(f"{dbytes >> 20:>6} MiB {wbytes >> 10:>4} KiB " + " ".join(f"{g:20.1f}" for g in gbs))
    if "rows" in only:
        names = list(MODES) + ["torch 1 thread"]
        print(f"\nrow kernels over {args.rows} x {COLS} fp32 in DRAM, one [1, {COLS}] row per step (ms; thread CPU time)")
        print(f"{'kernel':8} " + " ".join(f"{n:>20}" for n in names))
        for kern, *ms in bench_rows(cdll, torch, args.repeats, args.rows):
            print(f"{kern:8} " + " ".join(f"{m:20.2f}" for m in ms))


if __name__ == "__main__":
    main()
