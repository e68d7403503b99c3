"""Position-valued ops of the tensor level (pypto/frontend/creation.py): arange (the registry's
`ci`), triu / tril, scaled_mm, against NumPy on both backends."""

import ml_dtypes
import numpy as np
import pytest

import pypto

PLATFORMS = [pytest.param("interp"), pytest.param("cpu", marks=pytest.mark.native)]
F32, I32 = pypto.DT_FP32, pypto.DT_INT32
DT_BF16 = ml_dtypes.bfloat16
DT = {"fp32": (F32, np.float32), "int32": (I32, np.int32), "fp16": (pypto.DT_FP16, np.float16)}


def _jit(platform):
    return pypto.frontend.jit(runtime_options={"platform": platform})


def _data(shape, npdt, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(npdt, np.integer):
        return rng.integers(-50, 50, shape).astype(npdt)
    return (rng.standard_normal(shape) + 0.5).astype(npdt)  # (no zeros: a kept element is not 0)


def _fails(fn, args, match):
    with pytest.raises(pypto.frontend.FrontendError, match=match) as e:
        fn(*args)
    assert "test_creation_ops.py" in str(e.value)  # the user's line is shown


# ---------------------------------------------------------------------------------------------
# arange

# (args, kwargs, NumPy's range in float64, result dtype)
RANGES = [
    ((37,), {}, np.arange(37), np.int32),  # a length of no SIMD multiple: a tail
    ((5, 70), {}, np.arange(5, 70), np.int32),
    ((40, -3, -3), {}, np.arange(40, -3, -3), np.int32),  # a negative step, an end not on the grid
    ((-7, 8, 2), {"dtype": F32}, np.arange(-7, 8, 2), np.float32),
    ((0.5, -3, -0.6), {}, 0.5 + np.arange(6) * -0.6, np.float32),  # a float step: fp32
    ((0.0, 1.0, 0.125), {}, np.arange(0, 1, 0.125), np.float32),
    ((3, 20, 4), {"dtype": pypto.DT_FP16}, np.arange(3, 20, 4), np.float16),
    ((100, 0, -7), {"dtype": pypto.DT_INT16}, np.arange(100, 0, -7), np.int16),
]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_arange_lengths_steps_and_dtypes(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((1,), F32)):
        return tuple(pypto.arange(*a, **kw) for a, kw, _, _ in RANGES)

    got = k(np.zeros(1, np.float32))
    for r, (args, _, want, npdt) in zip(got, RANGES):
        assert r.dtype == npdt and r.shape == want.shape, args
        # float ranges: start + j * step from the fp32 start and step (within fp32 rounding of NumPy's)
        np.testing.assert_allclose(r.astype(np.float64), want, rtol=3e-7, atol=3e-7, err_msg=str(args))
    np.testing.assert_array_equal(got[4], (np.float32(0.5) + np.arange(6) * np.float64(np.float32(-0.6)))
                                  .astype(np.float32))  # exactly the registry's definition


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "int32"])
def test_arange_in_arithmetic_of_a_row_tiled_kernel(platform, dt):
    pdt, npdt = DT[dt]

    def positions():
        return pypto.arange(48) if dt == "int32" else pypto.arange(1.0, 25.0, 0.5)

    @_jit(platform)
    def k(x: pypto.Tensor((pypto.DYNAMIC, 48), pdt)):
        pypto.set_vec_tile_shapes(8, 48)
        row = pypto.unsqueeze(positions(), 0)  # [1, 48]: broadcasts over the row blocks of a dynamic x
        return x * row + row

    @_jit(platform)
    def s(y: pypto.Tensor((37, 48), pdt)):
        return y - positions()  # a 1-D operand broadcasts against a static 2-D one

    pos = (np.arange(48) if dt == "int32" else 1.0 + 0.5 * np.arange(48)).astype(npdt)
    tol = 1e-6 if dt == "fp32" else 0  # (x * row + row may fuse into one rounding)
    for rows in (37, 3):  # row blocks with a ragged tail
        x = _data((rows, 48), npdt, rows)
        np.testing.assert_allclose(k(x), x * pos + pos, rtol=tol)
    assert len(k.compiled_programs) == 1
    y = _data((37, 48), npdt, 99)
    np.testing.assert_array_equal(s(y), y - pos)


