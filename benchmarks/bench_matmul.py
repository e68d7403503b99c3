"""Square matmul C = A @ B, fp32 and bf16, 1024..4096: PyPTO vs torch.matmul, torch.compile and NumPy.

Kernel (MPMD over output tiles): one task per [TM, TN] tile of C; inside, a K loop over [TM, TK]
blocks of A and [TK, TN] blocks of B, loaded straight into Left / Right (DDR -> Left / Right is a
data path of the CPU target; TLOAD into Right packs the panel layout the GEMM micro-kernel reads)
and accumulated in an Acc tile with `matmul_acc`. The ported-from-Ascend spelling, load into Mat
then `pl.move` to Left / Right, compiles to an extra 256 KiB L2 copy per operand and K block
(~7% slower at 2048 fp32; the compiler does not fold the pair yet). Tile sizes are chosen
for the CPU target's capacities (pypto.target.cpu(): Left / Right / Acc 512 KiB each on a
2 MiB L2). Per K block a task loads (TM + TN) * TK elements for 2 * TM * TN * TK flops, so the
largest TM * TN the Acc space holds (131072 fp32) with TM + TN smallest wins: fp32 TM x TN x TK =
512 x 256 x 256 (Left 512 KiB, Right 256 KiB, Acc 512 KiB; 5% faster than 256 x 256 x 256 at 4096),
bf16 256 x 512 x 256 (Left 128 KiB, Right 256 KiB, Acc 512 KiB; 20% faster than 256 x 256 x 512).
A bf16 result is rounded to bf16 (torch's bf16 matmul also returns bf16); fp32 accumulates in fp32.

    python benchmarks/bench_matmul.py [--sizes 1024,2048,4096] [--repeats N] [--no-compile] ...
"""

from __future__ import annotations

import argparse

import harness
import ml_dtypes
import numpy as np

import pypto.language as pl

SIZES = (1024, 2048, 4096)
TILES = {"fp32": (512, 256, 256), "bf16": (256, 512, 256)}  # TM, TN, TK


def make_program(dtype: str, m: int, n: int, k: int, tm: int | None = None, tn: int | None = None,
                 tk: int | None = None):
    dt = pl.FP32 if dtype == "fp32" else pl.BF16
    dtm, dtn, dtk = TILES[dtype]
    tm, tn, tk = tm or dtm, tn or dtn, tk or dtk
    Vec, Left, Right = pl.Mem.Vec, pl.Mem.Left, pl.Mem.Right

    if dtype == "fp32":
        @pl.program
        class MatmulF32:
            @pl.function(type=pl.FunctionType.InCore)
            def matmul_tile(self, a: pl.Tensor[[tm, k], dt], b: pl.Tensor[[k, tn], dt],
                            c: pl.Out[pl.Tensor[[tm, tn], pl.FP32]]) -> pl.Tensor[[tm, tn], pl.FP32]:
                acc0 = pl.matmul(pl.load(a, [0, 0], [tm, tk], target_memory=Left),
                                 pl.load(b, [0, 0], [tk, tn], target_memory=Right))
                for kk, (acc,) in pl.range(tk, k, tk, init_values=(acc0,)):
                    al = pl.load(a, [0, kk], [tm, tk], target_memory=Left)
                    br = pl.load(b, [kk, 0], [tk, tn], target_memory=Right)
                    acc_out = pl.yield_(pl.matmul_acc(acc, al, br))
                return pl.store(acc_out, [0, 0], c)

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[m, k], dt], b: pl.Tensor[[k, n], dt],
                     c: pl.Out[pl.Tensor[[m, n], pl.FP32]]) -> pl.Tensor[[m, n], pl.FP32]:
                for i in pl.range(0, m, tm):
                    for j in pl.range(0, n, tn):
                        self.matmul_tile(pl.view(a, [tm, k], [i, 0]), pl.view(b, [k, tn], [0, j]),
                                         pl.view(c, [tm, tn], [i, j]))
                return c

        return MatmulF32

    @pl.program
    class MatmulBF16:
        @pl.function(type=pl.FunctionType.InCore)
        def matmul_tile(self, a: pl.Tensor[[tm, k], dt], b: pl.Tensor[[k, tn], dt],
                        c: pl.Out[pl.Tensor[[tm, tn], dt]]) -> pl.Tensor[[tm, tn], dt]:
            acc0 = pl.matmul(pl.load(a, [0, 0], [tm, tk], target_memory=Left),
                             pl.load(b, [0, 0], [tk, tn], target_memory=Right))
            for kk, (acc,) in pl.range(tk, k, tk, init_values=(acc0,)):
                al = pl.load(a, [0, kk], [tm, tk], target_memory=Left)
                br = pl.load(b, [kk, 0], [tk, tn], target_memory=Right)
                acc_out = pl.yield_(pl.matmul_acc(acc, al, br))
            out = pl.cast(pl.move(acc_out, target_memory=Vec), pl.BF16)
            return pl.store(out, [0, 0], c)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[m, k], dt], b: pl.Tensor[[k, n], dt],
                 c: pl.Out[pl.Tensor[[m, n], dt]]) -> pl.Tensor[[m, n], dt]:
            for i in pl.range(0, m, tm):
                for j in pl.range(0, n, tn):
                    self.matmul_tile(pl.view(a, [tm, k], [i, 0]), pl.view(b, [k, tn], [0, j]),
                                     pl.view(c, [tm, tn], [i, j]))
            return c

    return MatmulBF16


