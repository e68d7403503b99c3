"""prod / argmax / argmin, reductions over any dim, cumsum / cumprod, topk / argsort / sort32 /
mrgsort (pypto/frontend/reductions.py, sorting.py) against NumPy on the interpreter and the CPU:
dynamic row counts with a ragged last block, rank-3 reductions over every dim, ties and NaN, and
the errors that name the op."""


import ml_dtypes
import numpy as np
import pytest

import pypto
from pypto.frontend.trace import FrontendError
from pypto.ops.ordering import order

INTERP = {"platform": "interp"}
M = pypto.frontend.dynamic("M")
ROWS = 45  # a dynamic row count: the pipeline's row blocks end ragged
DT = {"fp32": (pypto.DT_FP32, np.float32), "fp16": (pypto.DT_FP16, np.float16),
      "bf16": (pypto.DT_BF16, ml_dtypes.bfloat16), "int32": (pypto.DT_INT32, np.int32)}


def _data(npdt, shape, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(npdt, np.integer):
        x = rng.integers(-20, 20, shape)
    else:
        x = np.round(rng.uniform(-4, 4, shape), 1)  # one decimal: many ties
    return x.astype(npdt)


def _run(fn, args, platform):
    return pypto.frontend.jit(fn, runtime_options={"platform": platform})(*args)


def _row_ops(dt):
    spec = pypto.Tensor((M, 64), dt)

    def k(a: spec):
        return (pypto.argmax(a, -1), pypto.argmin(a, 1, keepdim=True), pypto.amax(a, -1), pypto.cumsum(a, -1),
                pypto.topk(a, 5)[0], pypto.topk(a, 5, -1, False)[1], pypto.argsort(a), pypto.argsort(a, -1, True),
                pypto.topk(a, 1)[1], pypto.topk(a, 64)[0])
    return k


def _row_want(x):
    return [np.argmax(x.astype(np.float64), -1), np.argmin(x.astype(np.float64), -1)[:, None], x.max(-1),
            np.cumsum(x.astype(np.float64), -1), np.take_along_axis(x, order(x, True)[:, :5], -1),
            order(x, False)[:, :5], order(x, False), order(x, True), order(x, True)[:, :1],
            np.take_along_axis(x, order(x, True), -1)]


@pytest.mark.parametrize("platform", ["interp", pytest.param("cpu", marks=pytest.mark.native)])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "int32"])
def test_row_ops_dynamic_rows(dtype, platform):
    dt, npdt = DT[dtype]
    x = _data(npdt, (ROWS, 64))
    x[3, 7] = x[3, 50] = 100  # a tie for the maximum: the first index wins
    if dtype != "int32":
        x[5, 9] = x[5, 20] = np.nan  # the first NaN is argmax's and argmin's answer, first in descending order
    got = _run(_row_ops(dt), [x], platform)
    for i, (g, w) in enumerate(zip(got, _row_want(x))):
        g = np.asarray(g).astype(np.float64)
        w = np.asarray(w).astype(np.float64)
        tol = {"fp16": 2e-3, "fp32": 1e-5}.get(dtype, 0) if i == 3 else 0  # (cumsum: rounding of the dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 8, err_msg=f"result {i}")
    assert got[0].dtype == np.int32 and got[0][3] == 7 and (dtype == "int32" or got[0][5] == 9)


@pytest.mark.parametrize("platform", ["interp", pytest.param("cpu", marks=pytest.mark.native)])
def test_rank3_reductions_every_dim(platform):
    spec = pypto.Tensor((3, 5, 64), pypto.DT_FP32)

    def k(a: spec):
        outs = []
        for d in (0, 1, 2):
            outs += [pypto.sum(a, d), pypto.amax(a, d), pypto.amin(a, d, keepdim=True), pypto.mean(a, d),
                     pypto.prod(a, d), pypto.argmax(a, d), pypto.argmin(a, d)]
        return tuple(outs)

    x = _data(np.float32, (3, 5, 64), 1) / 2
    x[1, 2, 3] = x[1, 4, 3] = 9.0  # a tie along dim 1
    got = _run(k, [x], platform)
    x64 = x.astype(np.float64)
    want = []
    for d in (0, 1, 2):
        want += [x64.sum(d), x64.max(d), x64.min(d, keepdims=True), x64.mean(d), x64.prod(d), x64.argmax(d),
                 x64.argmin(d)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, (i, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=f"result {i}")
    assert got[12][1, 3] == 2  # argmax along dim 1: the first of the tie


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "int32"])
def test_prod_cumprod_col_ops_interp(dtype):
    dt, npdt = DT[dtype]
    spec = pypto.Tensor((16, 24), dt)

    def k(a: spec):
        return pypto.prod(a, -1), pypto.prod(a, 0), pypto.argmax(a, 0), pypto.argmin(a, 0, keepdim=True), \
            pypto.cumprod(a, -1), pypto.cumsum(a, 0)

    x = (_data(npdt, (16, 24), 2).astype(np.float64) / (1 if dtype == "int32" else 3)).astype(npdt)
    got = _run(k, [x], "interp")
    x64 = x.astype(np.int64 if dtype == "int32" else np.float64)  # (int64 products wrap as int32 ones do)
    want = [x64.prod(-1), x64.prod(0), x64.argmax(0), x64.argmin(0)[None], np.cumprod(x64, -1), np.cumsum(x64, 0)]
    for i, (g, w) in enumerate(zip(got, want)):
        if dtype == "int32":
            w = w.astype(np.int32)
            np.testing.assert_array_equal(g, w, err_msg=f"result {i}")
        else:
            np.testing.assert_allclose(g.astype(np.float64), w, rtol=2e-2 if dtype == "bf16" else 2e-5,
                                       atol=1e-30, err_msg=f"result {i}")


