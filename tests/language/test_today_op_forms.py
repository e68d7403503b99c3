"""Op forms today's public tests use (pl-head §3.2-3.5), each run on the CPU backend and the
interpreter: reductions and fillpad_expand on tensors, tile row_expand_add with the packed 32-byte
row carrier, assemble of a lower-rank source and of an fp32 partial with atomic add into a
narrower output, `x = pl.write(x, ...)`, and col_sum's order and precision (fp16 accumulates in
fp16, row after row or as a tree when given a scratch tile)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserTypeError
from pypto.runtime import RunConfig

PLATFORMS = [pytest.param("interp"), pytest.param("cpu", marks=pytest.mark.native)]
RNG = np.random.default_rng(11)


def _run(program, platform: str, *args):
    # (the interpreter needs no native build: the fast tier runs it)
    return ir.compile(program, skip_ptoas=platform == "interp")(*args, config=RunConfig(platform=platform))


# ---------------------------------------------------------------------------------------------
# tensor forms: pl.col_prod / col_max on a tensor, pl.fillpad_expand on a tensor


@pl.program
class TensorForms:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8, 32], pl.FP32], p: pl.Out[pl.Tensor[[1, 32], pl.FP32]],
               m: pl.Out[pl.Tensor[[1, 32], pl.FP32]], e: pl.Out[pl.Tensor[[16, 48], pl.FP32]]):
        prod: pl.Tensor[[1, 32], pl.FP32] = pl.col_prod(x)
        mx: pl.Tensor[[1, 32], pl.FP32] = pl.col_max(x)
        big: pl.Tensor[[16, 48], pl.FP32] = pl.fillpad_expand(x, [16, 48], pad_value=pl.PadValue.min)
        p = pl.assemble(p, prod, [0, 0])
        m = pl.assemble(m, mx, [0, 0])
        e = pl.assemble(e, big, [0, 0])
        return p, m, e

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32], p: pl.Out[pl.Tensor[[1, 32], pl.FP32]],
             m: pl.Out[pl.Tensor[[1, 32], pl.FP32]], e: pl.Out[pl.Tensor[[16, 48], pl.FP32]]):
        p, m, e = self.kernel(x, p, m, e)
        return p, m, e


@pytest.mark.parametrize("platform", PLATFORMS)
def test_reductions_and_fillpad_expand_on_tensors(platform):
    x = RNG.uniform(0.5, 1.5, (8, 32)).astype(np.float32)
    p, m, e = (np.zeros((1, 32), np.float32), np.zeros((1, 32), np.float32), np.zeros((16, 48), np.float32))
    _run(TensorForms, platform, x, p, m, e)
    np.testing.assert_allclose(p, np.prod(x, axis=0, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(m, np.max(x, axis=0, keepdims=True))
    want = np.full((16, 48), -np.inf, np.float32)
    want[:8, :32] = x
    np.testing.assert_array_equal(e, want)


# ---------------------------------------------------------------------------------------------
# tile row_expand_add with the packed carrier: dst[i, j] = a[i, j] + v[i, j % K], K * itemsize = 32


def _packed_program(dt, k: int):
    @pl.program
    class Packed:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[16, 64], dt], v: pl.Tensor[[16, k], dt],
                   out: pl.InOut[pl.Tensor[[16, 64], dt]]) -> pl.Tensor[[16, 64], dt]:
            ta = pl.load(a, [0, 0], [16, 64], valid_shape=[11, 45])
            tv = pl.load(v, [0, 0], [16, k], valid_shape=[11, k])
            r = pl.tile.row_expand_add(ta, tv)
            return pl.store(r, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 64], dt], v: pl.Tensor[[16, k], dt],
                 out: pl.InOut[pl.Tensor[[16, 64], dt]]) -> pl.Tensor[[16, 64], dt]:
            return self.kernel(a, v, out)
    return Packed


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt,npdt", [(pl.FP32, np.float32), (pl.FP16, np.float16), (pl.INT16, np.int16)])
def test_row_expand_add_packed_carrier(platform, dt, npdt):
    k = 32 // np.dtype(npdt).itemsize
    a = RNG.integers(-20, 20, (16, 64)).astype(npdt)
    v = RNG.integers(-20, 20, (16, k)).astype(npdt)
    out = np.zeros((16, 64), npdt)
    _run(_packed_program(dt, k), platform, a, v, out)
    want = np.zeros((16, 64), npdt)
    want[:11, :45] = a[:11, :45] + v[:11, np.arange(45) % k]  # the lanes repeat along the row
    np.testing.assert_array_equal(out, want)


def test_row_expand_add_rejects_a_carrier_of_another_width():
    with pytest.raises(ParserTypeError, match=r"row_expand_add: row vector must be \[\.\.\., 16, 1\], got \[16, 4\]"):
        _packed_program(pl.FP32, 4)


# ---------------------------------------------------------------------------------------------
# assemble: a [4, 16] chunk into a [2, 4, 16] output at [b, 0, 0]; an atomic fp32 partial into fp16


@pl.program
class AssembleForms:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[4, 16], pl.FP32], out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
        t = pl.load(x, [0, 0], [4, 16])
        return pl.store(pl.mul(t, 2.0), [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(self, x: pl.Tensor[[16, 32], pl.FP32], c: pl.InOut[pl.Tensor[[16, 32], pl.FP16]]):
        t = pl.load(x, [0, 0], [16, 32])
        c = pl.assemble(c, t, [0, 0], atomic=pl.AtomicType.Add)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 4, 16], pl.FP32]], c: pl.InOut[pl.Tensor[[16, 32], pl.FP16]]):
        for b in pl.range(2):
            chunk = pl.create_tensor([4, 16], dtype=pl.FP32)
            chunk = self.twice(x, chunk)
            out = pl.assemble(out, chunk, [b, 0, 0])
        c = self.accumulate(y, c)
        return out, c


@pytest.mark.parametrize("platform", PLATFORMS)
def test_assemble_lower_rank_source_and_atomic_into_narrower_dtype(platform):
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    y = RNG.standard_normal((16, 32)).astype(np.float32)
    c0 = RNG.standard_normal((16, 32)).astype(np.float16)
    out, c = np.zeros((2, 4, 16), np.float32), c0.copy()
    _run(AssembleForms, platform, x, y, out, c)
    np.testing.assert_array_equal(out, np.stack([2 * x, 2 * x]))
    # each partial is converted to the output's dtype, then added there (rounded once more)
    want = (c0.astype(np.float32) + y.astype(np.float16).astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c, want)


# ---------------------------------------------------------------------------------------------
# x = pl.write(x, idx, v): today's write returns its destination


@pl.program
class WriteForms:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_kernel(self, vals: pl.Tensor[[4], pl.FP32], dst: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
        t = pl.tile.full([4, 8], dtype=pl.FP32, value=-1.0)
        for i in pl.unroll(4):
            v: pl.Scalar[pl.FP32] = pl.read(vals, [i])
            t = pl.write(t, [i, 1], v)
        return pl.store(t, [0, 0], dst)

    @pl.function(type=pl.FunctionType.InCore)
    def tensor_kernel(self, vals: pl.Tensor[[4], pl.FP32], table: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]):
        for i in pl.unroll(4):
            v: pl.Scalar[pl.FP32] = pl.read(vals, [i])
            table = pl.write(table, [i, 6], v)
        return table

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, vals: pl.Tensor[[4], pl.FP32], dst: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):
        dst = self.tile_kernel(vals, dst)
        dst = self.tensor_kernel(vals, dst)
        return dst


@pytest.mark.parametrize("platform", PLATFORMS)
def test_write_returns_its_destination(platform):
    vals = np.arange(4, dtype=np.float32) + 0.5
    dst = np.zeros((4, 8), np.float32)
    _run(WriteForms, platform, vals, dst)
    want = np.full((4, 8), -1.0, np.float32)
    want[:, 1] = vals
    want[:, 6] = vals
    np.testing.assert_array_equal(dst, want)


# ---------------------------------------------------------------------------------------------
# col_sum: fp16 accumulates in fp16 (rounded after each add); a scratch tile selects the tree order


def _col_sum_program(dt, tree: bool):
    @pl.program
    class ColSum:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[13, 64], dt], out: pl.Out[pl.Tensor[[1, 64], dt]]):
            t = pl.load(x, [0, 0], [13, 64])
            if tree:
                tmp = pl.tile.create([13, 64], dtype=dt, target_memory=pl.MemorySpace.Vec)
                r = pl.tile.col_sum(t, tmp)
            else:
                r = pl.tile.col_sum(t)
            return pl.store(r, [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[13, 64], dt], out: pl.Out[pl.Tensor[[1, 64], dt]]):
            return self.kernel(x, out)
    return ColSum


def _hw_col_sum(x: np.ndarray, tree: bool) -> np.ndarray:
    rows = [r.astype(np.float32) for r in x]
    keep = (lambda v: v.astype(x.dtype).astype(np.float32))
    if tree:
        while len(rows) > 1:
            nxt = [keep(rows[2 * i] + rows[2 * i + 1]) for i in range(len(rows) // 2)]
            if len(rows) % 2:
                nxt[0] = keep(nxt[0] + rows[-1])
            rows = nxt
        return rows[0][None].astype(x.dtype)
    acc = rows[0]
    for r in rows[1:]:
        acc = keep(acc + r)
    return acc[None].astype(x.dtype)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt,npdt", [(pl.FP16, np.float16), (pl.FP32, np.float32)])
@pytest.mark.parametrize("tree", [False, True])
def test_col_sum_order_and_precision(platform, dt, npdt, tree):
    x = (RNG.standard_normal((13, 64)) * 8).astype(npdt)
    out = np.zeros((1, 64), npdt)
    _run(_col_sum_program(dt, tree), platform, x, out)
    want = _hw_col_sum(x, tree)
    np.testing.assert_array_equal(out, want)
    if npdt is np.float16:  # (the order shows: a sum in fp32 rounded once differs)
        assert not np.array_equal(want, x.astype(np.float32).sum(0, keepdims=True).astype(np.float16))