def _one(env: harness.Env, opts, dtype: str, s: int) -> harness.BenchResult:
    import torch

    npdt = np.float32 if dtype == "fp32" else ml_dtypes.bfloat16
    tdt = torch.float32 if dtype == "fp32" else torch.bfloat16
    compiled = harness.compile_program(make_program(dtype, s, s, s), f"matmul_{dtype}_{s}")
    rng = np.random.default_rng(s)
    a = rng.standard_normal((s, s), dtype=np.float32).astype(npdt)
    b = rng.standard_normal((s, s), dtype=np.float32).astype(npdt)
    c = np.zeros((s, s), npdt)
    ta, tb = (torch.from_numpy(v.astype(np.float32)).to(tdt) for v in (a, b))
    tc = torch.zeros(s, s, dtype=tdt)

    compiled(a, b, c, config=env.run_cfg)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # fp32: K products of N(0,1) values, error ~ sqrt(K) * eps * |terms|; bf16 adds the output rounding
    tol = dict(atol=2e-5 * s ** 0.5 * 4, rtol=1e-4) if dtype == "fp32" else dict(atol=0.05 * s ** 0.5 / 8,
                                                                                     rtol=1.6e-2)
    harness.check_close(f"matmul {dtype} {s} pypto vs float64", c.astype(np.float64), ref, **tol)

    def eager() -> None:
        torch.matmul(ta, tb, out=tc)

    eager()
    harness.check_close(f"matmul {dtype} {s} torch vs float64", tc, ref, **tol)

    def f(x, w, out):
        torch.matmul(x, w, out=out)

    cands: dict = {harness.OURS: lambda: compiled(a, b, c, config=env.run_cfg), "torch.matmul (out=)": eager}
    notes = {}
    if not opts.no_compile:
        cands["torch.compile"] = harness.torch_compile(f, (ta, tb, tc), opts.compile_mode)
    if dtype == "fp32":
        cn = np.zeros_like(c)
        cands["numpy (OpenBLAS)"] = lambda: np.matmul(a, b, out=cn)
    else:
        notes["numpy"] = "n/a: NumPy has no bf16 matmul"
    cpu = {harness.OURS: lambda: compiled(a, b, c, config=env.serial_cfg), "torch.matmul (out=)": eager}
    res = harness.measure(env, f"matmul {s}x{s}x{s} {dtype}", "GFLOP/s", 2.0 * s ** 3, cands, cpu, notes,
                          gemm_dtype=dtype)
    if dtype == "fp32":
        res.goals = harness.goal_ratio(res, f"matmul fp32 {s}: >= 90% of PyTorch's speed", 0.9, "torch.matmul")
    return res


def run(opts) -> list[harness.BenchResult]:
    env = harness.setup(opts)
    sizes = [int(v) for v in opts.sizes.split(",")] if getattr(opts, "sizes", None) else list(SIZES)
    if opts.quick:
        sizes = sizes[:2]
    return [_one(env, opts, dt, s) for dt in ("fp32", "bf16") for s in sizes]


def parse_args(argv=None) -> argparse.Namespace:
    ap = harness.add_common_args(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    ap.add_argument("--sizes", default=None, help="comma-separated square sizes (default 1024,2048,4096)")
    return ap.parse_args(argv)


if __name__ == "__main__":
    harness.report(run(parse_args()))
