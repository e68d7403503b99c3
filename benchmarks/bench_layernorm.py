"""LayerNorm over rows of an 8192 x 4096 fp32 matrix, with gamma and beta: PyPTO vs torch, NumPy.

    y = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta        (per row; biased variance)

Kernel: one task per block of TB rows; gamma and beta ([1, 4096] tiles) are loaded once per task;
a loop over single rows keeps the [1, 4096] row (16 KiB) and its centered copy in L1 while mean,
variance (two-pass, centered: no cancellation) and the affine map run on them. DRAM sees one read
of x and one write of y (2 x 128 MiB).

    python benchmarks/bench_layernorm.py [--repeats N] [--threads T] [--no-compile] [--no-cpu-time]
"""

from __future__ import annotations

import harness
import numpy as np

import pypto.language as pl

N, C = 8192, 4096
TB = 64   # rows per task
EPS = 1e-5


def make_program(n: int = N, c: int = C, tb: int = TB, eps: float = EPS):
    inv_c = 1.0 / c

    @pl.program
    class LayerNorm:
        @pl.function(type=pl.FunctionType.InCore)
        def layer_norm_rows(self, x: pl.Tensor[[tb, c], pl.FP32], gamma: pl.Tensor[[1, c], pl.FP32],
                            beta: pl.Tensor[[1, c], pl.FP32],
                            y: pl.Out[pl.Tensor[[tb, c], pl.FP32]]) -> pl.Tensor[[tb, c], pl.FP32]:
            g = pl.load(gamma, [0, 0], [1, c])
            bt = pl.load(beta, [0, 0], [1, c])
            for i in pl.range(0, tb, 1):
                t = pl.load(x, [i, 0], [1, c])
                mean = pl.mul(pl.row_sum(t), inv_c)
                xc = pl.row_expand_sub(t, mean)
                var = pl.mul(pl.row_sum(pl.mul(xc, xc)), inv_c)
                nrm = pl.row_expand_mul(xc, pl.rsqrt(pl.add(var, eps)))
                out = pl.col_expand_add(pl.col_expand_mul(nrm, g), bt)
                y = pl.store(out, [i, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[n, c], pl.FP32], gamma: pl.Tensor[[1, c], pl.FP32],
                 beta: pl.Tensor[[1, c], pl.FP32],
                 y: pl.Out[pl.Tensor[[n, c], pl.FP32]]) -> pl.Tensor[[n, c], pl.FP32]:
            for b in pl.range(0, n, tb):
                self.layer_norm_rows(pl.view(x, [tb, c], [b, 0]), gamma, beta, pl.view(y, [tb, c], [b, 0]))
            return y

    return LayerNorm


def run(opts) -> list[harness.BenchResult]:
    import torch
    import torch.nn.functional as F

    env = harness.setup(opts)
    compiled = harness.compile_program(make_program(), "layernorm")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((N, C), dtype=np.float32) * 2 + 0.5).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal((1, C))).astype(np.float32)
    beta = (0.1 * rng.standard_normal((1, C))).astype(np.float32)
    y = np.zeros_like(x)

    compiled(x, gamma, beta, y, config=env.run_cfg)
    x64 = x.astype(np.float64)
    mu = x64.mean(1, keepdims=True)
    ref = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(1, keepdims=True) + EPS) * gamma + beta
    harness.check_close("layernorm pypto vs float64", y, ref, atol=1e-4, rtol=1e-4)

    tx, tg, tb_ = torch.from_numpy(x), torch.from_numpy(gamma[0]), torch.from_numpy(beta[0])
    ty = torch.zeros(N, C)
    tmean, trstd = torch.zeros(N, 1), torch.zeros(N, 1)

    def eager_out() -> None:
        torch.ops.aten.native_layer_norm.out(tx, [C], tg, tb_, EPS, out0=ty, out1=tmean, out2=trstd)

    def eager_alloc() -> None:
        F.layer_norm(tx, (C,), tg, tb_, EPS)

    eager_out()
    harness.check_close("layernorm torch eager vs float64", ty, ref, atol=1e-4, rtol=1e-4)

    def f(inp, out):
        out.copy_(F.layer_norm(inp, (C,), tg, tb_, EPS))

    yn = np.zeros_like(x)
    mn, vn = np.zeros((N, 1), np.float32), np.zeros((N, 1), np.float32)

    def numpy_fn() -> None:
        np.mean(x, axis=1, keepdims=True, out=mn)
        np.subtract(x, mn, out=yn)
        np.einsum("ij,ij->i", yn, yn, out=vn[:, 0])
        vn[...] = 1.0 / np.sqrt(vn / C + EPS)
        np.multiply(yn, vn, out=yn)
        np.multiply(yn, gamma, out=yn)
        np.add(yn, beta, out=yn)

    numpy_fn()
    harness.check_close("layernorm numpy vs float64", yn, ref, atol=1e-4, rtol=1e-4)

    cands: dict = {harness.OURS: lambda: compiled(x, gamma, beta, y, config=env.run_cfg),
                   "torch eager (native_layer_norm.out)": eager_out,
                   "torch eager (F.layer_norm, allocates)": eager_alloc,
                   "numpy": numpy_fn}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(f, (tx, ty), opts.compile_mode)
    cpu = {harness.OURS: lambda: compiled(x, gamma, beta, y, config=env.serial_cfg),
           "torch eager (native_layer_norm.out)": eager_out,
           "torch eager (F.layer_norm, allocates)": eager_alloc, "numpy": numpy_fn}
    res = harness.measure(env, "layernorm 8192x4096 fp32", "GB/s", 2.0 * x.nbytes, cands, cpu)
    res.goals = harness.goal_ratio(res, "layernorm: faster than the best peer", 1.0) + harness.goal_memory(res)
    return [res]


if __name__ == "__main__":
    harness.main_for(run, __doc__)
