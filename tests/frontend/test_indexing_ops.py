"""The gather / scatter family and the joining, mutating and structural ops of the tensor level
(pypto/frontend/indexing.py, indexing_rows.py, joining.py) against torch / NumPy on both backends."""

import numpy as np
import pytest

import pypto

torch = pytest.importorskip("torch")

PLATFORMS = [pytest.param("interp"), pytest.param("cpu", marks=pytest.mark.native)]
DYN = pypto.DYNAMIC
I32 = pypto.DT_INT32
DT = {"fp32": (pypto.DT_FP32, np.float32), "fp16": (pypto.DT_FP16, np.float16), "int32": (I32, np.int32)}


def _jit(platform):
    return pypto.frontend.jit(runtime_options={"platform": platform})


def _data(shape, npdt, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(npdt, np.integer):
        return rng.integers(-50, 50, shape).astype(npdt)
    return rng.standard_normal(shape).astype(npdt)


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _close(got, want, npdt):
    tol = {np.float16: 2e-3, np.float32: 1e-6}.get(npdt, 0)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------
# gather


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "fp16"])
def test_gather_in_rows_of_a_ragged_tensor_reads_zero_outside(platform, dt):
    pdt, npdt = DT[dt]

    @_jit(platform)
    def k(x: pypto.Tensor((DYN, 40), pdt), idx: pypto.Tensor((DYN, 12), I32)):
        return pypto.gather(x, -1, idx)

    for rows in (37, 5):  # one program for both; 37 rows: a ragged last block
        x = _data((rows, 40), npdt, rows)
        idx = np.random.default_rng(rows).integers(0, 40, (rows, 12)).astype(np.int32)
        want = torch.gather(_t(x), -1, _t(idx).long()).numpy()
        np.testing.assert_array_equal(k(x, idx), want)
    idx[0, :4] = [-1, 40, 1000, -7]  # out of range: 0, no access outside the row
    want[0, :4] = 0
    np.testing.assert_array_equal(k(x, idx), want)
    assert len(k.compiled_programs) == 1


@pytest.mark.parametrize("platform", PLATFORMS)
def test_gather_along_dim0_and_in_rank3(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((16, 24), pypto.DT_FP32), i0: pypto.Tensor((8, 24), I32),
          y: pypto.Tensor((2, 5, 16), pypto.DT_FP32), i3: pypto.Tensor((2, 3, 4), I32)):
        return pypto.gather(x, 0, i0), pypto.gather(y, -1, i3)

    x, y = _data((16, 24), np.float32), _data((2, 5, 16), np.float32, 1)
    i0 = np.random.default_rng(2).integers(0, 16, (8, 24)).astype(np.int32)
    i3 = np.random.default_rng(3).integers(0, 16, (2, 3, 4)).astype(np.int32)  # (smaller than y in dim 1)
    g0, g3 = k(x, i0, y, i3)
    np.testing.assert_array_equal(g0, torch.gather(_t(x), 0, _t(i0).long()).numpy())
    np.testing.assert_array_equal(g3, torch.gather(_t(y), -1, _t(i3).long()).numpy())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_gathermask_patterns(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((DYN, 32), pypto.DT_FP32)):
        return tuple(pypto.gathermask(x, p) for p in range(1, 8))

    x = _data((19, 32), np.float32)
    want = [x[:, 0::2], x[:, 1::2], x[:, 0::4], x[:, 1::4], x[:, 2::4], x[:, 3::4], x]
    for got, w in zip(k(x), want):
        np.testing.assert_array_equal(got, w)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_index_select_along_the_last_dim(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((DYN, 16), pypto.DT_FP32), ids: pypto.Tensor((6,), I32)):
        return pypto.index_select(x, -1, ids)

    x = _data((21, 16), np.float32)
    ids = np.array([15, 0, 3, 3, 7, 1], np.int32)
    np.testing.assert_array_equal(k(x, ids), torch.index_select(_t(x), -1, _t(ids).long()).numpy())


