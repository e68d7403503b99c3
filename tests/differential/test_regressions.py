"""Shrunk programs from the differential tests, kept as fixed cases.

Each test states the correct behaviour. Those that fail today are `xfail(strict=True)` with the cause
and where it lives, so the fix flips them (and the generator's workaround for the bug, named in the
reason, can then go).
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig
from tests.programs.differential.case import INTERP, NATIVE

pytestmark = pytest.mark.native

PLATFORMS = [INTERP, NATIVE[0], NATIVE[3]]
IDS = [name for name, _ in PLATFORMS]


_OUT = tempfile.TemporaryDirectory(prefix="pypto-diff-regr-")  # removed when the process exits


def compile_text(text: str):
    return ir.compile(pl.parse(text), output_dir=tempfile.mkdtemp(dir=_OUT.name))


ASSEMBLE_LOOP = """
import pypto.language as pl


@pl.program
class Diff:
    @pl.function
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(0, 16, 8):
            v = pl.view(x, [8, 32], [i, 0])
            out = pl.assemble(out, pl.abs(v), [i, 0])
        return out
"""


@pytest.mark.parametrize("platform", [p for _, p in PLATFORMS], ids=IDS)
def test_assemble_loop_fills_the_out_param(platform: RunConfig):
    """The Out parameter itself is written correctly everywhere (the counterpart of the next test)."""
    compiled = compile_text(ASSEMBLE_LOOP)
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    out = np.zeros((16, 32), np.float32)
    compiled(x, out, config=platform)
    np.testing.assert_array_equal(out, np.abs(x))


# fixed: a returned loop/if result used to be left uncopied on cpu (OrchestrationEmitter.direct held
# non-alloc values); return_slots now also sees through loop-carried parameters


def poisoned_call(compiled, *args, config):
    """Call with NaNs in the memory a fresh np.empty of the result's size most likely reuses, so a result
    nothing wrote cannot pass for the right one by accident."""
    junk = np.full((16, 32), np.nan, np.float32)
    del junk
    return compiled(*args, config=config)


def test_returned_loop_carried_out_param():
    compiled = compile_text(ASSEMBLE_LOOP)
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    for name, cfg in NATIVE:
        out = np.zeros((16, 32), np.float32)
        res = poisoned_call(compiled, x, out, config=cfg)
        assert np.shares_memory(res, out) or np.array_equal(res, np.abs(x)), f"{name}: the returned result"


LOOP_RESULT = """
import pypto.language as pl


@pl.program
class Diff:
    @pl.function
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        for k, (acc,) in pl.range(3, init_values=(x,)):
            a2 = pl.add(pl.mul(acc, 0.5), y)
            r = pl.yield_(a2)
        return r
"""

IF_RESULT = """
import pypto.language as pl


@pl.program
class Diff:
    @pl.function
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], f: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
        if f > 1:
            r = pl.yield_(pl.neg(x))
        else:
            r = pl.yield_(pl.add(x, 1.0))
        return r
"""


def test_loop_and_if_results_used_by_an_op_are_fine():
    """The same values, passed through one more op before being returned, come back right everywhere."""
    loop = compile_text(LOOP_RESULT.replace("        return r", "        z = pl.add(r, 0.0)\n        return z"))
    cond = compile_text(IF_RESULT.replace("        return r", "        z = pl.add(r, 0.0)\n        return z"))
    x = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    y = np.full((16, 32), 2.0, np.float32)
    for name, cfg in PLATFORMS:
        np.testing.assert_allclose(loop(x, y, config=cfg), ((x * 0.5 + y) * 0.5 + y) * 0.5 + y, rtol=1e-6,
                                   err_msg=name)
        np.testing.assert_array_equal(cond(x, 0, config=cfg), x + 1, err_msg=name)


def test_returned_loop_result():
    compiled = compile_text(LOOP_RESULT)
    x = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    y = np.full((16, 32), 2.0, np.float32)
    for name, cfg in NATIVE:
        filled = np.full((16, 32), np.nan, np.float32)  # the result passed as a trailing argument
        compiled(x, y, filled, config=cfg)
        res = poisoned_call(compiled, x, y, config=cfg)
        want = ((x * 0.5 + y) * 0.5 + y) * 0.5 + y
        np.testing.assert_allclose(filled, want, rtol=1e-6, err_msg=f"{name}: trailing argument")
        np.testing.assert_allclose(res, want, rtol=1e-6, err_msg=f"{name}: returned")


def test_returned_if_result():
    compiled = compile_text(IF_RESULT)
    x = np.random.default_rng(3).standard_normal((16, 32)).astype(np.float32)
    for name, cfg in NATIVE:
        for flag in (0, 2):
            filled = np.full((16, 32), np.nan, np.float32)
            compiled(x, flag, filled, config=cfg)
            res = poisoned_call(compiled, x, flag, config=cfg)
            want = x + 1 if flag == 0 else -x
            np.testing.assert_array_equal(filled, want, err_msg=f"{name}, flag={flag}: trailing argument")
            np.testing.assert_array_equal(res, want, err_msg=f"{name}, flag={flag}: returned")


PARTIAL_CREATED = """
import pypto.language as pl


@pl.program
class Diff:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32],
          o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [8, 16]), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.create_tensor([16, 16], dtype=pl.FP32)
        r = self.k(x, pl.view(t, [8, 16], [0, 0]))
        return t
