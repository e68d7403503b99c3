"""Parallel speedup of the task language: two independent compute-heavy tasks.

    independent, 2 workers   `with pl.at(...)` A and B touch disjoint tensors: no edge, both run at once
    independent, serial      the same program with 0 workers (the calling thread runs each task in
                             turn; with 1 worker the waiting caller helps, so two threads still run)
    chained, 2 workers       B has `deps=[tid_of_A]`: the explicit edge serialises them

Each task runs ITERS steps of `t = t * 0.5 + 1` on a [64, 64] tile (compute-bound, ~15 ms).
Printed: the best wall time of each (interleaved rounds, harness.time_interleaved) and the ratios
serial / 2 workers and chained / independent (ideal: 2.0 on a machine with two free cores).

    python benchmarks/bench_tasks.py [--iters 200000] [--repeat 5]
"""

from __future__ import annotations

import argparse

import harness
import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

T = 64


def programs(iters: int):
    @pl.program
    class Independent:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[T, T], pl.FP32], oa: pl.Out[pl.Tensor[[T, T], pl.FP32]],
                 ob: pl.Out[pl.Tensor[[T, T], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP) as _ta:
                x = pl.load(a, [0, 0], [T, T])
                for _k, (acc,) in pl.range(iters, init_values=(x,)):
                    r = pl.yield_(pl.adds(pl.muls(acc, 0.5), 1.0))
                oa = pl.store(r, [0, 0], oa)
            with pl.at(level=pl.Level.CORE_GROUP) as _tb:
                y = pl.load(a, [0, 0], [T, T])
                for _k, (acc2,) in pl.range(iters, init_values=(y,)):
                    r2 = pl.yield_(pl.adds(pl.muls(acc2, 0.5), 2.0))
                ob = pl.store(r2, [0, 0], ob)
            return oa, ob

    @pl.program
    class Chained:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[T, T], pl.FP32], oa: pl.Out[pl.Tensor[[T, T], pl.FP32]],
                 ob: pl.Out[pl.Tensor[[T, T], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP) as ta:
                x = pl.load(a, [0, 0], [T, T])
                for _k, (acc,) in pl.range(iters, init_values=(x,)):
                    r = pl.yield_(pl.adds(pl.muls(acc, 0.5), 1.0))
                oa = pl.store(r, [0, 0], oa)
            with pl.at(level=pl.Level.CORE_GROUP, deps=[ta]) as _tb:
                y = pl.load(a, [0, 0], [T, T])
                for _k, (acc2,) in pl.range(iters, init_values=(y,)):
                    r2 = pl.yield_(pl.adds(pl.muls(acc2, 0.5), 2.0))
                ob = pl.store(r2, [0, 0], ob)
            return oa, ob

    return Independent, Chained


def measure(iters: int = 200000, repeat: int = 5) -> dict[str, float]:
    ind, ch = (ir.compile(p) for p in programs(iters))
    a = np.ones((T, T), np.float32)
    oa, ob = np.zeros_like(a), np.zeros_like(a)
    ind(a, oa, ob, config=RunConfig(num_workers=2))
    np.testing.assert_allclose(oa, 2.0, rtol=1e-6)  # the fixed points of t*0.5+1 and t*0.5+2
    np.testing.assert_allclose(ob, 4.0, rtol=1e-6)
    fns = {
        "independent, 2 workers": lambda: ind(a, oa, ob, config=RunConfig(num_workers=2)),
        "independent, serial": lambda: ind(a, oa, ob, config=RunConfig(num_workers=0)),
        "chained, 2 workers": lambda: ch(a, oa, ob, config=RunConfig(num_workers=2)),
    }
    times = harness.time_interleaved(fns, repeat)
    return {k: v.best for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=5)
    opts = ap.parse_args()
    best = measure(opts.iters, opts.repeat)
    for k, v in best.items():
        print(f"{k:26s} {v * 1e3:9.2f} ms")
    two = best["independent, 2 workers"]
    print(f"speedup serial / 2 workers:        {best['independent, serial'] / two:.2f}x")
    print(f"speedup chained / independent:     {best['chained, 2 workers'] / two:.2f}x")


if __name__ == "__main__":
    main()
