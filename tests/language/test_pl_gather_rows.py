"""Today's remaining gather forms (pl-head §3.7; pypto/ops/gather_routes.py, gather_compare.py,
gather_rows.py): torch.gather along any axis of a rank > 2 tensor, the compare form's
(indices, counts) pair, `pl.gather_row` into an accumulator with a run-time valid_shape and with
transpose, and the `pl.TensorView` annotation; each on both backends, with the refusals naming the
source line."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.language.annotations import AnnotationError
from pypto.language.errors import ParserError
from pypto.runtime import RunConfig

# ir.compile builds the CPU library even for an interpreter run: every test here is native
pytestmark = pytest.mark.native
PLATFORMS = ["interp", "cpu"]


def _take(x, dim, idx):
    return np.take_along_axis(x, idx.astype(np.int64), axis=dim)


@pl.program
class InnerAxes:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[2, 8, 8], pl.FP16], i1: pl.Tensor[[2, 3, 8], pl.INT32],
             y: pl.Tensor[[5, 2, 8], pl.INT32], i0: pl.Tensor[[3, 2, 8], pl.INT16],
             z: pl.Tensor[[2, 3, 4, 8], pl.FP32], i2: pl.Tensor[[2, 3, 2, 8], pl.INT32],
             o1: pl.Out[pl.Tensor[[2, 3, 8], pl.FP16]], o0: pl.Out[pl.Tensor[[3, 2, 8], pl.INT32]],
             o2: pl.Out[pl.Tensor[[2, 3, 2, 8], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            o1 = pl.assemble(o1, pl.gather(x, dim=1, index=i1), [0, 0, 0])
            o0 = pl.assemble(o0, pl.tensor.gather(y, dim=-3, index=i0), [0, 0, 0])
            o2 = pl.assemble(o2, pl.gather(z, 2, i2), [0, 0, 0, 0])
        return o1, o0, o2


@pytest.mark.parametrize("platform", PLATFORMS)
def test_gather_along_inner_axes_of_rank3_and_rank4_is_torch_gather(platform):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 8)).astype(np.float16)
    y = rng.integers(-100, 100, (5, 2, 8)).astype(np.int32)
    z = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
    i1 = rng.integers(0, 8, (2, 3, 8)).astype(np.int32)
    i0 = rng.integers(0, 5, (3, 2, 8)).astype(np.int16)
    i2 = rng.integers(0, 4, (2, 3, 2, 8)).astype(np.int32)
    o1, o0, o2 = np.zeros((2, 3, 8), np.float16), np.zeros((3, 2, 8), np.int32), np.zeros((2, 3, 2, 8), np.float32)
    ir.compile(InnerAxes)(x, i1, y, i0, z, i2, o1, o0, o2, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(o1, _take(x, 1, i1))
    np.testing.assert_array_equal(o0, _take(y, 0, i0))
    np.testing.assert_array_equal(o2, _take(z, 2, i2))


@pl.program
class ScatterInner:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], i0: pl.Tensor[[3, 16], pl.INT32], s0: pl.Tensor[[3, 16], pl.FP32],
             y: pl.Tensor[[2, 6, 8], pl.INT32], i1: pl.Tensor[[2, 4, 8], pl.INT32], s1: pl.Tensor[[2, 4, 8], pl.INT32],
             o0: pl.Out[pl.Tensor[[8, 16], pl.FP32]], o1: pl.Out[pl.Tensor[[2, 6, 8], pl.INT32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            o0 = pl.assemble(o0, pl.scatter(x, dim=0, index=i0, src=s0), [0, 0])
            o1 = pl.assemble(o1, pl.tensor.scatter(y, 1, i1, s1), [0, 0, 0])
        return o0, o1


@pytest.mark.parametrize("platform", PLATFORMS)
def test_scatter_along_inner_axes_is_torch_scatter(platform):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = rng.integers(-50, 50, (2, 6, 8)).astype(np.int32)
    # distinct targets along the scattered axis (the order of duplicates is not pinned)
    i0 = np.stack([rng.permutation(8)[:3] for _ in range(16)], axis=1).astype(np.int32)
    i1 = np.stack([np.stack([rng.permutation(6)[:4] for _ in range(8)], axis=1) for _ in range(2)]).astype(np.int32)
    s0 = rng.standard_normal((3, 16)).astype(np.float32)
    s1 = rng.integers(100, 200, (2, 4, 8)).astype(np.int32)
    o0, o1 = np.zeros_like(x), np.zeros_like(y)
    ir.compile(ScatterInner)(x, i0, s0, y, i1, s1, o0, o1, config=RunConfig(platform=platform))
    w0, w1 = x.copy(), y.copy()
    np.put_along_axis(w0, i0.astype(np.int64), s0, axis=0)
    np.put_along_axis(w1, i1.astype(np.int64), s1, axis=1)
    np.testing.assert_array_equal(o0, w0)
    np.testing.assert_array_equal(o1, w1)


@pl.program
class Compare:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[16, 40], pl.FP32], kv: pl.Tensor[[1], pl.FP32],
             d: pl.Out[pl.Tensor[[16, 8], pl.INT32]], c: pl.Out[pl.Tensor[[1, 16], pl.UINT32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            k: pl.Scalar[pl.FP32] = pl.tensor.read(kv, [0])
            dst, cnt = pl.gather(src, kvalue=k, cmp_mode="le", out_cols=8, offset=100, count_dtype=pl.UINT32)
            d = pl.assemble(d, dst, [0, 0])
            c = pl.assemble(c, cnt, [0, 0])
        return d, c


@pl.program
class CompareTile:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[8, 32], pl.INT32], d: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
          c: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        t = pl.load(src, [0, 0], [8, 32])
        tmp = pl.tile.create([1, 32], pl.UINT8)
        dst, cnt = pl.tile.gather_compare(t, 7, tmp, cmp_mode=pl.CmpType.NE, out_cols=16)
        d = pl.store(dst, [0, 0], d)
        c = pl.store(cnt, [0, 0], c)
        return d, c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[8, 32], pl.INT32], d: pl.Out[pl.Tensor[[8, 16], pl.INT32]],
             c: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        d, c = self.k(src, d, c)
        return d, c


def _compare_ref(src, hit, out_cols, offset):
    want = np.zeros((src.shape[0], out_cols), np.int32)
    for r in range(src.shape[0]):
        j = np.flatnonzero(hit[r])[:out_cols]
        want[r, : j.size] = j + offset
    return want, hit.sum(axis=1)[None]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_compare_form_gives_matching_columns_and_counts(platform):
    rng = np.random.default_rng(4)
    src = rng.standard_normal((16, 40)).astype(np.float32)
    src[3] = 5.0  # no match in row 3: its slots stay 0
    src[5, :2] = -5.0  # two matches: the rest of row 5's slots are 0
    src[5, 2:] = 5.0
    d, c = np.full((16, 8), -1, np.int32), np.zeros((1, 16), np.uint32)
    ir.compile(Compare)(src, np.array([-0.25], np.float32), d, c, config=RunConfig(platform=platform))
    want_d, want_c = _compare_ref(src, src <= -0.25, 8, 100)
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(c, want_c)  # all the matches, not capped at out_cols


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tile_compare_form_in_a_kernel(platform):
    src = np.random.default_rng(5).integers(0, 9, (8, 32)).astype(np.int32)
    d, c = np.zeros((8, 16), np.int32), np.zeros((1, 8), np.int32)
    ir.compile(CompareTile)(src, d, c, config=RunConfig(platform=platform))
    want_d, want_c = _compare_ref(src, src != 7, 16, 0)
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(c, want_c)


R, D = 32, 24


@pl.program
class GatherRow:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[96, D], pl.BF16], n: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[R, D], pl.BF16]], outt: pl.Out[pl.Tensor[[D, 8], pl.BF16]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            r = pl.cast(pl.read(n, [0]), pl.INDEX)
            acc = pl.create_l1([R, D], pl.BF16)
            acc = pl.gather_row(acc, src, [0, 0], [64, 0], [R, D])  # the whole window: rows 64..95
            acc = pl.gather_row(acc, src, [r, 0], [0, 0], [R, D], valid_shape=[R - r, D])  # rows r.. from 0
            accT = pl.create_l1([D, 8], pl.BF16, transpose=True)
            for k in pl.range(8):
                accT = pl.tensor.gather_row(accT, src, [0, k], [k * 3, 0], [1, D], transpose=True)
            out = pl.assemble(out, acc, [0, 0])
            outt = pl.assemble(outt, accT, [0, 0])
        return out, outt


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("r", [0, 5, 31])
def test_gather_row_moves_only_the_valid_rows_and_places_columns(platform, r):
    src = np.repeat(np.arange(96, dtype=np.float32)[:, None], D, 1) + np.arange(D, dtype=np.float32) / 32
    src = src.astype(pl.BF16.to_numpy())
    out, outt = np.zeros((R, D), src.dtype), np.zeros((D, 8), src.dtype)
    ir.compile(GatherRow)(src, np.array([r], np.int32), out, outt, config=RunConfig(platform=platform))
    want = src[64:96].copy()
    want[r:] = src[: R - r]
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(outt, src[[3 * k for k in range(8)]].T)


@pl.program
class GatherRowTile:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[1, 8], pl.INT32],
          out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
        ub = pl.tile.full([8, 16], dtype=pl.FP32, value=-1.0)
        for k in pl.range(7):  # the last row keeps the fill
            row = pl.cast(pl.read(idx, [0, k]), pl.INDEX)
            ub = pl.tile.gather_row(ub, src, [k, 0], [row, 0], [1, 16])
        out = pl.store(ub, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[1, 8], pl.INT32],
             out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
        out = self.k(src, idx, out)
        return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_gather_row_into_a_tile_with_data_dependent_rows(platform):
    rng = np.random.default_rng(6)
    src = rng.standard_normal((64, 16)).astype(np.float32)
    idx = rng.integers(0, 64, (1, 8)).astype(np.int32)
    out = np.zeros((8, 16), np.float32)
    ir.compile(GatherRowTile)(src, idx, out, config=RunConfig(platform=platform))
    want = np.full((8, 16), -1.0, np.float32)
    want[:7] = src[idx[0, :7]]
    np.testing.assert_array_equal(out, want)


@pl.program
class Viewed:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.FP32, pl.TensorView(valid_shape=[16, 20], layout=pl.TensorLayout.ND)],
          n: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        t = pl.load(x, [0, 0], [16, 32], valid_shape=[16, n])
        y = pl.store(pl.fillpad(t, pad_value=pl.PadValue.zero), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        y = self.k(x, 20, y)
        return y


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tensor_view_annotation_keeps_the_layout_and_the_loads_valid_region(platform):
    x = np.random.default_rng(7).standard_normal((16, 32)).astype(np.float32)
    y = np.full((16, 32), 9.0, np.float32)
    ir.compile(Viewed)(x, y, config=RunConfig(platform=platform))
    want = x.copy()
    want[:, 20:] = 0
    np.testing.assert_array_equal(y, want)


def test_tensor_view_layout_becomes_the_tensor_layout_and_is_checked():
    ann = pl.Tensor[[8, 16], pl.FP16, pl.TensorView(stride=[1, 8], layout=pl.TensorLayout.DN)]
    assert ann.layout is pl.TensorLayout.DN
    assert pl.Tensor[[8, 16], pl.FP16, pl.TensorView()].layout is pl.TensorLayout.ND
    with pytest.raises(AnnotationError, match="layout is required"):
        pl.TensorView(valid_shape=[8, 4])
    with pytest.raises(AnnotationError, match="stride has 3 dims, the tensor 2"):
        _ = pl.Tensor[[8, 16], pl.FP16, pl.TensorView(stride=[1, 1, 1], layout=pl.TensorLayout.ND)]


def _refused(src: str, pattern: str) -> None:
    with pytest.raises(ParserError, match=pattern) as e:
        pl.parse(src)
    assert e.value.span.begin_line == 12  # (the line of the call in _HEAD + line)


_HEAD = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[64, 16], pl.FP32], n: pl.Tensor[[1], pl.INT32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            r = pl.cast(pl.read(n, [0]), pl.INDEX)
            acc = pl.create_l1([16, 16], pl.FP32)
"""


