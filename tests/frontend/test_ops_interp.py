"""Every tensor-level op of `pypto.frontend` against NumPy, on the interpreter (no native build):
elementwise ops with tensors, broadcast rows and scalars on either side, reductions with and
without keepdim, composites, structural ops, Python operators and in-place operators, on static
shapes and on a dynamic row count (tiled by the pipeline, with a ragged last block)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto
from tests.programs.frontend_ops import BINARY, UNARY, M, inputs

INTERP = {"platform": "interp"}


def _kernel(body, n_in: int):
    """A jit kernel over `n_in` [M, 64] fp32 inputs returning body(*inputs) as a new tensor."""
    spec = pypto.Tensor((M, 64), pypto.DT_FP32)

    if n_in == 1:
        def k(a: spec, out: spec):
            out[:] = body(a)
    elif n_in == 2:
        def k(a: spec, b: spec, out: spec):
            out[:] = body(a, b)
    return pypto.frontend.jit(k, runtime_options=INTERP)


@pytest.mark.parametrize("name, op, ref, src", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, op, ref, src):
    x, _, pos, _ = inputs()
    a = {"x": x, "pos": pos}[src]
    out = np.full_like(a, -99)
    _kernel(op, 1)(a, out)
    np.testing.assert_allclose(out, ref(a.astype(np.float64)), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name, op, ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, op, ref):
    x, y, pos, _ = inputs()
    b = pos if "div" in name else y
    out = np.full_like(x, -99)
    _kernel(op, 2)(x, b, out)
    np.testing.assert_allclose(out, ref(x.astype(np.float64), b.astype(np.float64)), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name, fn, ref", [
    ("sub_row", lambda a, r: a - r, lambda a, r: a - r),
    ("div_row", lambda a, r: a / r, lambda a, r: a / r),
    ("mul_row", lambda a, r: pypto.mul(a, r), lambda a, r: a * r),
])
def test_row_broadcast(name, fn, ref):
    x, _, _, row = inputs()
    row = np.abs(row) + 0.5

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((M, 64), pypto.DT_FP32), r: pypto.Tensor((M, 1), pypto.DT_FP32),
          out: pypto.Tensor((M, 64), pypto.DT_FP32)):
        out[:] = fn(a, r)

    out = np.zeros_like(x)
    k(x, row, out)
    np.testing.assert_allclose(out, ref(x.astype(np.float64), row), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("op, ref", [(pypto.amax, np.max), (pypto.amin, np.min), (pypto.sum, np.sum),
                                     (pypto.mean, np.mean)], ids=["amax", "amin", "sum", "mean"])
@pytest.mark.parametrize("keepdim", [True, False])
def test_reductions(op, ref, keepdim):
    x, *_ = inputs(16)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32)):
        r = op(a, dim=-1, keepdim=keepdim)
        return r * 1.0

    got = k(x)
    want = ref(x.astype(np.float64), axis=-1, keepdims=keepdim)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op, ref", [(pypto.amax, np.max), (pypto.amin, np.min), (pypto.sum, np.sum)],
                         ids=["amax", "amin", "sum"])
@pytest.mark.parametrize("keepdim", [True, False])
def test_column_reductions(op, ref, keepdim):
    x, *_ = inputs(16)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32)):
        return op(a, dim=0, keepdim=keepdim) * 1.0

    want = ref(x.astype(np.float64), axis=0, keepdims=keepdim)
    got = k(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_inplace_operators_and_python_loops():
    """`acc += x` updates the handle; a plain Python `for` unrolls while tracing."""
    x, y, *_ = inputs(16)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32), b: pypto.Tensor((16, 64), pypto.DT_FP32),
          out: pypto.Tensor((16, 64), pypto.DT_FP32)):
        acc = a * 1.0
        for _ in range(3):
            acc += b
        acc *= 0.5
        out[:] = acc

    out = np.zeros_like(x)
    k(x, y, out)
    np.testing.assert_allclose(out, (x + 3 * y) * 0.5, rtol=1e-6, atol=1e-6)


def test_structural_ops():
    x, y, *_ = inputs(16)
    w = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float32)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32), b: pypto.Tensor((16, 64), pypto.DT_FP32),
          w: pypto.Tensor((64, 32), pypto.DT_FP32)):
        mm = pypto.matmul(a, w)                      # [16, 32]
        mt = pypto.matmul(w, a, b_trans=True, a_trans=True)  # w^T a^T = (a w)^T: [32, 16]
        cat = pypto.concat([a[:, 0:32], b[:, 32:64]], dim=-1)
        rows = pypto.concat([a[0:8, :], b[8:16, :]], dim=0)
        tr = pypto.transpose(a[0:8, 0:16], 0, 1)
        return mm, mt, cat, rows, tr * 1.0

    mm, mt, cat, rows, tr = k(x, y, w)
    np.testing.assert_allclose(mm, x @ w, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(mt, (x @ w).T, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(cat, np.concatenate([x[:, :32], y[:, 32:]], axis=1))
    np.testing.assert_array_equal(rows, np.concatenate([x[:8], y[8:]], axis=0))
    np.testing.assert_array_equal(tr, x[:8, :16].T)


def test_cast_and_views_with_valid_shape():
    x, *_ = inputs(16)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32), out: pypto.Tensor((16, 64), pypto.DT_FP16)):
        out[:] = pypto.cast(a * 2.0, pypto.DT_FP16)

    out = np.zeros((16, 64), np.float16)
    k(x, out)
    np.testing.assert_array_equal(out, (x * 2).astype(np.float16))


@pytest.mark.parametrize("rows", [1, 16, 37, 100])
def test_loop_over_row_blocks_with_a_ragged_tail(rows):
    """pypto.loop over blocks of 16 rows, each a view whose valid rows are min(16, n - 16 i); the
    result is assembled through an open-ended slice."""
    x, *_ = inputs(rows)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32), out: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32)):
        n = a.shape[0]
        for i in pypto.loop(0, pypto.ceildiv(n, 16), 1, name="rows", idx_name="i"):
            v = pypto.view(a, [16, 64], [i * 16, 0], valid_shape=[pypto.min(16, n - i * 16), 64])
            out[i * 16:, :] = pypto.softmax(v, -1)

    out = np.zeros_like(x)
    k(x, out)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-6, atol=1e-7)
    assert len(k.compiled_programs) == 1  # every row count runs the same program


def test_loop_unroll_covers_every_step():
    """loop_unroll([4, 2]) processes 4, then 2, then 1 blocks at a time; together every block once."""
    x, *_ = inputs(7 * 8)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((56, 64), pypto.DT_FP32), out: pypto.Tensor((56, 64), pypto.DT_FP32)):
        for i, u in pypto.loop_unroll(0, 7, 1, unroll_list=[4, 2]):
            blk = a[i * 8:(i + u) * 8, :]
            out[i * 8:(i + u) * 8, :] = blk * float(u)

    out = np.zeros_like(x)
    k(x, out)
    factors = np.repeat([4, 4, 4, 4, 2, 2, 1], 8)[:, None]
    np.testing.assert_allclose(out, x * factors, rtol=0, atol=0)


def test_nested_loops_and_scalar_reads():
    """An int32 tensor holds per-batch lengths (a scalar read); nested loops over batches and blocks,
    each block's valid rows from the length."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3 * 32, 64)).astype(np.float32)
    lens = np.array([32, 20, 5], np.int32)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((96, 64), pypto.DT_FP32), lens: pypto.Tensor((3,), pypto.DT_INT32),
          out: pypto.Tensor((96, 64), pypto.DT_FP32)):
        for b in pypto.loop(3):
            n = lens[b]
            for j in pypto.loop(0, 2):
                rows = pypto.min(16, pypto.max(n - j * 16, 0))
                v = pypto.view(a, [16, 64], [b * 32 + j * 16, 0], valid_shape=[rows, 64])
                out[b * 32 + j * 16:b * 32 + j * 16 + 16, :] = v + 1.0

    out = np.zeros_like(x)
    k(x, lens, out)
    for b in range(3):
        np.testing.assert_allclose(out[b * 32:b * 32 + lens[b]], x[b * 32:b * 32 + lens[b]] + 1, rtol=0, atol=1e-6)


