"""`pl.MemRef()` / `pl.MemRef("name", slots=N)[i]` in tile annotations (pl-head §3.1;
pypto/language/memref_slots.py): a placement hint the CPU checks and drops. Two co-live tiles in
"slots" of one declaration must still hold their own data, so the numbers are the check."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserTypeError
from pypto.runtime import RunConfig

pytestmark = pytest.mark.native  # ir.compile builds the CPU library even for an interpreter run

PINGPONG = pl.MemRef(slots=2)


@pl.program
class CoLive:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        for i in pl.range(4):
            lo: pl.Tile[[16, 32], pl.FP32, PINGPONG[i % 2], pl.Mem.Vec] = pl.load(
                a, [i * 16, 0], [16, 32], target_memory=pl.Mem.Vec)
            hi: pl.Tile[[16, 32], pl.FP32, pl.MemRef("ub", slots=2)[(i + 1) % 2], pl.Mem.Vec] = pl.load(
                b, [i * 16, 0], [16, 32], target_memory=pl.Mem.Vec)
            s: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.sub(lo, hi)
            out = pl.store(s, [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        out = self.kernel(a, b, out)
        return out


@pytest.mark.parametrize("platform", ["interp", "cpu"])
def test_co_live_slots_keep_their_own_data(platform):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((64, 32)).astype(np.float32) for _ in range(2))
    out = np.zeros_like(a)
    ir.compile(CoLive)(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a - b, rtol=1e-6)  # a - b: `b - b` or `a - a` would be 0


def test_declarations():
    assert pl.MemRef().slots == 1
    assert pl.MemRef("l0c", slots=3).name == "l0c"
    with pytest.raises(TypeError, match="slots must be a positive int"):
        pl.MemRef(slots=0)
    with pytest.raises(TypeError, match="out of range"):
        pl.MemRef(slots=2)[2]


def test_constant_slot_out_of_range_names_the_line():
    with pytest.raises(ParserTypeError, match="out of range") as e:
        pl.parse("""
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: pl.Tensor[[16, 16], pl.FP32]):
    t: pl.Tile[[16, 16], pl.FP32, pl.MemRef(slots=2)[5], pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
""")
    assert "pl.MemRef(slots=2)[5]" in str(e.value)


TR, NT = 16, 4


@pl.jit
def slot_pingpong(a: pl.Tensor[[TR * NT, 32], pl.FP32], b: pl.Tensor[[TR * NT, 32], pl.FP32],
                  out: pl.Out[pl.Tensor[[TR * NT, 32], pl.FP32]]):
    """(The public test_memref_slots form: an inline named declaration, an spmd body, no `return`.)"""
    for _ in pl.spmd(1, name_hint="slots"):
        for i in pl.range(NT):
            lo: pl.Tile[[TR, 32], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = pl.load(
                a, [i * TR, 0], [TR, 32], target_memory=pl.Mem.Vec)
            hi: pl.Tile[[TR, 32], pl.FP32, pl.MemRef("ub", slots=2)[(i + 1) % 2], pl.Mem.Vec] = pl.load(
                b, [i * TR, 0], [TR, 32], target_memory=pl.Mem.Vec)
            pl.store(pl.add(lo, hi), [i * TR, 0], out)


@pytest.mark.parametrize("platform", ["interp", "cpu"])
def test_jit_entry_without_return(platform):
    torch = pytest.importorskip("torch")
    a, b = torch.randn(TR * NT, 32), torch.randn(TR * NT, 32)
    out = torch.zeros(TR * NT, 32)
    slot_pingpong(a, b, out, config=RunConfig(platform=platform))
    torch.testing.assert_close(out, a + b)
