"""pypto.matmul at the tensor level: int8 x int8 -> int32 and bf16 / fp16 -> fp32 accumulation,
transposed operands, bias/scale/relu extensions, torch inputs — on both backends."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto

PLATFORMS = [pytest.param("interp"), pytest.param("cpu", marks=pytest.mark.native)]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_int8_accumulates_in_int32(platform):
    @pypto.frontend.jit(runtime_options={"platform": platform})
    def mm(a: pypto.Tensor((32, 64), pypto.DT_INT8), b: pypto.Tensor((64, 48), pypto.DT_INT8)):
        return pypto.matmul(a, b, pypto.DT_INT32)

    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 48)).astype(np.int8)
    r = mm(a, b)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, a.astype(np.int32) @ b.astype(np.int32))  # (would overflow in int8/int16)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dt, npdt", [(pypto.DT_BF16, ml_dtypes.bfloat16), (pypto.DT_FP16, np.float16)])
def test_half_inputs_accumulate_in_fp32_with_transposes(platform, dt, npdt):
    @pypto.frontend.jit(runtime_options={"platform": platform})
    def mm(a: pypto.Tensor((64, 32), dt), b: pypto.Tensor((48, 64), dt)):
        return pypto.matmul(a, b, pypto.DT_FP32, a_trans=True, b_trans=True)

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 32)).astype(npdt), rng.standard_normal((48, 64)).astype(npdt)
    r = mm(a, b)
    assert r.dtype == np.float32
    want = a.astype(np.float64).T @ b.astype(np.float64).T
    np.testing.assert_allclose(r, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_extend_params_and_torch_inputs(platform):
    torch = pytest.importorskip("torch")

    @pypto.frontend.jit(runtime_options={"platform": platform})
    def linear(x: pypto.Tensor((16, 64), pypto.DT_FP32), w: pypto.Tensor((64, 32), pypto.DT_FP32),
               bias: pypto.Tensor((1, 32), pypto.DT_FP32)):
        return pypto.matmul(x, w, extend_params={"bias_tensor": bias, "scale": 0.5, "relu_type": 1})

    x, w, bias = torch.randn(16, 64), torch.randn(64, 32), torch.randn(1, 32)
    y = linear(x, w, bias)
    assert isinstance(y, torch.Tensor)
    torch.testing.assert_close(y, torch.relu((x @ w + bias) * 0.5), rtol=1e-5, atol=1e-4)


@pytest.mark.native
def test_schedule_and_swimlane_options():
    """device_sched_mode picks the runtime's scheduling, runtime_debug_mode 1 writes a swimlane trace."""
    import json

    @pypto.frontend.jit(runtime_options={"device_sched_mode": 1}, debug_options={"runtime_debug_mode": 1})
    def k(x: pypto.Tensor((64, 64), pypto.DT_FP32), out: pypto.Tensor((64, 64), pypto.DT_FP32)):
        for i in pypto.loop(0, 4):
            out[i * 16:(i + 1) * 16, :] = pypto.exp(x[i * 16:(i + 1) * 16, :])

    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    (compiled,) = k.compiled_programs
    trace = json.loads((compiled.output_dir / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert sum(1 for e in events if e.get("ph") == "X") >= 4  # one event per task at least


CUBE_CASES = [  # (m, k, n, cube tiles m/k/n, a_trans, b_trans, dtype): tails in every dim, both transposes
    (96, 200, 80, ([32, 32], [64, 64], [48, 48]), False, False, "fp32"),
    (64, 160, 72, ([64, 64], [32, 64], [32, 32]), True, True, "fp32"),
    (48, 96, 40, ([16, 16], [32, 32], [16, 16]), False, True, "bf16"),
    (32, 128, 48, ([32, 32], [32, 32], [64, 64]), False, False, "int8"),
]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("case", CUBE_CASES, ids=lambda c: f"{c[0]}x{c[1]}x{c[2]}_{c[6]}_t{int(c[4])}{int(c[5])}")
def test_cube_tile_shapes_split_matmul(platform, case):
    """set_cube_tile_shapes splits a matmul into [mL1, nL1] output tiles, each a K chain of
    matmul + matmul_acc in the accumulator; the result equals the untiled product."""
    m, k, n, tiles, at, bt, dtn = case
    dt, npdt, out_dt = {"fp32": (pypto.DT_FP32, np.float32, pypto.DT_FP32),
                        "bf16": (pypto.DT_BF16, ml_dtypes.bfloat16, pypto.DT_FP32),
                        "int8": (pypto.DT_INT8, np.int8, pypto.DT_INT32)}[dtn]
    a_shape, b_shape = ((k, m) if at else (m, k)), ((n, k) if bt else (k, n))

    @pypto.frontend.jit(runtime_options={"platform": platform})
    def mm(a: pypto.Tensor(a_shape, dt), b: pypto.Tensor(b_shape, dt), c: pypto.Tensor((m, n), out_dt)):
        pypto.set_cube_tile_shapes(*tiles)
        c[:] = pypto.matmul(a, b, out_dt, a_trans=at, b_trans=bt)

    rng = np.random.default_rng(7)
    if dtn == "int8":
        a, b = rng.integers(-128, 128, a_shape).astype(np.int8), rng.integers(-128, 128, b_shape).astype(np.int8)
    else:
        a, b = rng.standard_normal(a_shape).astype(npdt), rng.standard_normal(b_shape).astype(npdt)
    c = np.zeros((m, n), out_dt.to_numpy())
    mm(a, b, c)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = (a64.T if at else a64) @ (b64.T if bt else b64)
    if dtn == "int8":
        np.testing.assert_array_equal(c, want.astype(np.int32))
    else:
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    text = pypto.ir.python_print(mm.lower(a, b, c))
    assert text.count("tensor.matmul_acc(") >= 1  # (the K chain is there: split, not one whole product)


@pytest.mark.native
def test_cube_tiles_let_a_large_matmul_fit():
    """Without cube tiles a [256, 1024] @ [1024, 128] product needs a 1 MiB Left tile and is refused
    with the line; with them it compiles and runs."""
    def make(tiles):
        @pypto.frontend.jit
        def mm(a: pypto.Tensor((256, 1024), pypto.DT_FP32), b: pypto.Tensor((1024, 128), pypto.DT_FP32),
               c: pypto.Tensor((256, 128), pypto.DT_FP32)):
            if tiles:
                pypto.set_cube_tile_shapes([128, 128], [128, 128], [128, 128])
            c[:] = pypto.matmul(a, b)
        return mm

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((256, 1024)).astype(np.float32), rng.standard_normal((1024, 128)).astype(np.float32)
    c = np.zeros((256, 128), np.float32)
    with pytest.raises(pypto.errors.Error, match="Left memory"):
        make(False)(a, b, c)
    make(True)(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("rows", [24, 64, 150])
def test_cube_tiles_with_a_dynamic_row_count(platform, rows):
    """A dynamic M: a run-time loop over blocks of mL1 rows (the last clipped), each a K / N split."""
    m = pypto.frontend.dynamic("M")

    @pypto.frontend.jit(runtime_options={"platform": platform})
    def mm(a: pypto.Tensor((m, 192), pypto.DT_FP32), b: pypto.Tensor((192, 96), pypto.DT_FP32),
           c: pypto.Tensor((m, 96), pypto.DT_FP32)):
        pypto.set_cube_tile_shapes([64, 64], [64, 64], [48, 48])
        c[:] = pypto.matmul(a, b)

    rng = np.random.default_rng(rows)
    a, b = rng.standard_normal((rows, 192)).astype(np.float32), rng.standard_normal((192, 96)).astype(np.float32)
    c = np.zeros((rows, 96), np.float32)
    mm(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
