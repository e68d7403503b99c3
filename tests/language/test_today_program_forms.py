"""Program forms today's public tests use, each run on the CPU backend and the interpreter: a
composite dynamic dimension (`M * 2`) in annotations, a `continue` before the store that assigns
the returned tensor, slices whose extent is a difference of affine terms (`x[r + 1:r + 2]`), and
an int32 / int16 array handed to a UINT32 / UINT16 parameter (torch has no uint32)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.expr import Add, ConstInt, DynVar, Mul
from pypto.runtime import RunConfig

PLATFORMS = [pytest.param("interp"), pytest.param("cpu", marks=pytest.mark.native)]
M = pl.dynamic("M")
N = pl.dynamic("N")


def _run(program, platform: str, *args):
    # (the interpreter needs no native build: the fast tier runs it)
    return ir.compile(program, skip_ptoas=platform == "interp")(*args, config=RunConfig(platform=platform))


def test_dynvar_arithmetic_builds_index_expressions():
    e = M * 2 + 1
    assert isinstance(e, Add) and isinstance(e.lhs, Mul) and e.lhs.lhs is M and e.rhs == ConstInt(1)
    assert isinstance(3 * M, Mul) and (3 * M).lhs == ConstInt(3)
    assert isinstance(M, DynVar)
    assert (M * 1.5).type.dtype.is_float  # (scalar IR arithmetic: a float operand makes a float, not a dimension)
    with pytest.raises(TypeError):
        M * "2"  # noqa: B018


@pl.program
class CompositeDim:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M * 2, N], pl.FP32], c: pl.Out[pl.Tensor[[M * 2, N], pl.FP32]]):
        t = pl.load(a, [0, 0], [16, 32])
        return pl.store(pl.add(t, 1.0), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M * 2, N], pl.FP32], c: pl.Out[pl.Tensor[[M * 2, N], pl.FP32]]):
        c = self.kernel(a, c)
        return c


@pytest.mark.parametrize("platform", PLATFORMS)
def test_composite_dynamic_dimension(platform):
    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    c = np.zeros_like(a)
    _run(CompositeDim, platform, a, c)
    np.testing.assert_array_equal(c, a + 1)


@pl.program
class ContinueBeforeStore:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 16], pl.FP32], c: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]):
        for i in pl.range(4):
            if i % 2 != 0:
                continue
            t = pl.load(a, [i * 16, 0], [16, 16])
            out: pl.Tensor[[64, 16], pl.FP32] = pl.store(pl.mul(t, 3.0), [i * 16, 0], c)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 16], pl.FP32], c: pl.InOut[pl.Tensor[[64, 16], pl.FP32]]):
        c = self.kernel(a, c)
        return c


@pytest.mark.parametrize("platform", PLATFORMS)
def test_continue_before_the_store_of_the_returned_tensor(platform):
    a = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    c = np.full_like(a, -1.0)
    _run(ContinueBeforeStore, platform, a, c)
    want = np.full_like(a, -1.0)
    for i in (0, 2):  # the odd blocks are skipped and keep what c held
        want[i * 16:(i + 1) * 16] = 3 * a[i * 16:(i + 1) * 16]
    np.testing.assert_array_equal(c, want)


@pl.program
class AffineSlices:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16, 32], pl.FP32], out: pl.Out[pl.Tensor[[8, 16, 32], pl.FP32]]):
        for g in pl.range(4):
            with pl.incore():
                r = g * 2
                out[r:r + 1, :, :] = pl.mul(x[r:r + 1, :, :], 2.0)
                out[r + 1:r + 2, :, :] = pl.add(x[r + 1:r + 2, :, :], 1.0)
        return out


def test_affine_slice_extents_are_static():
    text = ir.python_print(AffineSlices)
    assert "r + 2 - (r + 1)" not in text and "[1, 16, 32]" in text


@pytest.mark.parametrize("platform", PLATFORMS)
def test_affine_slices_run(platform):
    x = np.arange(8 * 16 * 32, dtype=np.float32).reshape(8, 16, 32) / 7
    out = np.zeros_like(x)
    _run(AffineSlices, platform, x, out)
    want = x.copy()
    want[0::2] *= 2
    want[1::2] += 1
    np.testing.assert_allclose(out, want, rtol=1e-6)


def _ci_program(dt):
    @pl.program
    class Ci:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, out: pl.Out[pl.Tensor[[1, 64], dt]]):
            return pl.store(pl.tile.ci(5, [1, 64], dtype=dt), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[1, 64], dt]]):
            out = self.kernel(out)
            return out
    return Ci


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt,signed", [(pl.UINT32, np.int32), (pl.UINT16, np.int16)])
def test_unsigned_parameter_takes_a_signed_array_of_the_same_width(platform, dt, signed):
    out = np.zeros((1, 64), signed)  # what torch users pass (torch.int32 for uint32)
    _run(_ci_program(dt), platform, out)
    np.testing.assert_array_equal(out, np.arange(5, 69, dtype=signed)[None])  # written through the caller's array


def test_other_dtype_mismatches_still_fail():
    from pypto.backend.signature import ArgumentError

    with pytest.raises(ArgumentError, match="expects dtype UINT32"):
        _run(_ci_program(pl.UINT32), "interp", np.zeros((1, 64), np.int16))
