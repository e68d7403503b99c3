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
