"""DedupKernels: isomorphic kernels (equal up to variable names) share one function; different
ones stay apart; the program computes the same numbers."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.passes.dedup_kernels import duplicates
from pypto.runtime import RunConfig


@pl.program
class TwoAlike:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[16, 64], pl.FP32]) -> tuple[
            pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[16, 64], pl.FP32]]:
        with pl.incore():
            a = pl.exp(pl.mul(x, 2.0))
        with pl.incore():
            c = pl.exp(pl.mul(y, 2.0))   # the same chain on another input: the same kernel
        with pl.incore():
            e = pl.exp(pl.mul(y, 3.0))   # another constant: another kernel
        return a, c, e


def test_isomorphic_kernels_share_one_function():
    c = ir.compile(TwoAlike, skip_ptoas=True)
    kernels = [f.name for f in c.program.functions if f.func_type is ir.FunctionType.InCore]
    assert len(kernels) == 2, kernels
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    b, d, e = c(x, y, config=RunConfig(platform="interp"))
    np.testing.assert_allclose(b, np.exp(2 * x), rtol=1e-6)
    np.testing.assert_allclose(d, np.exp(2 * y), rtol=1e-6)
    np.testing.assert_allclose(e, np.exp(3 * y), rtol=1e-6)


def test_no_duplicates_in_a_program_of_distinct_kernels():
    from pypto.passes.base import PassContext
    from pypto.passes.pass_manager import PassManager

    pm = PassManager.get_strategy()
    names = [p.name for p in pm.passes]
    pm.passes = pm.passes[:names.index("ConvertTensorToBlockOps") + 1]
    lowered = pm.run_passes(TwoAlike, ctx=PassContext())
    assert len(duplicates(lowered)) == 1  # before the pass: two kernels are one
