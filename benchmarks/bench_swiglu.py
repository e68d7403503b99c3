"""SwiGLU feed-forward, out = (silu(x W1) * (x W3)) W2, fp32: the hand-written `pl` kernel against
torch eager, torch.compile and NumPy (the tensor-level version is in bench_frontend.py, beside this
kernel).

Kernel (two MPMD stages):
  gate/up: one task per [TM, TF] tile of the hidden activation h; two K loops share each x block
           (x W1 and x W3 accumulate side by side), and the epilogue a * sigmoid(a) * b runs once
           on the finished tiles, so neither pre-activation reaches DRAM;
  down:    one task per [TM, TN] tile of out = h W2 (a K loop over the hidden dim).

Shapes: x [1024, 1024], W1 and W3 [1024, 2048], W2 [2048, 1024] (a LLaMA-style FFN, 1k tokens).

    python benchmarks/bench_swiglu.py [--repeats N] [--threads T] [--no-compile] [--no-cpu-time]
"""

from __future__ import annotations

import math

import harness
import numpy as np

import pypto.language as pl

T, H, F = 1024, 1024, 2048
TM, TF, TN, TK = 256, 128, 256, 256  # every operand tile <= 256 KiB: fits every CPU's target


def make_program(t: int = T, h: int = H, f: int = F, tm: int = TM, tf: int = TF, tn: int = TN, tk: int = TK):
    Vec, Left, Right = pl.Mem.Vec, pl.Mem.Left, pl.Mem.Right

    @pl.program
    class SwiGLU:
        @pl.function(type=pl.FunctionType.InCore)
        def gate_up(self, x: pl.Tensor[[tm, h], pl.FP32], w1: pl.Tensor[[h, tf], pl.FP32],
                    w3: pl.Tensor[[h, tf], pl.FP32],
                    g: pl.Out[pl.Tensor[[tm, tf], pl.FP32]]) -> pl.Tensor[[tm, tf], pl.FP32]:
            x0 = pl.load(x, [0, 0], [tm, tk], target_memory=Left)
            a0 = pl.matmul(x0, pl.load(w1, [0, 0], [tk, tf], target_memory=Right))
            b0 = pl.matmul(x0, pl.load(w3, [0, 0], [tk, tf], target_memory=Right))
            for kk, (a, b) in pl.range(tk, h, tk, init_values=(a0, b0)):
                xl = pl.load(x, [0, kk], [tm, tk], target_memory=Left)
                a_new = pl.matmul_acc(a, xl, pl.load(w1, [kk, 0], [tk, tf], target_memory=Right))
                b_new = pl.matmul_acc(b, xl, pl.load(w3, [kk, 0], [tk, tf], target_memory=Right))
                a_out, b_out = pl.yield_(a_new, b_new)
            av = pl.move(a_out, target_memory=Vec)
            bv = pl.move(b_out, target_memory=Vec)
            silu = pl.div(av, pl.adds(pl.exp(pl.neg(av)), 1.0))  # a * sigmoid(a)
            return pl.store(pl.mul(silu, bv), [0, 0], g)

        @pl.function(type=pl.FunctionType.InCore)
        def down(self, g: pl.Tensor[[tm, f], pl.FP32], w2: pl.Tensor[[f, tn], pl.FP32],
                 y: pl.Out[pl.Tensor[[tm, tn], pl.FP32]]) -> pl.Tensor[[tm, tn], pl.FP32]:
            acc0 = pl.matmul(pl.load(g, [0, 0], [tm, tk], target_memory=Left),
                             pl.load(w2, [0, 0], [tk, tn], target_memory=Right))
            for kk, (acc,) in pl.range(tk, f, tk, init_values=(acc0,)):
                gl = pl.load(g, [0, kk], [tm, tk], target_memory=Left)
                wr = pl.load(w2, [kk, 0], [tk, tn], target_memory=Right)
                acc_out = pl.yield_(pl.matmul_acc(acc, gl, wr))
            return pl.store(acc_out, [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[t, h], pl.FP32], w1: pl.Tensor[[h, f], pl.FP32], w3: pl.Tensor[[h, f], pl.FP32],
                 w2: pl.Tensor[[f, h], pl.FP32], out: pl.Out[pl.Tensor[[t, h], pl.FP32]]) -> pl.Tensor[[t, h], pl.FP32]:
            g = pl.create_tensor([t, f], dtype=pl.FP32)
            for i in pl.range(0, t, tm):
                for j in pl.range(0, f, tf):
                    self.gate_up(pl.view(x, [tm, h], [i, 0]), pl.view(w1, [h, tf], [0, j]),
                                 pl.view(w3, [h, tf], [0, j]), pl.view(g, [tm, tf], [i, j]))
            for i in pl.range(0, t, tm):
                for j in pl.range(0, h, tn):
                    self.down(pl.view(g, [tm, f], [i, 0]), pl.view(w2, [f, tn], [0, j]), pl.view(out, [tm, tn], [i, j]))
            return out

    return SwiGLU


def make_inputs(t: int = T, h: int = H, f: int = F):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((t, h), dtype=np.float32)
    w1, w3 = ((rng.standard_normal((h, f)) / math.sqrt(h)).astype(np.float32) for _ in range(2))
    w2 = (rng.standard_normal((f, h)) / math.sqrt(f)).astype(np.float32)
    return x, w1, w3, w2


def reference(x, w1, w3, w2) -> np.ndarray:
    a, b = x.astype(np.float64) @ w1, x.astype(np.float64) @ w3
    return (a / (1 + np.exp(-a)) * b) @ w2


def torch_candidates(x, w1, w3, w2, out_shape, opts) -> dict:
    """The peers, preallocated outputs: torch eager (matmul out=, silu_, mul_) and torch.compile."""
    import torch
    import torch.nn.functional as F

    tx, t1, t3, t2 = (torch.from_numpy(a) for a in (x, w1, w3, w2))
    ty = torch.zeros(*out_shape)
    ta, tb = torch.zeros(x.shape[0], w1.shape[1]), torch.zeros(x.shape[0], w1.shape[1])

    def eager() -> None:
        torch.matmul(tx, t1, out=ta)
        torch.matmul(tx, t3, out=tb)
        torch.matmul(F.silu(ta, inplace=True).mul_(tb), t2, out=ty)

    eager()
    cands = {"torch eager (matmul out=, silu_)": eager}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(
            lambda a, o: o.copy_((F.silu(a @ t1) * (a @ t3)) @ t2), (tx, ty), opts.compile_mode)
    return cands, ty


def run(opts) -> list[harness.BenchResult]:
    env = harness.setup(opts)
    compiled = harness.compile_program(make_program(), "swiglu")
    x, w1, w3, w2 = make_inputs()
    out = np.zeros((T, H), np.float32)
    compiled(x, w1, w3, w2, out, config=env.run_cfg)
    ref = reference(x, w1, w3, w2)
    harness.check_close("swiglu pypto vs float64", out, ref, atol=1e-3, rtol=1e-3)
    cands, ty = torch_candidates(x, w1, w3, w2, (T, H), opts)
    harness.check_close("swiglu torch vs float64", ty.numpy(), ref, atol=1e-3, rtol=1e-3)
    cands = {harness.OURS: lambda: compiled(x, w1, w3, w2, out, config=env.run_cfg), **cands}
    return [harness.measure(env, f"swiglu ffn {T}x{H}x{F} fp32", "GFLOP/s", 6.0 * T * H * F, cands)]


if __name__ == "__main__":
    harness.main_for(run, __doc__)
