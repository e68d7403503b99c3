"""The batched matmul of pl-head §3.6 (pypto/ops/matmul.py: block.batch_matmul / batch_matmul_acc,
pto.tbatchmatmul(.acc)) and the batched form of pl.tile.transpose_view: the numbers of whole kernels
on both backends, and the refusals with the source line. The op-table rows
(tests/programs/op_table_catalogue4.py) cover each op across dtypes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.errors import ParserTypeError
from pypto.runtime import RunConfig

B, M, K, N = 3, 16, 8, 24
# ir.compile builds the CPU library whichever backend then runs the program: every compiling test is native
BACKENDS = [pytest.param("interp", marks=pytest.mark.native), pytest.param("cpu", marks=pytest.mark.native)]


@pl.program
class BatchAcc:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, N, K], pl.FP32],
          w: pl.Tensor[[1, K, N], pl.FP32], c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
        ta = pl.load(a, offsets=[0, 0, 0], shapes=[B, M, K], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, offsets=[0, 0, 0], shapes=[B, N, K], target_memory=pl.MemorySpace.Mat)
        tw = pl.load(w, offsets=[0, 0, 0], shapes=[1, K, N], target_memory=pl.MemorySpace.Mat)
        acc = pl.batch_matmul(ta, pl.tile.transpose_view(tb))  # a[i] @ b[i]^T
        acc = pl.tile.batch_matmul_acc(acc, ta, tw)  # + a[i] @ w (one matrix for every batch)
        c = pl.store(acc, offsets=[0, 0, 0], output_tensor=c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, N, K], pl.FP32],
             w: pl.Tensor[[1, K, N], pl.FP32], c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
        c = self.k(a, b, w, c)
        return c


@pytest.mark.parametrize("platform", BACKENDS)
def test_batch_matmul_transposed_rhs_then_broadcast_acc(platform):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((B, M, K)).astype(np.float32)
    b = rng.standard_normal((B, N, K)).astype(np.float32)
    w = rng.standard_normal((1, K, N)).astype(np.float32)
    c = np.zeros((B, M, N), np.float32)
    ir.compile(BatchAcc)(a, b, w, c, config=RunConfig(platform=platform))
    want = a.astype(np.float64) @ b.transpose(0, 2, 1) + a.astype(np.float64) @ w
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


@pl.program
class BatchInt:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[1, 4, 32], pl.INT8], b: pl.Tensor[[2, 32, 16], pl.INT8],
          c: pl.Out[pl.Tensor[[2, 4, 16], pl.INT32]]) -> pl.Tensor[[2, 4, 16], pl.INT32]:
        ta = pl.load(a, offsets=[0, 0, 0], shapes=[1, 4, 32], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, offsets=[0, 0, 0], shapes=[2, 32, 16], target_memory=pl.MemorySpace.Mat)
        c = pl.store(pl.batch_matmul(ta, tb), offsets=[0, 0, 0], output_tensor=c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[1, 4, 32], pl.INT8], b: pl.Tensor[[2, 32, 16], pl.INT8],
             c: pl.Out[pl.Tensor[[2, 4, 16], pl.INT32]]) -> pl.Tensor[[2, 4, 16], pl.INT32]:
        c = self.k(a, b, c)
        return c


@pytest.mark.parametrize("platform", BACKENDS)
def test_batch_matmul_broadcast_lhs_int8_accumulates_in_int32(platform):
    rng = np.random.default_rng(4)
    a = rng.integers(-128, 128, (1, 4, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (2, 32, 16)).astype(np.int8)
    c = np.zeros((2, 4, 16), np.int32)
    ir.compile(BatchInt)(a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(c, np.matmul(a.astype(np.int32), b.astype(np.int32)))


def _kernel(lhs: str, rhs: str, call: str):
    src = f'''
import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[{lhs}, pl.FP32], b: pl.Tensor[{rhs}, pl.FP32]):
        ta = pl.load(a, offsets=[0] * {len(eval(lhs))}, shapes={lhs}, target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, offsets=[0] * {len(eval(rhs))}, shapes={rhs}, target_memory=pl.MemorySpace.Mat)
        r = {call}
        return r
'''
    pl.parse(src)


@pytest.mark.parametrize("lhs,rhs,call,msg", [
    ("[2, 4, 8]", "[2, 16, 4]", "pl.batch_matmul(ta, tb)", "inner dimensions differ"),
    ("[2, 4, 8]", "[3, 8, 4]", "pl.batch_matmul(ta, tb)", "do not broadcast"),
    ("[2, 1, 4, 8]", "[1, 3, 8, 4]", "pl.batch_matmul(ta, tb)", "broadcast partly"),
    ("[4, 8]", "[8, 4]", "pl.batch_matmul(ta, tb)", "3-D"),
    ("[2, 4, 8]", "[2, 8, 4]", "pl.tile.batch_matmul_acc(ta, ta, tb)", "acc must be [2, 4, 4]"),
])
def test_batch_matmul_refusals_name_the_problem_and_line(lhs, rhs, call, msg):
    with pytest.raises(ParserTypeError, match=re.escape(msg)) as e:
        _kernel(lhs, rhs, call)
    assert "r = " in str(e.value)  # (the source line is shown)


KH = 16


@pl.program
class TensorBatched:
    @pl.function(type=pl.FunctionType.InCore)
    def k2d3d(self, a: pl.Tensor[[M, 2 * KH], pl.FP32], b: pl.Tensor[[1, N, 2 * KH], pl.FP32],
              c: pl.Out[pl.Tensor[[1, M, N], pl.FP32]]) -> pl.Tensor[[1, M, N], pl.FP32]:
        a0 = pl.slice(a, [M, KH], [0, 0])
        a1 = pl.slice(a, [M, KH], [0, KH])
        b0 = pl.slice(b, [1, N, KH], [0, 0, 0])
        b1 = pl.slice(b, [1, N, KH], [0, 0, KH])
        acc = pl.matmul(a0, b0, b_trans=True, out_dtype=pl.FP32)  # a 2-D lhs: one matrix for the batch
        acc = pl.matmul_acc(acc, a1, b1, b_trans=True)
        c = pl.assemble(c, acc, offset=[0, 0, 0])
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def k3d(self, a: pl.Tensor[[B, K, M], pl.FP32], b0: pl.Tensor[[B, K, N], pl.FP32],
            b1: pl.Tensor[[B, K, N], pl.FP32], c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
        bt = pl.add(b0, b1)  # a vector result feeding the batched matmul
        c = pl.assemble(c, pl.matmul(a, bt, a_trans=True), offset=[0, 0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, 2 * KH], pl.FP32], b: pl.Tensor[[1, N, 2 * KH], pl.FP32],
             c: pl.Out[pl.Tensor[[1, M, N], pl.FP32]], a3: pl.Tensor[[B, K, M], pl.FP32],
             b0: pl.Tensor[[B, K, N], pl.FP32], b1: pl.Tensor[[B, K, N], pl.FP32],
             c3: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]):
        c = self.k2d3d(a, b, c)
        c3 = self.k3d(a3, b0, b1, c3)
        return c, c3


@pytest.mark.parametrize("platform", BACKENDS)
def test_tensor_matmul_of_rank_3_is_batched(platform):
    rng = np.random.default_rng(5)

    def f(*s):
        return rng.standard_normal(s).astype(np.float32)

    a, b, a3, b0, b1 = f(M, 2 * KH), f(1, N, 2 * KH), f(B, K, M), f(B, K, N), f(B, K, N)
    c, c3 = np.zeros((1, M, N), np.float32), np.zeros((B, M, N), np.float32)
    ir.compile(TensorBatched)(a, b, c, a3, b0, b1, c3, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c3, a3.transpose(0, 2, 1).astype(np.float64) @ (b0 + b1), rtol=1e-5, atol=1e-5)


def test_tensor_batched_matmul_refuses_partial_broadcast_with_the_line():
    src = """
