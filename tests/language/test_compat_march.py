"""March-era programs the public project accepts (docs/compat.md, "What older programs may do"):
each form runs with the right numbers on the interpreter and the CPU backend."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.enums import PadValue
from pypto.ops.memory import pad_scalar
from pypto.runtime import RunConfig
from tests.programs.compat_kernels import PLATFORMS, RNG, compile_

M = pl.dynamic("M")
N = pl.dynamic("N")


def _run(src: str, platform: str, *args):
    compile_(pl.parse_program(src), platform)(*args, config=RunConfig(platform=platform))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_tile_larger_than_its_tensor_with_a_fitting_valid_shape(platform):
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[12, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t: pl.Tile[[16, 32], pl.FP32] = pl.load(x, offsets=[0, 0], shapes=[16, 32], valid_shapes=[12, 32])
        y = pl.store(pl.fillpad(t, pad_value=pl.PadValue.max), offsets=[0, 0], output_tensor=y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[12, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.k(x, y)
        return y
'''
    x = RNG.standard_normal((12, 32)).astype(np.float32)
    y = np.zeros((16, 32), np.float32)
    _run(src, platform, x, y)
    np.testing.assert_array_equal(y[:12], x)
    assert (y[12:] == pad_scalar(y.dtype, PadValue.max)).all()  # (the padding, filled with the max pad value)
    with pytest.raises(pl.ParserTypeError, match="tensor has only 12"):
        pl.parse_program(src.replace("valid_shapes=[12, 32]", "valid_shapes=[14, 32]"))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_rank_2_tile_stored_into_a_rank_3_tensor(platform):
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 4, 16], pl.FP32]]) -> pl.Tensor[[2, 4, 16], pl.FP32]:
        t = pl.load(a, [1, 0], [1, 16])
        out = pl.store(pl.mul(t, t), [1, 2, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 16], pl.FP32], out: pl.Out[pl.Tensor[[2, 4, 16], pl.FP32]]) -> pl.Tensor[[2, 4, 16], pl.FP32]:
        out = self.k(a, out)
        return out
'''
    a = RNG.standard_normal((4, 16)).astype(np.float32)
    out = np.zeros((2, 4, 16), np.float32)
    _run(src, platform, a, out)
    want = np.zeros_like(out)
    want[1, 2] = a[1] * a[1]
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_annotations_without_memory_space_or_with_another_layout(platform):
    """`acc: pl.Tile[[M, N], dt] = pl.matmul(...)` (an Acc tile annotated without its space) and a DN
    tensor passed where ND is declared, as the public parser accepts them."""
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        la = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        rb = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc: pl.Tile[[16, 16], pl.FP32] = pl.matmul(la, rb)
        acc = pl.matmul_acc(acc, la, rb)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32, pl.DN],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.k(a, b, c)
        return c
'''
    a, b = (RNG.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    c = np.zeros((16, 16), np.float32)
    _run(src, platform, a, b, c)
    np.testing.assert_allclose(c, 2 * (a.astype(np.float64) @ b), rtol=1e-4, atol=1e-4)
    with pytest.raises(pl.ParserTypeError, match="declared a tile in Vec but the value lives in Acc"):
        pl.parse_program(src.replace("acc: pl.Tile[[16, 16], pl.FP32] =",
                                     "acc: pl.Tile[[16, 16], pl.FP32, pl.MemorySpace.Vec] ="))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_value_assigned_in_a_loop_that_may_not_run_and_used_after_it(platform):
    """`out = pl.store(t, offs, c)` inside `for i in pl.range(0, n, 2)`: out starts as c."""
    src = '''
import pypto.language as pl

M = pl.dynamic("M")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[M, 32], pl.FP32], c: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> pl.Tensor[[M, 32], pl.FP32]:
        rows = pl.tensor.dim(a, 0)
        for i in pl.range(0, rows, 2):
            t = pl.load(a, [i, 0], [2, 32])
            out = pl.store(pl.add(t, t), [i, 0], c)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 32], pl.FP32], c: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        c = self.k(a, c)
        return c
'''
    a = RNG.standard_normal((8, 32)).astype(np.float32)
    c = np.zeros_like(a)
    _run(src, platform, a, c)
    np.testing.assert_allclose(c, 2 * a, rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_kernel_if_storing_the_same_output_on_both_sides_and_scalar_conversions(platform):
    """An `if` in a kernel whose branches both store into dst, a flag passed as INT64 to a BOOL parameter,
    and a kernel with dynamic dims whose result takes the argument's static shape."""
    src = '''
import pypto.language as pl

Q = pl.dynamic("Q")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[Q, 32], pl.FP32], dst: pl.Out[pl.Tensor[[Q, 32], pl.FP32]],
          flag: pl.Scalar[pl.BOOL]) -> pl.Tensor[[Q, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        if flag:
            d = pl.store(pl.add(t, t), [0, 0], dst)
        else:
            d = pl.store(pl.tile.full([16, 32], dtype=pl.FP32, value=-1.0), [0, 0], dst)
        return d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], out: pl.Tensor[[32, 32], pl.FP32]) -> pl.Tensor[[32, 32], pl.FP32]:
        for i in pl.range(2):
            if i == 1:
                f: pl.Scalar[pl.INT64] = pl.yield_(1)
            else:
                f: pl.Scalar[pl.INT64] = pl.yield_(0)
            v = pl.slice(out, [16, 32], [i * 16, 0])
            r: pl.Tensor[[16, 32], pl.FP32] = self.k(a, v, f)
        return out
'''
    a = RNG.standard_normal((16, 32)).astype(np.float32)
    out = np.zeros((32, 32), np.float32)
    _run(src, platform, a, out)  # (out is declared In: the Orchestration entry writes it in place)
    np.testing.assert_array_equal(out[:16], -1.0)
    np.testing.assert_allclose(out[16:], 2 * a, rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_longer_1d_argument_gives_its_leading_elements(platform):
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, cfg: pl.Tensor[[4], pl.INT64], a: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        s: pl.Scalar[pl.INT64] = pl.tensor.read(cfg, [3])
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.assemble(c, pl.mul(a, pl.cast(s, pl.FP32)), [0, 0])
        return c
'''
    a = RNG.standard_normal((16, 32)).astype(np.float32)
    c = np.zeros_like(a)
    _run(src, platform, np.array([0, 0, 0, 3, 9, 9], np.int64), a, c)
    np.testing.assert_allclose(c, 3 * a, rtol=1e-6)