def test_arange_mistakes():
    @_jit("interp")
    def zero_step(x: pypto.Tensor((1,), F32)):
        return pypto.arange(0, 4, 0)

    @_jit("interp")
    def empty(x: pypto.Tensor((1,), F32)):
        return pypto.arange(5, 2)

    @_jit("interp")
    def dynamic_end(x: pypto.Tensor((pypto.DYNAMIC,), F32)):
        return pypto.arange(x.shape[0])

    @_jit("interp")
    def float_int(x: pypto.Tensor((1,), F32)):
        return pypto.arange(0.5, 4, dtype=I32)

    @_jit("interp")
    def bad_dtype(x: pypto.Tensor((1,), F32)):
        return pypto.arange(4, dtype=pypto.DT_BOOL)

    x = np.zeros(1, np.float32)
    _fails(zero_step, (x,), r"pypto\.arange: step must not be 0")
    _fails(empty, (x,), r"pypto\.arange: the range \[5, 2\) with step 1 is empty")
    _fails(dynamic_end, (np.zeros(3, np.float32),), r"pypto\.arange: end is a run-time value")
    _fails(float_int, (x,), r"pypto\.arange: an INT32 range needs integer start and step")
    _fails(bad_dtype, (x,), r"pypto\.arange: dtype BOOL")