# ---------------------------------------------------------------------------------------------
# scatter


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "int32"])
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter_with_duplicate_indices(platform, dt, reduce):
    pdt, npdt = DT[dt]

    @_jit(platform)
    def k(x: pypto.Tensor((DYN, 24), pdt), idx: pypto.Tensor((DYN, 10), I32), src: pypto.Tensor((DYN, 10), pdt)):
        return pypto.scatter(x, -1, idx, src, reduce=reduce)

    x, src = _data((37, 24), npdt), _data((37, 10), npdt, 1)
    idx = np.random.default_rng(2).integers(0, 6, (37, 10)).astype(np.int32)  # many duplicates per row
    idx[3, :2] = [-1, 24]  # skipped
    got = k(x, idx, src)
    ok = (idx >= 0) & (idx < 24)
    if reduce is None:  # duplicates: the last write (largest k) wins
        want = x.copy()
        for r in range(37):
            for j in range(10):
                if ok[r, j]:
                    want[r, idx[r, j]] = src[r, j]
    else:
        safe = np.where(ok, idx, 0)
        neutral = 0 if reduce == "add" else 1
        want = _t(x).scatter_reduce(-1, _t(safe).long(), _t(np.where(ok, src, npdt(neutral))),
                                    "sum" if reduce == "add" else "prod").numpy()
    _close(got, want, npdt)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_scatter_in_place_scalar_src_and_dim0(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((12, 16), pypto.DT_FP32), idx: pypto.Tensor((12, 3), I32),
          y: pypto.Tensor((12, 16), pypto.DT_FP32), i0: pypto.Tensor((5, 16), I32),
          s0: pypto.Tensor((5, 16), pypto.DT_FP32)):
        pypto.scatter_(x, 1, idx, 2.5)
        return pypto.scatter(y, 0, i0, s0, reduce="add")

    x, y, s0 = _data((12, 16), np.float32), _data((12, 16), np.float32, 1), _data((5, 16), np.float32, 2)
    idx = np.random.default_rng(3).integers(0, 16, (12, 3)).astype(np.int32)
    i0 = np.random.default_rng(4).integers(0, 3, (5, 16)).astype(np.int32)
    want_x = _t(x.copy()).scatter_(1, _t(idx).long(), 2.5).numpy()
    want_y = _t(y).scatter_add(0, _t(i0).long(), _t(s0)).numpy()
    got_y = k(x, idx, y, i0, s0)
    np.testing.assert_array_equal(x, want_x)
    _close(got_y, want_y, np.float32)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "int32"])
def test_index_add_accumulates_duplicates(platform, dt):
    pdt, npdt = DT[dt]

    @_jit(platform)
    def k(x: pypto.Tensor((10, 16), pdt), rows: pypto.Tensor((6,), I32), src: pypto.Tensor((6, 16), pdt),
          cols: pypto.Tensor((5,), I32), src_c: pypto.Tensor((10, 5), pdt)):
        pypto.index_add_(x, 0, rows, src, alpha=2)
        return pypto.index_add(x, -1, cols, src_c)

    x, src, src_c = _data((10, 16), npdt), _data((6, 16), npdt, 1), _data((10, 5), npdt, 2)
    rows = np.array([3, 1, 3, 3, 0, 9], np.int32)
    cols = np.array([15, 2, 2, 0, 2], np.int32)
    want_x = _t(x.copy()).index_add_(0, _t(rows).long(), _t(src), alpha=2).numpy()
    got = k(x, rows, src, cols, src_c)
    _close(x, want_x, npdt)
    _close(got, _t(want_x).index_add(-1, _t(cols).long(), _t(src_c)).numpy(), npdt)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_index_add_in_rows_of_rank3(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((2, 3, 8), pypto.DT_FP32), cols: pypto.Tensor((4,), I32),
          src: pypto.Tensor((2, 3, 4), pypto.DT_FP32)):
        return pypto.index_add(x, 2, cols, src, alpha=-1.5)

    x, src = _data((2, 3, 8), np.float32), _data((2, 3, 4), np.float32, 1)
    cols = np.array([7, 7, 0, 7], np.int32)
    want = _t(x).index_add(2, _t(cols).long(), _t(src), alpha=-1.5).numpy()
    _close(k(x, cols, src), want, np.float32)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_index_put(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((8, 12), pypto.DT_FP32), a: pypto.Tensor((DYN,), I32), b: pypto.Tensor((DYN,), I32),
          v: pypto.Tensor((DYN,), pypto.DT_FP32), y: pypto.Tensor((8, 12), pypto.DT_FP32),
          r: pypto.Tensor((3,), I32), rows: pypto.Tensor((3, 12), pypto.DT_FP32)):
        pypto.index_put_(x, (a, b), v, accumulate=True)
        pypto.index_put_(y, (r,), rows)

    x, y, rows = _data((8, 12), np.float32), _data((8, 12), np.float32, 1), _data((3, 12), np.float32, 2)
    a, b = np.array([1, 7, 1, 1, 0], np.int32), np.array([3, 11, 3, 3, 0], np.int32)  # (1, 3) three times
    v = np.arange(1, 6, dtype=np.float32)
    r = np.array([6, 0, 2], np.int32)
    want_x = _t(x.copy()).index_put_((_t(a).long(), _t(b).long()), _t(v), accumulate=True).numpy()
    want_y = _t(y.copy()).index_put_((_t(r).long(),), _t(rows)).numpy()
    k(x, a, b, v, y, r, rows)
    _close(x, want_x, np.float32)
    np.testing.assert_array_equal(y, want_y)


