"""Loops follow Python's range(start, stop, step) on every backend and for every int64 bound.

- A run-time step of 0 fails the run naming the loop (range() raises), in a kernel and in a task
  program, in loops that break (a while loop after CtrlFlowTransform) and chunked loops (split by
  SplitChunkedLoops), on the native backend and the interpreter; a constant step of 0 is a located
  compile error wherever it becomes visible (parser, passes, verifier, codegen, PTO parser).
- Bounds near +-2**63 do not overflow: `for (i = lb; i < ub; i += step)` wraps past ub and never
  ends, so the loops that once hung run in a subprocess with a time limit, and the property test
  runs under a watchdog that ends the worker instead of hanging the suite.
- A property test compares the native backend, the interpreter and Python's range on random
  bounds: the count, an order-sensitive hash of the induction values and the last value.
"""

from __future__ import annotations

import faulthandler
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto import ir
from pypto.ir.diagnostics import LocatedError
from pypto.ir.dtype import DataType
from pypto.ir.enums import ScopeKind
from pypto.ir.expr import ConstInt, Var, scalar_type
from pypto.ir.function import Function, Program
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, BreakStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, SeqStmts
from pypto.ir.verifier import verify
from pypto.passes import PassError
from pypto.passes.ctrl_flow_transform import CtrlFlowTransform
from pypto.passes.split_chunked_loops import SplitChunkedLoops
from pypto.pto.parser import PtoParseError, parse_module
from tests.programs.loop_programs import (
    CPU,
    I64_MAX,
    I64_MIN,
    INTERP,
    OVERFLOW_CASES,
    PROGRAMS,
    SOURCE,
    expected,
    line_of,
    run,
    wrap,
)


@pytest.fixture(scope="module")
def programs():
    return {k: ir.compile(p) for k, p in PROGRAMS.items()}


@pytest.fixture
def watchdog():
    """End the process (a crash the runner reports) if a native loop never ends, instead of hanging."""
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# ---------------------------------------------------------------------------------------------
# a run-time step of 0


# (a loop that breaks, or is chunked, has its step checked by a loop of its own, `%i__step_check`)
_ZERO_STEP = r"the step of loop %i\w* \(.*source {file}:{line}\) is 0; range\(\) needs a non-zero step"


@pytest.mark.native
@pytest.mark.parametrize("which,tag,func", [("orch", "ORCH_LOOP", "main"), ("kernel", "KERNEL_LOOP", "kernel walk"),
                                            ("break", "BREAK_LOOP", "main"), ("chunked", "CHUNKED_LOOP", "main")])
@pytest.mark.parametrize("cfg", [CPU, INTERP], ids=["cpu", "interp"])
def test_run_time_step_zero_is_an_error_naming_the_loop(programs, which, tag, func, cfg, watchdog):
    extra = (5,) if which == "break" else ()
    msg = _ZERO_STEP.format(file=SOURCE.name, line=line_of(tag))
    for start, stop in ((0, 10), (10, 0), (3, 3)):  # range() raises whatever the bounds
        with pytest.raises(Exception, match=msg) as e:
            run(programs[which], which, cfg, start, stop, 0, *extra)
        where = f"in @{func.split()[-1]}" if cfg is INTERP else f"{func}: "
        assert where in str(e.value), str(e.value)
    # the failure does not leak into the next run
    assert run(programs[which], which, cfg, 0, 10, 3, *extra) == expected(0, 10, 3, *extra)


# ---------------------------------------------------------------------------------------------
# a constant step of 0: a compile error at the user's loop


def _orch_with(body: str) -> str:
    return f'''
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4], pl.INT64], k: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4], pl.INT64]:
        n: pl.Scalar[pl.INDEX] = 0
        z: pl.Scalar[pl.INDEX] = 0
        {body}
            n = n + i
        x[0] = n
        return x
'''


@pytest.mark.parametrize("head", ["for i in pl.range(0, 10, 0):", "for i in pl.parallel(10, 0, 0):",
                                  "for i in pl.unroll(0, 10, 1 - 1):", "for i in pl.range(k, 10, 0):",
                                  "for i in pl.range(0, 10, z):"])  # z: a scalar holding 0
def test_constant_step_zero_is_a_located_compile_error(head):
    with pytest.raises(LocatedError, match="loop step cannot be zero") as e:
        ir.compile(pl.parse(_orch_with(head)))
    assert e.value.span.begin_line == 11, str(e.value)  # the `for` line of the source above
    assert ":11:" in str(e.value) and head in str(e.value)


def _index(name: str) -> Var:
    return Var(name, scalar_type(DataType.INDEX))


def _function(body, n: Var) -> Function:
    return Function("f", (n,), (), (scalar_type(DataType.INDEX),), SeqStmts((body, ReturnStmt((n,)))),
                    span=Span("k.py", 1, 0))