import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 1, 4, 8], pl.FP32], b: pl.Tensor[[1, 3, 8, 4], pl.FP32]):
        r = pl.matmul(a, b)
        return r
"""
    with pytest.raises(ParserTypeError, match="broadcast partly") as e:
        pl.parse(src)
    assert "r = pl.matmul(a, b)" in str(e.value)


def _expand_program(shape):
    @pl.program
    class Expand:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[shape, pl.FP32], y: pl.Out[pl.Tensor[[4, 6, 8], pl.FP32]]) -> pl.Tensor[[4, 6, 8], pl.FP32]:
            out = pl.expand_clone(x, y)  # (fills its target, the Out parameter)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[shape, pl.FP32], y: pl.Out[pl.Tensor[[4, 6, 8], pl.FP32]]) -> pl.Tensor[[4, 6, 8], pl.FP32]:
            y = self.k(x, y)
            return y
    return Expand


@pytest.mark.parametrize("platform", BACKENDS)
@pytest.mark.parametrize("shape", [[4, 6, 8], [1, 6, 8], [4, 1, 8], [4, 6, 1], [1, 1, 8], [6, 8]])
def test_expand_clone_broadcasts_any_size_1_dim(platform, shape):
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    y = np.zeros((4, 6, 8), np.float32)
    ir.compile(_expand_program(shape))(x, y, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(y, np.broadcast_to(x, (4, 6, 8)))


@pl.program
class ExtractAndTranspose:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Tensor[[16, 8], pl.FP32], x3: pl.Tensor[[2, 8, 16], pl.FP32],
          row: pl.Out[pl.Tensor[[1, 16], pl.FP32]], o3: pl.Out[pl.Tensor[[2, 16, 8], pl.FP32]]):
        st = pl.transpose(pl.load(s, [0, 0], [16, 8]), axis1=0, axis2=1)  # [8, 16]
        row = pl.store(pl.tile.extract(st, 3, 0, [1, 16], target_memory=pl.MemorySpace.Vec), [0, 0], row)
        t3 = pl.load(x3, [0, 0, 0], [2, 8, 16])
        o3 = pl.store(pl.transpose(t3, axis1=1, axis2=2), [0, 0, 0], o3)  # each batch transposed
        return row, o3

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Tensor[[16, 8], pl.FP32], x3: pl.Tensor[[2, 8, 16], pl.FP32],
             row: pl.Out[pl.Tensor[[1, 16], pl.FP32]], o3: pl.Out[pl.Tensor[[2, 16, 8], pl.FP32]]):
        row, o3 = self.k(s, x3, row, o3)
        return row, o3


@pytest.mark.parametrize("platform", BACKENDS)
def test_tile_extract_window_and_batched_tile_transpose(platform):
    rng = np.random.default_rng(7)
    s, x3 = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((2, 8, 16)).astype(np.float32)
    row, o3 = np.zeros((1, 16), np.float32), np.zeros((2, 16, 8), np.float32)
    ir.compile(ExtractAndTranspose)(s, x3, row, o3, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(row[0], s[:, 3])
    np.testing.assert_array_equal(o3, x3.transpose(0, 2, 1))


@pytest.mark.parametrize("body,msg", [
    ("r = pl.expand_clone(a, b)", "[4, 8] does not broadcast to [8, 8]"),
    ("r = pl.tile.extract(pl.load(a, [0, 0], [4, 8]), 0, 0, [8, 8])", "does not fit the [4, 8] tile"),
])
def test_expand_clone_and_extract_refusals_name_the_problem_and_line(body, msg):
    src = f"""
