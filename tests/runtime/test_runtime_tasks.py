"""The runtime runs the task language's tasks in parallel where the dependency model allows
(docs/tasks.md): two independent `pl.at` tasks overlap on two lanes; `deps=` serialises them; a
manual scope drops inferred edges; explicit deps on task ids are edges of the trace."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

pytestmark = pytest.mark.native

T = 64
ITERS = 300000  # ~20-50 ms of vector work per task


def _program(chained: bool, manual: bool):
    @pl.program
    class Two:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[T, T], pl.FP32], oa: pl.Out[pl.Tensor[[T, T], pl.FP32]],
                 ob: pl.Out[pl.Tensor[[T, T], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP) as ta:
                x = pl.load(a, [0, 0], [T, T])
                for _k, (acc,) in pl.range(ITERS, init_values=(x,)):
                    r = pl.yield_(pl.adds(pl.muls(acc, 0.5), 1.0))
                oa = pl.store(r, [0, 0], oa)
            if manual:
                with pl.manual_scope():  # B reads oa, written by A: only deps= could order them here
                    with pl.at(level=pl.Level.CORE_GROUP, deps=[ta] if chained else []) as _tb:
                        y = pl.load(a, [0, 0], [T, T])
                        z = pl.load(oa, [0, 0], [T, T])
                        for _k, (acc2,) in pl.range(ITERS, init_values=(y,)):
                            r2 = pl.yield_(pl.adds(pl.muls(acc2, 0.5), 2.0))
                        ob = pl.store(pl.add(r2, pl.muls(z, 0.0)), [0, 0], ob)
            else:
                with pl.at(level=pl.Level.CORE_GROUP, deps=[ta] if chained else [None]) as _tb:
                    y = pl.load(a, [0, 0], [T, T])
                    for _k, (acc2,) in pl.range(ITERS, init_values=(y,)):
                        r2 = pl.yield_(pl.adds(pl.muls(acc2, 0.5), 2.0))
                    ob = pl.store(r2, [0, 0], ob)
            return oa, ob

    return Two


def _run(chained: bool, manual: bool = False, workers: int = 2):
    prog = ir.compile(_program(chained, manual))
    a = np.ones((T, T), np.float32)
    oa, ob = np.zeros_like(a), np.zeros_like(a)
    prog(a, oa, ob, config=RunConfig(num_workers=workers, enable_trace=True))
    np.testing.assert_allclose(oa, 2.0, rtol=1e-6)
    np.testing.assert_allclose(ob, 4.0, rtol=1e-6)
    tr = prog.last_run.trace
    (ra, rb) = sorted(tr.records, key=lambda r: r["task"])
    return ra, rb, {tuple(e) for e in tr.edges.tolist()}


def _overlap(ra, rb) -> bool:
    return ra["start_ns"] < rb["end_ns"] and rb["start_ns"] < ra["end_ns"]


@pytest.mark.parametrize("manual", [False, True])
def test_independent_tasks_run_at_once_on_two_lanes(manual):
    ra, rb, edges = _run(chained=False, manual=manual)
    assert edges == set()
    assert ra["worker"] != rb["worker"]
    assert _overlap(ra, rb)


@pytest.mark.parametrize("manual", [False, True])
def test_explicit_dependency_serialises(manual):
    ra, rb, edges = _run(chained=True, manual=manual)
    assert edges == {(0, 1)}  # A is still running when B is submitted: the edge is enforced
    assert ra["end_ns"] <= rb["start_ns"]


def test_serial_mode_runs_in_turn():
    ra, rb, edges = _run(chained=False, workers=0)
    assert not _overlap(ra, rb)