# ---------------------------------------------------------------------------------------------
# joining, mutating, structural


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "fp16"])
def test_interleave_and_deinterleave(platform, dt):
    pdt, npdt = DT[dt]

    @_jit(platform)
    def k(a: pypto.Tensor((6, 16), pdt), b: pypto.Tensor((6, 16), pdt)):
        t0, t1 = pypto.interleave(a, b)
        u0, u1 = pypto.deinterleave(t0, t1)
        return t0, t1, u0, u1

    @_jit(platform)
    def split(c: pypto.Tensor((DYN, 32), pdt)):  # (row-tiled: a kernel of its own)
        return pypto.deinterleave(c)

    a, b, c = _data((6, 16), npdt), _data((6, 16), npdt, 1), _data((11, 32), npdt, 2)
    joined = np.stack([a, b], -1).reshape(6, 32)
    (t0, t1, u0, u1), (e, o) = k(a, b), split(c)
    for got, want in ((t0, joined[:, :16]), (t1, joined[:, 16:]), (u0, a), (u1, b), (e, c[:, ::2]), (o, c[:, 1::2])):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_permute(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((2, 3, 8), pypto.DT_FP32), m: pypto.Tensor((5, 7), pypto.DT_FP32)):
        return pypto.permute(x, (2, 0, 1)), pypto.permute(x, [1, 0, -1]), pypto.permute(m, (1, 0))

    x, m = _data((2, 3, 8), np.float32), _data((5, 7), np.float32, 1)
    p1, p2, p3 = k(x, m)
    np.testing.assert_array_equal(p1, _t(x).permute(2, 0, 1).numpy())
    np.testing.assert_array_equal(p2, _t(x).permute(1, 0, 2).numpy())
    np.testing.assert_array_equal(p3, m.T)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "fp16"])
def test_pack_and_unpack_reinterpret_bytes(platform, dt):
    pdt, npdt = DT[dt]

    @_jit(platform)
    def round_trip(x: pypto.Tensor((13, 16), pdt)):
        p = pypto.pack(x)
        return p, pypto.unpack(p, pdt)

    @_jit(platform)
    def rows_of_bytes(raw: pypto.Tensor((DYN, 64), pypto.DT_UINT8)):  # (a 2-D input keeps its rows)
        return pypto.unpack(raw, pypto.DT_FP32)

    x = _data((13, 16), npdt)
    p, u = round_trip(x)
    assert p.dtype == np.uint8
    np.testing.assert_array_equal(p, x.reshape(-1).view(np.uint8))
    np.testing.assert_array_equal(u, x.reshape(-1))
    raw = np.arange(5 * 16, dtype=np.float32).reshape(5, 16)
    np.testing.assert_array_equal(rows_of_bytes(raw.view(np.uint8)), raw)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_atomic_add_from_every_iteration_into_overlapping_regions(platform):
    @_jit(platform)
    def k(src: pypto.Tensor((4, 16), pypto.DT_FP32), dst: pypto.Tensor((12, 16), pypto.DT_FP32)):
        for i in pypto.loop(0, 6):
            pypto.atomic_add(src * 1.0, [i, 0], dst)  # rows i..i+3: up to four iterations add into each row

    src, dst = _data((4, 16), np.float32), _data((12, 16), np.float32, 1)
    want = dst.astype(np.float64)
    for i in range(6):
        want[i:i + 4] += src
    k(src, dst)
    np.testing.assert_allclose(dst, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "int32"])
