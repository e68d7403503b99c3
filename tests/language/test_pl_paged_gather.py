"""`pl.paged_gather` (pl-head §3.7; pypto/ops/gather_paged.py, pypto/passes/tiling_gather.py): rows
of a paged pool looked up through a block table, on both backends, over a block size that is no
power of two, fewer indices than max_indices, a column offset, lookups past the table and the pool,
the transposed form and the dtypes of a KV pool; and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserError
from pypto.ops.gather_paged import paged_gather_ref
from pypto.passes.base import PassError
from pypto.runtime import RunConfig

# ir.compile builds the CPU library even for an interpreter run: every test here is native
pytestmark = pytest.mark.native
PLATFORMS = ["interp", "cpu"]
BS, BLOCKS, COLS, N, M, SIZE, OFF = 6, 8, 40, 10, 16, 24, 8


def _golden(src, idx, bt, trans=False):
    """Written out apart from the registry's reference: the rows the public docstring defines."""
    out = np.zeros((M, SIZE), src.dtype)
    for k, i in enumerate(idx.reshape(-1)):
        b = int(i) // BS
        if b < bt.size and int(bt.reshape(-1)[b]) * BS + int(i) % BS < src.shape[0]:
            out[k] = src[int(bt.reshape(-1)[b]) * BS + int(i) % BS, OFF:OFF + SIZE]
    return out.T if trans else out


def _program(dt):
    @pl.program
    class Paged:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, pool: pl.Tensor[[BS * BLOCKS, COLS], dt], idx: pl.Tensor[[N], pl.INT32],
                 bt: pl.Tensor[[2, 4], pl.INT32], idx2: pl.Tensor[[1, N], pl.INT32],
                 out: pl.Out[pl.Tensor[[M, SIZE], dt]], outt: pl.Out[pl.Tensor[[SIZE, M], dt]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                g = pl.paged_gather(pool, idx, bt, BS, SIZE, M, space=pl.MemorySpace.Vec, col_off=OFF)
                gt = pl.tensor.paged_gather(pool, idx2, bt, block_size=BS, size=SIZE, max_indices=M,
                                            col_off=OFF, is_trans=True, is_b_matrix=True)
                out = pl.assemble(out, g, [0, 0])
                outt = pl.assemble(outt, gt, [0, 0])
            return out, outt
    return Paged


_PROGRAMS = {dt: _program(getattr(pl, dt)) for dt in ("FP32", "BF16", "INT8")}


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", sorted(_PROGRAMS))
def test_paged_gather_rows_through_the_block_table(platform, dt):
    npdt = getattr(pl, dt).to_numpy()
    rng = np.random.default_rng(8)
    pool = (np.arange(BS * BLOCKS)[:, None] * 3 + np.arange(COLS)[None] % 7).astype(np.float32)
    pool = (pool % 100).astype(npdt)
    bt = np.array([[7, 2, 5, 0], [9, 3, 6, 1]], np.int32)  # block 4 -> 9: past the pool (a 0 row)
    idx = rng.integers(0, 8 * BS, N).astype(np.int32)
    idx[:3] = [4 * BS + 1, 8 * BS + 2, 5]  # via block 9 (past the pool), past the table, block 0
    idx2 = idx[None].copy()
    out = np.full((M, SIZE), 1, npdt)
    outt = np.full((SIZE, M), 1, npdt)
    ir.compile(_PROGRAMS[dt])(pool, idx, bt, idx2, out, outt, config=RunConfig(platform=platform))
    want = _golden(pool, idx, bt)
    assert not want[:2].any() and want[2].any()  # (the cases above are what they claim)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(outt, _golden(pool, idx, bt, trans=True))
    np.testing.assert_array_equal(want, paged_gather_ref(pool, idx, bt, block_size=BS, size=SIZE, max_indices=M,
                                                         col_off=OFF))


_HEAD = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, pool: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[8], pl.INT32], bt: pl.Tensor[[4], pl.INT32],
             o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
"""


@pytest.mark.parametrize("line,pattern", [
    ("g = pl.paged_gather(pool, idx, bt, 16, 16, 4)", "8 indices for max_indices=4"),
    ("g = pl.paged_gather(pool, idx, bt, 16, 16, 8, col_off=20)", "col_off \\+ size = 36 exceed the pool's 32"),
    ("g = pl.paged_gather(pool, pl.cast(idx, pl.FP32), bt, 16, 16, 8)", "indices and block_table must be INT32"),
    ("g = pl.paged_gather(pool, idx, bt, 0, 16, 8)", "must be positive"),
])
def test_refusals_name_the_line(line, pattern):
    with pytest.raises(ParserError, match=pattern) as e:
        pl.parse(_HEAD + "            " + line + "\n            o = pl.assemble(o, g, [0, 0])\n        return o\n")
    assert e.value.span.begin_line == 10


def test_a_slice_of_the_pool_is_refused_when_the_kernel_is_built():
    src = _HEAD + ("            part = pl.slice(pool, [32, 32], [32, 0])\n"
                   "            g = pl.paged_gather(part, idx, bt, 16, 16, 8)\n"
                   "            o = pl.assemble(o, g, [0, 0])\n        return o\n")
    with pytest.raises(PassError, match="src .* must be a tensor parameter of the kernel, passed whole"):
        ir.compile(pl.parse(src))
