"""Row softmax of a 4096 x 4096 fp32 matrix: PyPTO vs torch eager, torch.compile and NumPy.

Kernel: one task per block of TB rows (4096 / TB tasks, so both cores stay busy and a slow time
slice on one core is balanced by the other); inside, a loop over single rows: a [1, 4096] tile
(16 KiB, stays in L1) is loaded once, and max, exp(x - max), sum and the scaling all run on the
resident tile, so DRAM sees one read of x and one write of y (2 x 64 MiB). The normalization
multiplies by the reciprocal of the row sum (one division per row, not one per element).

    python benchmarks/bench_softmax.py [--repeats N] [--threads T] [--no-compile] [--no-cpu-time]
"""

from __future__ import annotations

import harness
import numpy as np

import pypto.language as pl

N, C = 4096, 4096
TB = 32   # rows per task
R = 1     # rows per tile (a [1, C] fp32 row is 16 KiB: it and its exp stay in L1)


def make_program(n: int = N, c: int = C, tb: int = TB, r: int = R):
    @pl.program
    class RowSoftmax:
        @pl.function(type=pl.FunctionType.InCore)
        def softmax_rows(self, x: pl.Tensor[[tb, c], pl.FP32],
                         y: pl.Out[pl.Tensor[[tb, c], pl.FP32]]) -> pl.Tensor[[tb, c], pl.FP32]:
            for i in pl.range(0, tb, r):
                t = pl.load(x, [i, 0], [r, c])
                e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
                p = pl.row_expand_mul(e, pl.recip(pl.row_sum(e)))
                y = pl.store(p, [i, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[n, c], pl.FP32],
                 y: pl.Out[pl.Tensor[[n, c], pl.FP32]]) -> pl.Tensor[[n, c], pl.FP32]:
            for b in pl.range(0, n, tb):
                self.softmax_rows(pl.view(x, [tb, c], [b, 0]), pl.view(y, [tb, c], [b, 0]))
            return y

    return RowSoftmax


def numpy_softmax(x: np.ndarray, y: np.ndarray, m: np.ndarray, s: np.ndarray) -> None:
    np.max(x, axis=1, keepdims=True, out=m)
    np.subtract(x, m, out=y)
    np.exp(y, out=y)
    np.sum(y, axis=1, keepdims=True, out=s)
    np.divide(y, s, out=y)


def run(opts) -> list[harness.BenchResult]:
    import torch

    env = harness.setup(opts)
    compiled = harness.compile_program(make_program(), "softmax")
    x = np.random.default_rng(0).standard_normal((N, C), dtype=np.float32) * 4
    y = np.zeros_like(x)
    ty = torch.zeros(N, C)
    tx = torch.from_numpy(x)
    yn, m, s = np.zeros_like(x), np.zeros((N, 1), np.float32), np.zeros((N, 1), np.float32)

    # numerics first
    compiled(x, y, config=env.run_cfg)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    harness.check_close("softmax pypto vs float64", y, ref, atol=1e-6, rtol=1e-4)
    y[...] = 0
    compiled(x, y, config=env.serial_cfg)
    harness.check_close("softmax pypto (serial runtime) vs float64", y, ref, atol=1e-6, rtol=1e-4)

    def eager() -> None:
        torch.ops.aten._softmax.out(tx, -1, False, out=ty)

    def f(inp, out):
        out.copy_(torch.softmax(inp, -1))

    cands: dict = {
        harness.OURS: lambda: compiled(x, y, config=env.run_cfg),
        "torch eager (_softmax.out)": eager,
        "numpy": lambda: numpy_softmax(x, yn, m, s),
    }
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(f, (tx, ty), opts.compile_mode)
    eager()
    harness.check_close("softmax torch eager", ty, ref, atol=1e-6, rtol=1e-4)
    cpu = {harness.OURS: lambda: compiled(x, y, config=env.serial_cfg), "torch eager (_softmax.out)": eager,
           "numpy": lambda: numpy_softmax(x, yn, m, s)}
    res = harness.measure(env, "softmax 4096x4096 fp32 (rows)", "GB/s", 2.0 * x.nbytes, cands, cpu)
    res.goals = (harness.goal_ratio(res, "softmax 4096x4096: >= 2x the best PyTorch variant", 2.0, "torch")
                 + harness.goal_memory(res))
    return [res]


if __name__ == "__main__":
    harness.main_for(run, __doc__)