def test_constant_step_zero_in_ir_built_by_hand():
    """IR that did not come through the parser: the verifier and every pass that reads the step."""
    n, i, acc = _index("n"), _index("i"), _index("acc")
    at = Span("k.py", 7, 4)
    plain = ForStmt(i, ConstInt(0), n, ConstInt(0), (), AssignStmt(acc, i), (), span=at)
    d = [x for x in verify(_function(plain, n)) if x.code == 108]
    assert len(d) == 1 and "step cannot be zero" in d[0].message and d[0].span.begin_line == 7
    breaking = ForStmt(i, ConstInt(0), n, ConstInt(0), (), IfStmt(ConstInt(1), BreakStmt(), None), (), span=at)
    with pytest.raises(PassError, match="loop step cannot be zero") as e:
        CtrlFlowTransform()(Program("t", (_function(breaking, n),)))
    assert e.value.span.begin_line == 7
    chunked = ForStmt(i, ConstInt(0), n, ConstInt(0), (), AssignStmt(acc, i), (), chunk=4, span=at)
    with pytest.raises(PassError, match="chunked loop step cannot be zero") as e:  # no ZeroDivisionError
        SplitChunkedLoops()(Program("t", (_function(ScopeStmt(ScopeKind.AutoInCore, chunked), n),)))
    assert e.value.span.begin_line == 7


def test_constant_step_zero_in_hand_written_pto():
    text = """module {
  func.func @k(%n: index) attributes {pto.kind = #pto.kind<kernel>, pto.param_dirs = ["scalar"]} {
    %c0 = arith.constant 0 : index
    scf.for %i = %c0 to %n step %c0 {
    }
    func.return
  }
}
"""
    with pytest.raises(PtoParseError, match="the loop step is the constant 0") as e:
        parse_module(text, filename="k.pto")
    assert "k.pto:4:5" in str(e.value)


# ---------------------------------------------------------------------------------------------
# bounds near +-2**63: the loops that used to wrap and never end (in a subprocess with a limit)


@pytest.mark.native
def test_bounds_near_the_int64_edges_end(tmp_path):
    root = Path(__file__).resolve().parents[2]
    code = ("import json, sys, pypto; pypto.config.output_root = sys.argv[1]; "
            "from tests.programs import loop_programs as t; json.dump(t.overflow_results(), sys.stdout)")
    env = dict(os.environ, PYTHONPATH=str(root))
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=root, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout)
    want = [expected(*case) for case in OVERFLOW_CASES]
    assert want[0] == [2, wrap(2**62), 2**62]  # (the reproducer of the hang: two iterations)
    for key, rows in got.items():
        assert rows == want, key


# ---------------------------------------------------------------------------------------------
# property: native backend == interpreter == Python's range


EDGES = [I64_MIN, I64_MIN + 1, -(2**62), -1, 0, 1, 2**62, I64_MAX - 1, I64_MAX]
MAX_TRIPS = 40


def _clamp(v: int) -> int:
    return max(I64_MIN, min(I64_MAX, v))


bound = st.one_of(st.integers(I64_MIN, I64_MAX), st.sampled_from(EDGES),
                  st.tuples(st.sampled_from(EDGES), st.integers(-70, 70)).map(lambda t: _clamp(t[0] + t[1])))


@st.composite
def bounded_ranges(draw) -> tuple[int, int, int]:
    """(start, stop, step) with at most ~MAX_TRIPS iterations, bounds anywhere (edges favoured), both
    step signs, and now and then a step of 0."""
    start = draw(bound)
    how = draw(st.sampled_from(["near", "far", "zero"]))
    if how == "zero":
        return start, draw(bound), 0
    if how == "near":  # small steps to (or past) a stop near start: the last values reach the edges
        stop = _clamp(start + draw(st.integers(-3 * MAX_TRIPS, 3 * MAX_TRIPS)))
        return start, stop, draw(st.integers(-4, 4).filter(bool))
    stop = draw(bound)  # far: a step large enough for at most ~MAX_TRIPS iterations, of either sign
    mag = -(-abs(stop - start) // draw(st.integers(1, MAX_TRIPS))) + draw(st.integers(0, 3))
    sign = draw(st.sampled_from([1, -1]))
    step = min(max(mag, 1), I64_MAX) if sign > 0 else -min(max(mag, 1), 2**63)
    return start, stop, step


def _check(programs, which: str, start: int, stop: int, step: int, *extra: int) -> None:
    for cfg in (CPU, INTERP):
        if step == 0:
            with pytest.raises(Exception, match="is 0; range"):
                run(programs[which], which, cfg, start, stop, step, *extra)
            continue
        got = run(programs[which], which, cfg, start, stop, step, *extra)
        assert got == expected(start, stop, step, *extra), (which, cfg.platform, start, stop, step, extra)


@pytest.mark.native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(r=bounded_ranges(), which=st.sampled_from(["orch", "kernel", "chunked"]))
def test_loops_count_like_python_range(programs, watchdog, r, which):
    start, stop, step = r
    if step:
        assert len(range(start, stop, step)) <= 3 * MAX_TRIPS  # (the strategy keeps runs short)
    _check(programs, which, start, stop, step)


@pytest.mark.native
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=bound, stop=bound, step=st.one_of(bound, st.sampled_from([1, -1, 2, -2, 0])), cap=st.integers(0, 30))
def test_breaking_loops_take_the_first_values_of_any_range(programs, watchdog, start, stop, step, cap):
    _check(programs, "break", start, stop, step, cap)
