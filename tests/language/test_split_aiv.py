"""`for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.X):` (pl-head §2.3; pypto/language/parser/
cross_core.py): the body runs for lane 0 then lane 1, `pl.aiv_shard` takes the lane's half (UP_DOWN
rows, LEFT_RIGHT columns, NONE all), `pl.aic_gather` re-joins the halves; the ring setup and event
names around it are no-ops. Numbers on both backends; refusals with the source line."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig

# ir.compile builds the CPU library even for an interpreter run: every test here is native
pytestmark = pytest.mark.native


def _program(mode):
    @pl.program
    class Split:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
              g: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
            pl.aiv_initialize_pipe(dir_mask=1, slot_size=512)
            base = pl.reserve_buffer(name="ring", size=512, base=pl.AUTO)  # noqa: F841
            pl.system.sync_set(0, pipe=pl.PipeType.V)
            pl.system.sync_wait(0, pipe=pl.PipeType.V)
            pl.system.fence()
            t = pl.load(a, [0, 0], [16, 32])
            for aiv_id in pl.split_aiv(2, mode=mode):
                h = pl.aiv_shard(t)
                e = pl.mul(pl.exp(h), 2.0)
                if mode == pl.SplitMode.UP_DOWN:
                    o = pl.store(e, [aiv_id * 8, 0], o)
                elif mode == pl.SplitMode.LEFT_RIGHT:
                    o = pl.store(e, [0, aiv_id * 16], o)
                else:
                    o = pl.store(e, [0, 0], o)
                back = pl.aic_gather(e)
            g = pl.store(back, [0, 0], g)
            return o, g

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
                 g: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
            o, g = self.k(a, o, g)
            return o, g
    return Split


@pytest.mark.parametrize("mode", list(pl.SplitMode))
@pytest.mark.parametrize("platform", ["interp", pytest.param("cpu", marks=pytest.mark.native)])
def test_lanes_shard_compute_and_gather(mode, platform):
    a = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    o, g = np.zeros_like(a), np.zeros_like(a)
    ir.compile(_program(mode))(a, o, g, config=RunConfig(platform=platform))
    np.testing.assert_allclose(o, 2 * np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(g, 2 * np.exp(a), rtol=1e-6)


def _parse(region: str, body: str = "        h = pl.aiv_shard(t)") -> None:
    pl.parse(f"""
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: pl.Tensor[[15, 16], pl.FP32]):
    t = pl.load(x, [0, 0], [15, 16])
    for aiv_id in {region}:
{body}
""")


@pytest.mark.parametrize("region,message", [
    ("pl.split_aiv(3, mode=pl.SplitMode.UP_DOWN)", "the literal 2"),
    ("pl.split_aiv(2)", "needs mode="),
    ("pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN, depth=2)", "unexpected keyword"),
    ("pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN)", "static even number"),  # 15 rows do not halve
])
def test_bad_regions_are_refused_with_the_line(region, message):
    with pytest.raises(pl.ParserError) as e:
        _parse(region)
    assert message in str(e.value) and "pl.split_aiv" in str(e.value)


def test_shard_outside_a_region_is_refused():
    with pytest.raises(pl.ParserError, match="only meaningful inside"):
        pl.parse("""
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: pl.Tensor[[16, 16], pl.FP32]):
    t = pl.load(x, [0, 0], [16, 16])
    h = pl.aiv_shard(t)
""")


@pytest.mark.native
def test_get_subblock_idx_is_the_lane_inside_a_split_region():
    """Inside `pl.split_aiv` the body is parsed once per lane; `pl.get_subblock_idx()` is that lane."""
    import pypto.language as pl
    from pypto import ir

    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            h = pl.aiv_shard(t)
            lane = pl.get_subblock_idx()
            out = pl.store(pl.adds(h, pl.cast(lane, pl.FP32)), [aiv_id * 8, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.k(x, out)
        return out
'''
    prog = pl.parse_program(src)
    assert "get_subblock_idx" not in ir.python_print(prog)  # (replaced by the lane constants)
    import numpy as np

    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.zeros_like(x)
    ir.compile(prog)(x, out)
    np.testing.assert_array_equal(out, x + (np.arange(16) >= 8)[:, None])  # lane 1 writes rows 8-15, + 1
