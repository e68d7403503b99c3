"""Axpy, a small program with a dynamic row count: the calling, CLI and runtime lifecycle tests
(and the lifecycle tests' subprocess scripts) run it.

`out = a * x + y`, one task per block of 16 rows, so a tall input makes a run of many tasks.
"""

from __future__ import annotations

import numpy as np

import pypto.language as pl

M = pl.dynamic("M")
R = pl.dynamic("R")


@pl.program
class Axpy:
    """out = a * x + y over row blocks of 16; M rows, any M (ragged last block)."""

    @pl.function(type=pl.FunctionType.InCore)
    def axpy(self, x: pl.Tensor[[R, 32], pl.FP32], y: pl.Tensor[[R, 32], pl.FP32], a: pl.Scalar[pl.FP32],
             rows: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[R, 32], pl.FP32]]) -> pl.Tensor[[R, 32], pl.FP32]:
        tx = pl.load(x, [0, 0], [16, 32], valid_shapes=[rows, 32])
        ty = pl.load(y, [0, 0], [16, 32], valid_shapes=[rows, 32])
        return pl.store(pl.add(pl.mul(tx, a), ty), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 32], pl.FP32], y: pl.Tensor[[M, 32], pl.FP32], a: pl.Scalar[pl.FP32],
             out: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        m = pl.tensor.dim(x, 0)
        for i in pl.range(0, m, 16):
            r = pl.min(16, m - i)
            self.axpy(pl.view(x, [r, 32], [i, 0]), pl.view(y, [r, 32], [i, 0]), a, r, pl.view(out, [r, 32], [i, 0]))
        return out


def inputs(rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, 32), dtype=np.float32), rng.standard_normal((rows, 32), dtype=np.float32)


def check(compiled, rows: int, config, seed: int = 0) -> None:
    """Run `compiled` on fresh inputs and compare with NumPy (raises AssertionError)."""
    x, y = inputs(rows, seed)
    out = compiled(x, y, 2.5, config=config)
    np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)
