"""Whole-tile reductions (`pl.sum(tile)`, `pl.block.max/min(tile)`, axis=None) lower to a row
then a column reduction (passes/full_reductions.py) and run on cpu and interp, honouring the
valid region."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

TEXT = """
import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
          o2: pl.Out[pl.Tensor[[1, 1], pl.FP32]]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[1, 1], pl.FP32]]:
        t = pl.load(x, [0, 0], [16, 64], [13, 60])
        s = pl.block.OP(t, axis=None)
        m = pl.block.OP(t, axis=None, keepdim=True)
        u = pl.sub(t, s)
        r1 = pl.store(u, [0, 0], o)
        r2 = pl.store(m, [0, 0], o2)
        return r1, r2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             out2: pl.Out[pl.Tensor[[1, 1], pl.FP32]]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[1, 1], pl.FP32]]:
        a, b = self.k(x, out, out2)
        return a, b
"""


@pytest.mark.native
@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_whole_tile_reduction(op, platform):
    c = ir.compile(pl.parse(TEXT.replace("OP", op)))
    x = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    o, o2 = np.full((16, 64), 7, np.float32), np.zeros((1, 1), np.float32)
    c(x, o, o2, config=RunConfig(platform=platform))
    v = x[:13, :60]
    want = getattr(np, op)(v.astype(np.float64))
    np.testing.assert_allclose(o2[0, 0], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o[:13, :60], v - want, rtol=1e-5, atol=1e-5)
    assert (o[13:] == 7).all() and (o[:, 60:] == 7).all()  # outside the valid region: untouched


def test_lowering_is_visible_in_the_ir():
    from pypto.passes.full_reductions import lower_full_reductions

    prog = pl.parse(TEXT.replace("OP", "sum"))
    k = lower_full_reductions(prog.get_function("k"))
    text = ir.python_print(k)
    assert "axis=1, keepdim=True" in text and "axis=0, keepdim=True" in text and "pl.block.read(" in text