@pytest.mark.parametrize("line,pattern", [
    ("acc = pl.gather_row(acc, x, [0, 0], [0, 0], [r, 16])", "shapes must be compile-time ints"),
    ("acc = pl.gather_row(acc, x, [0, 0], [0, 0], [16, 1], True, valid_shape=[r, 1])",
     "valid_shape is not supported together with transpose"),
    ("acc = pl.gather_row(acc, x, [0], [0, 0], [1, 16])", "dst_offset needs two entries"),
    ("d, c = pl.gather(x, kvalue=1.0, cmp_mode='eq')", "needs kvalue=, cmp_mode= and out_cols= together"),
    ("d, c = pl.gather(x, kvalue=1.0, cmp_mode='approx', out_cols=4)", "cmp_mode must be one of"),
])
def test_refusals_name_the_line(line, pattern):
    _refused(_HEAD + "            " + line + "\n            o = pl.assemble(o, acc, [0, 0])\n        return o\n",
             pattern)


@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 16], pl.FP16], off: pl.Tensor[[2, 3], pl.UINT32], v: pl.Tensor[[2, 4], pl.FP16],
          i: pl.Tensor[[2, 4], pl.INT32], g: pl.Out[pl.Tensor[[2, 24], pl.INT32]],
          s: pl.Out[pl.Tensor[[4, 16], pl.FP16]]):
        t = pl.load(x, [0, 0], [4, 16])
        gb = pl.gatherb(t, pl.load(off, [0, 0], [2, 3]), output_dtype=pl.INT32)
        sc = pl.tile.scatter(t, pl.load(v, [0, 0], [2, 4]), pl.load(i, [0, 0], [2, 4]))
        g = pl.store(gb, [0, 0], g)
        s = pl.store(sc, [0, 0], s)
        return g, s

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP16], off: pl.Tensor[[2, 3], pl.UINT32],
             v: pl.Tensor[[2, 4], pl.FP16], i: pl.Tensor[[2, 4], pl.INT32],
             g: pl.Out[pl.Tensor[[2, 24], pl.INT32]], s: pl.Out[pl.Tensor[[4, 16], pl.FP16]]):
        g, s = self.k(x, off, v, i, g, s)
        return g, s


