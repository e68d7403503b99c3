"""Fused linear + GELU, y = gelu_tanh(x @ W + b), fp32: PyPTO vs torch eager, torch.compile, NumPy.

GELU is the tanh approximation, gelu(h) = 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))), which is
exactly h * sigmoid(2 sqrt(2/pi) (h + 0.044715 h^3)); the kernel evaluates that sigmoid form,
h / (1 + exp(-h (c1 + c2 h^2))) with c1 = 2 sqrt(2/pi), c2 = 0.044715 c1 (PTO has exp, not tanh).
The peers compute the same function: torch `gelu(approximate="tanh")` (eager and compiled) and the
tanh formula in NumPy; all are checked against a float64 evaluation of the tanh form.

Kernel (MPMD over output tiles): one task per [TM, TN] tile of y; the first K block goes through
`matmul_bias` (the bias row [1, TN] sits in the Bias space and is added by the GEMM), the rest
through a `matmul_acc` K loop (x and W blocks loaded straight into Left / Right, see
bench_matmul.py); the epilogue (GELU) runs once on the finished tile in Vec, so y is
written once and the pre-activation never reaches DRAM.

Shapes: x [2048, 1024], W [1024, 4096], b [1, 4096] (an FFN up-projection).

    python benchmarks/bench_linear_gelu.py [--repeats N] [--threads T] [--no-compile] [--no-cpu-time]
"""

from __future__ import annotations

import math

import harness
import numpy as np

import pypto.language as pl

M, K, N = 2048, 1024, 4096
TM, TN, TK = 256, 256, 256
C1 = 2.0 * math.sqrt(2.0 / math.pi)
C2 = 0.044715 * C1


def make_program(m: int = M, k: int = K, n: int = N, tm: int = TM, tn: int = TN, tk: int = TK):
    Vec, Left, Right, Bias = pl.Mem.Vec, pl.Mem.Left, pl.Mem.Right, pl.Mem.Bias
    nc1, nc2 = -C1, -C2

    @pl.program
    class LinearGelu:
        @pl.function(type=pl.FunctionType.InCore)
        def linear_gelu_tile(self, x: pl.Tensor[[tm, k], pl.FP32], w: pl.Tensor[[k, tn], pl.FP32],
                             b: pl.Tensor[[1, tn], pl.FP32],
                             y: pl.Out[pl.Tensor[[tm, tn], pl.FP32]]) -> pl.Tensor[[tm, tn], pl.FP32]:
            acc0 = pl.matmul_bias(pl.load(x, [0, 0], [tm, tk], target_memory=Left),
                                  pl.load(w, [0, 0], [tk, tn], target_memory=Right),
                                  pl.load(b, [0, 0], [1, tn], target_memory=Bias))
            for kk, (acc,) in pl.range(tk, k, tk, init_values=(acc0,)):
                xl = pl.load(x, [0, kk], [tm, tk], target_memory=Left)
                wr = pl.load(w, [kk, 0], [tk, tn], target_memory=Right)
                acc_out = pl.yield_(pl.matmul_acc(acc, xl, wr))
            h = pl.move(acc_out, target_memory=Vec)
            q = pl.mul(h, pl.adds(pl.muls(pl.mul(h, h), nc2), nc1))   # -(c1 + c2 h^2) h
            g = pl.div(h, pl.adds(pl.exp(q), 1.0))                    # h * sigmoid(-q)
            return pl.store(g, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[m, k], pl.FP32], w: pl.Tensor[[k, n], pl.FP32], b: pl.Tensor[[1, n], pl.FP32],
                 y: pl.Out[pl.Tensor[[m, n], pl.FP32]]) -> pl.Tensor[[m, n], pl.FP32]:
            for i in pl.range(0, m, tm):
                for j in pl.range(0, n, tn):
                    self.linear_gelu_tile(pl.view(x, [tm, k], [i, 0]), pl.view(w, [k, tn], [0, j]),
                                          pl.view(b, [1, tn], [0, j]), pl.view(y, [tm, tn], [i, j]))
            return y

    return LinearGelu


def gelu_tanh_np(h: np.ndarray) -> np.ndarray:
    return 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h ** 3)))


def run(opts) -> list[harness.BenchResult]:
    import torch
    import torch.nn.functional as F

    env = harness.setup(opts)
    compiled = harness.compile_program(make_program(), "linear_gelu")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((M, K), dtype=np.float32)
    w = (rng.standard_normal((K, N), dtype=np.float32) / math.sqrt(K)).astype(np.float32)
    b = (0.1 * rng.standard_normal((1, N))).astype(np.float32)
    y = np.zeros((M, N), np.float32)

    compiled(x, w, b, y, config=env.run_cfg)
    ref = gelu_tanh_np(x.astype(np.float64) @ w.astype(np.float64) + b)
    harness.check_close("linear+gelu pypto vs float64", y, ref, atol=2e-5, rtol=1e-4)

    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b[0])
    ty = torch.zeros(M, N)

    def eager() -> None:
        torch.addmm(tb, tx, tw, out=ty)
        torch.ops.aten.gelu_(ty, approximate="tanh")

    eager()
    harness.check_close("linear+gelu torch eager vs float64", ty, ref, atol=2e-5, rtol=1e-4)

    def f(inp, out):  # W and b are closure constants: frozen by inductor
        out.copy_(F.gelu(torch.addmm(tb, inp, tw), approximate="tanh"))

    yn = np.zeros_like(y)
    tmp = np.zeros_like(y)

    def numpy_fn() -> None:
        np.matmul(x, w, out=yn)
        np.add(yn, b, out=yn)
        np.multiply(yn, yn, out=tmp)                       # h^2
        np.multiply(tmp, 0.044715, out=tmp)
        np.add(tmp, 1.0, out=tmp)
        np.multiply(tmp, yn, out=tmp)                      # h + 0.044715 h^3
        np.multiply(tmp, math.sqrt(2.0 / math.pi), out=tmp)
        np.tanh(tmp, out=tmp)
        np.add(tmp, 1.0, out=tmp)
        np.multiply(tmp, 0.5, out=tmp)
        np.multiply(yn, tmp, out=yn)

    numpy_fn()
    harness.check_close("linear+gelu numpy vs float64", yn, ref, atol=2e-5, rtol=1e-4)

    cands: dict = {harness.OURS: lambda: compiled(x, w, b, y, config=env.run_cfg),
                   "torch eager (addmm out= + gelu_)": eager, "numpy (OpenBLAS + ufuncs)": numpy_fn}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(f, (tx, ty), opts.compile_mode)
    cpu = {harness.OURS: lambda: compiled(x, w, b, y, config=env.serial_cfg),
           "torch eager (addmm out= + gelu_)": eager}
    res = harness.measure(env, f"linear+gelu {M}x{K} @ {K}x{N} fp32", "GFLOP/s", 2.0 * M * N * K, cands, cpu)
    return [res]


if __name__ == "__main__":
    harness.main_for(run, __doc__)
