"""Warm-call overhead of a small `@pl.jit` kernel (64 x 64 fp32 add) against torch eager, and where
the time goes.

    python benchmarks/bench_pl_jit.py [--repeats N] [--calls N]

Rows (best of `--repeats` rounds of `--calls` calls each, interleaved):

    kernel(a, b, c)                 the @pl.jit call: call plan lookup, then the compiled program
    compiled(a, b, c)               the cached CompiledProgram called directly (bind, dispatch, copy back)
    bind only                       pypto.backend.binding.bind: argument checks, torch -> NumPy views
    native run only                 Runtime.run_program on pre-bound arguments (marshal, submit, run, wait)
    torch eager add(out=)           the peer

A warm `kernel(...)` call whose plan allows it (pypto/pljit/fast_path.py) skips binding and dispatch:
its own cost is kernel - native run. `compiled(...)` binds and dispatches every call: dispatch +
copy back = compiled - bind - native run. The interpreter is not timed (a correctness tool).
"""

from __future__ import annotations

import argparse
import time

import torch

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def add64(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        M, N = a.shape
        pl.store(pl.add(pl.load(a, [0, 0], [M, N]), pl.load(b, [0, 0], [M, N])), [0, 0], c)
    return c


def _best(fns: dict, repeats: int, calls: int) -> dict[str, float]:
    best: dict[str, float] = {}
    for _ in range(repeats):
        for name, f in fns.items():
            f()
            t = time.perf_counter()
            for _ in range(calls):
                f()
            best[name] = min(best.get(name, 1e9), (time.perf_counter() - t) / calls * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=1000)
    opts = ap.parse_args()

    from pypto.backend.binding import bind
    from pypto.backend.launch import _kinds
    from pypto.runtime import default_runtime

    a, b, c = torch.rand(64, 64), torch.rand(64, 64), torch.zeros(64, 64)
    t0 = time.perf_counter()
    add64(a, b, c)
    first_ms = (time.perf_counter() - t0) * 1e3
    torch.testing.assert_close(c, a + b)
    (compiled,) = add64._cache.values()
    native = compiled.native_library()
    rt = default_runtime(None, "fifo")
    call = bind(compiled.signature, (a, b, c), {})
    args, kinds = [*call.values, *call.outputs], _kinds(call.signature, len(call.outputs))
    cfg = RunConfig()
    fns = {
        "kernel(a, b, c)": lambda: add64(a, b, c),
        "kernel(a, b, c, config=cfg)": lambda: add64(a, b, c, config=cfg),
        "compiled(a, b, c)": lambda: compiled(a, b, c),
        "bind only": lambda: bind(compiled.signature, (a, b, c), {}),
        "native run only": lambda: rt.run_program(native.handle, args, kinds),
        "torch eager add(out=)": lambda: torch.add(a, b, out=c),
    }
    best = _best(fns, opts.repeats, opts.calls)
    eager = best["torch eager add(out=)"]
    print(f"@pl.jit warm call, 64x64 fp32 add (best of {opts.repeats} rounds of {opts.calls} calls; "
          f"first call incl. compile {first_ms:.0f} ms)")
    for name, us in best.items():
        print(f"  {name:<32} {us:9.2f} us   {us / eager:8.1f}x torch eager")
    jit_own = best["kernel(a, b, c)"] - best["native run only"]
    rest = best["compiled(a, b, c)"] - best["bind only"] - best["native run only"]
    print("where the time goes (per warm call):")
    print(f"  kernel(...): the jit layer's own work (plan lookup, alias check, torch -> NumPy views)  {jit_own:8.2f} us")
    print(f"  kernel(...) and compiled(...): the native runtime (marshal, submit, run, wait)        "
          f"{best['native run only']:8.2f} us")
    print(f"  compiled(...) only: binding (checks, torch -> NumPy views)                             "
          f"{best['bind only']:8.2f} us")
    print(f"  compiled(...) only: dispatch + copy back                                               {rest:8.2f} us")

if __name__ == "__main__":
    main()
