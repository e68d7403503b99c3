"""Data-dependent DDR access from a kernel (pl-head §3.7; pypto/ops/gather_memory.py): `pl.mgather`
by rows and by flat elements in each out-of-range mode, `pl.mscatter` with indices past the tensor,
on both backends. Out-of-range indices (negative ones read as uint32) never reach memory outside the
tensor: the mode decides the value, and a scatter skips them."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ops.gather_memory import mgather_ref, mscatter_ref
from pypto.runtime import RunConfig

# ir.compile builds the CPU library even for an interpreter run: every test here is native
pytestmark = pytest.mark.native

PLATFORMS = ["interp", pytest.param("cpu", marks=pytest.mark.native)]
ROWS, COLS, N = 64, 32, 16
ROW_IDX = np.array([[-1, 64, 65, 7, 80, 0, 18, 55, 4, 70, 13, 47, 8, 38, 22, 60]], np.int32)


def _row_program(oob: str, valid: int):
    @pl.program
    class RowGather:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, mem: pl.Tensor[[ROWS, COLS], pl.FP32], idx: pl.Tensor[[1, N], pl.INT32],
              out: pl.InOut[pl.Tensor[[N, COLS], pl.FP32]]) -> pl.Tensor[[N, COLS], pl.FP32]:
            it = pl.load(idx, [0, 0], [1, N], valid_shape=[1, valid])
            r: pl.Tile[[N, COLS], pl.FP32] = pl.tile.mgather(mem, it, coalesce="row", gather_oob=oob)
            return pl.store(r, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, mem: pl.Tensor[[ROWS, COLS], pl.FP32], idx: pl.Tensor[[1, N], pl.INT32],
                 out: pl.InOut[pl.Tensor[[N, COLS], pl.FP32]]) -> pl.Tensor[[N, COLS], pl.FP32]:
            return self.k(mem, idx, out)
    return RowGather


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("oob,valid", [("clamp", N), ("wrap", N), ("zero", 9), ("undefined", N)])
def test_mgather_rows_by_out_of_range_mode(platform, oob, valid):
    mem = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) % 97 + 1
    out = np.full((N, COLS), -5, np.float32)
    ir.compile(_row_program(oob, valid))(mem, ROW_IDX, out, config=RunConfig(platform=platform))
    u = ROW_IDX[0].astype(np.int64) & 0xFFFFFFFF
    want = {"clamp": mem[np.minimum(u, ROWS - 1)], "wrap": mem[u % ROWS]}.get(oob)
    if want is None:  # zero, and undefined on the CPU: 0 for rows past the table
        want = np.where((u < ROWS)[:, None], mem[np.where(u < ROWS, u, 0)], 0)
    np.testing.assert_array_equal(out[:valid], want[:valid])
    np.testing.assert_array_equal(out[valid:], -5)  # rows past the index's valid count are not stored
    np.testing.assert_array_equal(mgather_ref(mem, ROW_IDX, coalesce="row", gather_oob=oob), want)


@pl.program
class ElemGatherScatter:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, mem: pl.Tensor[[256], pl.INT32], idx: pl.Tensor[[8, 32], pl.INT32],
          g: pl.Out[pl.Tensor[[8, 32], pl.INT32]], s: pl.Out[pl.Tensor[[300], pl.INT32]]):
        it = pl.load(idx, [0, 0], [8, 32], valid_shape=[5, 19])
        r = pl.tile.mgather(mem, it, coalesce="elem", gather_oob="wrap")
        g = pl.store(r, [0, 0], g)
        full = pl.load(idx, [0, 0], [8, 32])
        src = pl.load(mem, [0], [256])
        s = pl.mscatter(pl.reshape(src, [8, 32]), full, s)
        return g, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, mem: pl.Tensor[[256], pl.INT32], idx: pl.Tensor[[8, 32], pl.INT32],
             g: pl.Out[pl.Tensor[[8, 32], pl.INT32]], s: pl.Out[pl.Tensor[[300], pl.INT32]]):
        g, s = self.k(mem, idx, g, s)
        return g, s


@pytest.mark.parametrize("platform", PLATFORMS)
def test_mgather_elements_and_mscatter_skip_indices_past_the_tensor(platform):
    mem = (np.arange(256, dtype=np.int32) * 3 + 1)
    idx = (np.arange(256, dtype=np.int32)[::-1] + 40).reshape(8, 32)  # 40..295: some past 256 / 300
    idx[0, :4] = [-1, 256, 299, 1 << 20]
    g = np.full((8, 32), -7, np.int32)
    s = np.full(300, -9, np.int32)
    ir.compile(ElemGatherScatter)(mem, idx, g, s, config=RunConfig(platform=platform))
    u = idx.astype(np.int64) & 0xFFFFFFFF
    np.testing.assert_array_equal(g[:5, :19], mem[u % 256][:5, :19])
    np.testing.assert_array_equal(g[5:], -7)
    np.testing.assert_array_equal(s, mscatter_ref(mem.reshape(8, 32), idx, np.full(300, -9, np.int32)))
    assert s[299] == mem[2] and s[0] == -9  # index 299 lands; -1 and 1 << 20 are skipped


def test_mgather_refuses_a_bad_mode_with_the_line():
    with pytest.raises(Exception, match="gather_oob must be one of") as e:
        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, mem: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[1, 16], pl.INT32],
                  out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
                it = pl.load(idx, [0, 0], [1, 16])
                r = pl.tile.mgather(mem, it, gather_oob="saturate")
                return pl.store(r, [0, 0], out)
    assert "saturate" in str(e.value)