@pytest.mark.parametrize("platform", PLATFORMS)
def test_gatherb_reads_byte_blocks_and_the_flat_scatter_writes_flat_positions(platform):
    x = np.arange(64, dtype=np.float16).reshape(4, 16)
    off = np.array([[0, 32, 100], [96, 112, 4294967264]], np.uint32)  # 100 + 32 > 128 bytes, and -32: 0
    v = -np.arange(1, 9, dtype=np.float16).reshape(2, 4)
    i = np.array([[0, 5, 5, 63], [64, -1, 17, 5]], np.int32)  # 5 three times: the last (row-major) wins
    g, s = np.zeros((2, 24), np.int32), np.zeros((4, 16), np.float16)
    ir.compile(Blocks)(x, off, v, i, g, s, config=RunConfig(platform=platform))
    raw = x.reshape(-1).view(np.uint8)
    want = np.zeros((2, 24), np.int32)
    for (r, c), b in np.ndenumerate(off):
        if int(b) + 32 <= raw.size:
            want[r, c * 8:(c + 1) * 8] = raw[int(b):int(b) + 32].view(np.int32)
    np.testing.assert_array_equal(g, want)
    ws = x.copy().reshape(-1)
    ws[[0, 63, 17, 5]] = [-1, -4, -7, -8]
    np.testing.assert_array_equal(s, ws.reshape(4, 16))


def test_three_tile_scatter_of_int32_data_stays_the_row_form():
    from pypto.ir.printer import python_print

    src = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 16], pl.INT32], y: pl.Out[pl.Tensor[[4, 16], pl.INT32]],
          z: pl.Out[pl.Tensor[[4, 16], pl.FP32]]):
        t = pl.load(x, [0, 0], [4, 16])
        f = pl.cast(t, pl.FP32)
        y = pl.store(pl.tile.scatter(t, t, t), [0, 0], y)
        z = pl.store(pl.tile.scatter(f, f, t), [0, 0], z)
        return y, z
"""
    text = python_print(pl.parse(src))
    assert "pl.block.scatter(" in text and "pl.block.scatter_flat(" in text


def test_tensor_view_is_refused_under_pl_jit():
    with pytest.raises(TypeError, match="parameter 'x' has a pl.TensorView in its annotation"):
        @pl.jit
        def k(x: pl.Tensor[[8, 16], pl.FP32, pl.TensorView(valid_shape=[8, 4], layout=pl.TensorLayout.ND)],
              y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                y = pl.assemble(y, x, [0, 0])
            return y

        k(np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32))
