"""RMSNorm over rows of an 8192 x 4096 fp32 matrix, with gamma: PyPTO vs torch, torch.compile, NumPy.

    y = x / sqrt(mean(x^2) + eps) * gamma        (per row)

Kernel: one task per block of TB rows; gamma ([1, 4096]) is loaded once per task; a loop over
single rows keeps the [1, 4096] row (16 KiB) in L1 for the sum of squares and the scaling. DRAM
sees one read of x and one write of y (2 x 128 MiB).

    python benchmarks/bench_rmsnorm.py [--repeats N] [--threads T] [--no-compile] [--no-cpu-time]
"""

from __future__ import annotations

import harness
import numpy as np

import pypto.language as pl

N, C = 8192, 4096
TB = 64   # rows per task
EPS = 1e-6


def make_program(n: int = N, c: int = C, tb: int = TB, eps: float = EPS):
    inv_c = 1.0 / c

    @pl.program
    class RMSNorm:
        @pl.function(type=pl.FunctionType.InCore)
        def rms_norm_rows(self, x: pl.Tensor[[tb, c], pl.FP32], gamma: pl.Tensor[[1, c], pl.FP32],
                          y: pl.Out[pl.Tensor[[tb, c], pl.FP32]]) -> pl.Tensor[[tb, c], pl.FP32]:
            g = pl.load(gamma, [0, 0], [1, c])
            for i in pl.range(0, tb, 1):
                t = pl.load(x, [i, 0], [1, c])
                ms = pl.mul(pl.row_sum(pl.mul(t, t)), inv_c)
                out = pl.col_expand_mul(pl.row_expand_mul(t, pl.rsqrt(pl.add(ms, eps))), g)
                y = pl.store(out, [i, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[n, c], pl.FP32], gamma: pl.Tensor[[1, c], pl.FP32],
                 y: pl.Out[pl.Tensor[[n, c], pl.FP32]]) -> pl.Tensor[[n, c], pl.FP32]:
            for b in pl.range(0, n, tb):
                self.rms_norm_rows(pl.view(x, [tb, c], [b, 0]), gamma, pl.view(y, [tb, c], [b, 0]))
            return y

    return RMSNorm


def run(opts) -> list[harness.BenchResult]:
    import torch
    import torch.nn.functional as F

    env = harness.setup(opts)
    compiled = harness.compile_program(make_program(), "rmsnorm")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((N, C), dtype=np.float32) * 2 + 0.5).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal((1, C))).astype(np.float32)
    y = np.zeros_like(x)

    compiled(x, gamma, y, config=env.run_cfg)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 * x64).mean(1, keepdims=True) + EPS) * gamma
    harness.check_close("rmsnorm pypto vs float64", y, ref, atol=1e-4, rtol=1e-4)

    tx, tg = torch.from_numpy(x), torch.from_numpy(gamma[0])
    ty = torch.zeros(N, C)
    tn = torch.zeros(N, 1)

    def eager_alloc() -> None:
        F.rms_norm(tx, (C,), tg, EPS)

    def eager_out() -> None:  # the out= composite: norm (1 read), x * rstd (read + write), * gamma (in place)
        torch.linalg.vector_norm(tx, 2, -1, keepdim=True, out=tn)
        tn.square_().mul_(1.0 / C).add_(EPS).rsqrt_()
        torch.mul(tx, tn, out=ty)
        ty.mul_(tg)

    eager_out()
    harness.check_close("rmsnorm torch eager (out=) vs float64", ty, ref, atol=1e-4, rtol=1e-4)
    harness.check_close("rmsnorm torch F.rms_norm vs float64", F.rms_norm(tx, (C,), tg, EPS), ref, atol=1e-4,
                        rtol=1e-4)

    def f(inp, out):
        out.copy_(F.rms_norm(inp, (C,), tg, EPS))

    yn = np.zeros_like(x)
    sn = np.zeros((N,), np.float32)

    def numpy_fn() -> None:
        np.einsum("ij,ij->i", x, x, out=sn)
        r = 1.0 / np.sqrt(sn / C + EPS)
        np.multiply(x, r[:, None], out=yn)
        np.multiply(yn, gamma, out=yn)

    numpy_fn()
    harness.check_close("rmsnorm numpy vs float64", yn, ref, atol=1e-4, rtol=1e-4)

    cands: dict = {harness.OURS: lambda: compiled(x, gamma, y, config=env.run_cfg),
                   "torch eager (F.rms_norm, allocates)": eager_alloc,
                   "torch eager (out= composite)": eager_out,
                   "numpy": numpy_fn}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(f, (tx, ty), opts.compile_mode)
    cpu = {harness.OURS: lambda: compiled(x, gamma, y, config=env.serial_cfg),
           "torch eager (F.rms_norm, allocates)": eager_alloc,
           "torch eager (out= composite)": eager_out, "numpy": numpy_fn}
    res = harness.measure(env, "rmsnorm 8192x4096 fp32", "GB/s", 2.0 * x.nbytes, cands, cpu)
    res.goals = harness.goal_ratio(res, "rmsnorm: faster than the best peer", 1.0) + harness.goal_memory(res)
    return [res]


if __name__ == "__main__":
    harness.main_for(run, __doc__)