import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32], b: pl.Tensor[[8, 8], pl.FP32]):
        {body}
        return r
"""
    with pytest.raises(ParserTypeError, match=re.escape(msg)) as e:
        pl.parse(src)
    assert body in str(e.value)


@pl.program
class ValidAndL1:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], n: pl.Tensor[[1], pl.INT32], o1: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             o2: pl.Out[pl.Tensor[[16, 32], pl.FP32]], o3: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):  # a tensor: the window's valid_shape
            o1 = pl.assemble(o1, pl.fillpad(pl.set_validshape(x, 5, 20), pad_value=pl.PadValue.max), [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP):  # a tile, rows from the data: the extents at run time
            rows = pl.cast(pl.read(n, [0]), pl.INDEX)
            t = pl.set_validshape(pl.load(x, [0, 0], [16, 32]), rows, 7)
            o2 = pl.store(pl.fillpad(t, pad_value=pl.PadValue.zero), [0, 0], o2)
        with pl.at(level=pl.Level.CORE_GROUP):  # an L1 buffer: zeros where nothing was assembled
            kv = pl.create_l1([16, 32], pl.FP32)
            kv = pl.assemble(kv, pl.slice(x, [4, 32], [0, 0]), [2, 0])
            o3 = pl.assemble(o3, pl.add(kv, 1.0), [0, 0])
        return o1, o2, o3


@pytest.mark.parametrize("platform", BACKENDS)
def test_set_validshape_moves_the_valid_region_and_create_l1_is_a_zeroed_buffer(platform):
    x = np.random.default_rng(8).standard_normal((16, 32)).astype(np.float32)
    n = np.array([3], np.int32)
    o1, o2, o3 = (np.zeros((16, 32), np.float32) for _ in range(3))
    ir.compile(ValidAndL1)(x, n, o1, o2, o3, config=RunConfig(platform=platform))
    e1 = np.full_like(x, np.inf)
    e1[:5, :20] = x[:5, :20]
    e2 = np.zeros_like(x)
    e2[:3, :7] = x[:3, :7]
    e3 = np.ones_like(x)
    e3[2:6] += x[:4]
    np.testing.assert_array_equal(o1, e1)
    np.testing.assert_array_equal(o2, e2)
    np.testing.assert_array_equal(o3, e3)


def test_set_validshape_refuses_extents_outside_the_tile_with_the_line():
    src = """
