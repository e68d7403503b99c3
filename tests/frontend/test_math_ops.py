"""The math family of the tensor-level frontend (pypto/frontend/math_ops.py) and the DT_BOOL masks,
against NumPy on the interpreter and on the CPU backend: unary math and predicates in fp32 and fp16
(edge values: NaN, +-inf, -0.0, domain edges), binary float ops (tensor and scalar on either side),
integer ops in int32 (negative divisors, x / 0, shifts), BOOL results written into BOOL outputs
(NumPy and torch), composites, and the errors of bad dtypes. Rows: a dynamic count of 37 (ragged)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pypto

M = pypto.frontend.dynamic("M")
ROWS = 37
PLATFORMS = [pytest.param("interp", id="interp"), pytest.param("cpu", id="cpu", marks=pytest.mark.native)]
NP = {"FP32": np.float32, "FP16": np.float16}

# ulp tolerances of the CPU backend (fp32 C library lane by lane) vs the correctly rounded value
ULPS = {"pow": 4}
_erf, _erfc = np.vectorize(math.erf, otypes=[np.float64]), np.vectorize(math.erfc, otypes=[np.float64])

UNARY = [("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan), ("sinh", np.sinh),
         ("cosh", np.cosh), ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh), ("erf", _erf),
         ("erfc", _erfc), ("cbrt", np.cbrt), ("sign", np.sign)]
PREDICATES = [("isnan", np.isnan), ("isfinite", np.isfinite), ("signbit", np.signbit)]
EDGES = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1e-30, 12.0, -12.0, 1.5, -1.5, 0.999,
         -0.999, 1.001, 3.0]


def _floats(dt: str, seed: int = 0, scale: float = 2.0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((ROWS, 64)) * scale).astype(NP[dt])
    x[0, :len(EDGES)] = EDGES
    return x


def _close(got, want, dt, ulps: int = 2, what: str = ""):
    """Within `ulps` units in the last place of `dt`; NaN where NaN, infinities and zero signs equal."""
    with np.errstate(over="ignore"):  # (fp16 overflows to inf, as the kernel's result does)
        g, w = np.asarray(got).astype(np.float64), np.asarray(want).astype(NP[dt]).astype(np.float64)
    assert g.shape == w.shape, what
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{what}: NaN positions")
    fin = np.isfinite(w)
    np.testing.assert_array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)], err_msg=f"{what}: infinities")
    tol = ulps * np.spacing(np.abs(w[fin]).astype(NP[dt])).astype(np.float64)
    bad = np.abs(g[fin] - w[fin]) > tol
    assert not bad.any(), f"{what}: {bad.sum()} elements off by more than {ulps} ulp, e.g. got {g[fin][bad][:3]} " \
                          f"want {w[fin][bad][:3]}"
    zero = fin & (w == 0)
    np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]), err_msg=f"{what}: signs of zeros")


@pytest.mark.parametrize("dt", ["FP32", "FP16"])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_unary_math_and_predicates(platform, dt):
    spec = pypto.Tensor((M, 64), getattr(pypto, f"DT_{dt}"))
    flags = pypto.Tensor((M, 64), pypto.DT_BOOL)

    def k(a: spec, nan_out: flags):
        nan_out[:] = pypto.isnan(a)  # a BOOL result into a BOOL parameter
        return (tuple(getattr(pypto, n)(a) for n, _ in UNARY) + (pypto.isfinite(a), pypto.signbit(a), a.sign(),
                                                                 a.erfc()))

    x = _floats(dt)
    nan_out = np.ones((ROWS, 64), bool)
    got = pypto.frontend.jit(k, runtime_options={"platform": platform})(x, nan_out)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        for (name, ref), g in zip(UNARY + [("sign", np.sign), ("erfc", _erfc)], got[:13] + got[15:]):
            assert g.dtype == x.dtype, name
            _close(g, ref(x64), dt, ULPS.get(name, 2), f"{name} {dt}")
    np.testing.assert_array_equal(nan_out, np.isnan(x))
    for (name, ref), g in zip(PREDICATES[1:], got[13:15]):
        assert g.dtype == np.bool_, name
        np.testing.assert_array_equal(g, ref(x), err_msg=name)


@pytest.mark.parametrize("dt", ["FP32", "FP16"])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_binary_float_ops(platform, dt):
    spec = pypto.Tensor((M, 64), getattr(pypto, f"DT_{dt}"))

    def k(a: spec, b: spec, p: spec):
        return (pypto.pow(p, b), p ** 2.0, 2.0 ** b, pypto.atan2(a, b), pypto.hypot(a, b), pypto.copysign(a, b),
                pypto.fmod(a, b), pypto.fmod(a, -1.5), pypto.remainder(a, b), a % 1.5, 7.0 % b,
                pypto.floor_div(a, b), a // -0.75, pypto.ceil_div(a, b), a.hypot(b), pypto.atan2(1.0, b))

    a, b = _floats(dt, 1), _floats(dt, 2)
    b[1, :6] = [-0.0, 0.0, -3.0, 3.0, np.inf, -np.inf]  # signed zeros (atan2, copysign), negative divisors
    a[1, :6] = [-0.0, 5.0, 7.0, -7.0, 1.0, -1.0]
    p = (np.abs(a) + 0.25).astype(a.dtype)
    p[0, :len(EDGES)] = np.abs(np.nan_to_num(np.array(EDGES), nan=1.0, posinf=4.0, neginf=4.0)) + 0.25
    got = pypto.frontend.jit(k, runtime_options={"platform": platform})(a, b, p)
    f32 = np.float32
    a32, b32 = a.astype(f32), b.astype(f32)
    a64, b64, p64 = (v.astype(np.float64) for v in (a, b, p))
    with np.errstate(all="ignore"):
        want = [(np.power(p64, b64), 4), (p64 ** 2, 2), (2.0 ** b64, 2), (np.arctan2(a64, b64), 2),
                (np.hypot(a64, b64), 2), (np.copysign(a64, b64), 0), (np.fmod(a32, b32), 0), (np.fmod(a32, f32(-1.5)), 0),
                (np.remainder(a32, b32), 0), (np.remainder(a32, f32(1.5)), 0), (np.remainder(f32(7.0), b32), 0),
                (np.floor(a32 / b32), 0), (np.floor(a32 / f32(-0.75)), 0), (np.ceil(a32 / b32), 0),
                (np.hypot(a64, b64), 2), (np.arctan2(1.0, b64), 2)]
    names = ["pow", "pow_scalar", "scalar_pow", "atan2", "hypot", "copysign", "fmod", "fmod_scalar", "remainder",
             "mod_op", "rmod_op", "floor_div", "floordiv_op", "ceil_div", "hypot_method", "atan2_scalar"]
    for name, g, (w, ulps) in zip(names, got, want):
        assert g.dtype == a.dtype, name
        _close(g, w, dt, ulps, f"{name} {dt}")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_integer_ops(platform):
    spec = pypto.Tensor((M, 64), pypto.DT_INT32)

    def k(a: spec, b: spec, s: spec):
        return (pypto.fmod(a, b), pypto.remainder(a, b), pypto.floor_div(a, b), pypto.ceil_div(a, b), pypto.gcd(a, b),
                pypto.bitwise_and(a, b), pypto.bitwise_or(a, 0x0F0), pypto.bitwise_xor(a, b), pypto.bitwise_not(a),
                pypto.bitwise_left_shift(a, s), pypto.bitwise_right_shift(a, s), pypto.bitwise_left_shift(1, s),
                pypto.bitwise_right_shift(-256, s), a % b, a // b, a & b, a | b, a ^ 5, ~a, a << 3, a >> s,
                pypto.sign(a), pypto.fmod(a, -7), a % -7, a // -7, pypto.gcd(a, 12), 12 // b, pypto.ceil_div(a, 4))

    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, (ROWS, 64)).astype(np.int32)
    b = rng.integers(-12, 12, (ROWS, 64)).astype(np.int32)  # zeros and negative divisors
    a[0, :6] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0, 0, -7, 7]
    b[0, :6] = [-1, 1, 0, 5, 2, -2]
    s = rng.integers(0, 31, (ROWS, 64)).astype(np.int32)
    got = pypto.frontend.jit(k, runtime_options={"platform": platform})(a, b, s)
    a64, b64, s64 = (v.astype(np.int64) for v in (a, b, s))
    safe = np.where(b64 == 0, 1, b64)

    def z(v):  # x op 0 = 0, and int32 wrap-around
        return np.where(b64 == 0, 0, v).astype(np.int64).astype(np.int32)

    want = [z(np.fmod(a64, safe)), z(np.remainder(a64, safe)), z(np.floor_divide(a64, safe)),
            z(-np.floor_divide(-a64, safe)), np.gcd(a64, b64).astype(np.int32), a & b, a | 0x0F0, a ^ b, ~a,
            (a64 << s64).astype(np.int32), a >> s, (1 << s64).astype(np.int32), np.int32(-256) >> s,
            z(np.remainder(a64, safe)), z(np.floor_divide(a64, safe)), a & b, a | b, a ^ 5, ~a,
            (a64 << 3).astype(np.int32), a >> s, np.sign(a), np.fmod(a, -7), np.remainder(a, -7),
            np.floor_divide(a64, -7).astype(np.int32), np.gcd(a64, 12).astype(np.int32),
            np.where(b64 == 0, 0, np.floor_divide(12, safe)).astype(np.int32), -np.floor_divide(-a64, 4).astype(np.int32)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == np.int32, i
        np.testing.assert_array_equal(g, w, err_msg=f"result {i}")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bool_masks(platform):
    """Compares, predicates and logical ops give DT_BOOL tensors; they go into BOOL outputs (NumPy
    bool arrays, torch.bool tensors), cast to 1.0 / 0.0, select with `where`, and combine."""
    spec, flags = pypto.Tensor((M, 64), pypto.DT_FP32), pypto.Tensor((M, 64), pypto.DT_BOOL)

    def k(a: spec, b: spec, m: flags, gt_out: flags, any_out: flags):
        gt = a > b
        gt_out[:] = gt
        any_out[:] = pypto.logical_or(m, pypto.isnan(a))
        numeric = pypto.cast(pypto.le(a, 0.0), pypto.DT_FP32)
        return (pypto.cast(gt, pypto.DT_FP32), pypto.where(gt, a, b), pypto.where(numeric, 0.0, a),
                pypto.where(m, a, 1.0), pypto.logical_not(gt), pypto.logical_and(m, a < 0.5),
                pypto.logical_xor(m, gt), pypto.logical_and(a, 1), pypto.greater(a, b), a == a, 0.5 < a,
                pypto.cast(m, pypto.DT_INT32), m & gt, ~m, m == gt)

    a, b = _floats("FP32", 4), _floats("FP32", 5)
    m = np.random.default_rng(6).integers(0, 2, (ROWS, 64)).astype(bool)
    gt_out, any_out = np.zeros((ROWS, 64), bool), np.zeros((ROWS, 64), bool)
    got = pypto.frontend.jit(k, runtime_options={"platform": platform})(a, b, m, gt_out, any_out)
    gt = a > b
    with np.errstate(invalid="ignore"):
        want = [gt.astype(np.float32), np.where(gt, a, b), np.where(a <= 0, 0, a), np.where(m, a, 1),
                ~gt, m & (a < 0.5), m ^ gt, a != 0, gt, a == a, a > 0.5, m.astype(np.int32), m & gt, ~m, m == gt]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"result {i}: {g.dtype}, expected {w.dtype}"
        np.testing.assert_array_equal(g, w, err_msg=f"result {i}")
    np.testing.assert_array_equal(gt_out, gt)
    np.testing.assert_array_equal(any_out, m | np.isnan(a))

    torch = pytest.importorskip("torch")
    t_out, t_any = torch.zeros((ROWS, 64), dtype=torch.bool), torch.zeros((ROWS, 64), dtype=torch.bool)
    pypto.frontend.jit(k, runtime_options={"platform": platform})(torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(m), t_out, t_any)
    np.testing.assert_array_equal(t_out.numpy(), gt)
    np.testing.assert_array_equal(t_any.numpy(), m | np.isnan(a))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_composites(platform):
    spec = pypto.Tensor((16, 64), pypto.DT_FP32)

    def k(x: spec, w: pypto.Tensor((64,), pypto.DT_FP32), r: pypto.Tensor((16, 1), pypto.DT_FP32), y: spec):
        pypto.axpy_(y, x, 0.5)
        acc = x * 1.0
        acc.axpy_(r)
        return (pypto.lrelu(x), pypto.lrelu(x, 0.2), pypto.prelu(x, w), pypto.expand_exp_dif(x, r),
                pypto.var(x, -1), pypto.var(x, dim=-1, correction=0, keepdim=True), pypto.var(x, 0, keepdim=True),
                pypto.var(x), pypto.var(x, keepdim=True), acc)

    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    w, r = rng.uniform(0, 1, 64).astype(np.float32), rng.standard_normal((16, 1)).astype(np.float32)
    y = rng.standard_normal((16, 64)).astype(np.float32)
    y0 = y.copy()
    got = pypto.frontend.jit(k, runtime_options={"platform": platform})(x, w, r, y)
    x64 = x.astype(np.float64)
    want = [np.where(x > 0, x, 0.01 * x64), np.where(x > 0, x, 0.2 * x64), np.where(x > 0, x, w * x64),
            np.exp(x64 - r), x64.var(-1, ddof=1), x64.var(-1, keepdims=True), x64.var(0, ddof=1, keepdims=True),
            np.array([x64.var(ddof=1)]), np.full((1, 1), x64.var(ddof=1)), x64 + r]
    for i, (g, wv) in enumerate(zip(got, want)):
        assert g.shape == wv.shape, f"result {i}: {g.shape} vs {wv.shape}"
        np.testing.assert_allclose(g, wv, rtol=2e-5, atol=1e-5, err_msg=f"result {i}")
    np.testing.assert_allclose(y, y0 + 0.5 * x64, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("body, message", [
    (lambda a, i: pypto.bitwise_and(a, a), r"pypto\.bitwise_and: needs an integer .* got FP32"),
    (lambda a, i: a << 2, r"pypto\.bitwise_left_shift: needs an integer .* got FP32"),
    (lambda a, i: pypto.bitwise_not(a), r"pypto\.bitwise_not: needs an integer"),
    (lambda a, i: pypto.gcd(a, a), r"pypto\.gcd: needs an integer .* got FP32"),
    (lambda a, i: pypto.tan(i), r"pypto\.tan: needs a floating-point tensor, got INT32"),
    (lambda a, i: pypto.pow(i, 2), r"pypto\.pow: needs a floating-point tensor, got INT32"),
    (lambda a, i: pypto.var(a, 2), r"pypto\.var: dim 2 out of range"),
    (lambda a, i: pypto.var(a, -1, correction=64), r"pypto\.var: correction 64"),
    (lambda a, i: pypto.bitwise_or(i, 1.5), r"pypto\.bitwise_or: needs an integer operand, got 1.5"),
    (lambda a, i: pypto.axpy_(a[:, 0:1], a), r"pypto\.axpy_: the result \[16, 64\]"),
], ids=["bitwise_float", "shift_float", "not_float", "gcd_float", "tan_int", "pow_int", "var_dim", "var_correction",
        "or_float_scalar", "axpy_broadcast_y"])
def test_errors_name_the_op_and_the_line(body, message):
    @pypto.frontend.jit(runtime_options={"platform": "interp"})
    def k(a: pypto.Tensor((16, 64), pypto.DT_FP32), i: pypto.Tensor((16, 64), pypto.DT_INT32)):
        return body(a, i)

    with pytest.raises(pypto.frontend.FrontendError, match=message) as e:
        k(np.zeros((16, 64), np.float32), np.zeros((16, 64), np.int32))
    assert "test_math_ops.py" in str(e.value)