"""


def test_returned_created_tensor_is_zero_filled():
    compiled = compile_text(PARTIAL_CREATED)
    x = np.ones((8, 16), np.float32)
    expect = np.concatenate([x, np.zeros((8, 16), np.float32)])
    for name, cfg in PLATFORMS:
        np.testing.assert_array_equal(compiled(x, config=cfg), expect, err_msg=f"{name}: returned")
        filled = np.full((16, 16), np.nan, np.float32)
        compiled(x, filled, config=cfg)
        np.testing.assert_array_equal(filled, expect, err_msg=f"{name}: passed as a trailing argument")


RAGGED_VIEW = """
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class Diff:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64], [n, 64])
        return pl.store(pl.mul(t, 2.0), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        m = pl.tensor.dim(x, 0)
        for i in pl.range(0, m, 16):
            n = pl.min(16, m - i)
            r = self.k(pl.view(x, [16, 64], [i, 0], [n, 64]), n, pl.view(out, [16, 64], [i, 0], [n, 64]))
        return out
"""


def run_ragged_view(rows: int) -> None:
    compiled = compile_text(RAGGED_VIEW)
    x = np.random.default_rng(rows).standard_normal((rows, 64)).astype(np.float32)
    for name, cfg in PLATFORMS:
        out = np.zeros((rows, 64), np.float32)
        compiled(x, out, config=cfg)
        np.testing.assert_array_equal(out, 2 * x, err_msg=name)


def test_view_with_valid_shape_whole_blocks():
    run_ragged_view(32)


@pytest.mark.parametrize("rows", [37, 5])
def test_view_with_valid_shape_for_a_ragged_last_block(rows: int):
    run_ragged_view(rows)


RETURN_TUPLE_CALL = """
import pypto.language as pl


@pl.program
class Diff:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], a: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
          b: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> tuple[pl.Tensor[[8, 16], pl.FP32], pl.Tensor[[8, 16], pl.FP32]]:
        t = pl.load(x, [0, 0], [8, 16])
        ra = pl.store(pl.neg(t), [0, 0], a)
        rb = pl.store(pl.abs(t), [0, 0], b)
        return ra, rb

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], a: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             b: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> tuple[pl.Tensor[[8, 16], pl.FP32], pl.Tensor[[8, 16], pl.FP32]]:
        return self.k(x, a, b)
"""


def test_return_of_a_call_returning_a_tuple():
    compiled = compile_text(RETURN_TUPLE_CALL)
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    for name, cfg in PLATFORMS:
        a, b = np.zeros_like(x), np.zeros_like(x)
        compiled(x, a, b, config=cfg)
        np.testing.assert_array_equal(a, -x, err_msg=name)
        np.testing.assert_array_equal(b, np.abs(x), err_msg=name)


INCORE_LOOP = """
import pypto.language as pl


@pl.program
class Diff:
    @pl.function
    def main(self, x0: pl.Tensor[[8, 32], pl.INT32], x1: pl.Tensor[[8, 32], pl.INT32]) -> pl.Tensor[[8, 32], pl.INT32]:
        with pl.incore():
            t0 = pl.add(x0, 0)
            for j, (acc,) in pl.range(0, 2, init_values=(INIT,)):
                m = pl.maximum(acc, x1)
                r = pl.yield_(m)
            z = pl.add(r, 0)
        return z
"""


def run_incore_loop(init: str) -> None:
    compiled = compile_text(INCORE_LOOP.replace("INIT", init))
    rng = np.random.default_rng(4)
    x0, x1 = rng.integers(-8, 9, (8, 32)).astype(np.int32), rng.integers(-8, 9, (8, 32)).astype(np.int32)
    for name, cfg in PLATFORMS:
        np.testing.assert_array_equal(compiled(x0, x1, config=cfg), np.maximum(x0, x1), err_msg=name)


def test_incore_loop_from_a_local_tensor():
    run_incore_loop("t0")


def test_incore_loop_from_a_parameter():
    run_incore_loop("x0")


NESTED_INIT = """
import pypto.language as pl


@pl.program
class Diff:
    @pl.function
    def main(self, x0: pl.Tensor[[8, 32], pl.INT32], x1: pl.Tensor[[8, 32], pl.INT32]) -> pl.Tensor[[8, 32], pl.INT32]:
BODY
        return z
"""
NESTED_BODIES = {
    "orchestration": """
        for j, (acc,) in pl.range(0, 2, init_values=(pl.add(x0, 0),)):
            m = pl.maximum(acc, x1)
            r = pl.yield_(m)
        z = pl.add(r, 0)""",
    "incore-scope": """
        with pl.incore():
            for j, (acc,) in pl.range(0, 2, init_values=(pl.add(x0, 0),)):
                m = pl.maximum(acc, x1)
                r = pl.yield_(m)
            z = pl.add(r, 0)""",
}


def run_nested_init(body: str) -> None:
    compiled = compile_text(NESTED_INIT.replace("BODY", body.strip("\n")))
    rng = np.random.default_rng(5)
    x0, x1 = rng.integers(-8, 9, (8, 32)).astype(np.int32), rng.integers(-8, 9, (8, 32)).astype(np.int32)
    for name, cfg in PLATFORMS:
        np.testing.assert_array_equal(compiled(x0, x1, config=cfg), np.maximum(x0, x1), err_msg=name)


def test_named_loop_init_in_a_tensor_program():
    run_nested_init(NESTED_BODIES["orchestration"].replace("init_values=(pl.add(x0, 0),)", "init_values=(x0,)"))


@pytest.mark.parametrize("where", list(NESTED_BODIES))
def test_tensor_op_in_loop_init_values(where: str):
    run_nested_init(NESTED_BODIES[where])