# ---------------------------------------------------------------------------------------------
# triu / tril


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt", ["fp32", "int32"])
def test_triu_tril_every_diagonal_non_square(platform, dt):
    pdt, npdt = DT[dt]
    diags = range(-2, 4)

    @_jit(platform)
    def k(x: pypto.Tensor((9, 13), pdt), y: pypto.Tensor((13, 6), pdt)):
        return (tuple(pypto.triu(x, d) for d in diags) + tuple(pypto.tril(x, d) for d in diags)
                + (pypto.triu(y), y.tril(-1)))

    x, y = _data((9, 13), npdt), _data((13, 6), npdt, 1)
    got = k(x, y)
    want = [np.triu(x, d) for d in diags] + [np.tril(x, d) for d in diags] + [np.triu(y), np.tril(y, -1)]
    for g, w in zip(got, want):
        assert g.dtype == npdt
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tri_of_many_rows_is_row_tiled_with_a_ragged_tail(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((1003, 256), F32)):
        return pypto.tril(x, 5) * 2.0, pypto.triu(x, -700)

    x = _data((1003, 256), np.float32)
    lo, up = k(x)
    np.testing.assert_array_equal(lo, np.tril(x, 5) * 2)
    np.testing.assert_array_equal(up, np.triu(x, -700))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tri_of_views_in_a_loop_counts_positions_within_the_view(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((pypto.DYNAMIC, 32), F32), out: pypto.Tensor((pypto.DYNAMIC, 32), F32)):
        for i in pypto.loop(0, pypto.ceildiv(x.shape[0], 24)):
            blk = pypto.view(x, [24, 32], [i * 24, 0], valid_shape=[pypto.min(24, x.shape[0] - i * 24), 32])
            pypto.assemble(pypto.triu(blk, i), [i * 24, 0], out)  # diagonal: the loop index

    for rows in (70, 48):
        x = _data((rows, 32), np.float32, rows)
        out = np.full((rows, 32), 7.0, np.float32)
        k(x, out)
        want = np.concatenate([np.triu(x[i:i + 24], i // 24) for i in range(0, rows, 24)])
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tri_over_the_last_two_dims_of_rank3(platform):
    @_jit(platform)
    def k(x: pypto.Tensor((3, 5, 7), F32)):
        return pypto.triu(x, 1), pypto.tril(x)

    x = _data((3, 5, 7), np.float32)
    up, lo = k(x)
    np.testing.assert_array_equal(up, np.triu(x, 1))
    np.testing.assert_array_equal(lo, np.tril(x))


def test_tri_mistakes():
    @_jit("interp")
    def dyn_rows(x: pypto.Tensor((pypto.DYNAMIC, 8), F32)):
        return pypto.triu(x)

    @_jit("interp")
    def rank1(x: pypto.Tensor((8,), F32)):
        return pypto.tril(x)

    @_jit("interp")
    def float_diag(x: pypto.Tensor((4, 8), F32)):
        return pypto.tril(x, 0.5)

    _fails(dyn_rows, (np.zeros((4, 8), np.float32),), r"pypto\.triu: the row count of x is .*a run-time size")
    _fails(rank1, (np.zeros(8, np.float32),), r"pypto\.tril: needs a tensor of at least 2 dims")
    _fails(float_diag, (np.zeros((4, 8), np.float32),), r"pypto\.tril: diagonal must be an int or a SymbolicScalar")


# ---------------------------------------------------------------------------------------------
# scaled_mm: a NumPy model of the layout pypto/frontend/scaled_matmul.py documents


def _multiplier(s):
    if s.dtype == np.uint8:
        with np.errstate(over="ignore"):
            return np.where(s == 255, np.nan, np.exp2(s.astype(np.float64) - 127))
    return s.astype(np.float64)


def _mx_model(a, b, sa, sb, a_trans=False, b_trans=False, sa_trans=False, sb_trans=False):
    a = (a.T if a_trans else a).astype(np.float32)  # [n, K]
    b = (b.T if b_trans else b).astype(np.float32)  # [K, m]
    sa = sa.transpose(1, 0, 2) if sa_trans else sa  # (n, kScale, 2)
    sb = sb.transpose(1, 0, 2) if sb_trans else sb  # (kScale, m, 2)
    g = np.arange(a.shape[1]) // 32  # the 32-group of each k: scale [g // 2, g % 2]
    ga = _multiplier(sa).reshape(sa.shape[0], -1)  # [n, group]
    gb = _multiplier(sb).transpose(0, 2, 1).reshape(-1, sb.shape[1])  # [group, m]
    lhs = (a * ga[:, g].astype(np.float32)).astype(np.float64)
    rhs = (b * gb[g, :].astype(np.float32)).astype(np.float64)
    return lhs @ rhs, np.abs(lhs) @ np.abs(rhs)


def _mx_close(got, model, rtol=2e-6):
    want, mag = model
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.all(np.abs(got[ok].astype(np.float64) - want[ok]) <= rtol * (mag[ok] + 1e-30) * 8)


def _e8m0(shape, seed):
    return np.random.default_rng(seed).integers(120, 135, shape).astype(np.uint8)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_scaled_mm_e8m0_scales_and_every_transpose(platform):
    n, k, m = 24, 128, 40
    ks = k // 64

    @_jit(platform)
    def kern(a: pypto.Tensor((n, k), F32), b: pypto.Tensor((k, m), F32), sa: pypto.Tensor((n, ks, 2), pypto.DT_UINT8),
             sb: pypto.Tensor((ks, m, 2), pypto.DT_UINT8), at: pypto.Tensor((k, n), F32),
             bt: pypto.Tensor((m, k), F32), sat: pypto.Tensor((ks, n, 2), pypto.DT_UINT8),
             sbt: pypto.Tensor((m, ks, 2), pypto.DT_UINT8)):
        return (pypto.scaled_mm(a, b, F32, sa, sb),
                pypto.scaled_mm(at, bt, F32, sat, sbt, a_trans=True, b_trans=True, scale_a_trans=True,
                                scale_b_trans=True))

    a, b = _data((n, k), np.float32), _data((k, m), np.float32, 1)
    sa, sb = _e8m0((n, ks, 2), 2), _e8m0((ks, m, 2), 3)
    sa[3, 1, 0] = 255  # NaN: row 3 of the result
    got, got_t = kern(a, b, sa, sb, np.ascontiguousarray(a.T), np.ascontiguousarray(b.T),
                      np.ascontiguousarray(sa.transpose(1, 0, 2)), np.ascontiguousarray(sb.transpose(1, 0, 2)))
    model = _mx_model(a, b, sa, sb)
    _mx_close(got, model)
    _mx_close(got_t, model)
    assert np.isnan(got[3]).all() and not np.isnan(got[:3]).any()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_scaled_mm_float_scales_a_partial_block_of_k_and_out_dtype(platform):
    n, k, m = 10, 96, 16  # K = 96: one full 64-block and one 32-group (the last scale of each pair unused)
    ks = 2

    @_jit(platform)
    def kern(a: pypto.Tensor((n, k), pypto.DT_FP16), b: pypto.Tensor((k, m), pypto.DT_BF16),
             sa: pypto.Tensor((n, ks, 2), F32), sb: pypto.Tensor((ks, m, 2), F32), bias: pypto.Tensor((1, m), F32)):
        return (pypto.scaled_mm(a, b, pypto.DT_FP32, sa, sb, extend_params={"bias_tensor": bias}),
                pypto.scaled_mm(a, b, pypto.DT_FP16, sa, sb))

    a, b = _data((n, k), np.float16), _data((k, m), np.float32, 1).astype(DT_BF16)
    sa = np.random.default_rng(2).uniform(0.5, 2, (n, ks, 2)).astype(np.float32)
    sb = np.random.default_rng(3).uniform(0.5, 2, (ks, m, 2)).astype(np.float32)
    bias = _data((1, m), np.float32, 4)
    got, half = kern(a, b, sa, sb, bias)
    want, mag = _mx_model(a, b, sa, sb)
    _mx_close(got, (want + bias, mag + np.abs(bias)))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.astype(np.float64), want, rtol=2e-3, atol=2e-3 * mag.max())


def test_scaled_mm_mistakes():
    @_jit("interp")
    def wrong_scale(a: pypto.Tensor((4, 64), F32), b: pypto.Tensor((64, 8), F32),
                    sa: pypto.Tensor((4, 2, 2), F32), sb: pypto.Tensor((1, 8, 2), F32)):
        return pypto.scaled_mm(a, b, F32, sa, sb)

    @_jit("interp")
    def wrong_k(a: pypto.Tensor((4, 64), F32), b: pypto.Tensor((32, 8), F32),
                sa: pypto.Tensor((4, 1, 2), F32), sb: pypto.Tensor((1, 8, 2), F32)):
        return pypto.scaled_mm(a, b, F32, sa, sb)

    @_jit("interp")
    def int_data(a: pypto.Tensor((4, 64), I32), b: pypto.Tensor((64, 8), F32),
                 sa: pypto.Tensor((4, 1, 2), F32), sb: pypto.Tensor((1, 8, 2), F32)):
        return pypto.scaled_mm(a, b, F32, sa, sb)

    z = np.zeros
    _fails(wrong_scale, (z((4, 64), np.float32), z((64, 8), np.float32), z((4, 2, 2), np.float32),
                         z((1, 8, 2), np.float32)), r"pypto\.scaled_mm: scale_a has shape \[4, 2, 2\]; .* \[4, 1, 2\]")
    _fails(wrong_k, (z((4, 64), np.float32), z((32, 8), np.float32), z((4, 1, 2), np.float32),
                     z((1, 8, 2), np.float32)), r"pypto\.scaled_mm: a is \[4, 64\] and b \[32, 8\]")
    _fails(int_data, (z((4, 64), np.int32), z((64, 8), np.float32), z((4, 1, 2), np.float32),
                      z((1, 8, 2), np.float32)), r"pypto\.scaled_mm: a is INT32")
