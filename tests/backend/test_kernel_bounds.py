"""A kernel whose load or store window leaves its tensor fails the run with an error naming the
kernel, the access and the tensor: it never touches memory outside the arguments (no crash)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig, TaskGraphError

pytestmark = pytest.mark.native

CPU, INTERP = RunConfig(platform="cpu"), RunConfig(platform="interp")


@pl.program
class LoadAt:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], r: pl.Scalar[pl.INDEX], c: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [r, c], [16, 64])
        return pl.store(pl.mul(t, 2.0), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], r: pl.Scalar[pl.INDEX], c: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        y = self.k(x, r, c, out)
        return y


@pl.program
class StoreAt:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 32], pl.FP32], r: pl.Scalar[pl.INDEX],
          o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 32])
        return pl.store(pl.add(t, 1.0), [r, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32], r: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = self.k(x, r, out)
        return y


@pytest.fixture(scope="module")
def load_at():
    return ir.compile(LoadAt)


@pytest.fixture(scope="module")
def store_at():
    return ir.compile(StoreAt)


def test_in_bounds_load_runs(load_at):
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    for cfg in (CPU, INTERP):
        o = np.zeros_like(x)
        load_at(x, 0, 0, o, config=cfg)
        np.testing.assert_array_equal(o, 2 * x)


@pytest.mark.parametrize("r,c", [(1, 0), (0, 1), (-1, 0), (10**9, 0), (0, -(10**9)), (2**63 - 1, 0), (0, 2**63 - 1),
                                 (-(2**63), 0)])
def test_load_outside_the_tensor_is_an_error(load_at, r, c):
    x = np.ones((16, 64), np.float32)
    o = np.zeros_like(x)
    with pytest.raises(TaskGraphError, match=r"kernel k: a load of 16 x 64 elements at offsets "
                                             rf"\[{r}, {c}\].*outside tensor 'x' of shape \[16, 64\]"):
        load_at(x, r, c, o, config=CPU)
    with pytest.raises(Exception, match="out of range|outside"):
        load_at(x, r, c, o, config=INTERP)
    # the runtime is still usable afterwards, and the error does not leak into the next run
    load_at(x, 0, 0, o, config=CPU)
    np.testing.assert_array_equal(o, 2 * x)


@pytest.mark.parametrize("r", [25, 32, -8, 2**63 - 1, 2**63 - 8, -(2**63)])  # (no sum may wrap around)
def test_store_outside_the_tensor_is_an_error(store_at, r):
    x = np.ones((8, 32), np.float32)
    o = np.zeros((32, 32), np.float32)
    with pytest.raises(TaskGraphError, match=rf"kernel k: a store of 8 x 32 elements at offsets \[{r}, 0\].*"
                                             r"outside tensor 'o'"):
        store_at(x, r, o, config=CPU)
    assert not o.any()  # nothing was written
    store_at(x, 24, o, config=CPU)
    np.testing.assert_array_equal(o[24:], 2.0)
    assert not o[:24].any()


RAGGED = """
import pypto.language as pl

M = pl.dynamic("M")


@pl.program
class Ragged:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        return pl.store(pl.mul(t, 2.0), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        m = pl.tensor.dim(x, 0)
        for i in pl.range(0, m, 16):
            n = pl.min(16, m - i)
            r = self.k(pl.view(x, [16, 64], [i, 0], [n, 64]), pl.view(out, [16, 64], [i, 0], [n, 64]))
        return out
"""


def test_kernel_ignoring_the_valid_region_of_a_ragged_view_is_an_error():
    c = ir.compile(pl.parse(RAGGED))
    x = np.ones((32, 64), np.float32)
    out = np.zeros_like(x)
    c(x, out, config=CPU)  # whole blocks: fine
    np.testing.assert_array_equal(out, 2 * x)
    x = np.ones((37, 64), np.float32)
    with pytest.raises(TaskGraphError, match="kernel k: a load of 16 x 64 elements at offsets \\[0, 0\\].*"
                                             "outside tensor 'x' of shape \\[5, 64\\]"):
        c(x, np.zeros_like(x), config=CPU)


def test_huge_offset_does_not_wrap_into_memory_before_the_tensor(store_at):
    big = np.zeros((64, 32), np.float32)
    out = big[32:]  # the argument is the second half; the first half must stay untouched
    with pytest.raises(TaskGraphError, match="outside tensor 'o'"):
        store_at(np.full((8, 32), 41.0, np.float32), 2**63 - 1, out, config=CPU)
    assert not big.any()


@pl.program
class ValidBeyondTile:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], w: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [8, 8], valid_shapes=[w, w])
        return pl.store(pl.adds(t, 1.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], w: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        return self.k(a, w, out)


def test_run_time_valid_extents_beyond_the_tile_are_an_error():
    c = ir.compile(ValidBeyondTile)
    a = np.ones((64, 64), np.float32)
    out = np.zeros_like(a)
    c(a, 5, out, config=CPU)
    assert out[:5, :5].sum() == 50 and not out[5:].any()
    for w in (64, 9, -1):
        with pytest.raises(TaskGraphError, match=r"kernel k: tile t has valid extents .* beyond its shape \[8, 8\]"):
            c(a, w, np.zeros_like(a), config=CPU)
