"""`win = pl.tile.slice(acc, ...)` then `win = pl.matmul_acc(win, ...)`: on the device the window is a view
of the Acc tile (the MAD writes it in place), so the parser writes the result back into `acc`; the
accumulated whole tile then has the full product (CPU and interpreter)."""

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
    def k(self, a: pl.Tensor[[16, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        acc = pl.tile.create([16, 128], pl.FP32, target_memory=pl.MemorySpace.Acc)
        for t in pl.range(2):
            for k0 in pl.range(0, 128, 64):
                a_l1 = pl.load(a, offsets=[0, k0], shapes=[16, 64], target_memory=pl.MemorySpace.Mat)
                b_l1 = pl.load(b, offsets=[k0, t * 64], shapes=[64, 64], target_memory=pl.MemorySpace.Mat)
                a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
                b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
                win = pl.tile.slice(acc, [16, 64], [0, t * 64])
                win = _ACC_
        return pl.store(acc, offsets=[0, 0], output_tensor=c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        return self.k(a, b, c)
"""

INIT_COND = "pl.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))"


def _program(acc_call: str):
    return pl.parse(TEXT.replace("_ACC_", acc_call))


def test_the_window_result_is_written_back_once():
    text = ir.python_print(_program(INIT_COND))
    assert text.count("pl.block.assemble(acc, window_acc, [0, t * 64])") == 1


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_column_windows_accumulate_into_the_acc_tile(platform):
    c = ir.compile(_program(INIT_COND), backend_type="Ascend910B")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((16, 128)).astype(np.float32), rng.standard_normal((128, 128)).astype(np.float32)
    out = np.zeros((16, 128), np.float32)
    c(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.native
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_plain_matmul_acc_into_a_zeroed_window(platform):
    # without init_cond the windows accumulate onto the tile's contents (zeros from pl.tile.full)
    text = TEXT.replace("_ACC_", "pl.matmul_acc(win, a_l0, b_l0)").replace(
        "pl.tile.create([16, 128], pl.FP32, target_memory=pl.MemorySpace.Acc)",
        "pl.move(pl.tile.full([16, 128], dtype=pl.FP32, value=0.0), target_memory=pl.MemorySpace.Acc)")
    c = ir.compile(pl.parse(text), backend_type="Ascend910B")
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((16, 128)).astype(np.float32), rng.standard_normal((128, 128)).astype(np.float32)
    out = np.zeros((16, 128), np.float32)
    c(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