def test_run_time_branches():
    """`if` on a run-time value (pypto.cond, is_loop_begin / is_loop_end, comparisons of the loop
    index) records both sides; tensors written on either side, and names assigned on both, carry on."""
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32),
          last: pypto.Tensor((16, 64), pypto.DT_FP32)):
        acc = pypto.tensor((16, 64), pypto.DT_FP32)
        for i in pypto.loop(0, 4, name="blocks", idx_name="i"):
            v = x[i * 16:(i + 1) * 16, :]
            if pypto.cond(pypto.is_loop_begin(i)):
                acc[:] = v * 1.0
            else:
                acc[:] = acc + v
            if i > 1:
                out[i * 16:(i + 1) * 16, :] = acc * 2.0
            elif i == 1:
                out[i * 16:(i + 1) * 16, :] = pypto.exp(v)
            else:
                out[i * 16:(i + 1) * 16, :] = v
            if pypto.cond(pypto.is_loop_end(i)):
                y = acc * 0.5
            else:
                y = acc * 0.25
            last[:, :] = y

    out, last = np.zeros_like(x), np.zeros((16, 64), np.float32)
    k(x, out, last)
    b = [x[i * 16:(i + 1) * 16].astype(np.float64) for i in range(4)]
    np.testing.assert_allclose(out, np.concatenate([b[0], np.exp(b[1]), (b[0] + b[1] + b[2]) * 2,
                                                    (b[0] + b[1] + b[2] + b[3]) * 2]), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(last, sum(b) * 0.5, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("flag", [True, False])
def test_if_on_a_python_value_runs_one_side(flag):
    x = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(x: pypto.Tensor((16, 64), pypto.DT_FP32), use_exp: bool):
        if use_exp:
            r = pypto.exp(x)
        else:
            r = -x
        return r

    np.testing.assert_allclose(k(x, flag), np.exp(x) if flag else -x, rtol=1e-6)
    from pypto import ir

    assert "if " not in ir.python_print(k.lower(x, flag))  # decided while tracing


def test_a_run_time_if_cannot_give_a_python_value_two_meanings():
    x = np.zeros((16, 64), np.float32)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(x: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32)):
        if x.shape[0] > 8:
            scale = 2.0
        else:
            scale = 3.0
        return x * scale

    with pytest.raises(pypto.Error, match="`scale` is assigned different values"):
        k(x)


def test_a_kernel_called_from_a_kernel_is_inlined():
    @pypto.frontend.jit
    def gelu_ish(t):
        return t * pypto.sigmoid(t * 1.702)

    @pypto.frontend.function
    def twice(t):
        return t * 2.0

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(x: pypto.Tensor((16, 64), pypto.DT_FP32)):
        return twice(gelu_ish(x))

    x, *_ = inputs(16)
    np.testing.assert_allclose(k(x), 2 * x / (1 + np.exp(-1.702 * x.astype(np.float64))), rtol=1e-6, atol=1e-6)


def test_loop_with_an_unroll_list_replicates_the_body():
    """unroll_list=[4]: loops of step 4 whose body is the user's body 4 times, then the rest."""
    x, *_ = inputs(7 * 8)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((56, 64), pypto.DT_FP32), out: pypto.Tensor((56, 64), pypto.DT_FP32)):
        for i in pypto.loop(0, 7, 1, unroll_list=[4]):
            out[i * 8:(i + 1) * 8, :] = a[i * 8:(i + 1) * 8, :] + 1.0

    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_array_equal(out, x + 1)
    from pypto import ir

    text = ir.python_print(k.lower(x, out))
    assert "pl.range(0, 4, 4)" in text and "pl.range(4, 7)" in text and text.count("pl.tensor.assemble(") == 5


