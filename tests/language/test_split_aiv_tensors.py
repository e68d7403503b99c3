"""`pl.split_aiv` regions over tensor values, ragged and odd split axes (pl-head §2.3; parser/cross_core.py,
ops/memory.py): `pl.aiv_shard` / `pl.aic_gather` take tensors too; an odd extent gives lane 0 the ceil
half and lane 1 the floor half (a window of the ceil half whose valid part is one shorter); a tensor
window may pass the input's end when its valid part fits (a ragged tail, padded like pl.load)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserTypeError
from pypto.runtime import RunConfig

pytestmark = pytest.mark.native  # ir.compile builds the CPU library even for an interpreter run
PLATFORMS = ["interp", "cpu"]
ROWS, COLS, K = 16, 64, 32
VALID = 13  # a ragged tail: the 16-row window holds 13 real rows
ODD = 17  # an odd box: lanes hold 9 and 8 rows


@pl.program
class RaggedRows:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[VALID, K], pl.FP32], w: pl.Tensor[[K, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a_tile = pl.slice(a, [ROWS, K], [0, 0], valid_shape=[VALID, K])
            acc = pl.matmul(a_tile, w)
            for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                shard = pl.aiv_shard(acc)
                out[aiv_id * 8: aiv_id * 8 + 8, 0:COLS] = pl.exp(shard)
        return out


@pl.program
class OddBox:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[ODD, K], pl.FP32], w: pl.Tensor[[K, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ODD, COLS], pl.FP32]], back: pl.Out[pl.Tensor[[ODD, COLS], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.matmul(a, w)
            for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                shard = pl.aiv_shard(acc)
                out[aiv_id * 9: aiv_id * 9 + 9, 0:COLS] = shard
                joined = pl.aic_gather(pl.mul(shard, 2.0))
            back[:] = joined
        return out, back


@pl.program
class EvenColumns:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                half = pl.aiv_shard(a)
                joined = pl.aic_gather(pl.add(half, 1.0))
            out[:] = joined
        return out


def _rand(*shape):
    return np.random.default_rng(5).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_ragged_rows_shard_a_padded_window(platform):
    a, w = _rand(VALID, K), _rand(K, COLS)
    out = np.zeros((ROWS, COLS), np.float32)
    ir.compile(RaggedRows)(a, w, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out[:VALID], np.exp(a @ w), rtol=1e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_odd_extent_gives_lane_zero_the_ceil_half_and_gathers_back(platform):
    a, w = _rand(ODD, K), _rand(K, COLS)
    out, back = np.zeros((ODD, COLS), np.float32), np.zeros((ODD, COLS), np.float32)
    ir.compile(OddBox)(a, w, out, back, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(back, 2 * (a @ w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tensor_columns_shard_and_gather(platform):
    a = _rand(ROWS, COLS)
    out = np.zeros_like(a)
    ir.compile(EvenColumns)(a, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a + 1, rtol=1e-6)


def test_a_window_past_the_end_needs_a_valid_shape_that_fits():
    src = """
import pypto.language as pl

@pl.function
def f(a: pl.Tensor[[13, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.slice(a, [16, 32], [0, 0]{valid})
        r = pl.add(t, 1.0)
    return r
"""
    pl.parse(src.format(valid=", valid_shape=[13, 32]"))
    for valid in ("", ", valid_shape=[14, 32]"):
        with pytest.raises(ParserTypeError, match="window dimension 0 is 16 but the input has only 13"):
            pl.parse(src.format(valid=valid))