def test_pad_right_and_bottom(platform, dt):
    pdt, npdt = DT[dt]

    @_jit(platform)
    def k(x: pypto.Tensor((5, 7), pdt), y: pypto.Tensor((2, 3, 4), pdt)):
        return pypto.pad(x, (0, 3, 0, 2), value=9), pypto.pad(y, [0, 1])

    x, y = _data((5, 7), npdt), _data((2, 3, 4), npdt, 1)
    px, py = k(x, y)
    np.testing.assert_array_equal(px, torch.nn.functional.pad(_t(x), (0, 3, 0, 2), value=9).numpy())
    np.testing.assert_array_equal(py, torch.nn.functional.pad(_t(y), (0, 1)).numpy())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_fillpad_outside_the_valid_shape(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((16, 32), pypto.DT_FP32), a: pypto.Tensor((DYN, 32), pypto.DT_FP32),
          out: pypto.Tensor((DYN, 32), pypto.DT_FP32)):
        n = a.shape[0]
        for i in pypto.loop(0, pypto.ceildiv(n, 16)):  # a run-time valid shape: the last block's rows
            v = pypto.view(a, [16, 32], [i * 16, 0], valid_shape=[pypto.min(16, n - i * 16), 32])
            out[i * 16:(i + 1) * 16, :] = pypto.fillpad(v, value=float("-inf"))
        return pypto.fillpad(pypto.view(x, [16, 32], [0, 0], valid_shape=[13, 7]), value=-2.5)

    x, a = _data((16, 32), np.float32), _data((40, 32), np.float32, 1)
    out = np.zeros((48, 32), np.float32)
    got = k(x, a, out)
    want = np.full((16, 32), -2.5, np.float32)
    want[:13, :7] = x[:13, :7]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out[:40], a)
    assert np.all(out[40:] == -np.inf)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_one_hot(platform):
    @_jit(platform)
    def k(idx: pypto.Tensor((3, 4), I32)):
        return pypto.one_hot(idx, 6)

    idx = np.array([[0, 5, 2, 2], [1, 3, 4, 0], [5, 5, 6, -1]], np.int32)  # 6 and -1: rows of zeros
    got = k(idx)
    want = torch.nn.functional.one_hot(_t(np.clip(idx, 0, 5)).long(), 6).int().numpy()
    want[2, 2:] = 0
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------
# errors: named op, the user's line, before anything runs


def _fails(fn, args, match):
    with pytest.raises(pypto.frontend.FrontendError, match=match) as e:
        fn(*args)
    assert "test_indexing_ops.py" in str(e.value)  # the user's line is shown


F32 = pypto.DT_FP32


def test_a_float_index_is_refused():
    @_jit("interp")
    def g(x: pypto.Tensor((4, 8), F32), i: pypto.Tensor((4, 2), F32)):
        return pypto.gather(x, -1, i)

    @_jit("interp")
    def s(x: pypto.Tensor((4, 8), F32), i: pypto.Tensor((4, 2), F32)):
        return pypto.scatter(x, -1, i, 1.0)

    @_jit("interp")
    def a(x: pypto.Tensor((4, 8), F32), i: pypto.Tensor((2,), F32), v: pypto.Tensor((2, 8), F32)):
        pypto.index_add_(x, 0, i, v)

    x = np.zeros((4, 8), np.float32)
    _fails(g, (x, np.zeros((4, 2), np.float32)), r"pypto\.gather: the index must hold int32")
    _fails(s, (x, np.zeros((4, 2), np.float32)), r"pypto\.scatter: the index must hold int32")
    _fails(a, (x, np.zeros(2, np.float32), np.zeros((2, 8), np.float32)), r"pypto\.index_add_: the index must hold int32")