import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32]):
        r = pl.set_validshape(pl.load(a, [0, 0], [4, 8]), 5, 8)
        return r
"""
    with pytest.raises(ParserTypeError, match=re.escape("valid_rows 5 is outside [0, 4]")) as e:
        pl.parse(src)
    assert "r = pl.set_validshape" in str(e.value)


@pl.program
class Random:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[4, 256], pl.UINT32]], d: pl.Out[pl.Tensor[[8, 128], pl.INT32]]):
        a = pl.tile.random(0x1234, 0x5678, 1, 2, 3, 4, [4, 256])
        b = pl.tile.random(0x0ABC, 0x0DEF, 0xFFFFFFFF, 0, 0, 0, [8, 128], dtype=pl.INT32, rounds=7)
        b2 = pl.tile.random(0x0ABC, 0x0DEF, 0xFFFFFFFF, 0, 0, 0, [8, 128], dtype=pl.INT32, rounds=7)
        o = pl.store(a, [0, 0], o)
        d = pl.store(pl.sub(b, b2), [0, 0], d)  # same seeds, same bits
        return o, d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[4, 256], pl.UINT32]], d: pl.Out[pl.Tensor[[8, 128], pl.INT32]]):
        o, d = self.k(o, d)
        return o, d


def test_philox_reference_matches_the_published_known_answers():
    from pypto.ops.rng import philox  # (Random123's Philox-4x32-10 known-answer vectors)
    assert [hex(v) for v in philox(0, 0, (0, 0, 0, 0), 4)] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]
    assert [hex(v) for v in philox(0xA4093822, 0x299F31D0, (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), 4)] \
        == ["0xd16cfe09", "0x94fdcceb", "0x5001e420", "0x24126ea1"]


@pytest.mark.parametrize("platform", BACKENDS)
def test_random_tiles_are_the_philox_words_and_deterministic(platform):
    from pypto.ops.rng import philox
    o, d = np.zeros((4, 256), np.uint32), np.ones((8, 128), np.int32)
    ir.compile(Random)(o, d, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(o.reshape(-1), philox(0x1234, 0x5678, (1, 2, 3, 4), 1024))
    np.testing.assert_array_equal(d, 0)
    assert len(np.unique(o)) > 1000  # (not a constant fill)


@pytest.mark.parametrize("call,msg", [
    ("pl.tile.random(1, 2, 3, 4, 5, 6, [4, 8], dtype=pl.FP32)", "dtype must be UINT32 or INT32"),
    ("pl.tile.random(1, 2, 3, 4, 5, 6, [4, 8], rounds=8)", "rounds must be 7 or 10"),
])
def test_random_refusals_name_the_problem_and_line(call, msg):
    src = f"""
import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8], pl.FP32]):
        r = {call}
        return r
"""
    with pytest.raises(ParserTypeError, match=msg) as e:
        pl.parse(src)
    assert call in str(e.value)
