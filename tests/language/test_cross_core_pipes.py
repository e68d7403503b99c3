"""Hand-written cross-core programs: `pl.FunctionType.Group` + tpush / tpop pipes (pl-head §2.5 (c), §3.8;
pypto/language/parser/groups.py, pypto/ops/cross_core.py, backends interp/pipes.py and cpu
glue/pto_pipes.hpp). The cube and vector blocks of a Group call run at the same time; numbers on both
backends, and a pop that can never be satisfied fails naming the pipe instead of hanging."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserSyntaxError, ParserTypeError
from pypto.runtime import RunConfig

pytestmark = pytest.mark.native  # ir.compile builds the CPU library even for an interpreter run
PLATFORMS = ["interp", "cpu"]
D = 16
T = pl.Tensor[[D, D], pl.FP32]


@pl.program
class TwoPipes:
    """V2C over two pipe ids, pushed in the reverse order of the pops (ids must not share a FIFO)."""

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, b: T, out: pl.Out[T]):
        pl.aiv_initialize_pipe(dir_mask=2, slot_size=D * D * 4, id=0)
        at = pl.load(a, [0, 0], [D, D])
        bt = pl.load(b, [0, 0], [D, D])
        pl.tpush_to_aic(pl.sub(at, bt), split=0, id=1)
        pl.tpush_to_aic(pl.add(at, bt), split=0, id=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, b: T, out: pl.Out[T]) -> T:
        buf = pl.reserve_buffer(name="v2c", size=D * D * 4 * 8, base=pl.AUTO)
        pl.aic_initialize_pipe(0, buf, dir_mask=2, slot_size=D * D * 4, id=0)
        s: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
        d: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=1)
        r = pl.matmul(pl.move(s, target_memory=pl.Mem.Left), pl.move(d, target_memory=pl.Mem.Right))
        pl.tfree_to_aiv(s, id=0)
        return pl.store(r, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, b: T, out: pl.Out[T]) -> T:
        r = self.cube(a, b, out)
        self.vec(a, b, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, b: T, out: pl.Out[T]) -> T:
        out = self.group(a, b, out)
        return out


def _split_program(split: int):
    """C2V with two vector lanes (the vector function asks for its lane): the cube pushes a @ b, lane
    i pops its half (rows for split 1, columns for split 2), adds 1 and pushes it back; the cube pops
    the joined halves and stores them (a round trip through both directions)."""
    half = [D // 2, D] if split == 1 else [D, D // 2]

    @pl.program
    class Split:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T, b: T, out: pl.Out[T]) -> T:
            la = pl.move(pl.load(a, [0, 0], [D, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            rb = pl.move(pl.load(b, [0, 0], [D, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.tpush_to_aiv(pl.matmul(la, rb), split=split)
            back: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=split)
            return pl.store(pl.move(back, target_memory=pl.Mem.Vec), [0, 0], out)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, a: T, b: T, out: pl.Out[T]):
            lane = pl.tile.get_subblock_idx()
            mine: pl.Tile[half, pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=split)
            pl.tpush_to_aic(pl.add(mine, pl.cast(lane, pl.FP32)), split=split)

        @pl.function(type=pl.FunctionType.Group)
        def group(self, a: T, b: T, out: pl.Out[T]) -> T:
            self.vec(a, b, out)
            r = self.cube(a, b, out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T, b: T, out: pl.Out[T]) -> T:
            out = self.group(a, b, out)
            return out
    return Split


@pl.program
class DynValid:
    """Cube pushes a full tile; the vector side pops it with a run-time valid shape (the public
    test_cross_core_dynamic_valid_shape's program, one vector lane)."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, out: pl.Out[T], vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]):
        pl.aic_initialize_pipe(dir_mask=1, slot_size=D * D * 4, c2v_consumer_buf=0)
        t = pl.load(a, [0, 0], [D, D])
        pl.tpush_to_aiv(pl.mul(t, 3.0), split=1)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T], vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]) -> T:
        p: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[vr, vc])] = pl.tpop_from_aic(split=1)
        q = pl.add(p, 1.0)
        pl.tfree_to_aic(p)
        return pl.store(q, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, out: pl.Out[T], vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]) -> T:
        self.cube(a, out, vr, vc)
        r = self.vec(a, out, vr, vc)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, shape: pl.Tensor[[2], pl.INDEX], out: pl.Out[T]) -> T:
        vr: pl.Scalar[pl.INDEX] = pl.tensor.read(shape, [0])
        vc: pl.Scalar[pl.INDEX] = pl.tensor.read(shape, [1])
        out = self.group(a, out, vr, vc)
        return out