@pytest.mark.parametrize("platform", ["interp", pytest.param("cpu", marks=pytest.mark.native)])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_sort32_mrgsort_full_sort(dtype, platform):
    dt, npdt = DT[dtype]
    spec = pypto.Tensor((M, 128), dt)

    def k(a: spec):
        s = pypto.sort32(a, 0)
        return s, pypto.mrgsort(s, 32)

    x = _data(npdt, (ROWS, 128), 3)
    s, full = _run(k, [x], platform)
    assert s.shape == (ROWS, 256) and full.shape == (ROWS, 256)
    for b in range(4):  # each block of 32 sorted descending, indices counting from the block start
        blk = x[:, 32 * b:32 * (b + 1)]
        idx = order(blk, True)
        np.testing.assert_array_equal(s[:, 64 * b:64 * (b + 1):2], np.take_along_axis(blk, idx, -1))
        np.testing.assert_array_equal(s[:, 64 * b + 1:64 * (b + 1):2], idx + 32 * b)
    idx = order(x, True)
    np.testing.assert_array_equal(full[:, 0::2], np.take_along_axis(x, idx, -1))
    np.testing.assert_array_equal(full[:, 1::2], idx)  # stable: ties keep the lower index first


def test_sort32_start_index_interp():
    spec = pypto.Tensor((4, 40), pypto.DT_FP32)

    def k(a: spec):
        return pypto.sort32(a, 100)

    x = _data(np.float32, (4, 40), 4)
    got = _run(k, [x], "interp")
    tail = x[:, 32:]  # a partial last block of 8
    np.testing.assert_array_equal(got[:, 65::2], order(tail, True) + 132)


def _fails(fn, spec, x, *needles):
    with pytest.raises(FrontendError) as e:
        _run(fn, [x], "interp")
    for n in needles:
        assert n in str(e.value), str(e.value)


def test_errors_name_the_op():
    spec = pypto.Tensor((8, 16), pypto.DT_FP32)
    x = np.zeros((8, 16), np.float32)
    _fails(lambda a: pypto.topk(a, 17), spec, x, "pypto.topk", "k = 17")
    _fails(lambda a: pypto.topk(a, 0), spec, x, "pypto.topk", "k = 0")
    _fails(lambda a: pypto.topk(a, 2, 0), spec, x, "pypto.topk", "last dim")
    _fails(lambda a: pypto.argmax(a, 2), spec, x, "pypto.argmax", "out of range")
    _fails(lambda a: pypto.prod(a, -3), spec, x, "pypto.prod", "out of range")
    _fails(lambda a: pypto.cumsum(a, 5), spec, x, "pypto.cumsum", "out of range")
    _fails(lambda a: pypto.argsort(a, 0), spec, x, "pypto.argsort")
    _fails(lambda a: pypto.mrgsort(a, 0), spec, x, "pypto.mrgsort", "mergesize")
    xi = np.zeros((8, 16), np.int32)
    ispec = pypto.Tensor((8, 16), pypto.DT_INT32)
    _fails(lambda a: pypto.sort32(a), ispec, xi, "pypto.sort32", "DT_FP32")
    _fails(lambda a: pypto.mrgsort(a, 4), ispec, xi, "pypto.mrgsort", "DT_FP32")


def test_rank3_scan_other_dim_is_refused():
    spec = pypto.Tensor((2, 4, 16), pypto.DT_FP32)
    _fails(lambda a: pypto.cumsum(a, 1), spec, np.zeros((2, 4, 16), np.float32), "pypto.cumsum", "last dim")
