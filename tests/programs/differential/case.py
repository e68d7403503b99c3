"""A generated test case and the harness that runs it everywhere and compares.

A `Case` is `pl` source text, the arguments of its entry function, and the expected results
computed by NumPy from the same description. `check` parses and compiles the text once, runs it in
the interpreter and natively with 1 and 2 workers under both scheduling modes, and compares every
result with NumPy (integers exactly, floats within a tolerance that follows the program's own
rounding noise). The native runs must also agree with each other bit for bit: tasks that touch one
region run in submission order, so any difference between worker counts is a race.
"""

from __future__ import annotations

import copy
import faulthandler
import tempfile
from dataclasses import dataclass, field

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

from .dag import EPS, FLOATS, NP_DTYPE

NATIVE = [("cpu-1w-fifo", RunConfig(num_workers=1, sched_mode="fifo")),
          ("cpu-1w-locality", RunConfig(num_workers=1, sched_mode="locality")),
          ("cpu-2w-fifo", RunConfig(num_workers=2, sched_mode="fifo")),
          ("cpu-2w-locality", RunConfig(num_workers=2, sched_mode="locality"))]
INTERP = ("interp", RunConfig(platform="interp"))


@dataclass
class Expected:
    name: str
    ref: np.ndarray  # NumPy, every op rounded to its dtype
    wide: np.ndarray  # the same computed in float64 (its distance to `ref` is the program's rounding noise)
    prec: str  # the coarsest float dtype the value passed through (INT32: exact)
    peak: float  # largest |intermediate value|


@dataclass
class Case:
    text: str
    args: list  # the entry's parameters, in order (arrays and numbers)
    inplace: list[int | None]  # per result: the parameter it is written into in place (None: created)
    expected: list[Expected]  # per entry result, in return order
    note: str = ""  # what the generator drew (printed on failure)
    extra: list = field(default_factory=list)  # trailing arguments (outputs the entry creates)
    # results that are parameters written in place are checked only there, not as returned (a known bug:
    # test_regressions.py::test_returned_loop_carried_out_param)
    skip_returned_aliases: bool = False

    def __repr__(self) -> str:
        shapes = ", ".join(f"{type(a).__name__}{list(a.shape) if hasattr(a, 'shape') else ''}"
                           f"{'' if hasattr(a, 'shape') else '=' + repr(a)}" for a in self.args)
        return f"Case({self.note}; args: {shapes})\n{self.text}"


def tolerance(e: Expected) -> np.ndarray | float:
    if e.prec == "INT32":
        return 0.0
    eps = EPS[e.prec]
    with np.errstate(invalid="ignore"):
        ref = np.abs(e.ref.astype(np.float64))
        noise = np.nan_to_num(np.abs(e.ref.astype(np.float64) - e.wide))
        ref = np.where(np.isfinite(ref), ref, 0.0)
    ulps = 64 if e.prec == "FP32" else 4  # fp16/bf16 results round once more, at a coarser step
    return 16 * noise + ulps * eps * (ref + 1.0 + 0.05 * e.peak)


def compare(got, e: Expected, where: str, text: str) -> None:
    got = np.asarray(got)
    assert got.shape == e.ref.shape, f"{where}: result {e.name} has shape {got.shape}, expected {e.ref.shape}"
    assert got.dtype == e.ref.dtype, f"{where}: result {e.name} has dtype {got.dtype}, expected {e.ref.dtype}"
    g = got.astype(np.float64)
    r = e.ref.astype(np.float64)
    with np.errstate(invalid="ignore"):
        err = np.abs(g - r)
        bad = ~(err <= tolerance(e)) & ~(np.isnan(g) & np.isnan(r)) & ~(g == r)  # (g == r: equal infinities)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"{where}: result {e.name} differs from NumPy at {int(bad.sum())} of {bad.size} elements; first at "
            f"{list(idx)}: got {g[idx]!r}, expected {r[idx]!r} (max |error| {float(err[bad].max()):.3g}, "
            f"precision {e.prec})\n--- program ---\n{text}")


def run_everywhere(case: Case) -> dict[str, list[tuple[str, np.ndarray]]]:
    """Compile once, run on every configuration. Per configuration: (label, array) for each result as
    returned and, for results that are parameters written in place, that parameter after the run;
    each pair lines up with `case.expected` through `expected_index`."""
    prog = pl.parse(case.text)
    out: dict[str, list[tuple[str, np.ndarray]]] = {}
    with tempfile.TemporaryDirectory(prefix="pypto-diff-") as d:
        compiled = ir.compile(prog, output_dir=d)
        for name, cfg in [INTERP, *NATIVE]:
            args = copy.deepcopy(case.args)
            extra = copy.deepcopy(case.extra)
            ret = compiled(*args, *extra, config=cfg)
            rets = list(ret) if isinstance(ret, (tuple, list)) else [ret]
            assert len(rets) == len(case.expected), f"{name}: {len(rets)} results, expected {len(case.expected)}"
            got = [(f"result {k}", np.asarray(r)) for k, r in enumerate(rets)
                   if not (case.skip_returned_aliases and case.inplace[k] is not None)]
            got += [(f"parameter {pi} (in place)", args[pi]) for pi in case.inplace if pi is not None]
            out[name] = got
    return out


def expected_index(case: Case) -> list[int]:
    """For each (label, array) of `run_everywhere`, the index of its expected value."""
    returned = [k for k in range(len(case.expected))
                if not (case.skip_returned_aliases and case.inplace[k] is not None)]
    return returned + [k for k, pi in enumerate(case.inplace) if pi is not None]


def check(case: Case, guard_s: int = 120) -> None:
    # a scheduling bug must fail the run, not stall it: dump every thread and exit if one example hangs
    faulthandler.dump_traceback_later(guard_s, exit=True)
    try:
        results = run_everywhere(case)
    finally:
        faulthandler.cancel_dump_traceback_later()
    order = expected_index(case)
    for name, got in results.items():
        for (label, arr), k in zip(got, order):
            compare(arr, case.expected[k], f"{name}, {label}", case.text)
    base_name = NATIVE[0][0]
    for name, got in results.items():
        if name.startswith("cpu"):
            for (label, a), (_, b) in zip(results[base_name], got):
                assert np.array_equal(a, b, equal_nan=True), (
                    f"{name} and {base_name} differ in {label} (max |diff| "
                    f"{float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))}): a race or a "
                    f"schedule-dependent result\n--- program ---\n{case.text}")


# ---------------------------------------------------------------------------------------------
# data


def rand(rng: np.random.Generator, shape, dtype: str, scale: float = 2.0) -> np.ndarray:
    if dtype == "INT32":
        return rng.integers(-8, 9, size=shape).astype(np.int32)
    return rng.uniform(-scale, scale, size=shape).astype(np.float32).astype(NP_DTYPE[dtype])


def coarsest(dtypes) -> str:
    fl = [d for d in dtypes if d in FLOATS]
    if not fl:
        return "INT32"
    return max(fl, key=lambda d: EPS[d])