def test_comparisons_masks_and_where():
    x, y, *_ = inputs()

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((M, 64), pypto.DT_FP32), b: pypto.Tensor((M, 64), pypto.DT_FP32)):
        gt = a > b
        le0 = pypto.le(a, 0.0)
        flipped = 0.5 < a          # a scalar on the left: a > 0.5
        picked = pypto.where(gt, a, b)
        clipped = pypto.where(le0, 0.0, a)
        return gt, pypto.logical_not(le0), flipped, picked, clipped, a == a

    gt, not_le0, flipped, picked, clipped, same = k(x, y)
    assert gt.dtype == not_le0.dtype == flipped.dtype == same.dtype == np.bool_  # masks are DT_BOOL
    np.testing.assert_array_equal(gt, x > y)
    np.testing.assert_array_equal(not_le0, x > 0)
    np.testing.assert_array_equal(flipped, x > 0.5)
    np.testing.assert_array_equal(picked, np.maximum(x, y))
    np.testing.assert_array_equal(clipped, np.where(x <= 0, 0, x))
    np.testing.assert_array_equal(same, np.ones_like(x, bool))


def test_reference_enums_elements_and_expand_clone():
    x, *_ = inputs(16)
    assert pypto.bytes_of(pypto.DT_BF16) == 2 and pypto.bytes_of(pypto.DT_INT32) == 4

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32), r: pypto.Tensor((1, 64), pypto.DT_FP32)):
        wide = pypto.expand_clone(r, (16, 64))
        rounded = pypto.cast(a * 3.0, pypto.DT_INT32, pypto.CastMode.CAST_FLOOR)
        return wide, rounded, a + pypto.Element(pypto.DT_FP32, 2.5)

    r = x[:1] * 2
    wide, rounded, shifted = k(x, r)
    np.testing.assert_array_equal(wide, np.broadcast_to(r, (16, 64)))
    np.testing.assert_array_equal(rounded, np.floor(x * 3).astype(np.int32))
    np.testing.assert_array_equal(shifted, x + 2.5)


def test_cast_default_truncates_float_to_int():
    x = np.array([[1.7, -1.7, 2.5, -2.5] * 16] * 16, np.float32)

    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32)):
        return pypto.cast(a, pypto.DT_INT32), pypto.cast(a, pypto.DT_INT32, pypto.CastMode.CAST_RINT)

    trunc, rint = k(x)
    np.testing.assert_array_equal(trunc, np.trunc(x).astype(np.int32))
    np.testing.assert_array_equal(rint, np.rint(x).astype(np.int32))


def test_equal_dynamic_dims_share_one_size():
    """Two pypto.DYNAMIC row counts equal at the call are one dynamic size of the program (so the
    elementwise kernel is tiled over rows, and a boolean mask works there); another pattern of
    equal sizes compiles again."""
    @pypto.frontend.jit(runtime_options=INTERP)
    def k(a: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32), b: pypto.Tensor((pypto.DYNAMIC, 64), pypto.DT_FP32)):
        m = pypto.cast(a > b, pypto.DT_BOOL)
        return m, pypto.where(m, a, b)

    for rows in (37, 50):
        x, y, *_ = inputs(rows)
        m, w = k(x, y)
        assert m.dtype == np.bool_
        np.testing.assert_array_equal(m, x > y)
        np.testing.assert_array_equal(w, np.maximum(x, y))
    assert len(k.compiled_programs) == 1
