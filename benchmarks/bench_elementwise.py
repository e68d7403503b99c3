"""Elementwise y = relu(a * b + c) on 4096 x 4096, fp32 and bf16: PyPTO vs torch, torch.compile, NumPy.

Kernel: one task per block of TB rows; inside, a loop over [1, W] tiles (W = 2048: the three input
tiles take 24 KiB fp32, so everything the loop body touches stays in L1). Each element is read
once from a, b, c and written once to y: 4 x 64 MiB (fp32) or 4 x 32 MiB (bf16) of DRAM traffic.
bf16: the loaded tiles are widened to fp32 (TCVT), computed in fp32 and rounded to bf16 once, like
torch's addcmul (relu of a bf16 value is exact). Computing on the bf16 tiles directly would round
after every instruction and converts bf16 <-> fp32 inside each of them: ~10% slower.

    python benchmarks/bench_elementwise.py [--repeats N] [--threads T] [--no-compile] [--no-cpu-time]
"""

from __future__ import annotations

import harness
import ml_dtypes
import numpy as np

import pypto.language as pl

N, C = 4096, 4096
TB = 64    # rows per task
W = 2048   # tile width: [1, W]


def make_program(dt, n: int = N, c: int = C, tb: int = TB, w: int = W):
    low = dt != pl.FP32   # bf16: widen the loaded tiles to fp32, compute, round once at the end

    @pl.program
    class ReluMulAdd:
        @pl.function(type=pl.FunctionType.InCore)
        def relu_mul_add(self, a: pl.Tensor[[tb, c], dt], b: pl.Tensor[[tb, c], dt], cc: pl.Tensor[[tb, c], dt],
                         y: pl.Out[pl.Tensor[[tb, c], dt]]) -> pl.Tensor[[tb, c], dt]:
            for i in pl.range(0, tb, 1):
                for j in pl.range(0, c, w):
                    ta = pl.load(a, [i, j], [1, w])
                    tb_ = pl.load(b, [i, j], [1, w])
                    tc = pl.load(cc, [i, j], [1, w])
                    if low:
                        r = pl.relu(pl.add(pl.mul(pl.cast(ta, pl.FP32), pl.cast(tb_, pl.FP32)), pl.cast(tc, pl.FP32)))
                        t = pl.cast(r, dt)
                    else:
                        t = pl.relu(pl.add(pl.mul(ta, tb_), tc))
                    y = pl.store(t, [i, j], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[n, c], dt], b: pl.Tensor[[n, c], dt], cc: pl.Tensor[[n, c], dt],
                 y: pl.Out[pl.Tensor[[n, c], dt]]) -> pl.Tensor[[n, c], dt]:
            for r in pl.range(0, n, tb):
                self.relu_mul_add(pl.view(a, [tb, c], [r, 0]), pl.view(b, [tb, c], [r, 0]),
                                  pl.view(cc, [tb, c], [r, 0]), pl.view(y, [tb, c], [r, 0]))
            return y

    return ReluMulAdd


def _one(env: harness.Env, opts, dtype: str) -> harness.BenchResult:
    import torch

    dt = pl.FP32 if dtype == "fp32" else pl.BF16
    npdt = np.float32 if dtype == "fp32" else ml_dtypes.bfloat16
    tdt = torch.float32 if dtype == "fp32" else torch.bfloat16
    compiled = harness.compile_program(make_program(dt), f"elementwise_{dtype}")
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((N, C), dtype=np.float32).astype(npdt) for _ in range(3))
    y = np.zeros((N, C), npdt)
    ta, tb, tc = (torch.from_numpy(v.astype(np.float32)).to(tdt) for v in (a, b, c))
    ty = torch.zeros(N, C, dtype=tdt)

    compiled(a, b, c, y, config=env.run_cfg)
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
    ref = np.maximum(a64 * b64 + c64, 0)
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == "fp32" else dict(atol=1e-2, rtol=8e-3)
    harness.check_close(f"elementwise {dtype} pypto vs float64", y.astype(np.float64), ref, **tol)

    def eager() -> None:
        torch.addcmul(tc, ta, tb, out=ty)
        ty.relu_()

    eager()
    harness.check_close(f"elementwise {dtype} torch eager vs float64", ty, ref, **tol)

    def f(x1, x2, x3, out):
        out.copy_(torch.relu(x1 * x2 + x3))

    def ours() -> None:
        compiled(a, b, c, y, config=env.run_cfg)

    def ours_serial() -> None:
        compiled(a, b, c, y, config=env.serial_cfg)

    cands: dict = {harness.OURS: ours, "torch eager (addcmul out= + relu_)": eager}
    notes = {}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(f, (ta, tb, tc, ty), opts.compile_mode)
    cpu = {harness.OURS: ours_serial, "torch eager (addcmul out= + relu_)": eager}
    if dtype == "fp32":
        yn = np.zeros_like(y)

        def numpy_fn() -> None:
            np.multiply(a, b, out=yn)
            np.add(yn, c, out=yn)
            np.maximum(yn, 0, out=yn)

        cands["numpy"] = numpy_fn
        cpu["numpy"] = numpy_fn
    else:
        notes["numpy"] = "n/a: NumPy has no native bf16 arithmetic"
    res = harness.measure(env, f"elementwise relu(a*b+c) 4096x4096 {dtype}", "GB/s", 4.0 * y.nbytes, cands, cpu,
                          notes)
    res.goals = harness.goal_memory(res)
    return res


def run(opts) -> list[harness.BenchResult]:
    env = harness.setup(opts)
    return [_one(env, opts, "fp32"), _one(env, opts, "bf16")]


if __name__ == "__main__":
    harness.main_for(run, __doc__)
