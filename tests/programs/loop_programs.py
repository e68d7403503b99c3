"""The loop programs of test_loop_bounds.py (also run in a child process there): a loop over run-time
bounds in a task program, in a kernel, breaking after a cap and chunked, each recording
[count, hash, last] of its induction values; `expected` says what Python's range gives.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

CPU, INTERP = RunConfig(platform="cpu"), RunConfig(platform="interp")
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
SOURCE = Path(__file__)  # the loop errors name this file and the line tagged with the loop
MULT = 1000003  # the hash below: h = h * MULT + i, wrapping like the int64 arithmetic of the programs


@pl.program
class OrchLoop:
    """A task-program loop over run-time bounds: x = [count, hash, last]."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3], pl.INT64], start: pl.Scalar[pl.INDEX], stop: pl.Scalar[pl.INDEX],
             step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[3], pl.INT64]:
        n: pl.Scalar[pl.INDEX] = 0
        h: pl.Scalar[pl.INDEX] = 0
        last: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(start, stop, step):  # ORCH_LOOP
            n = n + 1
            h = h * 1000003 + i
            last = i
        x[0] = n
        x[1] = h
        x[2] = last
        return x


@pl.program
class KernelLoop:
    """The same loop inside a kernel."""

    @pl.function(type=pl.FunctionType.InCore)
    def walk(self, x: pl.Tensor[[1, 8], pl.INT64], start: pl.Scalar[pl.INDEX], stop: pl.Scalar[pl.INDEX],
             step: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[1, 8], pl.INT64]]) -> pl.Tensor[[1, 8], pl.INT64]:
        t = pl.load(x, [0, 0], [1, 8])
        n: pl.Scalar[pl.INDEX] = 0
        h: pl.Scalar[pl.INDEX] = 0
        last: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(start, stop, step):  # KERNEL_LOOP
            n = n + 1
            h = h * 1000003 + i
            last = i
        pl.write(t, [0, 0], n)
        pl.write(t, [0, 1], h)
        pl.write(t, [0, 2], last)
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 8], pl.INT64], start: pl.Scalar[pl.INDEX], stop: pl.Scalar[pl.INDEX],
             step: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[1, 8], pl.INT64]]) -> pl.Tensor[[1, 8], pl.INT64]:
        out = self.walk(x, start, stop, step, out)
        return out


@pl.program
class BreakLoop:
    """A loop that breaks after `cap` iterations (CtrlFlowTransform makes it a while loop with its own
    counter): any bounds, however many iterations they describe."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3], pl.INT64], start: pl.Scalar[pl.INDEX], stop: pl.Scalar[pl.INDEX],
             step: pl.Scalar[pl.INDEX], cap: pl.Scalar[pl.INDEX]) -> pl.Tensor[[3], pl.INT64]:
        n: pl.Scalar[pl.INDEX] = 0
        h: pl.Scalar[pl.INDEX] = 0
        last: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(start, stop, step):  # BREAK_LOOP
            if n == cap:
                break
            n = n + 1
            h = h * 1000003 + i
            last = i
        x[0] = n
        x[1] = h
        x[2] = last
        return x


@pl.program
class ChunkedLoop:
    """A chunked loop: SplitChunkedLoops computes its trip count in the IR (outer x 4 + remainder)."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3], pl.INT64], start: pl.Scalar[pl.INDEX], stop: pl.Scalar[pl.INDEX],
             step: pl.Scalar[pl.INDEX]) -> pl.Tensor[[3], pl.INT64]:
        n: pl.Scalar[pl.INDEX] = 0
        h: pl.Scalar[pl.INDEX] = 0
        last: pl.Scalar[pl.INDEX] = 0
        with pl.auto_incore():
            for i in pl.range(start, stop, step, chunk=4):  # CHUNKED_LOOP
                n = n + 1
                h = h * 1000003 + i
                last = i
        x[0] = n
        x[1] = h
        x[2] = last
        return x


PROGRAMS = {"orch": OrchLoop, "kernel": KernelLoop, "break": BreakLoop, "chunked": ChunkedLoop}


def line_of(tag: str) -> int:
    """The line of this file that ends in `# tag` (the loop a run-time error names)."""
    for k, text in enumerate(SOURCE.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {tag}"):
            return k
    raise AssertionError(tag)


def wrap(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def expected(start: int, stop: int, step: int, cap: int | None = None) -> list[int]:
    """[count, hash, last] of the first `cap` values of range(start, stop, step), as Python has them."""
    n, h, last = 0, 0, 0
    for i in islice(range(start, stop, step), cap):
        n, h, last = n + 1, wrap(h * MULT + i), i
    return [n, h, last]


def run(compiled, which: str, cfg: RunConfig, start: int, stop: int, step: int, *extra: int) -> list[int]:
    if which == "kernel":
        x = np.zeros((1, 8), np.int64)
        out = np.zeros((1, 8), np.int64)
        compiled(x, start, stop, step, out, config=cfg)
        return out[0, :3].tolist()
    return np.asarray(compiled(np.zeros(3, np.int64), start, stop, step, *extra, config=cfg)).tolist()


# ---------------------------------------------------------------------------------------------
# bounds near +-2**63: the loops that used to wrap and never end


OVERFLOW_CASES = [(0, I64_MAX, 2**62), (I64_MAX - 5, I64_MAX, 2), (I64_MAX - 1, I64_MAX, 1), (0, I64_MAX, I64_MAX),
                  (-1, I64_MIN, -(2**62)), (I64_MIN + 5, I64_MIN, -2), (5, I64_MIN, I64_MIN),
                  (I64_MIN, I64_MAX, 2**63 - 1)]


def overflow_results() -> dict:
    """What every program gives for OVERFLOW_CASES on both backends (run in a child process)."""
    got = {}
    for which, prog in PROGRAMS.items():
        c = ir.compile(prog)
        for name, cfg in (("cpu", CPU), ("interp", INTERP)):
            extra = (1000,) if which == "break" else ()
            got[f"{which}/{name}"] = [run(c, which, cfg, *case, *extra) for case in OVERFLOW_CASES]
    return got