def test_an_index_of_the_wrong_rank_is_refused():
    @_jit("interp")
    def g(x: pypto.Tensor((4, 8), F32), i: pypto.Tensor((8,), I32)):
        return pypto.gather(x, -1, i)

    @_jit("interp")
    def s(x: pypto.Tensor((4, 8), F32), i: pypto.Tensor((4, 2), I32), v: pypto.Tensor((4, 1), F32)):
        return pypto.scatter(x, -1, i, v)

    @_jit("interp")
    def p(x: pypto.Tensor((4, 8), F32), i: pypto.Tensor((2, 2), I32)):
        pypto.index_put_(x, (i,), 1.0)

    x = np.zeros((4, 8), np.float32)
    _fails(g, (x, np.zeros(8, np.int32)), r"pypto\.gather: the index must have the input's rank 2")
    _fails(s, (x, np.zeros((4, 2), np.int32), np.zeros((4, 1), np.float32)),
           r"pypto\.scatter: the index's dim 1 \(2\) exceeds src's \(1\)")
    _fails(p, (x, np.zeros((2, 2), np.int32)), r"pypto\.index_put_: the index must have rank 1")


def test_bad_dims_patterns_and_padding_are_refused():
    @_jit("interp")
    def pad3(y: pypto.Tensor((2, 3, 4), F32)):
        return pypto.pad(y, (0, 1, 0, 1, 0, 2))

    @_jit("interp")
    def pad_left(y: pypto.Tensor((3, 4), F32)):
        return pypto.pad(y, (1, 0))

    @_jit("interp")
    def gm(y: pypto.Tensor((3, 6), F32)):
        return pypto.gathermask(y, 3)

    @_jit("interp")
    def g3(y: pypto.Tensor((2, 3, 4), F32), i: pypto.Tensor((2, 3, 4), I32)):
        return pypto.gather(y, 1, i)

    @_jit("interp")
    def red(y: pypto.Tensor((3, 4), F32), i: pypto.Tensor((3, 4), I32)):
        return pypto.scatter(y, -1, i, 1.0, reduce="max")

    @_jit("interp")
    def perm(y: pypto.Tensor((2, 3, 4), F32)):
        return pypto.permute(y, (0, 0, 1))

    y3, y2 = np.zeros((2, 3, 4), np.float32), np.zeros((3, 4), np.float32)
    _fails(pad3, (y3,), r"pypto\.pad: .*pads dim 0 of a rank-3 tensor: only the last two dims")
    _fails(pad_left, (y2,), r"pypto\.pad: .*only right / bottom padding")
    _fails(gm, (np.zeros((3, 6), np.float32),), r"pypto\.gathermask: pattern 3 keeps one of each 4")
    _fails(g3, (y3, np.zeros((2, 3, 4), np.int32)), r"pypto\.gather: dim 1 of a rank-3 tensor")
    _fails(red, (y2, np.zeros((3, 4), np.int32)), r"pypto\.scatter: reduce must be")
    _fails(perm, (y3,), r"pypto\.permute: dims \[0, 0, 1\] is not a permutation")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_method_and_index_spellings(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((6, 8), pypto.DT_FP32), idx: pypto.Tensor((6, 3), I32), src: pypto.Tensor((6, 3), pypto.DT_FP32)):
        g = x[1:idx]  # (reference §1.2: a slice dim:index_tensor gathers)
        h = x.gather(-1, idx) + x.pad([0, 1])[:, 1:4]
        x[-1:idx] = src  # (and scatters)
        return g, h

    x, src = _data((6, 8), np.float32), _data((6, 3), np.float32, 1)
    idx = np.random.default_rng(2).permuted(np.tile(np.arange(8, dtype=np.int32), (6, 1)), axis=1)[:, :3].copy()
    x0 = x.copy()
    g, h = k(x, idx, src)
    np.testing.assert_array_equal(g, np.take_along_axis(x0, idx, 1))
    np.testing.assert_allclose(h, np.take_along_axis(x0, idx, 1) + x0[:, 1:4], rtol=1e-6)
    np.testing.assert_array_equal(x, _t(x0).scatter(1, _t(idx).long(), _t(src)).numpy())