def _data(n: int = 2):
    rng = np.random.default_rng(3)
    return [rng.standard_normal((D, D)).astype(np.float32) for _ in range(n)]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_two_pipe_ids_keep_their_own_fifo(platform):
    a, b = _data()
    out = np.zeros_like(a)
    ir.compile(TwoPipes)(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("split", [1, 2])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_two_lanes_split_and_join_both_ways(platform, split):
    a, b = _data()
    out = np.zeros_like(a)
    ir.compile(_split_program(split))(a, b, out, config=RunConfig(platform=platform))
    want = a @ b
    if split == 1:
        want[D // 2:] += 1  # lane 1 added its lane id to its half
    else:
        want[:, D // 2:] += 1
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pop_with_a_run_time_valid_shape(platform):
    (a,) = _data(1)
    out = np.full_like(a, -7.0)
    ir.compile(DynValid)(a, np.array([5, 12], dtype=np.int64), out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out[:5, :12], 3 * a[:5, :12] + 1, rtol=1e-6)
    assert (out[5:] == -7).all() and (out[:, 12:] == -7).all()  # only the valid region is stored


_STARVED = """
import pypto.language as pl
T = pl.Tensor[[16, 16], pl.FP32]

@pl.program
class Starved:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T]):
        t = pl.load(a, [0, 0], [16, 16])
        pl.tpush_to_aic(t, split=0, id=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, out: pl.Out[T]) -> T:
        x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
        y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=3)
        return pl.store(pl.move(pl.add(pl.move(x, target_memory=pl.Mem.Vec), pl.move(y, target_memory=pl.Mem.Vec)),
                                target_memory=pl.Mem.Vec), [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, out: pl.Out[T]) -> T:
        r = self.cube(a, out)
        self.vec(a, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.group(a, out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_pop_no_block_will_feed_fails_naming_the_pipe(platform):
    prog = pl.parse(_STARVED)
    (a,) = _data(1)
    with pytest.raises(Exception, match=r"tpop_from_aiv \(pipe id 3\) waits for a tile that no block will push"):
        ir.compile(prog)(a, np.zeros_like(a), config=RunConfig(platform=platform))


_OUTSIDE = """
import pypto.language as pl
T = pl.Tensor[[16, 16], pl.FP32]

@pl.program
class Outside:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: T, out: pl.Out[T]) -> T:
        t = pl.load(a, [0, 0], [16, 16])
        pl.tpush_to_aic(t, split=0)
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.k(a, out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_pipe_op_outside_a_group_is_refused_at_run_time(platform):
    (a,) = _data(1)
    with pytest.raises(Exception, match="outside a Group function"):
        ir.compile(pl.parse(_OUTSIDE))(a, np.zeros_like(a), config=RunConfig(platform=platform))


def _group(body: str, vec_body: str = "        pl.tpush_to_aic(pl.load(a, [0, 0], [16, 16]), split=0)") -> str:
    return f"""
import pypto.language as pl
T = pl.Tensor[[16, 16], pl.FP32]

@pl.program
class G:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T]):
{vec_body}

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, out: pl.Out[T]) -> T:
        x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0)
        return pl.store(pl.move(x, target_memory=pl.Mem.Vec), [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, out: pl.Out[T]) -> T:
{body}
"""


@pytest.mark.parametrize("body,cls,message", [
    ("        r = self.cube(a, out)\n        return r", ParserSyntaxError, "calls 1 function"),
    ("        t = pl.load(a, [0, 0], [16, 16])\n        r = self.cube(a, out)\n        self.vec(a, out)\n"
     "        return r", ParserSyntaxError, "the body calls its AIC and AIV functions"),
])
def test_malformed_group_bodies_name_the_problem(body, cls, message):
    with pytest.raises(cls, match=message):
        pl.parse(_group(body))


def test_a_function_using_both_sides_is_refused():
    vec = ("        t = pl.load(a, [0, 0], [16, 16])\n        pl.tpush_to_aic(t, split=0)\n"
           "        u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0)")
    with pytest.raises(ParserTypeError, match="both the cube side"):
        pl.parse(_group("        r = self.cube(a, out)\n        self.vec(a, out)\n        return r", vec))


def test_a_pop_needs_a_tile_type():
    vec = "        u = pl.tpop_from_aic(split=0)"
    with pytest.raises(ParserTypeError, match="shape is unknown"):
        pl.parse(_group("        r = self.cube(a, out)\n        self.vec(a, out)\n        return r", vec))


def test_a_group_nobody_calls_is_refused():
    src = _group("        r = self.cube(a, out)\n        self.vec(a, out)\n        return r")
    with pytest.raises(ParserSyntaxError, match="Group function group is never called"):
        pl.parse(src)



NB = 4


@pl.program
class Streamed:
    """C2V in a loop: the cube pushes one [16, 16] block of a @ b per iteration, the vector side pops
    each as it comes, scales it and stores it (a pipeline through one pipe)."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, b: pl.Tensor[[D, D * NB], pl.FP32], out: pl.Out[pl.Tensor[[D, D * NB], pl.FP32]]):
        la = pl.move(pl.load(a, [0, 0], [D, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        for j in pl.range(NB):
            rb = pl.move(pl.load(b, [0, j * D], [D, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.tpush_to_aiv(pl.matmul(la, rb), split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, b: pl.Tensor[[D, D * NB], pl.FP32],
            out: pl.Out[pl.Tensor[[D, D * NB], pl.FP32]]) -> pl.Tensor[[D, D * NB], pl.FP32]:
        for j in pl.range(NB):
            t: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=0)
            out = pl.store(pl.mul(t, 0.5), [0, j * D], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, b: pl.Tensor[[D, D * NB], pl.FP32],
              out: pl.Out[pl.Tensor[[D, D * NB], pl.FP32]]) -> pl.Tensor[[D, D * NB], pl.FP32]:
        self.cube(a, b, out)
        r = self.vec(a, b, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, b: pl.Tensor[[D, D * NB], pl.FP32],
             out: pl.Out[pl.Tensor[[D, D * NB], pl.FP32]]) -> pl.Tensor[[D, D * NB], pl.FP32]:
        for _ in pl.range(2):  # a Group call in a loop: each call is its own grid with its own pipes
            out = self.group(a, b, out)
        return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_push_and_pop_in_loops(platform):
    (a,) = _data(1)
    b = np.random.default_rng(4).standard_normal((D, D * NB)).astype(np.float32)
    out = np.zeros((D, D * NB), np.float32)
    ir.compile(Streamed)(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, 0.5 * (a @ b), rtol=1e-4, atol=1e-4)
