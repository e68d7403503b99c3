"""Language forms run end to end on cpu and interp: slice subscripts, counting-down loops,
if/elif/else chains with yields; and the compile errors for matmul operands in the wrong memory
space and for an entry function returning a scalar."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.diagnostics import CompileError
from pypto.runtime import RunConfig

PLATFORMS = [RunConfig(platform="cpu"), RunConfig(platform="interp")]


@pl.function
def top_half_plus_one(a: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
    top = a[0:16, :]
    return pl.add(top, 1.0)


@pl.function
def middle_block(a: pl.Tensor[[32, 64], pl.FP32], i: pl.Scalar[pl.INDEX]) -> pl.Tensor[[8, 32], pl.FP32]:
    return pl.mul(a[i:i + 8, 16:48], 2.0)


@pl.function
def reverse_rows(x: pl.Tensor[[4, 8], pl.FP32]) -> pl.Tensor[[4, 8], pl.FP32]:
    out = pl.create_tensor([4, 8], dtype=pl.FP32)
    for i in pl.range(3, -1, -1):
        out = pl.assemble(out, pl.add(pl.view(x, [1, 8], [i, 0]), 1.0), [3 - i, 0])
    return out


@pl.function
def step_by(x: pl.Tensor[[8, 8], pl.FP32], lo: pl.Scalar[pl.INDEX], hi: pl.Scalar[pl.INDEX],
            st: pl.Scalar[pl.INDEX]) -> pl.Tensor[[8, 8], pl.FP32]:
    out = pl.create_tensor([8, 8], dtype=pl.FP32)
    for i in pl.range(lo, hi, st):
        out = pl.assemble(out, pl.add(pl.view(x, [1, 8], [i, 0]), 1.0), [i, 0])
    return out


@pl.function
def chain(x: pl.Tensor[[64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]:
    if n < 2:
        r = pl.yield_(pl.add(x, 1.0))
    elif n < 5:
        r = pl.yield_(pl.mul(x, 2.0))
    elif n < 7:
        r = pl.yield_(pl.mul(x, 3.0))
    else:
        r = pl.yield_(pl.sub(x, 1.0))
    return r


@pytest.mark.native
@pytest.mark.parametrize("cfg", PLATFORMS, ids=["cpu", "interp"])
def test_slice_subscripts(cfg):
    a = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    np.testing.assert_array_equal(ir.compile(top_half_plus_one)(a, config=cfg), a[:16] + 1)
    np.testing.assert_array_equal(ir.compile(middle_block)(a, 5, config=cfg), a[5:13, 16:48] * 2)


def test_empty_static_slice_is_an_error():
    with pytest.raises(pl.ParserTypeError, match="the slice 8:8 is empty"):
        @pl.function
        def f(a: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[8, 64], pl.FP32]:
            return pl.add(a[8:8, :], 1.0)


@pytest.mark.native
@pytest.mark.parametrize("cfg", PLATFORMS, ids=["cpu", "interp"])
def test_counting_down(cfg):
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(ir.compile(reverse_rows)(x, config=cfg), x[::-1] + 1)


@pytest.mark.native
@pytest.mark.parametrize("cfg", PLATFORMS, ids=["cpu", "interp"])
@pytest.mark.parametrize("lo,hi,st", [(0, 8, 1), (7, -1, -1), (7, 0, -3), (0, 8, 3), (3, 5, 0), (5, 3, 0), (2, 2, 1)])
def test_run_time_steps_follow_python_range(cfg, lo, hi, st):
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    if st == 0:  # range() raises: so does the run, naming the loop
        with pytest.raises(Exception, match=r"the step of loop %i \(.*source test_syntax_forms_e2e.py:41\) is 0"):
            ir.compile(step_by)(x, lo, hi, st, config=cfg)
        return
    want = np.zeros_like(x)
    for i in range(lo, hi, st):
        want[i] = x[i] + 1
    np.testing.assert_array_equal(ir.compile(step_by)(x, lo, hi, st, config=cfg), want)


@pytest.mark.native
@pytest.mark.parametrize("cfg", PLATFORMS, ids=["cpu", "interp"])
def test_elif_chain_with_yields(cfg):
    x = np.arange(64, dtype=np.float32)
    c = ir.compile(chain)
    for n, want in ((0, x + 1), (3, x * 2), (6, x * 3), (9, x - 1)):
        np.testing.assert_array_equal(c(x, n, config=cfg), want)
    assert ir.python_print(pl.parse(ir.python_print(chain))) == ir.python_print(chain)


@pytest.mark.native
@pytest.mark.parametrize("config", PLATFORMS, ids=["cpu", "interp"])
def test_matmul_of_vec_tiles_moves_them_through_mat(config):
    # today's API: a Vec operand of a tile matmul is moved into Mat (L1) first, then into L0
    @pl.program
    class VecMatmul:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            c = pl.matmul(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16]))
            return pl.store(c, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out = self.k(a, b, out)
            return out

    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((16, 16), np.float32), rng.standard_normal((16, 16), np.float32)
    out = np.zeros((16, 16), np.float32)
    ir.compile(VecMatmul)(a, b, out, config=config)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


def test_entry_returning_a_scalar_is_a_located_error():
    @pl.function
    def first(x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Scalar[pl.FP32]:
        return pl.tensor.read(x, [2, 3])

    with pytest.raises(CompileError, match="returns a scalar") as e:
        ir.compile(first)
    assert "pl.tensor.read(x, [2, 3])" in str(e.value)


TUPLE_ELEMENTS = """
import pypto.language as pl


@pl.program
class B:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], o1: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
          o2: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32]]:
        ta = pl.load(a, [0, 0], [16, 32])
        r1 = pl.store(pl.add(ta, ta), [0, 0], o1)
        r2 = pl.store(pl.exp(ta), [0, 0], o2)
        return r1, r2

    @pl.function(type=pl.FunctionType.InCore)
    def neg(self, a: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        return pl.store(pl.neg(pl.load(a, [0, 0], [16, 32])), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], o1: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             o2: pl.Out[pl.Tensor[[16, 32], pl.FP32]], o3: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
             ) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[16, 32], pl.FP32]]:
        t = self.k(a, o1, o2)
        n = self.neg(t[1], o3)
        return n, t[0]
"""


@pytest.mark.native
@pytest.mark.parametrize("cfg", PLATFORMS, ids=["cpu", "interp"])
def test_tuple_elements_used_directly_in_the_orchestration(cfg):
    c = ir.compile(pl.parse(TUPLE_ELEMENTS))
    a = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    o1, o2, o3 = (np.zeros_like(a) for _ in range(3))
    n, first = c(a, o1, o2, o3, config=cfg)
    np.testing.assert_allclose(n, -np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(first, a + a)
